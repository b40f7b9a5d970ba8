"""Placing stored chunks in a long source (SPEC section 11, `ragsim.stored.align`), against the
naive loop that looks each chunk up with `text.find(chunk)` from the start.

Text: the conformance texts (tests/conformance/texts/) joined and repeated to about 10 MB, so every
passage occurs some 2,000 times: the worst case for "which occurrence is this chunk?". Chunks:
1000-character windows with 200 of overlap (LangChain's defaults), in four stores:
  in order       every chunk verbatim, in store order (Chroma, a JSON Lines export)
  mangled        every 10th chunk with its whitespace folded (a cleaning step the source lacks)
  shuffled       every chunk verbatim, in random order (Qdrant lists points by id)
  rebuilt        in order, no source given: the document rebuilt from the chunks' overlaps
  numbered       in order with every 10th mangled, over a text whose copies carry their number
                 (a long document: passages repeat, but not verbatim everywhere)
For each: CPU seconds (process time: the machine may be shared), and how many chunks land on their true offsets (the naive loop puts every
repeated chunk on the first copy and cannot place a mangled one at all).

    python benchmarks/bench_align.py [--mb 10] [--size 1000] [--overlap 200]
"""

import argparse
import pathlib
import random
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

from ragsim.judge.stored import align  # noqa: E402
from ragsim.split.windows import window_bounds  # noqa: E402


def base_text() -> str:
    folder = ROOT / "tests" / "conformance" / "texts"
    return "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()) if not p.name.startswith("."))


def long_text(mb: float, numbered: bool) -> str:
    base, parts, n, i = base_text(), [], 0, 0
    while n < mb * 1_000_000:
        part = f"Copy {i}.\n\n" + base.replace(". ", f". ({i}) ") if numbered else base
        parts.append(part)
        n += len(part) + 2
        i += 1
    return "\n\n".join(parts)


def store(text, size, overlap, mangle_every=0, shuffle=False):
    bounds = window_bounds(len(text), size, overlap)
    chunks = []
    for i, (a, b) in enumerate(bounds):
        piece = text[a:b]
        if mangle_every and i % mangle_every == mangle_every // 2:
            piece = " ".join(piece.split())
        chunks.append({"id": f"c{i}", "text": piece, "doc": "d", "start": None, "end": None})
    truth = {f"c{i}": ab for i, ab in enumerate(bounds)}
    if shuffle:
        random.Random(0).shuffle(chunks)
    return chunks, truth


def true_extent(text, chunk, truth):
    """The extent a correct placement gives: the window, trimmed for a folded chunk."""
    a, b = truth[chunk["id"]]
    if text[a:b] == chunk["text"]:
        return a, b
    piece = text[a:b]
    return a + len(piece) - len(piece.lstrip()), b - (len(piece) - len(piece.rstrip()))


def run(name, text, chunks, truth, sources=True):
    t0 = time.process_time()
    al = align(chunks, {"d": text} if sources else None)
    ours = time.process_time() - t0
    right = sum((c.start, c.end) == true_extent(text, s, truth) for c, s in zip(al.chunks, chunks))
    kinds = {}
    for c in al.chunks:
        kinds[c.placement] = kinds.get(c.placement, 0) + 1
    t0 = time.process_time()
    naive = [text.find(c["text"]) for c in chunks]
    naive_s = time.process_time() - t0
    naive_right = sum(q == truth[c["id"]][0] and q >= 0 for q, c in zip(naive, chunks))
    print(f"{name:10} {len(chunks):6} chunks  align {ours:6.2f} s, {right:6} at their offsets {kinds}   "
          f"naive find {naive_s:6.2f} s, {naive_right:6} at their offsets, {naive.count(-1)} not found")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--overlap", type=int, default=200)
    args = ap.parse_args()
    text = long_text(args.mb, numbered=False)
    print(f"text: {len(text):,} characters; windows {args.size}/{args.overlap}")
    run("in order", text, *store(text, args.size, args.overlap))
    run("mangled", text, *store(text, args.size, args.overlap, mangle_every=10))
    run("shuffled", text, *store(text, args.size, args.overlap, shuffle=True))
    run("rebuilt", text, *store(text, args.size, args.overlap), sources=False)
    numbered = long_text(args.mb, numbered=True)
    run("numbered", numbered, *store(numbered, args.size, args.overlap, mangle_every=10))


if __name__ == "__main__":
    main()
