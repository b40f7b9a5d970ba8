"""Several documents, a marked fact, the investigation panels and the corpus audit, in Chromium.

Each test is one thing a person does. What the page shows is checked against CPython's
`ragsim.api.simulate` and `ragsim.audit.audit` for the request the page sent."""

import json
import re
import pathlib

import pytest

from ragsim.wire import api
from ragsim.wire.audit import audit
from test_page import INDEX, page_request, restore, written_hash
from test_page import settle as settle_page

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

COLLECTION = pathlib.Path(__file__).resolve().parents[2] / "assets" / "collection"
INDEX_JSON = json.loads((COLLECTION / "index.json").read_text(encoding="utf-8"))
FACT_DOC = INDEX_JSON["fact"]["doc"]
SWEPT = """() => { const s = document.getElementById("sweep"); return s.dataset.state === "ready"; }"""


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


# A new tab boots Python afresh: on a machine busy with the rest of the suite that has taken over
# 30 s (Playwright's default), so the wait is for the page being ready, with room for a slow start.
BOOT_TIMEOUT = 120_000


def settle(page):
    """The page caught up with its controls, and the panels below the picture with the page."""
    settle_page(page)
    page.wait_for_function("() => window.ragsim.panelsShown()", polling=100)
    return page


def fact_verdict(page):
    box = page.locator("#fact-verdict")
    return box.get_attribute("data-fact-verdict"), page.locator("#fact-text").inner_text()


def select_text(page, text):
    """Select the first occurrence of `text` in the Document box, as a person dragging over it would."""
    page.evaluate("""(text) => {
      const t = document.getElementById("param-doc");
      const at = t.value.indexOf(text);
      if (at < 0) throw new Error("not in the document: " + text);
      t.focus();
      t.setSelectionRange(at, at + text.length);
    }""", text)


def load_collection(page):
    restore(page)
    page.once("dialog", lambda dialog: dialog.accept())  # over text of one's own, the page asks first: yes
    page.get_by_role("button", name="Load example collection").click()
    page.wait_for_function("() => window.ragsim.request().documents.length === 6")
    return settle(page)


def cp_pair(text, piece):
    start = text.index(piece)
    return [start, start + len(piece)]


def test_the_example_collection_loads_with_its_fact_destroyed(page, page_errors):
    load_collection(page)
    req = page_request(page)
    assert [d["id"] for d in req["documents"]] == INDEX_JSON["documents"]
    for d in req["documents"]:
        assert d["text"] == (COLLECTION / d["id"]).read_text(encoding="utf-8")
    assert req["query"] == INDEX_JSON["question"]
    assert (req["chunking"]["unit"], req["chunking"]["size"], req["chunking"]["overlap"]) == ("chars", 900, 0)
    assert req["retrieval"]["k"] == INDEX_JSON["k"]
    text = next(d["text"] for d in req["documents"] if d["id"] == FACT_DOC)
    assert req["fact"] == {"doc": FACT_DOC, "name": cp_pair(text, INDEX_JSON["fact"]["name"]),
                           "value": cp_pair(text, INDEX_JSON["fact"]["value"])}
    expected = api.simulate(req)
    kind, sentence = fact_verdict(page)
    assert kind == expected["fact"]["kind"] == "destroyed"
    # The sentence quotes the words on either side of the cut, with the chunk numbers of the core.
    assert sentence.startswith("No chunk holds both: chunk ") and "stops after ‘" in sentence and "opens with ‘" in sentence
    # One lane per document, the list of documents, corpus totals in the stats.
    assert page.locator("#doc-list li").count() == 6
    assert page.locator("#doc-list li[aria-current=true]").get_attribute("data-doc") == FACT_DOC
    assert page.locator(".lanes-wrap").is_visible()
    shown = json.loads(page.locator('[data-stat="units_in_documents"]').get_attribute("data-value"))
    assert shown == expected["stats"]["units_in_documents"] == sum(len(d["text"]) for d in req["documents"])
    assert page.locator("#stats dt").first.inner_text() == "Characters in the 6 documents"
    assert page_errors == []


def test_find_phrase_and_the_k_table_follow_the_core(page):
    load_collection(page)
    expected = api.simulate(page_request(page))
    # By default the phrase is the marked fact, name to value; it is in no chunk.
    assert expected["found"]["verdict"] == "destroyed"
    result = page.locator("#find-result")
    assert result.get_attribute("data-found") == "destroyed"
    assert "destroyed at chunking, not ranked too low" in result.inner_text()
    cells = page.locator("#k-table td")
    shown = {c.get_attribute("data-k"): c.get_attribute("data-kind") for c in cells.all()}
    assert shown == {str(r["k"]): r["fact"] for r in expected["at_k"]}
    assert set(shown) == {"1", "3", "5", "10"}
    assert "in no chunk at all" in page.locator("#k-conclusion").inner_text()
    # A phrase the person types: the chunks listed are the core's.
    page.get_by_label("Find exact phrase in the index").fill("Halvard Reservoir")
    page.wait_for_function("() => window.ragsim.request().find === 'Halvard Reservoir'")
    settle(page)
    found = api.simulate(page_request(page))["found"]
    assert found["verdict"] == "in_chunks"
    assert result.get_attribute("data-found") == "in_chunks"
    listed = result.inner_text()
    # Listed as ranges and counts: "chunks 4–9, 6 of them".
    shown = {int(x) for x in re.findall(r"\d+", re.sub(r"\d+–\d+", "", listed))}
    for a, b in re.findall(r"(\d+)–(\d+)", listed):
        shown |= set(range(int(a), int(b) + 1))
    assert set(found["chunks"]) <= shown, listed
    page.get_by_label("Find exact phrase in the index").fill("")
    settle(page)


def test_the_sweep_and_the_fix_follow_the_core(page):
    load_collection(page)
    page.wait_for_function(SWEPT)
    req = page_request(page)
    rows = api.simulate({**req, "sweep": [0, 25, 50, 100, 150, 300]})["sweep"]
    shown = page.eval_on_selector_all("#sweep-table tbody tr", "trs => trs.map(t => [t.dataset.overlap, t.dataset.sweepVerdict])")
    assert shown == [[str(r["overlap"]), r["fact"]] for r in rows]
    saving = next(r["overlap"] for r in rows if r["fact"] == "intact")
    assert page.locator("[data-saving-overlap]").get_attribute("data-saving-overlap") == str(saving)
    page.get_by_label("Context expansion").select_option("1")
    page.wait_for_function("() => window.ragsim.request().expand && window.ragsim.request().expand.neighbours === 1")
    settle(page)
    expanded = api.simulate(page_request(page))["expanded"]
    assert page.locator("[data-expanded]").get_attribute("data-expanded") == expanded["fact"]
    assert f"{expanded['context_tokens']:,} tokens" in page.locator("#fix").inner_text()
    page.get_by_label("Context expansion").select_option("none")
    settle(page)


def test_upload_two_files_mark_a_fact_destroyed_then_intact(page):
    restore(page)
    files = [{"name": p.name, "mimeType": "text/markdown", "buffer": p.read_bytes()}
             for p in (COLLECTION / "01-the-authority.md", COLLECTION / FACT_DOC)]
    page.locator("#add-files").set_input_files(files)
    page.wait_for_function("() => window.ragsim.request().documents.length === 2")
    req = page_request(page)
    assert [d["id"] for d in req["documents"]] == ["01-the-authority.md", FACT_DOC]  # they replace the example
    assert req["documents"][1]["title"] == "Dams and power stations of the Corran"
    page.get_by_label("Question", exact=True).fill(INDEX_JSON["question"])
    page.get_by_label("Unit", exact=True).select_option("chars")
    page.get_by_label("Chunk size", exact=True).fill("900")
    page.get_by_label("Overlap", exact=True).fill("0")
    page.get_by_role("button", name="Show document 2 in the Document box").click()
    settle(page)
    select_text(page, INDEX_JSON["fact"]["name"])
    page.get_by_role("button", name="Mark selection as name").click()
    settle(page)
    assert page.locator("#fact-headline").inner_text() == "Name marked"
    select_text(page, INDEX_JSON["fact"]["value"])
    page.get_by_role("button", name="Mark selection as value").click()
    settle(page)
    req = page_request(page)
    text = req["documents"][1]["text"]
    assert req["fact"] == {"doc": FACT_DOC, "name": cp_pair(text, INDEX_JSON["fact"]["name"]),
                           "value": cp_pair(text, INDEX_JSON["fact"]["value"])}
    assert fact_verdict(page)[0] == api.simulate(req)["fact"]["kind"] == "destroyed"
    page.get_by_label("Overlap", exact=True).fill("150")
    settle(page)
    req = page_request(page)
    assert req["chunking"]["overlap"] == 150
    assert fact_verdict(page)[0] == api.simulate(req)["fact"]["kind"] == "intact"
    # Removing a document keeps the rest, and the fact with it.
    page.get_by_role("button", name="Remove document 1").click()
    settle(page)
    req = page_request(page)
    assert [d["id"] for d in req["documents"]] == [FACT_DOC] and req["fact"]["doc"] == FACT_DOC
    restore(page)


def test_the_audit_runs_and_a_destroyed_fact_leads_to_its_place(page):
    load_collection(page)
    req = page_request(page)
    page.get_by_role("button", name="Run the audit").click()
    page.wait_for_function("() => document.getElementById('audit').dataset.state === 'done'", timeout=60_000)
    chunking = {k: v for k, v in req["chunking"].items() if k != "overlap"}
    expected = audit({"documents": req["documents"], "chunking": chunking, "retrieval": req["retrieval"],
                      "overlaps": [0, 25, 50, 100, 150, 300]})
    shown = page.evaluate("window.ragsim.audit()")
    keys = ["overlap", "chunks", "facts", "destroyed", "destroyed_within_overlap", "found_top_k", "dropped_top_k"]
    assert [{k: r[k] for k in keys} for r in shown["rows"]] == [{k: r[k] for k in keys} for r in expected["rows"]]
    assert [(f["doc"], f["name"], f["value"], f["destroyed_at"]) for f in shown["facts"]] == \
           [(f["doc"], f["name"], f["value"], f["destroyed_at"]) for f in expected["facts"]]
    cells = page.eval_on_selector_all("#audit-table tbody tr", "trs => trs.map(t => t.children[2].dataset.value)")
    assert cells == ["0"] * 6  # fixed windows never destroy a fact no longer than the overlap
    assert "must be zero" in page.locator("#audit-note").inner_text()
    # Follow a destroyed fact from another document than the one shown.
    destroyed = [f for f in expected["facts"] if f["destroyed_at"] and f["doc"] != FACT_DOC]
    f = destroyed[0]
    link = page.locator(f"#audit-facts button[data-doc='{f['doc']}'][data-name='{f['name'][0]}-{f['name'][1]}']").first
    # each fact is shown in its sentence, its name and value marked, so a reader can check the pair
    marks = link.locator("xpath=..").locator("q.fact-sentence mark").all_inner_texts()
    assert marks == [text for _, text in sorted([(f["name"][0], f["name_text"]), (f["value"][0], f["value_text"])])]
    every = page.locator("#audit-all li")
    assert every.count() == len(expected["facts"]) and page.locator("#audit-all-head").inner_text().startswith(
        f"Every fact counted ({len(expected['facts'])})")
    assert every.first.locator("q.fact-sentence mark").count() == 2
    link.click()
    page.wait_for_function("(id) => window.ragsim.request().fact && window.ragsim.request().fact.doc === id", arg=f["doc"])
    settle(page)
    req = page_request(page)
    assert req["fact"] == {"doc": f["doc"], "name": f["name"], "value": f["value"]}
    assert page.locator("#doc-list li[aria-current=true]").get_attribute("data-doc") == f["doc"]
    overlap = req["chunking"]["overlap"]
    assert fact_verdict(page)[0] == api.simulate(req)["fact"]["kind"]
    if overlap in f["destroyed_at"]:
        assert fact_verdict(page)[0] == "destroyed"
    assert page.locator("#picture").is_visible()
    in_view = page.evaluate("""() => { const r = document.getElementById('picture').getBoundingClientRect();
      return r.bottom > 0 && r.top < window.innerHeight; }""")
    assert in_view


def test_the_collection_travels_in_a_link(page, server):
    load_collection(page)
    fragment = written_hash(page)
    assert "example=collection" in fragment or fragment.startswith("#z=")
    sent = page_request(page)
    tab = page.context.new_page()
    tab.goto(server.url(INDEX) + fragment)
    tab.wait_for_function("() => window.ragsim && window.ragsim.request().documents.length === 6",
                          timeout=BOOT_TIMEOUT)
    assert tab.evaluate("window.ragsim.request()") == sent
    tab.close()


def test_a_bare_collection_link_opens_with_its_fact_marked(page, server):
    tab = page.context.new_page()
    tab.goto(server.url(INDEX) + "#example=collection")
    tab.wait_for_function("() => window.ragsim && window.ragsim.request().documents.length === 6",
                          timeout=BOOT_TIMEOUT)
    fact = tab.evaluate("window.ragsim.request().fact")
    assert fact is not None and fact["doc"] == FACT_DOC
    tab.close()
    tab = page.context.new_page()
    tab.goto(server.url(INDEX) + "#example=collection&fact=none")
    tab.wait_for_function("() => window.ragsim && window.ragsim.request().documents.length === 6",
                          timeout=BOOT_TIMEOUT)
    assert tab.evaluate("window.ragsim.request().fact") is None
    tab.close()


def test_bad_files_and_bad_facts_get_a_message_and_keep_the_collection(page):
    load_collection(page)
    before = page_request(page)["documents"]
    files = [
        {"name": "image.txt", "mimeType": "text/plain", "buffer": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"},
        {"name": "latin1.txt", "mimeType": "text/plain", "buffer": "café au lait".encode("latin-1")},
        {"name": "empty.md", "mimeType": "text/markdown", "buffer": b""},
        {"name": "photo.png", "mimeType": "image/png", "buffer": b"\x89PNG"},
    ]
    page.locator("#add-files").set_input_files(files)
    problems = page.locator("#doc-problems li")
    problems.first.wait_for()
    texts = problems.all_inner_texts()
    assert len(texts) == 4
    assert "NUL bytes" in texts[0] and "UTF-8" in texts[1] and "empty" in texts[2] and ".txt and .md" in texts[3]
    assert page_request(page)["documents"] == before
    # Hundreds of files at once: the first hundred are read, and the page says so.
    many = [{"name": f"f{i:03}.txt", "mimeType": "text/plain", "buffer": f"Note {i}: the Harrow Lock is {i} m long.".encode()}
            for i in range(150)]
    page.locator("#add-files").set_input_files(many)
    page.wait_for_function("() => window.ragsim.request().documents.length === 106")
    assert "At most 100 files are read at once" in page.locator("#doc-problems").inner_text()
    settle(page)
    # A value in another document than the name, and a value overlapping the name: refused, explained.
    page.get_by_role("button", name="Clear mark").click()
    select_text(page, "Harrow Lock")
    page.get_by_role("button", name="Mark selection as name").click()
    page.get_by_role("button", name="Show document 1 in the Document box").click()
    select_text(page, "1952")
    page.get_by_role("button", name="Mark selection as value").click()
    assert "must be in one document" in page.locator("#mark-info").inner_text()
    page.get_by_role("button", name="Show document 7 in the Document box").click()
    select_text(page, "Lock is")
    page.get_by_role("button", name="Mark selection as value").click()
    assert "overlaps the marked name" in page.locator("#mark-info").inner_text()
    assert page_request(page)["fact"] is None
    assert len(page_request(page)["documents"]) == 106
    restore(page)


def test_hostile_titles_and_texts_stay_text(page):
    restore(page)
    hostile = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script>"
    page.get_by_label("Question", exact=True).fill("What does B say?")  # one's own (the example's would go)
    page.locator("#add-files").set_input_files([
        {"name": f"{hostile}.txt", "mimeType": "text/plain", "buffer": f"# {hostile}\n\n{hostile} text".encode()},
        {"name": "b.md", "mimeType": "text/markdown", "buffer": b"# B\n\nAnother document."},
    ])
    page.wait_for_function("() => window.ragsim.request().documents.length === 2")
    settle(page)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#doc-list img, #context img, #lanes img").count() == 0
    assert page.locator("#doc-list .doc-title").first.input_value() == hostile
    restore(page)
