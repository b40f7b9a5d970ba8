"""The Splitter control, the advanced retrieval options, the overlap that really happened and the
"Equivalent code" panel, in real Chromium on the built dist/ (one Pyodide boot for the module).

As in test_page.py, every number the page shows is checked against CPython's `ragsim.api` for the
request the page sent, so the page can only pass by showing what the core computed."""

from urllib.parse import quote

import pytest

from helpers import assert_shows_the_core
from ragsim.wire import api
from test_page import INDEX, page_request, reopen, restore, settle, written_hash

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

NAMES = {
    "window": "Fixed windows (ragsim)",
    "langchain-character": "LangChain CharacterTextSplitter",
    "langchain-recursive": "LangChain RecursiveCharacterTextSplitter",
    "haystack": "Haystack DocumentSplitter",
    "sentences": "Sentence packing (ragsim)",
    # the token splitters: their fields and defaults are tested in test_tokens_pdf.py
    "langchain-token": "LangChain TokenTextSplitter",
    "llamaindex-sentence": "LlamaIndex SentenceSplitter",
    "llamaindex-token": "LlamaIndex TokenTextSplitter",
    "llamaindex-markdown": "LlamaIndex MarkdownNodeParser",
    # the semantic chunkers: their fields and their curve are tested in test_semantic_page.py
    "langchain-semantic": "LangChain SemanticChunker",
    "llamaindex-semantic": "LlamaIndex SemanticSplitterNodeParser",
    "chroma-cluster": "Chroma ClusterSemanticChunker",
    "chroma-kamradt": "Chroma KamradtModifiedChunker",
}
# What each strategy sends when first chosen: the library's defaults (ragsim's own for its two).
DEFAULTS = {
    "window": {"unit": "words", "size": 24, "overlap": 6},
    "langchain-character": {"size": 4000, "overlap": 200, "separator": "\n\n", "is_separator_regex": False,
                            "keep_separator": False, "strip_whitespace": True},
    "langchain-recursive": {"size": 4000, "overlap": 200, "separators": ["\n\n", "\n", " ", ""],
                            "is_separator_regex": False, "keep_separator": True, "strip_whitespace": True},
    "haystack": {"split_by": "word", "size": 200, "overlap": 0, "split_threshold": 0},
    "sentences": {"unit": "words", "size": 40, "overlap": 10},
}
# The fields shown for each strategy, by their library names (besides Chunk size and Overlap).
FIELDS = {
    "window": ["Unit"],
    "langchain-character": ["separator", "is_separator_regex", "keep_separator", "strip_whitespace"],
    "langchain-recursive": ["language preset", "separators", "is_separator_regex", "keep_separator", "strip_whitespace"],
    "haystack": ["split_by", "split_threshold"],
    "sentences": ["Unit"],
}
ALL_FIELDS = sorted({f for fs in FIELDS.values() for f in fs})
# Sizes that cut the example into several uneven chunks, in each splitter's own unit.
SMALLER = {"window": None, "langchain-character": (300, 100), "langchain-recursive": (300, 100),
           "haystack": (40, 10), "sentences": (30, 8)}
UNITS = {"window": "words", "langchain-character": "characters", "langchain-recursive": "characters",
         "haystack": "words", "sentences": "words"}


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def choose(page, strategy):
    page.get_by_label("Splitter", exact=True).select_option(strategy)
    return settle(page)


def set_slider(page, label, value):
    page.get_by_label(label, exact=True).fill(str(value))
    settle(page)


def red_ticks(page):
    """Runs of the no-overlap red (#b3261e) across the middle of the document strip of the canvas."""
    return page.evaluate("""() => {
      const c = document.getElementById('picture');
      const ctx = c.getContext('2d');
      const scale = c.width / c.clientWidth;
      const y = Math.round((c.clientHeight - 16 - 4 - 9) * scale);  // the strip, as test_page aims at it
      const row = ctx.getImageData(0, y, c.width, 1).data;
      let runs = 0, inRun = false;
      for (let x = 0; x < c.width; x++) {
        const [r, g, b] = [row[4 * x], row[4 * x + 1], row[4 * x + 2]];
        const red = Math.abs(r - 179) < 30 && Math.abs(g - 38) < 30 && Math.abs(b - 30) < 30;
        if (red && !inRun) runs++;
        inRun = red;
      }
      return runs;
    }""")


# --- the Splitter control ---------------------------------------------------------------------------

def test_the_splitter_lists_each_strategy_by_its_known_name(page):
    restore(page)
    options = page.locator("#param-strategy option")
    assert dict(zip(options.evaluate_all("os => os.map(o => o.value)"), options.all_inner_texts())) == NAMES
    assert page.get_by_label("Splitter", exact=True).input_value() == "window"


@pytest.mark.parametrize("strategy", list(DEFAULTS))
def test_switching_splitter_on_the_example(page, strategy):
    restore(page)
    choose(page, strategy)
    request = page_request(page)
    assert request["chunking"] == {"strategy": strategy, **DEFAULTS[strategy]}
    # Only the chosen strategy's fields are shown, under the library's names.
    for label in ALL_FIELDS:
        assert page.get_by_label(label, exact=True).is_visible() == (label in FIELDS[strategy]), label
    size = DEFAULTS[strategy]["size"]
    assert page.locator("#param-size-value").inner_text() == f"{size} {UNITS[strategy]}"
    assert_shows_the_core(page, overlap_and_code=True)
    if SMALLER[strategy]:
        # Smaller chunks: several of them, of uneven lengths, drawn as the core cut them.
        set_slider(page, "Chunk size", SMALLER[strategy][0])
        set_slider(page, "Overlap", SMALLER[strategy][1])
        assert page_request(page)["chunking"]["size"] == SMALLER[strategy][0]
        _, expected = assert_shows_the_core(page, overlap_and_code=True)
        assert expected["stats"]["chunks"] > 1
        if strategy != "haystack":
            assert len({c["end"] - c["start"] for c in expected["chunks"]}) > 1
    restore(page)


def test_each_splitter_keeps_its_own_size_when_switched_back(page):
    restore(page)
    choose(page, "langchain-recursive")
    set_slider(page, "Chunk size", 500)
    choose(page, "window")
    assert page_request(page)["chunking"] == {"strategy": "window", **DEFAULTS["window"]}
    choose(page, "langchain-recursive")
    assert page_request(page)["chunking"]["size"] == 500
    restore(page)


def test_language_preset_replaces_the_separators(page):
    restore(page)
    choose(page, "langchain-recursive")
    page.get_by_label("language preset", exact=True).select_option("markdown")
    settle(page)
    chunking = page_request(page)["chunking"]
    assert chunking["language"] == "markdown" and "separators" not in chunking and "is_separator_regex" not in chunking
    assert page.get_by_label("separators", exact=True).is_hidden()
    assert_shows_the_core(page, overlap_and_code=True)
    assert "Language.MARKDOWN" in page.locator("#code").text_content()
    restore(page)


def test_a_bad_separator_list_gets_a_message_and_keeps_the_last_result(page):
    restore(page)
    choose(page, "langchain-recursive")
    box = page.get_by_label("separators", exact=True)
    box.fill('["\\n\\n", 3')
    box.press("Enter")
    box.dispatch_event("change")
    assert "separators must be written like" in page.locator("#message").inner_text()
    assert box.get_attribute("aria-invalid") == "true"
    box.fill('["\\n\\n", ". "]')
    box.dispatch_event("change")
    settle(page)
    assert page_request(page)["chunking"]["separators"] == ["\n\n", ". "]
    assert page.locator("#message").is_hidden()
    restore(page)


# --- the overlap that really happened ---------------------------------------------------------------

def test_recursive_overlap_bigger_than_its_pieces_is_called_out(page):
    restore(page)
    choose(page, "langchain-recursive")
    set_slider(page, "Chunk size", 300)
    set_slider(page, "Overlap", 100)
    request, expected = assert_shows_the_core(page, overlap_and_code=True)
    missed = expected["stats"]["boundaries_without_overlap"]
    boundaries = expected["stats"]["chunks"] - 1
    assert 0 < missed <= boundaries
    notice = page.locator("#overlap-notice")
    assert notice.is_visible()
    assert notice.inner_text() == (
        f"You asked for 100 characters of overlap, but {missed} of {boundaries} boundaries share nothing: "
        "this splitter only overlaps whole pieces, and these pieces are longer than the overlap.")
    assert page.locator('[data-stat="boundaries_without_overlap"]').inner_text() == str(missed)
    assert red_ticks(page) == missed  # one tick in the picture per boundary that shares nothing
    # Fixed windows always overlap: no notice, no ticks.
    restore(page)
    assert page.locator("#overlap-notice").is_hidden()
    assert red_ticks(page) == 0


# --- advanced retrieval -------------------------------------------------------------------------------

def test_bm25_variant_and_parameters_reach_the_core(page):
    restore(page)
    page.locator("details.advanced summary").click()
    assert page.get_by_label("delta", exact=True).is_hidden()
    page.get_by_label("BM25 variant", exact=True).select_option("bm25l")
    settle(page)
    page.get_by_label("k1", exact=True).fill("1.5")
    page.get_by_label("delta", exact=True).fill("0.8")
    page.get_by_label("Remove English stop words", exact=True).check()
    settle(page)
    retrieval = page_request(page)["retrieval"]
    assert retrieval == {"k": 2, "variant": "bm25l", "k1": 1.5, "b": 0.75, "delta": 0.8, "terms": {"stopwords": "english"}}
    assert_shows_the_core(page, overlap_and_code=True)
    assert "method='bm25l'" in page.locator("#code").text_content()
    restore(page)


def test_turning_stemming_on_installs_the_stemmer_from_this_site(page, server, offsite, page_errors):
    pytest.importorskip("snowballstemmer")
    restore(page)
    plain = api.simulate(page_request(page))
    page.evaluate("""() => {
      window.__notes = [];
      const note = document.querySelector('.control-stem .needs-note');
      new MutationObserver(() => window.__notes.push(note.textContent)).observe(note, {childList: true, characterData: true, subtree: true});
    }""")
    if not page.locator("details.advanced").evaluate("d => d.open"):
        page.locator("details.advanced summary").click()
    with page.expect_request(lambda r: "snowballstemmer" in r.url) as wheel:
        page.get_by_label("Stem words (Snowball English)", exact=True).check()
    assert wheel.value.url.startswith(server.origin)
    settle(page)
    assert "Loading the stemmer…" in page.evaluate("window.__notes")
    request = page_request(page)
    assert request["retrieval"]["terms"] == {"stemmer": "snowball-english"}
    _, stemmed = assert_shows_the_core(page, overlap_and_code=True)
    # Stemming changes the scores, as the core says it does.
    assert [c["score"] for c in stemmed["chunks"]] != [c["score"] for c in plain["chunks"]]
    assert page.locator(".control-stem .needs-note").text_content() == ""
    assert offsite == []
    assert page_errors == []
    restore(page)


def test_a_stemmer_that_cannot_load_is_turned_off_with_a_message(page, server):
    tab = page.context.new_page()
    tab.route("**/*snowballstemmer*", lambda route: route.abort())
    try:
        tab.goto(server.url(INDEX) + "#stem=1")
        tab.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                              timeout=120_000)
        note = tab.locator(".control-stem .needs-note").text_content()
        assert note.startswith("The stemmer could not be loaded, so it is off: snowballstemmer could not be downloaded")
        assert not tab.get_by_label("Stem words (Snowball English)", exact=True).is_checked()
        assert "terms" not in tab.evaluate("window.ragsim.shownRequest()")["retrieval"]
        assert tab.locator("[data-verdict]").get_attribute("data-verdict") == "intact"
    finally:
        tab.close()


# --- URL state ----------------------------------------------------------------------------------------

def test_the_new_fields_round_trip_through_a_link(page, server):
    restore(page)
    choose(page, "haystack")
    page.get_by_label("split_by", exact=True).select_option("period")
    set_slider(page, "Chunk size", 3)
    set_slider(page, "Overlap", 1)
    set_slider(page, "split_threshold", 2)
    if not page.locator("details.advanced").evaluate("d => d.open"):
        page.locator("details.advanced summary").click()
    page.get_by_label("BM25 variant", exact=True).select_option("bm25+")
    page.get_by_label("b", exact=True).fill("0.5")
    page.get_by_label("Remove English stop words", exact=True).check()
    settle(page)
    sent = page_request(page)
    assert sent["chunking"] == {"strategy": "haystack", "split_by": "period", "size": 3, "overlap": 1, "split_threshold": 2}
    assert page.locator("#param-size-value").inner_text() == "3 sentences"
    fragment = written_hash(page)
    assert reopen(page.context, server.url(INDEX) + fragment) == sent
    # And a LangChain one with a separator that only JSON can carry.
    restore(page, "#strategy=langchain-character&separator=" + quote('"\\n"') + "&size=200&overlap=0&keep_separator=end")
    chunking = page_request(page)["chunking"]
    assert chunking["separator"] == "\n" and chunking["keep_separator"] == "end" and chunking["size"] == 200
    assert_shows_the_core(page, overlap_and_code=True)
    restore(page)


HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.mark.parametrize("fragment, note", [
    ("strategy=" + quote(HOSTILE), "Splitter must be"),
    ("strategy=__proto__", "Splitter must be"),
    ("strategy=langchain-recursive&separators=" + quote(HOSTILE), "separators must be written like"),
    ("strategy=langchain-character&separator=" + quote('["a"]'), "separator must be written like"),
    ("strategy=langchain-character&keep_separator=maybe", "keep_separator must be"),
    ("strategy=langchain-recursive&size=300&overlap=400", "overlap must be no larger than the chunk size"),
    ("variant=bm99", "BM25 variant must be"),
    ("k1=abc", "k1 must be a number"),
    ("stem=yes", "Stem words (Snowball English) must be on (1) or off (0)"),
])
def test_hostile_links_to_the_new_fields_fall_back_with_a_message(page, fragment, note):
    restore(page, "#" + fragment)
    assert note in page.locator("#notice").inner_text()
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert_shows_the_core(page, overlap_and_code=True)
    restore(page)
