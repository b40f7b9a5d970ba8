"""The size and overlap controls as people use them: an exact value typed beside each slider, and a
switch of unit that keeps the chunks about as long as they were (24 words did become 24 characters)."""

import pytest

from a11y import settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page("index.html", reload=True)


def shown(page):
    return page.evaluate("() => window.ragsim.shownRequest().chunking")


def test_switching_to_characters_keeps_the_chunks_about_as_long(page):
    settle(page)
    before = shown(page)
    text = page.locator("#param-doc").input_value()
    assert before["unit"] == "words" if "unit" in before else True
    words_per_char = len(text.split()) / len(text)
    page.locator("#param-unit").select_option("chars")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.unit === 'chars'")
    settle(page)
    after = shown(page)
    assert after["size"] == max(1, round(before["size"] / words_per_char))
    assert after["overlap"] == round(before["overlap"] / words_per_char)
    assert page.locator("#param-size-exact").input_value() == str(after["size"])


def test_an_exact_size_typed_in_the_box_is_the_setting(page):
    box = page.locator("#param-size-exact")
    box.fill("900")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 900")
    settle(page)
    assert page.locator("#param-size").input_value() == "900"
    overlap = page.locator("#param-overlap-exact")
    overlap.fill("150")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.overlap === 150")
    box.fill("")  # half typed: nothing changes
    settle(page)
    assert shown(page)["size"] == 900


def test_a_cut_answer_gets_the_fix_the_core_finds(page):
    """The verdict of a cut answer says what keeps it whole with this splitter (the least overlap at
    this size, else a size), the core's own sentence (ragsim.judge.overlap_advice.fix)."""
    import json

    from ragsim.wire.calls import call_json

    page.locator("#param-unit").select_option("words")
    page.locator("#param-size-exact").fill("10")
    page.locator("#param-overlap-exact").fill("0")
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 10 && "
                           "window.ragsim.shownRequest().chunking.overlap === 0")
    settle(page)
    assert page.locator("#verdict").get_attribute("data-verdict") == "cut"
    page.wait_for_function("() => !document.getElementById('verdict-fix').hidden")
    req = page.evaluate("() => window.ragsim.shownRequest()")
    doc = next(d for d in req["documents"] if d["id"] == req["span"]["doc"])
    want = json.loads(call_json("fix", json.dumps({"documents": [doc], "query": req["query"], "chunking": req["chunking"],
                                                   "retrieval": {"k": req["retrieval"]["k"]}, "span": req["span"]})))
    assert page.locator("#verdict-fix").inner_text() == want["fix"]["sentence"]
    page.locator("#param-size-exact").fill("300")  # the whole document in one chunk: nothing to fix
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.size === 300")
    settle(page)
    assert page.locator("#verdict").get_attribute("data-verdict") != "cut"
    assert page.locator("#verdict-fix").is_hidden()
