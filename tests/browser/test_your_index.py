"""Your own index on the page, in Chromium: a JSON Lines export of real LangChain
chunks opened with "Open your chunks…", drawn as the picture's bars, judged, searched for the exact
phrase, its splitter named, and "Simulate from here". What the page shows is checked against CPython's
`ragsim.wire.api.simulate` over the same stored extents, taken from LangChain's own `start_index`."""

import json
import pathlib
import re

import pytest
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragsim.wire import api
from test_collection_page import select_text
from test_page import INDEX, page_request, restore, settle

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "conformance" / "texts" / "prose.txt"
SIZE, OVERLAP = 200, 40
SHOTS = pathlib.Path("/work/notes/shots")
QUERY = "How deep was the channel when it was surveyed?"
STORED = """() => { const r = window.ragsim.shownRequest(), i = window.ragsim.index();
  return Boolean(i && r && r.chunking.strategy === "stored"); }"""


@pytest.fixture(scope="module")
def page(booted_page):
    return booted_page(INDEX)


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """The chunks LangChain's RecursiveCharacterTextSplitter makes of a real text, one LangChain
    Document per line as a pipeline would export them (page_content, metadata source, start_index)."""
    text = SOURCE.read_text(encoding="utf-8")
    splitter = RecursiveCharacterTextSplitter(chunk_size=SIZE, chunk_overlap=OVERLAP, add_start_index=True)
    docs = splitter.create_documents([text], metadatas=[{"source": SOURCE.name}])
    folder = tmp_path_factory.mktemp("index")
    path = folder / "chunks.jsonl"
    path.write_text("".join(json.dumps({"page_content": d.page_content, "metadata": d.metadata}) + "\n" for d in docs),
                    encoding="utf-8")
    (folder / SOURCE.name).write_text(text, encoding="utf-8")
    extents = [[d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content)] for d in docs]
    assert all(text[a:b] == d.page_content for (a, b), d in zip(extents, docs))
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if 30 < len(s) < 150]
    held = [s for s in sentences if any(s in d.page_content for d in docs)]
    cut = [s for s in sentences if not any(s in d.page_content for d in docs)]
    assert held and cut, "the text needs one sentence a chunk holds and one the chunks cut"
    return {"text": text, "path": path, "source": folder / SOURCE.name, "extents": extents, "held": held[0], "cut": cut[0]}


def mark(page, phrase):
    select_text(page, phrase)
    page.get_by_role("button", name="Mark selection as answer").click()
    settle(page)


def open_chunks(page, path):
    page.locator("#open-chunks").set_input_files(str(path))
    page.wait_for_function(f"() => ({STORED})() || !document.getElementById('index-problem').hidden", polling=100)
    assert page.locator("#index-problem").is_hidden(), page.locator("#index-problem").inner_text()
    page.wait_for_function(STORED, polling=100)
    return settle(page)


def stored_request(export, request, phrase):
    """CPython's request over LangChain's own extents: the page's query and retrieval, nothing else of it."""
    text = export["text"]
    at = text.index(phrase)
    return {"documents": [{"id": SOURCE.name, "title": SOURCE.name, "text": text}], "query": request["query"],
            "chunking": {"strategy": "stored", "chunks": {SOURCE.name: export["extents"]}},
            "retrieval": request["retrieval"], "span": {"doc": SOURCE.name, "start": at, "end": at + len(phrase)}}


def with_source(page, export):
    restore(page)
    page.locator("#add-files").set_input_files(str(export["source"]))
    page.wait_for_function("(id) => window.ragsim.request().documents[0].id === id", arg=SOURCE.name)
    page.locator("#param-q").fill(QUERY)
    settle(page)
    mark(page, export["cut"])
    return open_chunks(page, export["path"])


def test_your_chunks_are_the_bars_and_the_verdict_is_the_core_s(page, export, page_errors):
    with_source(page, export)
    n = len(export["extents"])
    assert page.evaluate("window.ragsim.picture()") == {"chunks": n, "stored": True}
    assert page.locator("#legend-stored").is_visible()
    assert f"your index's chunks ({n}, placed {n}, unplaced 0)" in page.locator("#index-legend").inner_text()
    result = page.evaluate("window.ragsim.index()")
    assert [c["placement"] for c in result["chunks"]] == ["offsets"] * n
    # The verdict on the stored chunks, as CPython gives it for LangChain's own extents.
    shown = page.evaluate("window.ragsim.shownRequest()")
    assert shown["chunking"] == {"strategy": "stored", "chunks": {SOURCE.name: export["extents"]}}
    expected = api.simulate(stored_request(export, shown, export["cut"]))
    assert expected["verdict"]["kind"] == "cut"
    assert page.locator("#verdict").get_attribute("data-verdict") == expected["verdict"]["kind"]
    assert page.locator("#index-verdict").inner_text().startswith("On your index's chunks: Cut in half.")
    assert page.locator("#verdict-headline").inner_text() == "Your index: Cut in half"
    # The exact-phrase box: absent, with the boundary that cut it and the overlap that keeps it.
    absent = page.locator("#index-phrases p[data-verdict=absent]")
    assert absent.count() == 1 and "Absent: no chunk of your index holds" in absent.inner_text()
    # the overlap LangChain's own splitter needs at this size to keep it whole, every overlap below the size tried
    a = export["text"].index(export["cut"])
    least = next((o for o in range(SIZE) if any(
        d.metadata["start_index"] <= a and a + len(export["cut"]) <= d.metadata["start_index"] + len(d.page_content)
        for d in RecursiveCharacterTextSplitter(chunk_size=SIZE, chunk_overlap=o, add_start_index=True)
        .create_documents([export["text"]]))), None)
    said = (f"an overlap of {least} characters keeps it whole with this splitter" if least is not None
            else f"no overlap below the size of {SIZE} characters keeps it whole")
    assert f"The answer was destroyed at chunking, before search: {said}" in absent.inner_text()
    # The splitter named: LangChain's, every chunk reproduced.
    line = page.locator("#index-splitter").inner_text()
    assert line.startswith("These match LangChain RecursiveCharacterTextSplitter(") and f"{n} of {n} chunks exactly" in line
    # A phrase a chunk holds: the box says present, with the chunk's id, and the verdict follows.
    mark(page, export["held"])
    page.wait_for_selector("#index-phrases p[data-verdict=present]")
    i = next(i for i, (a, b) in enumerate(export["extents"]) if export["held"] in export["text"][a:b])
    # the number the verdict gives it, and the id the store gave it (LangChain's export has none: its line)
    assert f"chunk {i + 1} (id “{result['chunks'][i]['id']}”)" in page.locator("#index-phrases").inner_text()
    shown = page.evaluate("window.ragsim.shownRequest()")
    expected = api.simulate(stored_request(export, shown, export["held"]))
    assert page.locator("#verdict").get_attribute("data-verdict") == expected["verdict"]["kind"]
    assert not page_errors


def test_simulate_from_here_sets_the_controls_to_the_splitter(page, export, page_errors):
    with_source(page, export)
    result = page.evaluate("window.ragsim.index()")
    found = next(s for s in result["splitter"] if s["doc"] == SOURCE.name)
    page.get_by_role("button", name="Simulate from here").click()
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.strategy !== 'stored'", polling=100)
    settle(page)
    req = page_request(page)
    assert req["chunking"]["strategy"] == found["strategy"] == "langchain-recursive"
    for name, value in found["fields"].items():
        assert req["chunking"][name] == value, name
    assert page.evaluate("window.ragsim.picture()")["stored"] is False
    # The simulated splitter makes exactly your index's chunks, and its verdict is CPython's.
    expected = api.simulate(req)
    assert [[c["start"], c["end"]] for c in expected["chunks"]] == export["extents"]
    assert page.locator("#verdict").get_attribute("data-verdict") == expected["verdict"]["kind"]
    assert page.locator("#index-verdict").inner_text().startswith("Simulated: Cut in half. Your index: Cut in half.")
    # Drag the overlap up: the simulated verdict follows the core; "Your index" brings the stored chunks back.
    page.locator("#param-overlap").fill(str(min(len(export["cut"]) + 5, req["chunking"]["size"])))
    settle(page)
    req = page_request(page)
    assert page.locator("#verdict").get_attribute("data-verdict") == api.simulate(req)["verdict"]["kind"]
    page.get_by_role("button", name="Your index").click()
    page.wait_for_function(STORED, polling=100)
    settle(page)
    assert page.evaluate("window.ragsim.picture()") == {"chunks": len(export["extents"]), "stored": True}
    assert not page_errors


def test_without_sources_the_documents_are_rebuilt(page, export, page_errors):
    restore(page)
    open_chunks(page, export["path"])
    req = page_request(page)
    assert len(req["documents"]) == 1 and req["documents"][0]["id"] == SOURCE.name
    assert "rebuilt from your chunks; gaps unknown" in req["documents"][0]["title"]
    assert page.evaluate("window.ragsim.picture()") == {"chunks": len(export["extents"]), "stored": True}
    assert "rebuilt from your chunks; gaps unknown" in page.locator("#index-source").inner_text()
    assert not page_errors


def test_a_chunk_not_in_the_source_is_listed_as_unplaced(page, export, tmp_path, page_errors):
    restore(page)
    page.locator("#add-files").set_input_files(str(export["source"]))
    page.wait_for_function("(id) => window.ragsim.request().documents[0].id === id", arg=SOURCE.name)
    page.locator("#param-q").fill(QUERY)  # the example's question went with the example
    stray = {"page_content": "This sentence is in no source at all.", "metadata": {"source": SOURCE.name}, "id": "stray-1"}
    path = tmp_path / "with-stray.jsonl"
    path.write_text(export["path"].read_text(encoding="utf-8") + json.dumps(stray) + "\n", encoding="utf-8")
    open_chunks(page, path)
    n = len(export["extents"])
    assert f"your index's chunks ({n + 1}, placed {n}, unplaced 1)" in page.locator("#index-legend").inner_text()
    assert page.evaluate("window.ragsim.picture()") == {"chunks": n, "stored": True}  # left out of the picture
    assert "1 chunk could not be placed" in page.locator("#index-unplaced-summary").inner_text()
    assert page.locator("#index-unplaced-list li").all_text_contents() == [f"stray-1 ({SOURCE.name}, 37 characters)"]
    assert not page_errors


def test_your_index_is_kept_with_the_page_state(page, export, booted_page, page_errors):
    with_source(page, export)
    page.evaluate("window.ragsim.stored()")  # resolves once the state is written
    booted_page(INDEX, reload=True)
    page.wait_for_function(STORED, polling=100)
    settle(page)
    assert page.evaluate("window.ragsim.picture()") == {"chunks": len(export["extents"]), "stored": True}
    assert page.locator("#index-splitter").inner_text().startswith("These match LangChain RecursiveCharacterTextSplitter(")
    page.get_by_role("button", name="Close your chunks").click()
    page.wait_for_function("() => window.ragsim.shownRequest().chunking.strategy !== 'stored'", polling=100)
    assert not page_errors


def test_a_file_that_is_not_chunks_gets_one_sentence(page, tmp_path, page_errors):
    restore(page)
    before = page_request(page)
    bad = tmp_path / "numbers.jsonl"
    bad.write_text("1\n2\n3\n", encoding="utf-8")
    page.locator("#open-chunks").set_input_files(str(bad))
    problem = page.locator("#index-problem")
    problem.wait_for(state="visible")
    assert problem.inner_text().startswith("“numbers.jsonl” was not opened: ")
    assert page_request(page) == before and page.evaluate("window.ragsim.index()") is None
    page.get_by_role("button", name="Close your chunks").click()


@pytest.mark.parametrize("width,height", [(1366, 768), (390, 844)])
def test_screenshots_with_your_index_open(page, export, width, height):
    page.set_viewport_size({"width": width, "height": height})
    try:
        with_source(page, export)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#picture-heading").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"your-index-{width}.png"))
        page.locator("#your-index").screenshot(path=str(SHOTS / f"your-index-{width}-panel.png"))
        settle(page)
        page.wait_for_function("() => window.ragsim.panelsShown()", polling=100)
        page.screenshot(path=str(SHOTS / f"your-index-{width}-full.png"), full_page=True)
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})
