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



def pasted(page, text):
    """`text` pasted over the whole Document box, as the browser reports a paste (insertFromPaste)."""
    page.evaluate("""(t) => { const box = document.getElementById('param-doc'); box.focus(); box.value = t;
        box.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste', data: t})); }""", text)
    page.wait_for_function("(t) => window.ragsim.request().documents.some((d) => d.text === t)", arg=text)


def example_page(page):
    """The tests' reset: a link's settings, then the fragment cleared, in one task."""
    page.evaluate("() => { location.hash = 'size=25'; location.hash = ''; }")
    page.wait_for_function(f"() => window.ragsim.request().query === {QUESTION!r} && window.ragsim.request().chunking.size === 24")
    return settle(page)


QUESTION = "How long do hourly snapshots last?"


def test_clearing_the_fragment_keeps_your_text(page):
    example_page(page)
    pasted(page, MINE)
    page.wait_for_function("() => location.hash.includes('doc=')")  # the address bar shows the text's fragment
    page.evaluate("() => { location.hash = ''; }")
    page.wait_for_function("() => document.getElementById('mark-info').textContent.includes('Kept your text')")
    page.wait_for_function("() => location.hash.includes('doc=')")  # the page writes its own fragment back
    assert documents(page) == [MINE]
    assert page.locator("#param-doc").input_value() == MINE
    example_page(page)  # a link's settings still open the example, and the reset brings it and its question back
    assert page.locator("#param-doc").input_value().startswith("Snapshot retention in Tidewater")


def test_the_example_question_goes_when_your_text_replaces_the_example(page):
    example_page(page)
    box = page.get_by_label("Question", exact=True)
    page.locator("#param-doc").press("End")
    page.keyboard.type(" More.")  # an edit of the example keeps its question
    page.wait_for_function("() => window.ragsim.request().documents[0].text.endsWith(' More.')")
    assert box.input_value() == QUESTION
    example_page(page)
    pasted(page, MINE)
    page.wait_for_function("() => window.ragsim.request().query === ''")
    assert box.input_value() == ""
    assert "the example's question went with it" in page.locator("#mark-info").inner_text()
    box.fill("How much does the pump house lift?")
    page.wait_for_function("() => window.ragsim.shownRequest().query === 'How much does the pump house lift?'")
    pasted(page, MINE + " It was built in 1910.")  # a question of one's own stays
    assert box.input_value() == "How much does the pump house lift?"
    example_page(page)  # the example brought back brings its question
    assert box.input_value() == QUESTION


def test_files_over_the_example_take_its_question_away(page, tmp_path):
    example_page(page)
    note = tmp_path / "pumps.txt"
    note.write_text(MINE, encoding="utf-8")
    page.locator("#add-files").set_input_files(str(note))
    page.wait_for_function("() => window.ragsim.request().query === ''")
    assert "in place of the example; the example's question went with it" in page.locator("#mark-info").inner_text()
    example_page(page)
