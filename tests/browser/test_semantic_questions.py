"""Question sets and the settings map for the semantic chunkers in the page, in Chromium.

A person pastes a document, imports a question set and chooses LangChain's SemanticChunker: while
the sentence windows are embedded the set's panel says it waits (in the embedding's own words), then
the set is scored, and the scores are CPython's `ragsim.api.simulate` for the request the page sent
(the onnxruntime embedder, the same model). The map's axes are the strategy's own fields (threshold
amount x min_chunk_size; LlamaIndex's percentile alone, one column), each cell is the core's, a
click sets those fields, and nothing is embedded again for the set or the map."""

import json
import os

import pytest

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
import ragsim.host  # noqa: E402
from ragsim.split import semantic  # noqa: E402
from ragsim.wire import api, question_io  # noqa: E402
from a11y import FRAME  # noqa: E402
from test_page import INDEX, page_request, restore, settle  # noqa: E402
from test_semantic_page import ANSWER, TEXT, TOPICS  # noqa: E402

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

ragsim.host.register()  # the onnxruntime embedder: CPython's semantic chunks need no vectors

C, V, B = TOPICS["cats"], TOPICS["volcanoes"], TOPICS["banks"]
QUESTIONS = [  # (query, the passages its answer needs): each two sentences, one across the first topic change
    ("Why do volcanoes erupt and what does lava do?", [f"{V[0]} {V[1]}"]),
    ("How do cats groom and how do kittens learn to hunt?", [f"{C[1]} {C[2]}"]),
    ("What happens to mortgages and savers when rates rise?", [f"{B[1]} {B[2]}"]),
    ("Do cats like baths, and why do volcanoes erupt?", [ANSWER]),
]
MAP_DONE = "() => { const m = window.ragsim.map(); return m && m.state === 'done'; }"
# The set scored for the request on screen, once the page holds the vectors (nothing left to embed).
SCORED = """() => {
  const r = window.ragsim, res = r.response(), q = r.questionScores();
  return document.body.dataset.state === "ready" && res && !(res.semantic_needs || []).length && q && q.state === "fresh"
    && JSON.stringify(r.shownRequest()) === JSON.stringify(r.request());
}"""
# Every text the set's summary and the map's status showed, in order (from before the strategy is chosen).
RECORD = """() => {
  window.__said = [];
  for (const id of ["qs-summary", "map-status"]) {
    const el = document.getElementById(id);
    new MutationObserver(() => window.__said.push([id, el.textContent])).observe(el, { childList: true, characterData: true, subtree: true });
  }
}"""
SHOTS = os.environ.get("SEMSETS_SHOTS")  # a folder: the screenshots for the report are saved there


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def question_file(request):
    """Our question-set JSON for the pasted document, as ragsim.question_io writes it."""
    doc = request["documents"][0]
    questions = []
    for i, (query, pieces) in enumerate(QUESTIONS, 1):
        refs = [{"doc": doc["id"], "start": doc["text"].index(p), "end": doc["text"].index(p) + len(p)} for p in pieces]
        questions.append({"id": str(i), "query": query, "references": refs})
    out = question_io.export_questions({"questions": questions, "documents": [doc], "format": "json"})
    return out["text"].encode()


def scored(page):
    page.wait_for_function(SCORED, polling=100, timeout=180_000)
    return page.evaluate("window.ragsim.questionScores()")


def stats_of(cell):
    return {k: cell[k] for k in ("intact", "ranked_out", "cut")}, [cell[k] for k in ("recall_mean", "iou_mean", "context_tokens_mean")]


def load_set(page):
    """The text pasted, its question asked at top k 1, and the question set imported."""
    restore(page)
    page.get_by_label("Document", exact=True).fill(TEXT)  # pasted
    page.get_by_label("Question", exact=True).fill(QUESTIONS[0][0])
    page.get_by_label("Top k", exact=True).fill("1")
    settle(page)
    page.locator("#import-questions").set_input_files(
        {"name": "questions.json", "mimeType": "application/json", "buffer": question_file(page_request(page))})
    page.wait_for_function(f"() => window.ragsim.questions().length === {len(QUESTIONS)}")


def test_a_semantic_question_set_and_its_map(page, offsite, page_errors):
    load_set(page)
    settle(page)
    page.evaluate(RECORD)
    page.get_by_label("Splitter", exact=True).select_option("langchain-semantic")
    scores = scored(page)
    req = page_request(page)
    assert req["chunking"]["strategy"] == "langchain-semantic" and len(req["questions"]) == len(QUESTIONS)

    # While the windows were embedded, the panel said it waits, in the embedding job's own words.
    said = page.evaluate("window.__said")
    waits = [t for id_, t in said if id_ == "qs-summary" and t.startswith("The question set waits for the embedding (")]
    assert any("Embedding sentence windows: " in t for t in waits), said
    assert any(id_ == "map-status" and t.startswith("The map waits for the embedding") for id_, t in said), said
    assert not any(id_ == "qs-summary" and "0 of 4 answers intact" in t for id_, t in said)  # never scored as if unsplit

    # The scores are CPython's for the same request (onnxruntime embeds there).
    expected = api.simulate(req)
    assert "error" not in expected and expected["semantic_needs"] == []
    assert scores["response"]["questions"] == expected["questions"]
    assert scores["response"]["question_stats"] == expected["question_stats"]
    verdicts = page.evaluate("""() => [...document.querySelectorAll("#qs-list > li")].map(
        (li) => [li.dataset.id, li.querySelector(".qs-verdict").dataset.verdict])""")
    assert verdicts == [[q["id"], q["verdict"]] for q in expected["questions"]]
    sem = page.evaluate("window.ragsim.semantic()")
    assert (sem["jobs"], sem["embedded"]) == (1, len(semantic.texts_to_embed(TEXT, req["chunking"])))  # once, in one job

    # The map: the strategy's own axes, labelled by their names, every cell the core's.
    page.wait_for_function(MAP_DONE, timeout=120_000)
    shown = page.evaluate("window.ragsim.map()")
    grid = shown["grid"]
    assert grid["fields"] == ["breakpoint_threshold_amount", "min_chunk_size"]
    assert grid["sizes"] == [50, 60, 70, 75, 80, 85, 90, 95, 98, 99] and grid["overlaps"] == [0, 100, 200, 400, 800, 1600]
    corner = page.locator("#map-table th.map-corner").inner_text()
    assert corner == "Breakpoint threshold (percentile) ↓ Min chunk size →"
    caption = page.locator("#map-table caption").inner_text()
    assert caption.startswith("Answers intact (of 4) at each breakpoint threshold (percentile) (rows) and min chunk size in characters (columns)")
    assert "The map costs no embedding" in caption
    cells = api.simulate({**req, "map": {"sizes": grid["sizes"], "overlaps": grid["overlaps"]}})["map"]["cells"]
    assert shown["cells"] == cells
    if SHOTS:
        page.set_viewport_size({"width": 1366, "height": 768})
        page.locator("#qs-results").scroll_into_view_if_needed()
        page.screenshot(path=f"{SHOTS}/semsets-langchain-1366.png", full_page=False)
        page.locator("#map-section").screenshot(path=f"{SHOTS}/semsets-map-1366.png")

    # A cell equals a direct request at its setting; clicking it sets those fields, and the set's
    # scores are then that request's.
    amount, least = 60, 100  # all four intact there, three at the page's own setting (95, none)
    i, j = grid["sizes"].index(amount), grid["overlaps"].index(least)
    direct = api.simulate({**req, "chunking": {**req["chunking"], "breakpoint_threshold_amount": amount, "min_chunk_size": least}})
    counts, means = stats_of(cells[i][j])
    assert counts["intact"] == 4 and stats_of(scores["response"]["question_stats"])[0]["intact"] == 3
    assert counts == stats_of(direct["question_stats"])[0]
    assert means == pytest.approx(stats_of(direct["question_stats"])[1], abs=1e-9)
    button = page.locator(f"#map-table button[data-size='{amount}'][data-overlap='{least}']")
    assert button.get_attribute("aria-label").startswith(f"threshold {amount}, min size {least}: ")
    button.click()
    scores = scored(page)
    moved = page_request(page)
    assert (moved["chunking"]["breakpoint_threshold_amount"], moved["chunking"]["min_chunk_size"]) == (amount, least)
    assert page.get_by_label("breakpoint_threshold_amount", exact=True).input_value().startswith(str(amount))
    assert scores["response"]["question_stats"] == direct["question_stats"]
    assert page.locator("#qs-summary").inner_text().startswith("At these settings: All 4 answers intact")
    assert page.locator("#map-table td.map-current button").get_attribute("data-size") == str(amount)
    assert page.evaluate("window.ragsim.map().state") == "done"  # its own fields do not restart it
    assert f"Set threshold {amount}, min size {least} from the map." in page.locator("#mark-info").inner_text()
    after = page.evaluate("window.ragsim.semantic()")
    assert (after["jobs"], after["embedded"]) == (sem["jobs"], sem["embedded"])  # nothing embedded again

    # Another threshold type: the rows become its amounts; a grid typed with decimals is kept.
    page.get_by_label("breakpoint_threshold_type", exact=True).select_option("standard_deviation")
    scored(page)
    page.wait_for_function(MAP_DONE, timeout=120_000)
    assert page.evaluate("window.ragsim.map().grid.sizes") == [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5]
    assert page.locator("#map-table th.map-corner").inner_text().startswith("Breakpoint threshold (standard_deviation) ↓")
    page.locator(".map-grid-edit summary").click()
    assert page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).input_value() == "0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5"
    page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).fill("0.25, 1.5")
    page.get_by_label("Min chunk size", exact=True).fill("0, 300")
    page.get_by_label("Min chunk size", exact=True).press("Enter")
    page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).dispatch_event("change")
    page.wait_for_function("() => window.ragsim.map().grid.sizes.join() === '0.25,1.5' && window.ragsim.map().state === 'done'", timeout=60_000)
    req = page_request(page)
    shown = page.evaluate("window.ragsim.map()")
    assert shown["grid"]["overlaps"] == [0, 300]
    assert shown["cells"] == api.simulate({**req, "map": {"sizes": [0.25, 1.5], "overlaps": [0, 300]}})["map"]["cells"]
    page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).fill("0.5, x")
    page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).dispatch_event("change")
    assert page.locator("#map-grid-note").inner_text() == "Thresholds are numbers of at least 0; “x” is not one."
    page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).fill("0.25, 1.5")
    page.get_by_label("Breakpoint threshold (standard_deviation)", exact=True).dispatch_event("change")
    assert page.locator("#map-grid-note").inner_text() == ""
    assert page.evaluate("window.ragsim.semantic()")["jobs"] == sem["jobs"]  # the type re-cuts from kept distances

    # LlamaIndex's splitter: one axis (its percentile), one column.
    page.get_by_label("Splitter", exact=True).select_option("llamaindex-semantic")
    scores = scored(page)
    req = page_request(page)
    assert scores["response"]["questions"] == api.simulate(req)["questions"]
    page.wait_for_function(MAP_DONE, timeout=120_000)
    shown = page.evaluate("window.ragsim.map()")
    assert shown["grid"]["fields"] == ["breakpoint_percentile_threshold"] and shown["grid"]["overlaps"] == [0]
    assert page.locator("#map-table th.map-corner").inner_text() == "Breakpoint percentile threshold ↓"
    assert page.locator("#map-table thead th").all_inner_texts()[1:] == ["answers intact"]
    assert page.locator("#map-overlaps").is_hidden() and page.locator("#map-grid-note").inner_text() == ""
    assert shown["cells"] == api.simulate({**req, "map": {"sizes": shown["grid"]["sizes"], "overlaps": [0]}})["map"]["cells"]
    llama = page.evaluate("window.ragsim.semantic()")
    assert llama["jobs"] == after["jobs"] + 1  # its own windows, embedded once; the map embedded nothing
    page.locator(f"#map-table button[data-size='80']").click()
    scored(page)
    assert page_request(page)["chunking"]["breakpoint_percentile_threshold"] == 80
    assert page.evaluate("window.ragsim.semantic()")["jobs"] == llama["jobs"]

    # Chroma's ClusterSemanticChunker: its chunk size (max_chunk_size, in tokens) alone.
    page.get_by_label("Splitter", exact=True).select_option("chroma-cluster")
    scored(page)
    page.wait_for_function(MAP_DONE, timeout=120_000)
    req = page_request(page)
    shown = page.evaluate("window.ragsim.map()")
    assert shown["grid"]["fields"] == ["size"] and shown["grid"]["sizes"] == [100, 200, 300, 400, 500, 600, 800, 1000, 1500, 2000]
    assert page.locator("#map-table th.map-corner").inner_text() == "Max chunk size ↓"
    assert page.locator("#map-table caption").inner_text().startswith("Answers intact (of 4) at each max chunk size in tokens (rows);")
    assert shown["cells"] == api.simulate({**req, "map": {"sizes": shown["grid"]["sizes"], "overlaps": [0]}})["map"]["cells"]
    chroma = page.evaluate("window.ragsim.semantic()")
    page.locator("#map-table button[data-size='200']").click()
    scored(page)
    assert page_request(page)["chunking"]["size"] == 200
    assert page.evaluate("window.ragsim.semantic()")["jobs"] == chroma["jobs"]
    if SHOTS:
        page.set_viewport_size({"width": 390, "height": 844})
        page.evaluate(FRAME)  # laid out again at the phone's width
        page.locator("#qs-results").scroll_into_view_if_needed()
        page.screenshot(path=f"{SHOTS}/semsets-chroma-390.png", full_page=False)
        page.locator("#map-section").screenshot(path=f"{SHOTS}/semsets-map-390.png")
        page.set_viewport_size({"width": 1280, "height": 720})
    assert offsite == []
    assert [e for e in page_errors if "favicon" not in e] == []
    page.locator(".map-grid-edit summary").click()
    page.locator("#clear-questions").click()
    page.get_by_label("Splitter", exact=True).select_option("window")
    settle(page)


def test_the_dense_map_over_semantic_chunks_embeds_chunks_not_windows(page):
    """Dense retrieval over LangChain's semantic chunks: the core maps it (nothing refused); the map
    says what it embeds (each cell's chunks, after Start, as every dense map) and the sentence windows
    are not embedded again."""
    load_set(page)
    page.get_by_label("Splitter", exact=True).select_option("langchain-semantic")
    scored(page)
    windows = page.evaluate("window.ragsim.semantic()")
    page.get_by_label("Retriever", exact=True).select_option("dense")
    page.wait_for_function("() => !document.getElementById('map-start').hidden", timeout=180_000)
    assert page.locator("#map-status").inner_text().startswith("The dense map embeds every cell's chunks: ")
    page.locator("#map-start").click()
    page.wait_for_function(MAP_DONE, timeout=300_000)
    assert page.locator("#map-table caption").inner_text().endswith(
        "The sentence windows are not embedded again; dense retrieval embeds each cell's chunks.")
    req = page_request(page)
    shown = page.evaluate("window.ragsim.map()")
    expected = api.simulate({**req, "map": {"sizes": shown["grid"]["sizes"], "overlaps": shown["grid"]["overlaps"]}})
    assert shown["cells"] == expected["map"]["cells"]
    after = page.evaluate("window.ragsim.semantic()")
    assert (after["jobs"], after["embedded"]) == (windows["jobs"], windows["embedded"])
    page.get_by_label("Retriever", exact=True).select_option("bm25")
    page.locator("#clear-questions").click()
    page.get_by_label("Splitter", exact=True).select_option("window")
    settle(page)
