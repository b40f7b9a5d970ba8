"""The question set and the settings map on the page, in Chromium.

Each test is one thing a person does: build a set by selecting text, import Chroma's CSV (a bad row
named and skipped), watch the map fill in and click a cell, share the set in a link, embed the map.
What the page shows is checked against CPython's `ragsim.api.simulate` for the request the page
sent, so the page can only pass by showing what the core computed."""

import base64
import csv
import io
import json
import zlib
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ragsim.wire import api, question_io
from test_collection_page import select_text as select
from test_page import INDEX, WATCH_WRITES, page_request, written_hash
from test_page import settle as settle_result

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

HOURLY = "Hourly snapshots are kept for 48 hours, after which the nightly compaction job merges them into a single daily snapshot."
COMPACTION = "Compaction runs at 02:00 in the volume's own time zone"
BUSY = "If a volume is busy for more than ten minutes"
RESTORE = "Restoring a snapshot creates a new volume and leaves the original untouched."
MAP_DONE = "() => { const m = window.ragsim.map(); return m && m.state === 'done'; }"
SCORED = "() => { const q = window.ragsim.questionScores(); return q !== null && q.state !== 'stale'; }"


def settle(page):
    """The drag's result on screen, then the question set's scores for it (a second request)."""
    settle_result(page)
    page.wait_for_function(SCORED, polling=50)
    return page


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


def restore(page, fragment="size=24"):
    """Back to the example (or `fragment`) through the URL, waiting until the page has applied it, so
    no late hashchange replaces what a test does next (`fragment` must not set k=7)."""
    page.evaluate(WATCH_WRITES)  # written_hash waits for the page's own write after the last change
    for h, done in (("k=7", "=== 7"), (fragment, "!== 7")):
        # The page rewrites its own fragment once its controls rest (replaceState, no hashchange);
        # a rewrite landing between our assignment and its hashchange replaces what we set, so a
        # fragment not applied within a few seconds is set again.
        for attempt in range(6):
            page.evaluate("h => { location.hash = h; }", h)
            try:
                page.wait_for_function(f"() => window.ragsim.request().retrieval.k {done}", timeout=5_000)
                break
            except PlaywrightTimeout:
                if attempt == 5:
                    raise
    return settle(page)


def ref(request, piece):
    text = request["documents"][0]["text"]
    start = text.index(piece)
    return {"doc": "doc", "start": start, "end": start + len(piece)}


def build_two(page):
    """The example's marked answer as question 1; question 2 needs two places."""
    restore(page)
    page.get_by_role("button", name="Add to question set").click()
    page.get_by_label("Question", exact=True).fill("When does compaction run?")
    select(page, COMPACTION)
    page.get_by_role("button", name="Mark selection as answer").click()
    page.get_by_role("button", name="Add to question set").click()
    select(page, BUSY)
    page.get_by_role("button", name="Mark selection as answer").click()
    page.get_by_role("button", name="Add another span to this answer").click()
    return settle(page)


def shown_verdicts(page):
    return page.evaluate("""() => [...document.querySelectorAll("#qs-list > li")].map(
        (li) => [li.dataset.id, li.querySelector(".qs-verdict").dataset.verdict])""")


def test_two_question_set_built_by_selecting_text(page):
    build_two(page)
    req = page_request(page)
    assert req["questions"] == [
        {"id": "1", "query": "How long do hourly snapshots last?", "references": [ref(req, HOURLY)]},
        {"id": "2", "query": "When does compaction run?", "references": [ref(req, COMPACTION), ref(req, BUSY)]},
    ]
    expected = api.simulate(req)
    assert shown_verdicts(page) == [[q["id"], q["verdict"]] for q in expected["questions"]]
    st = expected["question_stats"]
    summary = page.locator("#qs-summary").inner_text()
    assert f"{st['intact']} of 2 answers intact" in summary or (st["intact"] == 2 and "All 2 answers intact" in summary)
    assert f"recall {st['recall_mean']:.2f}\u00a0± {st['recall_std']:.2f}" in summary
    assert f"IoU {st['iou_mean']:.2f}\u00a0± {st['iou_std']:.2f}" in summary
    rows = page.locator("#qs-table tbody tr")
    assert rows.count() == 2
    for i, q in enumerate(expected["questions"]):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[0] == q["verdict"].replace("_", " ")
        assert cells[2:5] == [f"{q['recall']:.2f}", f"{q['precision']:.2f}", f"{q['iou']:.2f}"]
        assert cells[5] == f"{q['precision_omega']:.2f}" and cells[6] == str(q["context_tokens"])
    assert page.locator("#qs-table caption").count() == 1
    # Editing a question's query, and clicking a question: its query and first span come back.
    page.get_by_label("Question 2's query").fill("When is compaction?")
    page.get_by_label("Question 2's query").press("Enter")
    page.get_by_role("button", name="Load question 1: its query and its answer's spans").click()
    settle(page)
    req = page_request(page)
    assert req["query"] == "How long do hourly snapshots last?"
    assert (req["span"]["start"], req["span"]["end"]) == (ref(req, HOURLY)["start"], ref(req, HOURLY)["end"])
    assert req["questions"][1]["query"] == "When is compaction?"
    page.get_by_role("button", name="Remove question 1").click()
    settle(page)
    assert [q["id"] for q in page_request(page)["questions"]] == ["2"]


def test_clicking_a_two_span_question_marks_both_spans(page):
    build_two(page)
    page.get_by_role("button", name="Load question 1: its query and its answer's spans").click()
    settle(page)
    assert len(page.evaluate("window.ragsim.bands()")) == 1
    page.get_by_role("button", name="Load question 2: its query and its answer's spans").click()
    settle(page)
    req = page_request(page)
    assert req["query"] == "When does compaction run?"
    assert (req["span"]["start"], req["span"]["end"]) == (ref(req, COMPACTION)["start"], ref(req, COMPACTION)["end"])
    # Both spans drawn as bands, left to right as in the text (COMPACTION comes before BUSY).
    bands = page.evaluate("window.ragsim.bands()")
    assert len(bands) == 2 and bands[0][1] <= bands[1][0]
    assert "all 2 spans of its answer marked" in page.locator("#mark-info").inner_text()
    # The verdict is the core's verdict for the question (every span must reach the model whole).
    expected = next(q for q in api.simulate(req)["questions"] if q["id"] == "2")
    assert page.locator("[role=status][data-verdict]").get_attribute("data-verdict") == expected["verdict"]
    assert page.evaluate("window.ragsim.response()")["questions"][0]["verdict"] == expected["verdict"]
    assert "2 spans" in page.locator("#verdict-text").inner_text()
    # Marking something else leaves one span again.
    page.get_by_role("button", name="Load question 1: its query and its answer's spans").click()
    settle(page)
    assert len(page.evaluate("window.ragsim.bands()")) == 1
    assert "questions" not in page.evaluate("window.ragsim.response()")


def test_a_drag_result_does_not_wait_for_the_set(page):
    build_two(page)
    log_from = len(page.evaluate("window.ragsim.questionScores().log"))
    page.evaluate("""() => { const s = document.querySelector('#param-size');
        s.value = String(Number(s.value) + 4); s.dispatchEvent(new Event('input', { bubbles: true })); }""")
    settle(page)
    req = page_request(page)
    # The drag's own response has no set in it: the core ranked only the marked answer's query.
    main = page.evaluate("window.ragsim.response()")
    assert "question_stats" not in main and "questions" not in main
    # The set came in a second request, sent only after the drag's result was shown.
    log = page.evaluate("window.ragsim.questionScores().log")[log_from:]
    run = log[-1][1]
    assert [what for what, r in log if r == run] == ["main", "sent", "set"]
    scores = page.evaluate("window.ragsim.questionScores()")
    assert scores["state"] == "fresh"
    expected = api.simulate(req)
    assert scores["response"]["questions"] == expected["questions"]
    assert shown_verdicts(page) == [[q["id"], q["verdict"]] for q in expected["questions"]]
    assert page.locator("#qs-list").get_attribute("data-stale") is None


def chroma_csv(text, rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["question", "references", "corpus_id"])
    for question, pieces in rows:
        refs = []
        for piece in pieces:
            start = text.index(piece) if piece in text else 5
            refs.append({"content": piece, "start_index": start, "end_index": start + len(piece)})
        w.writerow([question, json.dumps(refs), "Document"])
    return out.getvalue().encode()


def test_import_chroma_csv_names_and_skips_a_bad_row(page):
    restore(page)
    text = page_request(page)["documents"][0]["text"]
    data = chroma_csv(text, [
        ("How long do hourly snapshots last?", [HOURLY]),
        ("When does compaction run?", ["this excerpt is nowhere in the document"]),  # question 2 (line 3): skipped
        ("What does a restore create?", [RESTORE]),
        ("When does compaction run?", [COMPACTION, BUSY]),
    ])
    page.locator("#import-questions").set_input_files({"name": "chroma.csv", "mimeType": "text/csv", "buffer": data})
    page.wait_for_function("() => window.ragsim.questions().length === 3")
    problems = page.locator("#qs-problems li").all_inner_texts()
    assert len(problems) == 1 and problems[0].startswith("question 2 (line 3)") and "not the text at" in problems[0]
    settle(page)
    req = page_request(page)
    assert [q["id"] for q in req["questions"]] == ["1", "3", "4"]  # numbered 1, 2, 3 as the page numbers them
    assert req["questions"][2]["references"] == [ref(req, COMPACTION), ref(req, BUSY)]
    assert shown_verdicts(page) == [[q["id"], q["verdict"]] for q in api.simulate(req)["questions"]]
    # Export: the file is what ragsim.question_io writes for the set the page holds.
    for fmt in ("csv", "json"):
        with page.expect_download() as download:
            page.get_by_role("button", name=f"Export {fmt.upper()}").click()
        path = download.value.path()
        expected = question_io.export_questions({"questions": req["questions"], "documents": req["documents"], "format": fmt})
        assert download.value.suggested_filename == f"questions.{fmt}"
        assert open(path, encoding="utf-8").read() == expected["text"]


def test_map_fills_in_and_a_click_sets_the_sliders(page):
    build_two(page)
    page.wait_for_function(MAP_DONE, timeout=60_000)
    req = page_request(page)
    shown = page.evaluate("() => window.ragsim.map()")
    grid = shown["grid"]
    assert len(grid["sizes"]) == 20 and len(grid["overlaps"]) == 6  # the default grid for words
    expected = api.simulate({**req, "map": grid})["map"]
    assert shown["cells"] == expected["cells"]
    buttons = page.locator("#map-table td button")
    assert buttons.count() == sum(c is not None for row in expected["cells"] for c in row)
    assert page.locator("#map-table caption").count() == 1
    # The cheapest cell keeping every answer: outlined, and named in words.
    full = [(c["context_tokens_mean"], i, j) for i, row in enumerate(expected["cells"])
            for j, c in enumerate(row) if c and c["intact"] == 2]
    _, i, j = min(full)
    size, overlap = grid["sizes"][i], grid["overlaps"][j]
    best = page.locator("#map-best").inner_text()
    assert best.startswith(f"Cheapest that keeps every answer: size {size}, overlap {overlap}: all 2 answers intact, ")
    cell = page.locator("#map-table td.map-best button")
    assert (cell.get_attribute("data-size"), cell.get_attribute("data-overlap")) == (str(size), str(overlap))
    assert "tokens per query" in cell.get_attribute("aria-label")
    cell.hover()
    assert page.locator("#map-detail").inner_text().startswith(f"size {size}, overlap {overlap}: all 2 answers intact")
    cell.click()
    settle(page)
    req = page_request(page)
    assert (req["chunking"]["size"], req["chunking"]["overlap"]) == (size, overlap)
    assert page.get_by_label("Chunk size", exact=True).input_value() == str(size)
    assert page.locator("#map-table td.map-current button").get_attribute("data-size") == str(size)
    assert page.evaluate("() => window.ragsim.map().state") == "done"  # size and overlap do not restart it
    assert all(q["verdict"] == "intact" for q in api.simulate(req)["questions"])
    # By keyboard: the grid is one tab stop (the current cell); the arrow keys move, Enter sets the sliders.
    assert page.locator("#map-table button[tabindex='0']").count() == 1
    page.locator("#map-table button[tabindex='0']").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    settle(page)
    req = page_request(page)
    assert (req["chunking"]["size"], req["chunking"]["overlap"]) == (grid["sizes"][i + 1], overlap)
    # A new setting the map depends on (k) starts it again: the latest wins.
    page.get_by_label("Top k", exact=True).fill("1")
    settle(page)
    page.wait_for_function(MAP_DONE, timeout=60_000)
    req = page_request(page)
    assert page.evaluate("() => window.ragsim.map().cells") == api.simulate({**req, "map": grid})["map"]["cells"]


def test_question_set_travels_in_the_link(page):
    build_two(page)
    sent = page_request(page)["questions"]
    fragment = written_hash(page)
    restore(page)
    assert "questions" not in page_request(page)
    restore(page, fragment)
    assert page_request(page)["questions"] == sent
    assert len(page.locator("#qs-list > li").all()) == 2


def test_question_set_is_kept_in_the_saved_state(page, tmp_path):
    """Nothing lost: the set goes into "Download state" whatever its size and comes back."""
    build_two(page)
    sent = page_request(page)["questions"]
    with page.expect_download() as info:
        page.click("#download-state")
    path = tmp_path / "state.json"
    info.value.save_as(path)
    assert [q["query"] for q in json.loads(path.read_text())["questions"]] == [q["query"] for q in sent]
    restore(page)
    assert "questions" not in page_request(page)
    page.set_input_files("#load-state", str(path))
    page.wait_for_function("() => (window.ragsim.request().questions || []).length === 2")
    settle(page)
    assert len(page.locator("#qs-list > li").all()) == 2
    assert page_request(page)["questions"] == sent


def fragment_params(fragment):
    """The parameters of a fragment the page wrote, inflated when it is `z=` (deflate-raw, base64url)."""
    params = parse_qs(fragment.lstrip("#"))
    if "z" in params:
        raw = params["z"][0]
        params = parse_qs(zlib.decompress(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)), -15).decode())
    return params


def test_the_map_of_the_marked_answer_and_in_the_embed_code(page):
    restore(page)
    assert page.locator("#map-section").is_hidden()  # no question set: no map unless asked for
    page.get_by_label("Show the settings map for the marked answer too").check()
    page.wait_for_function(MAP_DONE, timeout=60_000)
    req = page_request(page)
    assert "questions" not in req and req["span"] is not None
    shown = page.evaluate("() => window.ragsim.map()")
    assert shown["cells"] == api.simulate({**req, "map": shown["grid"]})["map"]["cells"]
    assert all(c is None or c["intact"] + c["ranked_out"] + c["cut"] == 1 for row in shown["cells"] for c in row)
    best = page.locator("#map-best").inner_text()  # one answer: "the answer intact", not "all 1 answer"
    assert ": the answer intact, " in best and "all 1" not in best, best
    assert fragment_params(written_hash(page))["map"] == ["1"]
    restore(page)


def test_embed_shows_the_map(page):
    fragment = "embed=1&map=1&size=24&overlap=6&k=2&msizes=20,24,30&moverlaps=0,6"
    restore(page, fragment)
    page.wait_for_function(MAP_DONE, timeout=60_000)
    assert page.locator("#map-section").is_visible()
    assert page.locator("#question-set").is_hidden()
    shown = page.evaluate("() => window.ragsim.map()")
    assert shown["grid"] == {"sizes": [20, 24, 30], "overlaps": [0, 6]}
    req = page_request(page)
    assert shown["cells"] == api.simulate({**req, "map": shown["grid"]})["map"]["cells"]
    assert page.locator("#map-table td.map-current button").get_attribute("data-size") == "24"
    restore(page)


def test_a_question_set_too_long_for_a_link_says_so(page, server):
    restore(page)
    req = page_request(page)
    long = [{"id": f"long{i}", "query": f"hourly snapshots {i} " + "retention " * 1500, "references": [ref(req, HOURLY)]}
            for i in range(3)]
    page.locator("#import-questions").set_input_files({"name": "long.json", "mimeType": "application/json",
                                                       "buffer": json.dumps({"questions": long}).encode()})
    page.wait_for_function("() => window.ragsim.questions().length === 3")
    settle(page)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page.click("#copy-link")
    page.wait_for_function("() => { const n = document.getElementById('copy-note'); return n && n.textContent.startsWith('Link copied.'); }")
    assert "The question set is too long to travel in a link" in page.locator("#copy-note").inner_text()
    restore(page)


def test_no_errors_and_nothing_offsite(page, page_errors, offsite):
    """Everything above happened without an uncaught error or a request beyond the page's server."""
    assert page_errors == []
    assert offsite == []
