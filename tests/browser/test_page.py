"""The simulator page in real Chromium, served from the built dist/, one Pyodide boot per module.

Each test is one thing a person does. Numbers on the page are checked against CPython's
`ragsim.api.simulate` for the request the page sent, so the page can only pass by showing what
the core computed."""

import json
from urllib.parse import quote

import pytest

from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

INDEX = "index.html"
SETTLED = """() => {
  const r = window.ragsim;
  return document.body.dataset.state === "ready" && r.shownRequest() !== null
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


@pytest.fixture(scope="module")
def example(page):
    """The example module the page opened with (assets/js/examples.js as built)."""
    return page.evaluate("""async () => {
      const build = await (await fetch("/build.json")).json();
      return (await import("/" + build.assets["assets/js/examples.js"])).EXAMPLE;
    }""")


@pytest.fixture(scope="module")
def dialogs(page):
    seen = []
    page.on("dialog", lambda d: (seen.append(d.message), d.dismiss()))
    return seen


def settle(page):
    page.wait_for_function(SETTLED, polling=100)
    return page


def verdict(page):
    box = page.locator("[role=status][data-verdict]")
    return (box.get_attribute("data-verdict"), page.locator("#verdict-headline").inner_text(),
            page.locator("#verdict-text").inner_text())


# When the page last rewrote its address (history.replaceState) and when a control last changed (an
# input, change or click event, heard in the capture phase before the page's own handlers): installed once.
WATCH_WRITES = """() => {
  if (window.__watchWrites) return;
  window.__watchWrites = true;
  window.__writtenAt = -1;
  window.__changedAt = 0;
  const replace = history.replaceState.bind(history);
  history.replaceState = (...args) => { replace(...args); window.__writtenAt = performance.now(); };
  for (const type of ["input", "change", "click"]) {
    document.addEventListener(type, () => { window.__changedAt = performance.now(); }, true);
  }
}"""


def restore(page, fragment=""):
    """Back to the example (or a fragment) through the URL, as a person opening a link would."""
    page.evaluate(WATCH_WRITES)
    page.evaluate("h => { location.hash = h; }", fragment or "size=24")
    page.evaluate("h => { location.hash = h; }", fragment)
    settle(page)


def page_request(page):
    return page.evaluate("window.ragsim.request()")


def expected_marks(request, response):
    """The pieces of the marked span in the retrieved chunks, in rank order, from the core's offsets."""
    text, span = request["documents"][0]["text"], request["span"]
    out = []
    for c in sorted((c for c in response["chunks"] if c["retrieved"]), key=lambda c: c["rank"]):
        a, b = max(c["start"], span["start"]), min(c["end"], span["end"])
        if a < b:
            out.append(text[a:b])
    return out


def cp_span(text, answer):
    start = text.index(answer)
    return start, start + len(answer)


# --- opening ------------------------------------------------------------------------------------

def test_opens_on_the_example_intact_with_no_offsite_requests(page, example, offsite, page_errors):
    settle(page)
    assert verdict(page) == ("intact", "Present and intact",
                             "Chunk 4 holds the whole sentence and ranks #2 of 12, inside your top 2.")
    req = page_request(page)
    assert req["documents"][0]["text"] == example["text"]
    assert req["query"] == example["question"]
    assert req["chunking"] == {"strategy": "window", "unit": "words", "size": 24, "overlap": 6}
    assert req["retrieval"]["k"] == 2 and req["price_per_million"] == 3
    start, end = cp_span(example["text"], example["answer"])
    assert req["span"] == {"doc": "doc", "start": start, "end": end}
    # The labels are the ones the page was specified with, and each control is reachable by its label.
    for label, value in [("Chunk size", "24"), ("Overlap", "6"), ("Top k", "2"), ("Price per million tokens", "3.00"),
                         ("Question", example["question"])]:
        assert page.get_by_label(label, exact=True).input_value() == value
    assert page.get_by_label("Unit", exact=True).input_value() == "words"
    assert page.locator("#param-size-value").inner_text() == "24 words"
    assert offsite == []
    assert page_errors == []


def test_every_stat_matches_the_core(page):
    for fragment in ["", "size=40&overlap=10&k=3&price=2.50", "unit=chars&size=300&overlap=50&k=4"]:
        restore(page, fragment)
        request = page_request(page)
        expected = api.simulate(request)
        cells = page.eval_on_selector_all(
            "#stats [data-stat]", "els => els.map(e => [e.dataset.stat, e.dataset.value, e.textContent])")
        shown = {key: json.loads(value) for key, value, _ in cells}
        core_keys = [k for k in shown if k in expected["stats"]]
        assert len(core_keys) >= 15
        for key in core_keys:
            assert shown[key] == expected["stats"][key], key
        for key in ["units_in_documents", "chunks", "units_stored", "amplification", "chunks_whole", "chunks_part",
                    "retrieved", "best_rank", "context_chars", "context_tokens", "cost"]:
            assert key in shown, key  # every number of SPEC section 5
        assert shown["size_overlap"] == [request["chunking"]["size"], request["chunking"]["overlap"]]
        assert shown["ms"] > 0
        assert page.locator("#stats dt").count() == page.locator("#stats dd").count()
        text = {key: t for key, _, t in cells}
        assert text["chunks"] == f"{expected['stats']['chunks']:,}"
        assert text["cost"].startswith("$")
        assert page.locator("[data-verdict]").get_attribute("data-verdict") == (expected["verdict"]["kind"] or "")
        # The context panel: the retrieved chunks in rank order, as the core ranks them.
        heads = page.locator("#context h3").all_inner_texts()
        ranked = sorted((c for c in expected["chunks"] if c["retrieved"]), key=lambda c: c["rank"])
        assert [h.split(" · ")[:2] for h in heads] == [[f"Chunk {c['number']}", f"rank #{c['rank']}"] for c in ranked]
        joined = "\n\n".join(page.locator("#context .chunk-text").all_text_contents())
        assert joined.replace("✂ cut", "") == expected["context"]
    restore(page)


# --- dragging -------------------------------------------------------------------------------------

def test_dragging_chunk_size_cuts_the_answer_and_mends_it(page):
    restore(page)
    slider = page.get_by_label("Chunk size", exact=True)
    slider.focus()
    seen = []
    for key, size in [("ArrowRight", 25), ("ArrowLeft", 24), ("ArrowLeft", 23), ("ArrowRight", 24)]:
        slider.press(key)
        settle(page)
        assert page_request(page)["chunking"]["size"] == size
        assert page.locator("#param-size-value").inner_text() == f"{size} words"
        seen.append(verdict(page)[0])
        expected = api.simulate(page_request(page))["verdict"]["kind"]
        assert seen[-1] == expected
    assert seen == ["cut", "intact", "cut", "intact"]
    slider.press("ArrowRight")
    settle(page)
    assert verdict(page) == ("cut", "Cut in half", "No chunk holds the whole sentence: "
                             "it is split across chunks 3 and 4, and only chunk 3 was sent.")
    context = page.locator("#context")
    assert context.locator(".cut-mark").count() >= 1 and context.locator("mark").count() >= 1
    restore(page)


def test_top_k_ranks_the_answer_out(page):
    restore(page)
    k = page.get_by_label("Top k", exact=True)
    k.focus()
    k.press("ArrowLeft")
    settle(page)
    assert verdict(page) == ("ranked_out", "Ranked out", "Chunk 4 holds it whole but ranks #2, outside your top 1.")
    assert page.locator('[data-stat="retrieved"]').inner_text() == "1"
    k.press("ArrowRight")
    settle(page)
    assert verdict(page)[0] == "intact"


def test_overlap_stays_below_size_when_size_moves(page):
    restore(page)
    page.get_by_label("Chunk size", exact=True).fill("4")
    settle(page)
    chunking = page_request(page)["chunking"]
    assert (chunking["size"], chunking["overlap"]) == (4, 3)
    assert page.get_by_label("Overlap", exact=True).get_attribute("max") == "3"
    assert page.locator("#param-overlap-value").inner_text() == "3 words"
    restore(page)


# --- marking --------------------------------------------------------------------------------------

def assert_marked(page, start, end):
    """The page sends [start, end) as the span and shows the core's verdict and marks for it."""
    settle(page)
    req = page_request(page)
    assert req["span"] == {"doc": "doc", "start": start, "end": end}
    expected = api.simulate(req)
    assert verdict(page)[0] == (expected["verdict"]["kind"] or "")
    assert page.locator("#context mark").all_text_contents() == expected_marks(req, expected)


def test_marking_a_selection(page, example):
    restore(page)
    sentence = "Daily snapshots are kept for 30 days and weekly snapshots for 26 weeks."
    start = example["text"].index(sentence)
    page.evaluate("([a, b]) => { const t = document.getElementById('param-doc'); t.focus(); t.setSelectionRange(a, b); }",
                  [start - 1, start + len(sentence) + 1])  # with a space either side: trimmed
    page.get_by_role("button", name="Mark selection as answer").click()
    assert_marked(page, start, start + len(sentence))
    assert page.locator("#context mark").count() >= 1
    restore(page)


def test_clicking_a_sentence_in_the_picture_marks_it(page, example):
    restore(page)
    text = example["text"]
    sentence = "Restoring a snapshot creates a new volume and leaves the original untouched."
    start = text.index(sentence)
    canvas = page.locator("#picture")
    box = canvas.bounding_box()
    # The strip sits just above the axis labels at the bottom of the canvas; aim at the sentence's middle.
    x = 8 + (start + len(sentence) / 2) / len(text) * (box["width"] - 16)
    y = box["height"] - 16 - 4 - 9
    canvas.hover(position={"x": x, "y": y})
    assert page.locator("#detail-head").inner_text() == "Click to mark this sentence as the answer:"
    assert page.locator("#detail-text").inner_text() == sentence
    canvas.click(position={"x": x, "y": y})
    assert_marked(page, start, start + len(sentence))
    restore(page)


def test_edits_before_the_mark_shift_it_and_edits_inside_clear_it(page, example):
    restore(page)
    doc = page.get_by_label("Document", exact=True)
    doc.focus()
    page.keyboard.press("Control+Home")
    page.keyboard.type("Draft: ")
    settle(page)
    text = "Draft: " + example["text"]
    start, end = cp_span(text, example["answer"])
    assert page_request(page)["span"] == {"doc": "doc", "start": start, "end": end}
    assert verdict(page)[0] == api.simulate(page_request(page))["verdict"]["kind"]
    # Typing inside the marked sentence clears the mark, with a short message.
    page.evaluate("i => { const t = document.getElementById('param-doc'); t.setSelectionRange(i, i); }", start + 10)
    page.keyboard.type("X")
    settle(page)
    assert page_request(page)["span"] is None
    assert "Mark cleared" in page.locator("#mark-info").inner_text()
    assert verdict(page)[0] == ""
    restore(page)


# --- URL state ------------------------------------------------------------------------------------

def reopen(context, url):
    """Open `url` in a fresh tab: state is restored from the fragment before Python is even ready."""
    tab = context.new_page()
    tab.goto(url)
    tab.wait_for_function("() => window.ragsim && window.ragsim.request().documents[0].text.length > 0")
    request = tab.evaluate("window.ragsim.request()")
    tab.close()
    return request


def written_hash(page):
    """The fragment the page writes once the controls rest: waited for as that write itself, the first
    after the last change (not a guess at the page's 300 ms)."""
    page.wait_for_function("() => window.__writtenAt > window.__changedAt && location.hash.length > 1")
    return page.evaluate("location.hash")


def test_url_state_round_trips_compressed(page, server):
    restore(page)
    page.get_by_label("Question", exact=True).fill("when does compaction run")
    page.get_by_label("Top k", exact=True).fill("3")
    page.get_by_label("Price per million tokens", exact=True).fill("1.25")
    settle(page)
    fragment = written_hash(page)
    assert fragment.startswith("#z=")  # the example is long enough to be compressed
    sent = page_request(page)
    assert reopen(page.context, server.url(INDEX) + fragment) == sent
    restore(page)


def test_url_state_round_trips_plain_with_emoji_rtl_and_cjk(page, server):
    text = "🙂 Intro 😀 line. שלום עולם. 分块很重要。 The answer is forty-two. Then more text follows here."
    answer = "The answer is forty-two."
    fragment = f"#doc={quote(text)}&q={quote('what is the answer')}&size=8&overlap=3&k=1&answer={quote(answer)}"
    restore(page, fragment)
    start, end = cp_span(text, answer)  # code points: each emoji is one, not two
    assert_marked(page, start, end)
    assert verdict(page)[0] == "intact"
    assert page.locator("#context mark").all_text_contents() == [answer]  # not shifted by the emoji
    # Written back plain (short), with the answer as text, and restored on open.
    page.get_by_label("Top k", exact=True).fill("2")
    settle(page)
    fragment = written_hash(page)
    assert not fragment.startswith("#z=") and "answer=" in fragment
    assert reopen(page.context, server.url(INDEX) + fragment) == page_request(page)
    # span= in code points is honoured too.
    restore(page, f"#doc={quote(text)}&q=answer&span={start}-{end}")
    assert_marked(page, start, end)
    restore(page)


# --- bad input ------------------------------------------------------------------------------------

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


@pytest.mark.parametrize("fragment, note", [
    ("size=24&overlap=40", "overlap must be smaller than the chunk size"),
    ("size=abc", "Chunk size must be a whole number"),
    ("unit=" + quote(HOSTILE), "Unit must be words or characters"),
    ("span=99999-100010", "do not exist in this"),
    ("answer=" + quote("not in the text at all"), "does not occur in the document"),
    ("z=%%%not-base64", "compressed state could not be read"),
    ("z=AAAA", "compressed state could not be read"),
])
def test_bad_fragments_get_a_message_and_a_working_page(page, dialogs, fragment, note):
    restore(page, "#" + fragment)
    assert note in page.locator("#notice").inner_text()
    assert document_is_clean(page)
    assert dialogs == []
    assert verdict(page)[0] in ("intact", "ranked_out", "cut", "")


def document_is_clean(page):
    return page.evaluate("""() => document.querySelectorAll('img').length === 0
      && [...document.scripts].every(s => (s.type === 'module' && s.src.includes('/app.'))
        || (!s.type && s.src.includes('/assets/js/from-disk.')))""")


def test_hostile_text_in_document_question_and_url_runs_nothing(page, dialogs):
    fragment = f"#doc={quote(HOSTILE + ' and then some words.')}&q={quote(HOSTILE)}&answer={quote(HOSTILE)}"
    restore(page, fragment)
    assert page.get_by_label("Document", exact=True).input_value().startswith(HOSTILE)
    assert page.get_by_label("Question", exact=True).input_value() == HOSTILE
    assert HOSTILE in page.locator("#context").inner_text() or HOSTILE in page.locator("#context").text_content()
    page.locator("#picture").focus()
    page.keyboard.press("ArrowRight")
    assert "onerror" in page.locator("#detail-text").inner_text()
    # had the text become markup, its image would fail to load and its onerror open a dialog: wait
    # until every image has loaded or failed, and two frames have passed, instead of a fixed time
    page.wait_for_function("() => [...document.images].every((i) => i.complete)")
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert dialogs == []
    assert document_is_clean(page)
    restore(page)


def test_empty_document_and_wordless_question_keep_the_last_result(page):
    restore(page)
    before = verdict(page)
    page.get_by_label("Document", exact=True).fill("   ")
    page.wait_for_function("() => document.body.dataset.state === 'error'")
    assert "document is empty" in page.locator("#message").inner_text()
    assert verdict(page) == before  # the last good result stays visible
    restore(page)
    page.get_by_label("Question", exact=True).fill("?! ...")
    page.wait_for_function("() => document.body.dataset.state === 'error'")
    assert "no words" in page.locator("#message").inner_text()
    assert verdict(page) == before
    restore(page)
    assert page.locator("#message").is_hidden()


def test_a_five_megabyte_paste_never_freezes_the_page(page):
    restore(page)
    para = ("Compaction merges hourly snapshots. Restores read from object storage and can take minutes. " * 10 + "\n\n")
    big = para * (5_000_000 // len(para))
    page.get_by_label("Question", exact=True).fill("How long do restores take?")  # a question of one's own stays
    page.evaluate("""t => { const ta = document.getElementById('param-doc'); ta.value = t;
                           ta.dispatchEvent(new Event('input', {bubbles: true})); }""", big)
    page.get_by_label("Chunk size", exact=True).fill("400")
    # While the worker chews on it, the page still handles what a person does: typing in the
    # question changes the request at once, though the 5 MB simulation has not come back yet.
    assert page.evaluate("document.body.dataset.state") == "computing"
    question = page.get_by_label("Question", exact=True)
    question.fill("How long are restores?")
    assert page.evaluate("window.ragsim.request().query") == "How long are restores?"
    assert page.evaluate("document.body.dataset.state") == "computing"
    page.wait_for_function(SETTLED, polling=500, timeout=180_000)
    expected = api.simulate(page_request(page))["stats"]
    assert page.locator('[data-stat="chunks"]').get_attribute("data-value") == str(expected["chunks"])
    assert page.evaluate("window.ragsim.response().chunks.length") == expected["chunks"]
    restore(page)


# --- the picture ----------------------------------------------------------------------------------

def test_keyboard_focus_on_the_picture_describes_chunks(page):
    restore(page)
    page.locator("#picture").focus()
    head = page.locator("#detail-head")
    assert head.inner_text().startswith("Chunk 3 of 12 · rank #1 · score")  # focus starts at the top-ranked chunk
    page.keyboard.press("ArrowRight")
    assert head.inner_text().startswith("Chunk 4 of 12 · rank #2 · score")
    assert "holds the whole answer" in head.inner_text()
    chunk4 = next(c for c in api.simulate(page_request(page))["chunks"] if c["number"] == 4)
    text = page_request(page)["documents"][0]["text"][chunk4["start"]:chunk4["end"]]
    assert page.locator("#detail-text").inner_text() == text
    page.keyboard.press("End")
    assert head.inner_text().startswith("Chunk 12 of 12")


# --- when Python cannot load ----------------------------------------------------------------------

def test_a_failed_python_boot_says_so_and_why(browser, server, dialogs):
    """The core's wheel is refused: the page says Python could not load, and why, and the
    controls still work."""
    context = browser.new_context()
    context.route("**/*", lambda route: route.abort("blockedbyclient")
                  if "/ragsim-" in route.request.url or not server.owns(route.request.url) else route.continue_())
    try:
        tab = context.new_page()
        tab.goto(server.url(INDEX))
        tab.wait_for_function("() => document.body.dataset.state === 'error'", timeout=60_000)
        boot = tab.locator("#boot")
        assert boot.is_visible()
        assert boot.inner_text().startswith("Python could not be loaded, so nothing can be computed: ")
        assert len(boot.inner_text()) > len("Python could not be loaded, so nothing can be computed: ") + 10
        assert tab.locator("#verdict-headline").inner_text() == "Python could not be loaded"
        tab.get_by_label("Chunk size", exact=True).fill("30")
        assert tab.locator("#param-size-value").inner_text() == "30 words"
    finally:
        context.close()
