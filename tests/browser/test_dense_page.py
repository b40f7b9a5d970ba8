"""Dense and hybrid retrieval in the page (SPEC section 10), in real Chromium on dist/.

Choosing dense on the example starts the embedding worker (transformers.js + onnxruntime-web from
dist/); BM25 answers first, then the dense ranking follows. The ranks shown must be CPython's for
the same request (ragsim.api.simulate with onnxruntime as the host), and nothing leaves the origin."""

import json

import pytest

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
from ragsim.wire import api  # noqa: E402
from test_page import INDEX, page_request, restore, settle, verdict  # noqa: E402

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

DENSE_DONE = """() => {
  const r = window.ragsim, res = r.response();
  return document.body.dataset.state === "ready" && res && res.dense && !res.dense.pending
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def dense_settled(page, timeout=180_000):
    page.wait_for_function(DENSE_DONE, polling=100, timeout=timeout)
    return page


def ranks(chunks):
    return [(c["start"], c["end"], c["rank"]) for c in chunks]


def assert_ranked_as_cpython(page, method):
    request = page_request(page)
    assert request["retrieval"]["method"] == method
    expected = api.simulate(request)
    assert "error" not in expected, expected
    shown = page.evaluate("window.ragsim.response()")
    assert shown["dense"]["ranked_by"] == method and shown["dense"]["needs"] == []
    assert ranks(shown["chunks"]) == ranks(expected["chunks"])
    for a, b in zip(shown["chunks"], expected["chunks"]):
        assert abs(a["score"] - b["score"]) < 1e-5, (a, b)
        assert (a["truncated"], a["read_end"]) == (b["truncated"], b["read_end"])
    assert shown["verdict"] == expected["verdict"]
    return request, expected, shown


def test_dense_on_the_example_follows_bm25_and_equals_cpython(page, offsite, page_errors):
    restore(page)
    bm25 = page.evaluate("window.ragsim.response().chunks")
    page.get_by_label("Retriever", exact=True).select_option("dense")
    settle(page)  # BM25's answer at once, marked pending, while the model loads
    dense_settled(page)
    request, expected, shown = assert_ranked_as_cpython(page, "dense")
    assert ranks(shown["chunks"]) != ranks(bm25)  # the example's dense ranking differs from BM25's
    # the overlap sweep ranks densely too: its chunks are embedded on their own lane
    page.wait_for_function("() => document.body.dataset.dense === 'ready' && window.ragsim.sweep()", timeout=120_000)
    sweep_request = {**request, "sweep": page.evaluate("window.ragsim.sweep().map(r => r.overlap)")}
    for key in ("find", "cuts", "expand"):
        sweep_request.pop(key, None)
    page.wait_for_function("n => window.ragsim.sweep().length === n && !document.querySelector('#sweep[data-state=computing]')",
                           arg=len(sweep_request["sweep"]))
    assert page.evaluate("window.ragsim.sweep()") == api.simulate(sweep_request)["sweep"]
    # a drag embeds only chunks it has not seen: back to a size seen before embeds nothing (the
    # drag's own job; the settings ahead are embedded while the controls rest, test_dense_drag.py)
    main = "(window.ragsim.dense().lanes.main || 0)"
    embedded = page.evaluate(main)
    page.get_by_label("Chunk size", exact=True).fill("30")
    dense_settled(page)
    assert_ranked_as_cpython(page, "dense")
    after = page.evaluate(main)
    assert after > embedded
    page.get_by_label("Chunk size", exact=True).fill("24")
    dense_settled(page)
    page.get_by_label("Chunk size", exact=True).fill("30")
    dense_settled(page)
    assert page.evaluate(main) == after
    assert offsite == []
    assert [e for e in page_errors if "favicon" not in e] == []


def test_hybrid_fuses_with_the_weights_and_c_given(page):
    page.get_by_label("Retriever", exact=True).select_option("hybrid")
    dense_settled(page)
    assert_ranked_as_cpython(page, "hybrid")
    page.locator("details.advanced summary").click()
    page.get_by_label("RRF c", exact=True).fill("1")
    page.get_by_label("Dense weight", exact=True).fill("0.9")
    page.get_by_label("Dense weight", exact=True).press("Enter")
    dense_settled(page)
    request, _, _ = assert_ranked_as_cpython(page, "hybrid")
    assert request["retrieval"]["rrf_c"] == 1 and request["retrieval"]["weights"] == [0.5, 0.9]


def test_a_chunk_longer_than_the_model_reads_is_said_and_hatched(page):
    page.get_by_label("Retriever", exact=True).select_option("dense")
    page.get_by_label("Chunk size", exact=True).fill("300")
    dense_settled(page)
    request, expected, shown = assert_ranked_as_cpython(page, "dense")
    long = [c for c in shown["chunks"] if c["truncated"]]
    assert long, "a 300-word chunk is longer than 256 word pieces"
    text = verdict(page)[2]
    d = shown["dense"]
    n = (d["answer_unread"] or d["retrieved_truncated"])[0]
    c = next(c for c in shown["chunks"] if c["number"] == n)
    words = len(request["documents"][0]["text"][c["read_end"]:c["end"]].split())
    assert f"hunk {n} " in text and f"last {words} words" in text and "invisible to dense retrieval" in text
    # the unread tail is hatched: the picture's pixels there are not the plain retrieved blue
    assert page.evaluate("""() => {
      const c = document.getElementById('picture'), ctx = c.getContext('2d');
      const s = c.width / c.clientWidth, row = ctx.getImageData(0, Math.round(30 * s), c.width, 1).data;
      let hatch = 0;
      for (let x = 0; x < c.width; x++) { const [r, g, b] = [row[4*x], row[4*x+1], row[4*x+2]];
        if (Math.abs(r - 29) < 40 && Math.abs(g - 35) < 40 && Math.abs(b - 43) < 40) hatch++; }
      return hatch;
    }""") > 0


def test_a_model_that_cannot_load_says_so_and_bm25_stays(page, server):
    context = page.context.browser.new_context()  # its own cache: the model is not stored in it yet
    context.route("**/*", lambda route: route.continue_() if server.owns(route.request.url) and "/models/" not in route.request.url
                  else route.abort("blockedbyclient"))
    tab = context.new_page()
    try:
        tab.goto(server.url(INDEX))
        tab.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                              timeout=120_000)
        tab.get_by_label("Question", exact=True).fill("What did the committee decide?")
        tab.get_by_label("Retriever", exact=True).select_option("dense")
        tab.wait_for_function("() => document.body.dataset.dense === 'failed'", timeout=60_000)
        settle(tab)
        note = tab.locator(".control-method .needs-note").text_content()
        assert note.startswith("The embedding model could not be loaded") and "BM25 ranks instead" in note
        assert tab.get_by_label("Retriever", exact=True).input_value() == "bm25"
        assert tab.get_by_label("Question", exact=True).input_value() == "What did the committee decide?"
        assert "method" not in tab.evaluate("window.ragsim.shownRequest()")["retrieval"]
    finally:
        context.close()


def fresh_tab(page, server, blocked=()):
    """A tab of its own context (the model not yet loaded in it), requests to `blocked` paths aborted."""
    context = page.context.browser.new_context()
    context.route("**/*", lambda route: route.continue_() if server.owns(route.request.url)
                  and not any(b in route.request.url for b in blocked) else route.abort("blockedbyclient"))
    tab = context.new_page()
    tab.goto(server.url(INDEX))
    tab.wait_for_function("() => document.body.dataset.state === 'ready' && window.ragsim.shownRequest() !== null",
                          timeout=120_000)
    return context, tab


def test_pointing_at_the_retriever_loads_the_model_and_embeds_this_setting_ahead(page, server):
    # the model's seconds of loading, and this setting's chunks, run while the user chooses
    context, tab = fresh_tab(page, server)
    try:
        assert tab.evaluate("window.ragsim.dense().loadMs") is None
        tab.get_by_label("Retriever", exact=True).hover()
        tab.wait_for_function("() => window.ragsim.dense().loadMs !== null", timeout=120_000)
        tab.wait_for_function("() => { const d = window.ragsim.dense(); return (d.lanes.ahead || 0) > 0 && !d.jobs.length; }",
                              timeout=120_000)
        stats = tab.evaluate("window.ragsim.dense()")
        assert "main" not in stats["lanes"]  # nothing for the setting on screen: BM25 ranks it
        assert tab.locator(".control-method .needs-note").text_content() == ""  # BM25 is shown: no dense note
        assert "method" not in tab.evaluate("window.ragsim.shownRequest()")["retrieval"]
        assert verdict(tab)[0]  # the BM25 verdict stays on screen
        loaded = stats["loadMs"]
        tab.get_by_label("Retriever", exact=True).select_option("dense")
        dense_settled(tab)
        after = tab.evaluate("window.ragsim.dense()")
        assert after["loadMs"] == loaded  # not loaded again
        assert after["lanes"].get("main", 0) <= 1  # every chunk embedded ahead: at most the question is new
        assert_ranked_as_cpython(tab, "dense")
    finally:
        context.close()


def test_a_model_that_cannot_load_ahead_says_nothing_until_dense_is_chosen(page, server):
    context, tab = fresh_tab(page, server, blocked=("/models/",))
    try:
        tab.get_by_label("Retriever", exact=True).focus()
        tab.wait_for_function("() => window.ragsim.dense().state === 'loading'", timeout=60_000)
        tab.wait_for_function("() => window.ragsim.dense().state === 'idle'", timeout=60_000)
        assert tab.locator(".control-method .needs-note").text_content() == ""
        assert tab.locator("#message").is_hidden()
        tab.get_by_label("Retriever", exact=True).select_option("dense")  # asked for now: tried again, and said
        tab.wait_for_function("() => document.body.dataset.dense === 'failed'", timeout=60_000)
        settle(tab)
        note = tab.locator(".control-method .needs-note").text_content()
        assert note.startswith("The embedding model could not be loaded") and "BM25 ranks instead" in note
    finally:
        context.close()


def test_a_question_set_and_the_map_rank_each_question_densely(page):
    from test_questions_page import MAP_DONE, build_two

    page.get_by_label("Retriever", exact=True).select_option("bm25")
    build_two(page)
    page.locator("details.map-grid-edit summary").click()
    page.locator("#map-sizes").fill("16, 24")
    page.locator("#map-sizes").press("Enter")
    page.locator("#map-overlaps").fill("0, 6")
    page.locator("#map-overlaps").press("Enter")
    page.get_by_label("Retriever", exact=True).select_option("dense")
    dense_settled(page)
    request = page_request(page)
    assert len(request["questions"]) == 2
    expected = api.simulate(request)
    # The set is scored by a second request after the drag's result (question-scores.js).
    page.wait_for_function("() => { const q = window.ragsim.questionScores(); return q && q.state === 'fresh'; }", timeout=180_000)
    shown = page.evaluate("window.ragsim.questionScores().response")
    assert shown["dense"]["questions_pending"] is False
    assert [q["retrieved"] for q in shown["questions"]] == [q["retrieved"] for q in expected["questions"]]
    assert [q["verdict"] for q in shown["questions"]] == [q["verdict"] for q in expected["questions"]]
    bm25 = api.simulate({**request, "retrieval": {"k": request["retrieval"]["k"]}})
    assert [q["retrieved"] for q in shown["questions"]] != [q["retrieved"] for q in bm25["questions"]]
    page.locator("#map-start").click(timeout=180_000)  # the dense map waits to be started (its cost said)
    page.wait_for_function(MAP_DONE, timeout=180_000)
    grid = page.evaluate("() => window.ragsim.map().grid")
    assert grid == {"sizes": [16, 24], "overlaps": [0, 6]}
    assert page.evaluate("() => window.ragsim.map().cells") == api.simulate({**request, "map": grid})["map"]["cells"]


def test_the_audit_ranks_each_fact_name_densely(page):
    from ragsim.wire.audit import audit

    restore(page)
    facts = ("The Galle Ring orbits at 42,000 km. Kestrel Station has 14 crew. The relay at Vesta handles 300 messages "
             "a day. Ceres Yard builds 12 tugs each year. The Pallas array draws 8 megawatts at peak load. ")
    page.get_by_label("Document", exact=True).fill(facts)
    page.get_by_label("Chunk size", exact=True).fill("10")
    page.get_by_label("Retriever", exact=True).select_option("dense")
    dense_settled(page)
    req = page_request(page)
    page.wait_for_function("() => document.body.dataset.dense === 'ready'", timeout=120_000)
    embedded = page.evaluate("window.ragsim.dense().embedded")
    page.get_by_role("button", name="Run the audit").click()
    page.wait_for_function("() => document.getElementById('audit').dataset.state === 'done'", timeout=180_000)
    shown = page.evaluate("window.ragsim.audit()")
    chunking = {k: v for k, v in req["chunking"].items() if k != "overlap"}
    overlaps = [r["overlap"] for r in shown["rows"]]
    expected = audit({"documents": req["documents"], "chunking": chunking, "retrieval": req["retrieval"], "overlaps": overlaps})
    assert expected["facts"] and "error" not in expected
    keys = ["overlap", "chunks", "facts", "destroyed", "found_top_k"]
    assert [{k: r.get(k) for k in keys} for r in shown["rows"]] == [{k: r.get(k) for k in keys} for r in expected["rows"]]
    assert [f["found_at"] for f in shown["facts"]] == [f["found_at"] for f in expected["facts"]]
    assert page.evaluate("window.ragsim.dense().embedded") > embedded  # the audit's own splits, embedded by the page
