"""Which splitter made these? `identify.identify` on a 100-chunk document, against the naive search.

For each real splitter: CPython's help topics (`bench_core.corpus`) cut after the library's 100th
chunk, split again by the library itself, the chunks placed by `str.find` from the previous start
(as the aligner places them); then the seconds `identify` takes to name the splitter (the rank
files already loaded: a session loads them once), and the same for the document cut at random
points inside words (nothing to find, so every splitter is searched and the nearest is scored).
Times are the process's CPU seconds (`time.process_time`), so a busy machine does not inflate them.

The naive search tries every mirrored splitter x every size 1..N x every overlap 0..size-1, N being
twice the longest chunk in that splitter's unit: too long to run, so it is estimated as the number
of settings times the mean time of one full-document split, measured on randomly drawn settings.

    python benchmarks/bench_identify.py [--samples 40]
"""

import argparse
import logging
import os
import pathlib
import random
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "py"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("langchain_text_splitters").setLevel(logging.ERROR)
logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)

from bench_core import corpus  # noqa: E402
import ragsim.host  # noqa: E402
from ragsim.judge import identify as ident  # noqa: E402
from ragsim.text import tokens  # noqa: E402

ragsim.host.register()  # CPython's rank files, read from disk


def libraries():
    """(label, function text -> chunk texts) for the real splitters timed."""
    import llama_index.core
    from haystack import Document
    from haystack.components.preprocessors import DocumentSplitter
    from langchain_text_splitters import CharacterTextSplitter, RecursiveCharacterTextSplitter, TokenTextSplitter
    from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter as LlamaTokens

    # tiktoken (under LangChain's token splitters) reads the rank files LlamaIndex ships
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(pathlib.Path(llama_index.core.__file__).parent / "_static/tiktoken_cache"))

    def haystack(text):
        splitter = DocumentSplitter(split_by="word", split_length=150, split_overlap=15)
        return [d.content for d in splitter.run(documents=[Document(content=text)])["documents"]]

    return [
        ("LangChain recursive 1000/200", RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_text),
        ("LangChain recursive 737/61", RecursiveCharacterTextSplitter(chunk_size=737, chunk_overlap=61).split_text),
        ("LangChain recursive tiktoken 256/32", RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=256, chunk_overlap=32).split_text),
        ("LangChain character 900/100", CharacterTextSplitter(chunk_size=900, chunk_overlap=100).split_text),
        ("LangChain token 250/25", TokenTextSplitter(encoding_name="cl100k_base", chunk_size=250, chunk_overlap=25).split_text),
        ("Haystack word 150/15", haystack),
        ("LlamaIndex sentence 256/20", SentenceSplitter(chunk_size=256, chunk_overlap=20).split_text),
        ("LlamaIndex token 300/40", LlamaTokens(chunk_size=300, chunk_overlap=40).split_text),
    ]


def placed(text, chunks):
    out, previous = [], 0
    for chunk in chunks:
        at = text.find(chunk, previous)
        out.append(None if at < 0 else (at, at + len(chunk)))
        previous = at if at >= 0 else previous
    return out


def hundred_chunks(split, text):
    """The text cut where the library's 101st chunk starts, and the library's chunks of that text."""
    chunks = split(text[:120_000])
    if len(chunks) > 100:
        text = text[: text.find(chunks[100], text.find(chunks[99]))]
    else:
        text = text[:120_000]
    return text, split(text)


def random_cuts(text, n, seed=0):
    inside = [i for i in range(1, len(text)) if text[i - 1].isalnum() and text[i].isalnum()]
    cuts = sorted(random.Random(seed).sample(inside, n - 1))
    bounds = [0, *cuts, len(text)]
    return list(zip(bounds, bounds[1:]))


def naive_seconds(text, extents, samples, rnd):
    """Settings the naive search would split, and their estimated seconds (mean of sampled splits)."""
    ctx = ident.Context(text, extents, [text[a:b] for a, b in extents])
    doc, settings, times = ctx.index, 0, []
    for family in ident.families(text, ident.TOKENIZERS):
        (_, longest), _ = ident._shape(ctx, family)
        n = 2 * longest
        settings += n * (n + 1) // 2
        for _ in range(max(1, samples // 20)):
            size = rnd.randint(1, n)
            chunking = {"strategy": family.strategy, **family.fixed, "size": size, "overlap": rnd.randint(0, size - 1)}
            t = time.process_time()
            ident._split(doc, chunking)
            times.append(time.process_time() - t)
    return settings, settings * statistics.mean(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40, help="sampled splits per document for the naive estimate")
    args = parser.parse_args()
    for name in ident.TOKENIZERS:
        tokens.get(name)  # once per session, as the command line and the page load them
    rnd = random.Random(0)
    full = corpus()
    print(f"{'chunks made by':38} {'chunks':>6} {'chars':>7} {'identify s':>10} {'random cuts s':>13} "
          f"{'naive settings':>15} {'naive s (est.)':>15}")
    for label, split in libraries():
        text, chunks = hundred_chunks(split, full)
        extents = placed(text, chunks)
        t = time.process_time()
        r = ident.identify(text, extents, chunks)
        found = time.process_time() - t
        cuts = random_cuts(text, len(chunks))
        t = time.process_time()
        none = ident.identify(text, cuts, [text[a:b] for a, b in cuts])
        nothing = time.process_time() - t
        settings, naive = naive_seconds(text, [e for e in extents if e is not None], args.samples, rnd)
        print(f"{label:38} {len(chunks):6} {len(text):7,} {found:10.2f} {nothing:13.2f} {settings:15,} {naive:15,.0f}")
        print(f"    {r['line']}")
        assert none["strategy"] is None, none["line"]


if __name__ == "__main__":
    main()
