"""Nothing the user typed is lost without asking: "Load example collection" over a pasted document
asks first (and "Cancel" keeps it)."""

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

