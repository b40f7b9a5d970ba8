"""One slider move under each splitting strategy, ragsim against the library it mirrors, same process.

Text: CPython's help topics (`pydoc_data.topics` joined, about 65,000 words). ragsim: one
`api.simulate` with a `Session` (the text indexed once), so a move re-splits, re-scores and
builds the whole response. Every timed move really re-splits: moves alternate between the
measured size and size + 1, so no cache answers a measured move. Library: the same split alone
(`split_text` / `DocumentSplitter.run`), no scoring at all.

    python benchmarks/bench_splitters.py [--repeat 15]
"""

import argparse
import logging
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "py"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
logging.getLogger("langchain_text_splitters").setLevel(logging.ERROR)

from bench_core import corpus, median_ms  # noqa: E402  (same text, same timer as the core benchmark)
import ragsim.host  # noqa: E402
from ragsim import split as splitters  # noqa: E402
from ragsim.wire.api import Session, simulate  # noqa: E402
from ragsim.text.index import DocIndex  # noqa: E402

ragsim.host.register()  # CPython's hosts: rank files, the model

QUERY = "How does the with statement call __enter__ and __exit__ on the context manager?"


def request(text, chunking):
    return {
        "documents": [{"id": "topics", "title": "Python help topics", "text": text}],
        "query": QUERY,
        "chunking": chunking,
        "retrieval": {"k": 5},
        "span": None,
        "price_per_million": 3.0,
    }


def library(chunking):
    """The library call that makes the same chunks, as a function of the text (None: no library)."""
    name = chunking["strategy"]
    common = {}
    if name.startswith("langchain"):
        common = {"chunk_size": chunking["size"], "chunk_overlap": chunking["overlap"]}
    if name == "langchain-recursive":
        from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

        if "language" in chunking:
            return RecursiveCharacterTextSplitter.from_language(Language(chunking["language"]), **common).split_text
        return RecursiveCharacterTextSplitter(**common).split_text
    if name == "langchain-character":
        from langchain_text_splitters import CharacterTextSplitter

        return CharacterTextSplitter(separator=chunking.get("separator", "\n\n"), **common).split_text
    if name == "haystack":
        from haystack import Document
        from haystack.components.preprocessors import DocumentSplitter

        splitter = DocumentSplitter(split_by=chunking["split_by"], split_length=chunking["size"],
                                    split_overlap=chunking["overlap"])
        return lambda text: splitter.run(documents=[Document(content=text)])["documents"]
    if name.startswith("llamaindex"):  # llama-index-core 0.14.25, its default tokenizer (tiktoken, Rust)
        from llama_index.core.node_parser import SentenceSplitter, TokenTextSplitter

        if name == "llamaindex-sentence":
            return SentenceSplitter(chunk_size=chunking["size"], chunk_overlap=chunking["overlap"]).split_text
        if name == "llamaindex-token":
            return TokenTextSplitter(chunk_size=chunking["size"], chunk_overlap=chunking["overlap"]).split_text
    return None


CASES = [
    ("LangChain recursive 1000/200", {"strategy": "langchain-recursive", "size": 1000, "overlap": 200}),
    ("LangChain recursive 200/40", {"strategy": "langchain-recursive", "size": 200, "overlap": 40}),
    ("LangChain recursive markdown 1000/200", {"strategy": "langchain-recursive", "language": "markdown", "size": 1000, "overlap": 200}),
    ("LangChain character \\n\\n 1000/200", {"strategy": "langchain-character", "size": 1000, "overlap": 200}),
    ("LangChain character \\n 500/100", {"strategy": "langchain-character", "separator": "\n", "size": 500, "overlap": 100}),
    ("Haystack word 200/20", {"strategy": "haystack", "split_by": "word", "size": 200, "overlap": 20}),
    ("Haystack passage 5/1", {"strategy": "haystack", "split_by": "passage", "size": 5, "overlap": 1}),
    ("Haystack period 10/2", {"strategy": "haystack", "split_by": "period", "size": 10, "overlap": 2}),
    ("sentences words 200/40", {"strategy": "sentences", "unit": "words", "size": 200, "overlap": 40}),
    ("window words 200/40", {"strategy": "window", "unit": "words", "size": 200, "overlap": 40}),
    ("LlamaIndex sentence 1024/200 tokens", {"strategy": "llamaindex-sentence", "size": 1024, "overlap": 200}),
    ("LlamaIndex sentence 256/32 tokens", {"strategy": "llamaindex-sentence", "size": 256, "overlap": 32}),
    ("LlamaIndex token 1024/20 tokens", {"strategy": "llamaindex-token", "size": 1024, "overlap": 20}),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    text = corpus()
    print(f"corpus: {len(text.split()):,} words, {len(text):,} characters; median of {args.repeat} moves\n")
    print(f"{'strategy':40} {'ragsim simulate':>16} {'ragsim split':>13} {'library split':>14} {'ratio':>7} {'split ratio':>12}")
    doc = DocIndex.build(text)
    slower = []
    for label, chunking in CASES:
        session = Session(splits=1)  # one split kept: the neighbour always evicts the measured one
        measured = request(text, chunking)
        neighbour = request(text, {**chunking, "size": chunking["size"] + 1})
        simulate(neighbour, session)  # index once, as the page does before the first drag

        times = []
        for _ in range(args.repeat):
            simulate(neighbour, session)
            t = time.perf_counter()
            r = simulate(measured, session)
            times.append((time.perf_counter() - t) * 1000)
            assert "error" not in r, r
        ours = statistics.median(times)
        splitters.split(doc, chunking)  # the text-only results (pieces, sentences) memoized, as in a drag
        ours_split = median_ms(lambda: splitters.split(doc, chunking), args.repeat)
        split = library(chunking)
        if split is None:
            print(f"{label:40} {ours:13.1f} ms {ours_split:10.1f} ms {'(no library)':>14}")
            continue
        theirs = median_ms(lambda: split(text), args.repeat)
        ratio = theirs / ours
        print(f"{label:40} {ours:13.1f} ms {ours_split:10.1f} ms {theirs:11.1f} ms {ratio:6.1f}x {theirs / ours_split:11.1f}x")
        if ours_split > theirs:  # splitter against splitter; the move also scores and reports
            slower.append(label)
    print("\nratio = library split / ragsim simulate (which also indexes terms, scores, ranks and reports);")
    print("split ratio = library split / ragsim split alone. Above 1: ragsim faster.")
    if slower:
        print("split SLOWER than the library's:", ", ".join(slower))
    return 1 if slower else 0


if __name__ == "__main__":
    raise SystemExit(main())
