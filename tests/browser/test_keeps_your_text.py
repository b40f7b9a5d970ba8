"""Nothing the user typed is lost without asking: "Load example collection" over a pasted document
asks first (and "Cancel" keeps it), and clearing the address bar's fragment keeps the page as it is."""

import pytest

from a11y import settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

MINE = "My own notes. The pump house at Lower Barrow lifts 40 litres a second."


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page("index.html", reload=True)


def paste(page, text):
    page.locator("#param-doc").fill(text)
    page.wait_for_function("(t) => window.ragsim.request().documents.some((d) => d.text === t)", arg=text)


def documents(page):
    return [d["text"] for d in page.evaluate("() => window.ragsim.request().documents")]


def test_the_example_collection_asks_before_it_replaces_your_text(page):
    paste(page, MINE)
    asked = []

    def cancel(dialog):
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", cancel)
    page.get_by_role("button", name="Load example collection").click()
    page.wait_for_function("() => document.body.innerText.includes('Kept your documents')")
    assert asked and "Replace your documents with the example collection?" in asked[0]
    assert documents(page) == [MINE]
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Load example collection").click()
    page.wait_for_function("() => window.ragsim.shownRequest().documents.length > 1")
    assert MINE not in documents(page)


def test_clearing_the_fragment_keeps_your_text(page):
    paste(page, MINE)
    page.evaluate("() => { location.hash = ''; }")
    page.wait_for_function("() => location.hash.length > 1")  # the page writes its own fragment back
    assert MINE in documents(page)
    assert page.locator("#param-doc").input_value() == MINE


def test_the_example_question_goes_when_the_text_is_yours(page):
    page.evaluate("() => { location.hash = 'size=24'; }")  # a link's settings open the example page afresh
    page.wait_for_function("() => window.ragsim.request().query === 'How long do hourly snapshots last?'")
    paste(page, MINE)
    page.wait_for_function("() => window.ragsim.request().query === ''")
    assert page.get_by_label("Question", exact=True).input_value() == ""
    page.wait_for_function("() => document.body.innerText.includes('type a question with at least one word')")
    box = page.get_by_label("Question", exact=True)
    box.fill("How much does the pump house lift?")
    page.wait_for_function("() => window.ragsim.shownRequest().query === 'How much does the pump house lift?'")
    settle(page)
    paste(page, MINE + " It was built in 1910.")  # a question of one's own stays
    assert box.input_value() == "How much does the pump house lift?"
