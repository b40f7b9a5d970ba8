"""A book-length document in the page: a 500,000-word paste is chunked, ranked and drawn,
through the binary wire (docs/wire.md): the chunks the page reads from the bytes are CPython's, the
ranks it derives for chunks outside the top k are the core's, and the picture stays a handful of
rectangles per pixel column. Also the chunk table and the lanes read the same columns."""

from __future__ import annotations

import pytest

from a11y import SETTLED, restore
from ragsim.wire import api

pytestmark = pytest.mark.slow  # real Chromium on the built dist/

INDEX = "index.html"
WORDS = 500_000


@pytest.fixture(scope="module")
def page(booted_page):
    page = booted_page(INDEX)
    page.set_viewport_size({"width": 1366, "height": 900})
    page.wait_for_function(SETTLED, timeout=60_000)
    return page


def settle(page, timeout=240_000):
    page.wait_for_function(SETTLED, polling=500, timeout=timeout)
    # a drag over a book asks for the top k only; the other scores come once the controls rest
    page.wait_for_function("() => window.ragsim.scoresComplete()", polling=200, timeout=timeout)


def set_slider(page, label, value):
    page.get_by_label(label, exact=True).fill(str(value))


# A text of WORDS words made in the page: sentences from a few hundred words in a fixed pseudo-random
# order (no two paragraphs alike), so most chunks score something and many tie.
BOOK = """(words) => {
  const vocab = ("river stone archive snapshot restore object storage replica quorum ledger index shard " +
    "compaction window token budget chapter contract clause tenant invoice retention policy backup " +
    "latency throughput partition leader follower election heartbeat lease journal checkpoint").split(" ");
  let x = 12345, out = [], n = 0;
  while (n < words) {
    const len = 6 + (x % 11), sentence = [];
    for (let i = 0; i < len; i++) { x = (x * 1103515245 + 12345) % 2147483648; sentence.push(vocab[x % vocab.length]); }
    out.push(sentence.join(" ") + (n % 97 === 0 ? ".\\n\\n" : ". "));
    n += len;
  }
  return out.join("");
}"""


def test_a_500000_word_paste_is_chunked_ranked_and_drawn_as_cpython_does(page, page_errors):
    errors = len(page_errors)
    page.evaluate("(words) => { const text = (" + BOOK + ")(words); "
                  "window.__clip = new DataTransfer(); window.__clip.setData('text/plain', text); }", WORDS)
    page.locator("#param-doc").evaluate("ta => ta.select()")  # the paste replaces the example
    page.evaluate("""() => document.getElementById("param-doc").dispatchEvent(
      new ClipboardEvent("paste", { clipboardData: window.__clip, bubbles: true, cancelable: true }))""")
    page.get_by_label("Question", exact=True).fill("How long does a restore from object storage take?")
    set_slider(page, "Chunk size", 10)
    set_slider(page, "Overlap", 3)
    settle(page)
    # Mark an answer deep in the shown preview (the box holds the first 50,000 characters).
    box = page.locator("#param-doc")
    box.evaluate("ta => { ta.focus(); const s = ta.value.indexOf('. ', 40000) + 2; ta.setSelectionRange(s, ta.value.indexOf('. ', s) + 1); }")
    page.click("#mark-selection")
    settle(page)
    request = page.evaluate("window.ragsim.request()")
    assert len(request["documents"][0]["text"].split()) >= WORDS
    expected = api.simulate(request)
    assert expected["stats"]["chunks"] > 60_000
    response = page.evaluate("""() => { const r = window.ragsim.response();
      return { verdict: r.verdict, stats: r.stats, n: r.cols.length, top: r.cols.top, chunks: r.chunks }; }""")
    assert response["verdict"] == expected["verdict"] and response["stats"] == expected["stats"]
    assert response["n"] == expected["stats"]["chunks"]
    assert response["chunks"] == expected["chunks"]  # every value, every rank, from the bytes and the scores
    assert [c["number"] - 1 for c in sorted(expected["chunks"], key=lambda c: c["rank"])[:len(response["top"])]] == response["top"]
    # The verdict names the answer's chunk and its rank as the core does.
    kind = expected["verdict"]["kind"]
    text = page.locator("#verdict-text").inner_text()
    if kind in ("intact", "ranked_out"):
        best = min((c for c in expected["chunks"] if c["holds"] == "whole"), key=lambda c: c["rank"])
        assert f"Chunk {best['number']} " in text and f"#{best['rank']}" in text, text
    # Hover: the detail names a chunk outside the top k with the rank the core gives it.
    canvas = page.locator("#picture")
    bbox = canvas.bounding_box()
    page.mouse.move(bbox["x"] + bbox["width"] * 0.61, bbox["y"] + 20 + 4 + 5)  # the first row of bars
    head = page.locator("#detail-head").inner_text()
    assert head.startswith("Chunk "), head
    number = int(head.split()[1])
    chunk = expected["chunks"][number - 1]
    assert chunk["score"] > 0 and not chunk["retrieved"]  # a rank the page worked out from the scores
    assert head.startswith(f"Chunk {number} of {expected['stats']['chunks']} · rank #{chunk['rank']} · score {chunk['score']:.3f}"), head
    # The picture paints runs, not 70,000 bars: few rectangles per pixel column and row.
    rects = page.evaluate("""() => { const c = document.getElementById('picture'), ctx = c.getContext('2d');
      let n = 0; const fill = ctx.fillRect; ctx.fillRect = function (...a) { n++; return fill.apply(this, a); };
      c.dispatchEvent(new FocusEvent('blur')); ctx.fillRect = fill; return n; }""")
    assert 0 < rects < 12 * bbox["width"], rects
    # A drag: another size computes and shows the core's numbers. Over 2,000 chunks it asks for the
    # top k only (the core scores the chunks that can reach it), then for every score once it rests.
    pruned = page.evaluate("() => window.ragsim.prunedDrags()")
    set_slider(page, "Chunk size", 12)
    settle(page)
    assert page.evaluate("() => window.ragsim.prunedDrags()") == pruned + 1
    request = page.evaluate("window.ragsim.request()")
    expected = api.simulate(request)
    shown = page.evaluate("() => { const r = window.ragsim.response(); return { verdict: r.verdict, stats: r.stats }; }")
    assert shown == {"verdict": expected["verdict"], "stats": expected["stats"]}
    # The chunk table lists the chunks that matter (retrieved, holding the answer, two either side).
    page.locator("#chunk-table-box summary").click()
    page.wait_for_function("() => document.querySelector('#chunk-table caption')?.textContent.includes(' of the ')")
    rows = page.eval_on_selector_all("#chunk-table tbody tr", "trs => trs.map(t => [...t.children].map(c => c.textContent))")
    keep = sorted({q for c in expected["chunks"] if c["retrieved"] or c["holds"]
                   for q in range(c["number"] - 2, c["number"] + 3) if 1 <= q <= len(expected["chunks"])})
    assert [int(r[0]) for r in rows] == keep
    assert [r[2] for r in rows] == [f"#{expected['chunks'][q - 1]['rank']}" for q in keep]
    page.locator("#chunk-table-box summary").click()
    assert page_errors[errors:] == []


def test_the_chunk_table_reads_the_columns_with_the_cores_ranks(page):
    page.evaluate("() => { location.hash = 'k=3'; location.hash = 'size=25'; }")
    settle(page)
    page.locator("#chunk-table-box summary").click()
    expected = api.simulate(page.evaluate("window.ragsim.request()"))["chunks"]
    page.wait_for_function("n => document.querySelectorAll('#chunk-table tbody tr').length === n", arg=len(expected))
    rows = page.eval_on_selector_all("#chunk-table tbody tr", "trs => trs.map(t => [...t.children].map(c => c.textContent))")
    assert [r[0] for r in rows] == [str(c["number"]) for c in expected]
    assert [r[2] for r in rows] == [f"#{c['rank']}" for c in expected]
    assert [r[3] for r in rows] == ["yes" if c["retrieved"] else "no" for c in expected]
    page.locator("#chunk-table-box summary").click()


BIG_DOC = """() => {
  let text = '';
  const filler = 'The vault keeps its ledgers in order and nothing much happens here. ';
  while (text.length < 1_100_000) text += filler;
  text += 'The quartz beacon flashes twice per minute. ';
  text += filler.repeat(200) + 'Again the quartz beacon shows. ' + filler.repeat(50) + 'A QUARTZ BEACON at the end.';
  window.__clip = new DataTransfer(); window.__clip.setData('text/plain', text);
  return text;
}"""


def test_find_searches_the_whole_big_document_steps_through_hits_and_marks_one(page):
    restore(page, "size=24")
    # The example, small: a hit is selected in the Document box itself.
    find = page.locator("#doc-find")
    find.fill("compaction")
    page.wait_for_function("() => document.querySelector('#doc-find-status mark')?.textContent.toLowerCase() === 'compaction'")
    doc = page.evaluate("document.getElementById('param-doc').value")
    assert page.evaluate("() => { const t = document.getElementById('param-doc'); return [t.selectionStart, t.selectionEnd]; }") \
        == [doc.lower().index("compaction"), doc.lower().index("compaction") + len("compaction")]
    # A document over a million characters: the box shows its start only, the find box searches all of it.
    text = page.evaluate(BIG_DOC)
    page.get_by_label("Question", exact=True).fill("Where is the quartz beacon?")  # one's own (the example's would go)
    page.locator("#param-doc").evaluate("ta => ta.select()")
    page.evaluate("""() => document.getElementById("param-doc").dispatchEvent(
      new ClipboardEvent("paste", { clipboardData: window.__clip, bubbles: true, cancelable: true }))""")
    page.wait_for_function("(n) => window.ragsim.request().documents[0].text.length === n", arg=len(text))
    page.wait_for_function("() => document.getElementById('param-doc').value.length < 100000")
    find.fill("quartz beacon")
    page.wait_for_function("() => document.querySelector('#doc-find-status mark')?.textContent === 'quartz beacon'")
    assert page.locator("#doc-find-status").inner_text().startswith("Hit 1 of 3,")
    status = page.locator("#doc-find-status")
    assert "beyond the part the box shows" in status.inner_text()
    assert page.locator("#doc-find-status mark").inner_text() == "quartz beacon"
    first = text.index("quartz beacon")
    page.click("#find-next")
    page.wait_for_function("() => document.getElementById('doc-find-status').dataset.hit === '2'")
    find.press("Enter")
    page.wait_for_function("() => document.getElementById('doc-find-status').dataset.hit === '3'")
    assert page.locator("#doc-find-status mark").inner_text() == "QUARTZ BEACON"
    find.press("Enter")  # round the end
    page.wait_for_function("() => document.getElementById('doc-find-status').dataset.hit === '1'")
    page.click("#find-mark")
    page.wait_for_function("(a) => { const s = window.ragsim.request().span; return s && s.start === a; }", arg=first)
    assert page.evaluate("window.ragsim.request().span.end") == first + len("quartz beacon")
    page.wait_for_function("(a) => { const r = window.ragsim.shownRequest(); return r && r.span && r.span.start === a; }",
                           arg=first, timeout=240_000)
    assert page.evaluate("() => window.ragsim.bands().length") == 1  # the picture marks it
    find.fill("")
    restore(page, "size=24")
