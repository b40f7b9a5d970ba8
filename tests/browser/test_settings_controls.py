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

