"""Semantic chunkers in the page (SPEC section 12), in real Chromium on dist/.

Choosing LangChain's SemanticChunker on a small text: the core names the sentence windows, the
embedding worker embeds them (all-MiniLM-L6-v2 from dist/), the curve is drawn under the picture
with one point per distance, and the chunks are CPython's for the same vectors' model. Dragging the
threshold (the line itself, by pointer and by keyboard) changes the cuts and the verdict while the
embedding worker embeds nothing more. A longer text's first embedding shows progress and stops."""

import contextlib
from urllib.parse import urlencode

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
from ragsim.host.clients import embed_onnx  # noqa: E402
from ragsim.split import semantic  # noqa: E402
from a11y import axe_violations  # noqa: E402
from test_page import INDEX, page_request, restore, settle, verdict  # noqa: E402

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

TOPICS = {
    "cats": ["Cats sleep for most of the day in warm places.", "A cat grooms its fur with a rough tongue.",
             "Kittens learn to hunt by playing with their siblings.", "Most cats dislike getting wet in the bath."],
    "volcanoes": ["Volcanoes erupt when magma rises through the crust.", "Lava flows can bury whole towns under rock.",
                  "Ash clouds from an eruption ground aeroplanes for days.", "Some volcanoes have slept for thousands of years."],
    "banks": ["The central bank raised interest rates again this quarter.", "Mortgage payments rise when rates go up.",
              "Savers earn more on deposits after a rate rise.", "Inflation fell slightly after the bank acted."],
}
TEXT = " ".join(s for group in TOPICS.values() for s in group)
# The answer spans the first topic change: one chunk holds it only while no cut falls between them.
ANSWER = f"{TOPICS['cats'][-1]} {TOPICS['volcanoes'][0]}"
QUESTION = "Why do volcanoes erupt?"
CHUNKING = {"strategy": "langchain-semantic"}

CURVE_SHOWN = """() => {
  const r = window.ragsim, res = r.response();
  return document.body.dataset.state === "ready" && res && !(res.semantic_needs || []).length
    && r.semantic().points > 0 && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def open_text(page, text, answer, strategy="langchain-semantic"):
    restore(page, urlencode({"doc": text, "q": QUESTION, "answer": answer, "strategy": strategy}))


def curve_settled(page, timeout=180_000):
    page.wait_for_function(CURVE_SHOWN, polling=100, timeout=timeout)
    return page.evaluate("window.ragsim.semantic()")


def cuts(page):
    """The worker's cuts for the shown document, as the response has them (code points)."""
    return page.evaluate("window.ragsim.response().documents[0].semantic.cuts")


def expected_chunks(request):
    """CPython's chunks for the request's text and chunking, embedded by onnxruntime (the same model)."""
    text, chunking = request["documents"][0]["text"], request["chunking"]
    vectors = embed_onnx.default_embedder().embed(semantic.texts_to_embed(text, chunking))
    chunks, curve = semantic.cut(text, chunking, [list(map(float, v)) for v in vectors])
    return [(c[0], c[1]) for c in chunks], curve


def shown_chunks(page):
    return [(c["start"], c["end"]) for c in page.evaluate("window.ragsim.response().chunks")]


def test_curve_is_drawn_and_the_threshold_drag_recuts_without_embedding(page, offsite, page_errors):
    open_text(page, TEXT, ANSWER)
    first = curve_settled(page)
    request = page_request(page)
    assert request["chunking"]["strategy"] == "langchain-semantic"
    windows = len(semantic.texts_to_embed(TEXT, request["chunking"]))
    assert first["jobs"] == 1 and first["embedded"] == windows  # every window embedded once, in one job
    # one point per distance between neighbouring windows, drawn as the polyline's vertices
    assert first["points"] == windows - 1
    points = page.locator("#semantic-base polyline").get_attribute("points").split(" ")
    assert len(points) == windows - 1
    chunks, curve = expected_chunks(request)
    assert shown_chunks(page) == chunks  # the page's chunks are CPython's (same model, onnxruntime there)
    assert cuts(page) == curve["cuts"]
    assert page.locator("#semantic-caption").inner_text().startswith("The curve is the distance (1 − cosine)")

    handle = page.locator("#semantic-curve .sem-handle")
    assert handle.get_attribute("role") == "slider"
    assert "95th percentile" in handle.get_attribute("aria-valuetext")

    # keyboard: End puts the line above every distance (nothing is cut: the answer is intact) ...
    handle.focus()
    page.keyboard.press("End")
    settle(page)
    page.wait_for_function(CURVE_SHOWN)
    assert page.evaluate("window.ragsim.request().chunking.breakpoint_threshold_amount") == 100
    assert cuts(page) == [] and verdict(page)[0] == "intact"
    assert handle.get_attribute("aria-valuetext").endswith(": 0 cuts")
    # ... Home below them (every boundary but the closest is cut, the topic change among them)
    page.keyboard.press("Home")
    settle(page)
    page.wait_for_function(CURVE_SHOWN)
    assert page.evaluate("window.ragsim.request().chunking.breakpoint_threshold_amount") == 0
    assert len(cuts(page)) == windows - 2 and verdict(page)[0] == "cut"

    # pointer: drag the knob up to the median distance; the cuts follow, the amount is set from the line
    # the keys have rested: the line is the worker's threshold for amount 0, no longer the keys' preview
    page.wait_for_function("() => document.getElementById('semantic-curve').dataset.preview === 'false'")
    box = page.locator("#semantic-curve .sem-knob").bounding_box()
    plot = page.locator("#semantic-curve").bounding_box()
    lo, hi = (float(handle.get_attribute(a)) for a in ("aria-valuemin", "aria-valuemax"))
    median = sorted(page.evaluate("window.ragsim.response().documents[0].semantic.distances"))[(windows - 1) // 2]
    target = plot["y"] + plot["height"] - 14 - (median - lo) / (hi - lo) * (plot["height"] - 28)  # the plot's own scale
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 6):
        page.mouse.move(x, y + step * (target - y) / 5)
    page.mouse.up()
    settle(page)
    page.wait_for_function(CURVE_SHOWN)
    amount = page.evaluate("window.ragsim.request().chunking.breakpoint_threshold_amount")
    assert 0 < amount < 100
    middle = cuts(page)
    assert 0 < len(middle) < windows - 2
    moved = page_request(page)
    chunks, curve = expected_chunks(moved)
    assert shown_chunks(page) == chunks and middle == curve["cuts"]
    # the number box shows the amount the line set
    assert float(page.get_by_label("breakpoint_threshold_amount", exact=True).input_value()) == amount

    after = page.evaluate("window.ragsim.semantic()")
    assert (after["jobs"], after["embedded"]) == (1, windows)  # every move re-cut from kept distances
    # accessible, and readable on a phone: the curve fits 390 px and keeps its points
    assert axe_violations(page, include="#semantic") == []
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("() => document.getElementById('semantic-curve').getBoundingClientRect().width <= 390")
    curve_box = page.locator("#semantic-curve").bounding_box()
    assert curve_box["x"] >= 0 and curve_box["x"] + curve_box["width"] <= 390 and curve_box["height"] >= 90
    assert len(page.locator("#semantic-base polyline").get_attribute("points").split(" ")) == windows - 1
    assert axe_violations(page, include="#semantic") == []
    page.set_viewport_size({"width": 1280, "height": 720})
    assert offsite == []
    assert [e for e in page_errors if "favicon" not in e] == []


# Each strategy's own fields as controls (by the library's names), and a few that must not show.
FIELDS = {
    "langchain-semantic": (["buffer_size", "breakpoint_threshold_type", "breakpoint_threshold_amount",
                            "number_of_chunks (0: none)", "sentence_split_regex", "min_chunk_size"],
                           ["breakpoint_percentile_threshold", "Chunk size", "Overlap"]),
    "llamaindex-semantic": (["buffer_size", "breakpoint_percentile_threshold"],
                            ["breakpoint_threshold_amount", "min_chunk_size", "Chunk size", "Overlap"]),
    "chroma-cluster": (["Chunk size", "min_chunk_size", "tokenizer"], ["buffer_size", "Overlap"]),
    "chroma-kamradt": (["Chunk size", "min_chunk_size", "tokenizer"], ["buffer_size", "Overlap"]),
}


def test_the_four_are_in_the_splitter_list_with_their_fields_as_controls(page):
    restore(page)
    splitter = page.get_by_label("Splitter", exact=True)
    for strategy, (shown, hidden) in FIELDS.items():
        splitter.select_option(strategy)
        for label in shown:
            assert page.get_by_label(label, exact=True).is_visible(), (strategy, label)
        for label in hidden:
            assert not page.get_by_label(label, exact=True).is_visible(), (strategy, label)
    splitter.select_option("window")
    settle(page)


def test_a_new_threshold_type_takes_its_default_amount_and_recuts_without_embedding(page):
    open_text(page, TEXT, ANSWER)
    before = curve_settled(page)
    page.get_by_label("breakpoint_threshold_type", exact=True).select_option("standard_deviation")
    settle(page)
    page.wait_for_function(CURVE_SHOWN)
    request = page_request(page)
    assert request["chunking"]["breakpoint_threshold_amount"] == 3  # LangChain's default for the type
    chunks, curve = expected_chunks(request)
    assert shown_chunks(page) == chunks and cuts(page) == curve["cuts"]
    assert "mean + 3 standard deviations" in page.locator("#semantic-curve .sem-handle").get_attribute("aria-valuetext")
    after = page.evaluate("window.ragsim.semantic()")
    assert (after["jobs"], after["embedded"]) == (before["jobs"], before["embedded"])
    page.get_by_label("breakpoint_threshold_type", exact=True).select_option("percentile")
    settle(page)


def test_a_new_worker_gets_the_kept_vectors_without_embedding_again(page):
    """The Python worker lost (a missed deadline) and replaced: its session has no distances, so it
    names the text's key again, and the page sends the vectors it kept by that key."""
    open_text(page, TEXT, ANSWER)
    before = curve_settled(page)
    restarts = page.evaluate("window.ragsim.restarts()")
    top_k = page.get_by_label("Top k", exact=True)
    k = top_k.input_value()
    page.evaluate("window.ragsim.setDeadline(1)")  # test-only: every request now misses its deadline
    try:
        # a new request, whatever k the page had; asked again if its reply was taken before the 1 ms timer
        # (Chromium may run a ready message before a due timer on a busy thread: the k move alone re-ranks)
        for attempt in range(6):
            top_k.fill(("4" if k == "3" else "3") if attempt % 2 == 0 else ("5" if k == "3" else "2"))
            with contextlib.suppress(PlaywrightTimeout):
                page.wait_for_function(f"() => window.ragsim.restarts() > {restarts}", timeout=10_000)
                break
        assert page.evaluate("window.ragsim.restarts()") > restarts, "no request missed its 1 ms deadline"
    finally:  # a failure here must not leave the module's page missing every deadline
        page.evaluate("window.ragsim.setDeadline(null)")
    top_k.fill(k)
    after = curve_settled(page, timeout=120_000)
    assert after["attached"] > before["attached"]  # sent again from the page's keeping ...
    assert (after["jobs"], after["embedded"]) == (before["jobs"], before["embedded"])  # ... not embedded again
    assert after["points"] == before["points"]
    # the new worker's session prepared the key afresh: its curve came whole, though the page held it
    assert after["curvesWhole"] > before["curvesWhole"]


def test_a_threshold_move_gets_only_the_cuts_and_the_page_keeps_the_curve(page):
    """Every request says which keys' curves the page holds (`semantic_have`); the worker then
    answers a move with the threshold and the cuts only, and the page puts its kept curve back."""
    open_text(page, TEXT, ANSWER)
    curve_settled(page)
    curve = page.evaluate("window.ragsim.response().documents[0].semantic")
    before = page.evaluate("window.ragsim.semantic()")
    assert before["curvesWhole"] >= 1
    handle = page.locator("#semantic-curve .sem-handle")
    handle.focus()
    for _ in range(2):
        page.keyboard.press("PageDown")
        settle(page)
        page.wait_for_function(CURVE_SHOWN)
    after = page.evaluate("window.ragsim.semantic()")
    assert after["curvesKept"] >= before["curvesKept"] + 2 and after["curvesWhole"] == before["curvesWhole"]
    moved = page.evaluate("window.ragsim.response().documents[0].semantic")
    assert moved["threshold"] < curve["threshold"] and len(moved["cuts"]) > len(curve["cuts"])
    assert moved["distances"] == curve["distances"] and moved["positions"] == curve["positions"]
    chunks, expected = expected_chunks(page_request(page))
    assert shown_chunks(page) == chunks and moved["cuts"] == expected["cuts"]
    assert after["points"] == len(curve["distances"]) and after["cuts"] == len(moved["cuts"])
    assert len(page.locator("#semantic-base polyline").get_attribute("points").split(" ")) == len(curve["distances"])


STRATEGIES = [("llamaindex-semantic", "The curve is the distance (1 − cosine)", None),
              ("chroma-cluster", "ClusterSemanticChunker has no threshold", "true"),
              ("chroma-kamradt", "KamradtModifiedChunker searches its threshold from the chunk size", "true")]


@pytest.mark.parametrize("strategy, caption, disabled", STRATEGIES)
def test_each_semantic_strategy_draws_its_curve(page, strategy, caption, disabled):
    open_text(page, TEXT, ANSWER, strategy)
    state = curve_settled(page)
    curve = page.evaluate("window.ragsim.response().documents[0].semantic")
    assert state["points"] == len(curve["distances"]) > 0
    assert page.locator("#semantic-caption").inner_text().startswith(caption)
    assert page.locator("#semantic-curve .sem-handle").get_attribute("aria-disabled") == disabled
    chunks, expected = expected_chunks(page_request(page))
    assert shown_chunks(page) == chunks and curve["cuts"] == expected["cuts"]


def test_first_embedding_of_a_long_text_shows_progress_and_stops(page, page_errors):
    long_text = " ".join(f"Part {i}. " + " ".join(s for group in TOPICS.values() for s in group) for i in range(40))
    open_text(page, long_text, ANSWER)
    status = page.locator("#semantic-status")
    page.wait_for_function("() => /Embedding sentence windows: [1-9][\\d,]* of [\\d,]+/.test(document.getElementById('semantic-status').textContent)",
                           timeout=180_000)
    assert page.evaluate("document.body.dataset.semantic") == "embedding"
    page.get_by_role("button", name="Stop").click()
    page.wait_for_function("() => document.body.dataset.semantic === 'stopped'", timeout=30_000)
    assert "Resume embedding" in status.inner_text()
    assert verdict(page)[0] == "pending"
    # the page stays usable: another setting computes, and embeds nothing while stopped
    jobs = page.evaluate("window.ragsim.semantic().jobs")
    page.get_by_label("Top k", exact=True).fill("3")
    settle(page)
    assert verdict(page)[0] == "pending" and page.evaluate("window.ragsim.semantic().jobs") == jobs
    page.get_by_role("button", name="Resume embedding").click()
    state = curve_settled(page, timeout=300_000)
    assert state["jobs"] == jobs + 1 and state["points"] > 100
    assert verdict(page)[0] in ("intact", "ranked_out", "cut")
    assert [e for e in page_errors if "favicon" not in e] == []
