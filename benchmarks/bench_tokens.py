"""Exact tokens: ragsim's pure-Python tiktoken against tiktoken (Rust) and puretiktoken, same process.

Text: CPython's help topics (`pydoc_data.topics` joined, about 65,000 words), as the other benchmarks.
Times are the process's CPU time (medians), so other work on the machine does not skew the ratios.

1. Tokenizing the text once, cold: a fresh encoding (no piece cache), the rank file already parsed.
   ragsim's `encode` and `encode_with_offsets` (what a token-unit split uses), tiktoken's
   `encode(text, allowed_special="all")`, puretiktoken's. Parsing the rank file is timed apart.
2. A token-unit slider move after the first: ragsim's `api.simulate` with a Session (the text was
   tokenized once; the move re-splits, re-scores and builds the response; moves alternate between
   two sizes so no cache answers), and the split alone, against tiktoken + LangChain's
   `TokenTextSplitter.split_text` doing the same split (it encodes the text on every call).

    python benchmarks/bench_tokens.py [--repeat 7] [--encoding cl100k_base]
"""

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_core import corpus  # noqa: E402  (the same text as the core benchmark)

import build  # noqa: E402
import ragsim.host  # noqa: E402
from ragsim import split as splitters
from ragsim.text import tokens  # noqa: E402
from ragsim.wire.api import Session, simulate  # noqa: E402
from ragsim.text.index import DocIndex  # noqa: E402

ragsim.host.register()  # CPython's hosts: rank files, the model


def reference_encodings(name: str, data: bytes, cache: pathlib.Path):
    """tiktoken and puretiktoken on the same verified rank file (tiktoken reads its cache folder)."""
    import os

    cache.mkdir(parents=True, exist_ok=True)
    (cache / tokens.ENCODINGS[name]["cache_name"]).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken

    try:
        import puretiktoken

        pure = puretiktoken.get_encoding(name)
    except ImportError:
        pure = None
    return tiktoken.get_encoding(name), pure


def median_ms(fn, repeat):
    """Median CPU time of this process (not wall time): ratios stay meaningful on a shared, loaded
    machine. Every timed call runs in this one thread (tiktoken's encode included)."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append((time.process_time() - t) * 1000)
    return sorted(times)[len(times) // 2]


def once(label, fn, repeat):
    ms = median_ms(fn, repeat)
    print(f"  {label:<52} {ms:9.1f} ms")
    return ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--encoding", default="cl100k_base", choices=tokens.NAMES)
    args = parser.parse_args()
    name, repeat = args.encoding, args.repeat
    text = corpus()
    data = build.tiktoken_rank_files()[name]
    spec = tokens.ENCODINGS[name]
    rust, pure = reference_encodings(name, data, ROOT / ".cache" / "tiktoken-bench")

    print(f"{len(text.split()):,} words, {len(text):,} characters, {name}")
    parse = once("parse the rank file (sha256 + base64)", lambda: tokens.provide(name, data), 3)
    ranks = tokens.get(name).ranks
    ours = tokens.Encoding(name, ranks, spec["special"]).encode(text)
    theirs = rust.encode(text, allowed_special="all")
    assert ours == theirs, "ragsim and tiktoken disagree"
    print(f"  {len(ours):,} tokens, equal to tiktoken's")

    print("tokenize once (ragsim cold: a fresh encoding, no piece cache):")
    t_ours = once("ragsim encode", lambda: tokens.Encoding(name, ranks, spec["special"]).encode(text), repeat)
    t_offsets = once("ragsim encode_with_offsets",
                     lambda: tokens.Encoding(name, ranks, spec["special"]).encode_with_offsets(text), repeat)
    warm = tokens.Encoding(name, ranks, spec["special"])
    warm.encode(text)
    t_warm = once("ragsim encode, warm (pieces cached, as on a re-run)", lambda: warm.encode(text), repeat)
    t_rust = once("tiktoken (Rust) encode", lambda: rust.encode(text, allowed_special="all"), repeat)
    t_pure = None
    if pure is not None:
        assert pure.encode(text, allowed_special="all") == theirs, "puretiktoken disagrees"
        t_pure = once("puretiktoken encode (its piece cache warm)", lambda: pure.encode(text, allowed_special="all"), repeat)

    print("token-unit slider move (size 256 <-> 255, overlap 32):")
    from langchain_text_splitters import TokenTextSplitter

    session = Session(splits=1)
    req = {"documents": [{"id": "topics", "title": "topics", "text": text}],
           "query": "How does the with statement call __enter__ and __exit__?",
           "chunking": {"strategy": "langchain-token", "size": 256, "overlap": 32, "tokenizer": name},
           "retrieval": {"k": 5}, "span": None, "wire": "columns"}
    other = dict(req, chunking=dict(req["chunking"], size=255))
    simulate(req, session)

    def move():
        simulate(other, session)
        simulate(req, session)

    t_move = once("ragsim api.simulate, one move (whole response)", move, repeat) / 2
    doc = DocIndex.build(text)
    splitters.split(doc, req["chunking"])
    t_split = once("ragsim split alone, one move", lambda: splitters.split(doc, other["chunking"]), repeat)
    lc = TokenTextSplitter(encoding_name=name, chunk_size=256, chunk_overlap=32, allowed_special="all")
    t_lc = once("tiktoken + LangChain TokenTextSplitter.split_text", lambda: lc.split_text(text), repeat)
    assert len(lc.split_text(text)) == len(splitters.split(doc, req["chunking"]))

    print("ratios (ragsim / other; below 1 means ragsim is faster):")
    print(f"  encode vs tiktoken (Rust)            {t_ours / t_rust:6.1f}x")
    if t_pure is not None:
        print(f"  encode, warm, vs puretiktoken (warm) {t_warm / t_pure:6.2f}x")
    print(f"  encode_with_offsets vs tiktoken      {t_offsets / t_rust:6.1f}x")
    print(f"  encode, warm, vs tiktoken            {t_warm / t_rust:6.1f}x")
    print(f"  slider move (simulate) vs LangChain  {t_move / t_lc:6.2f}x")
    print(f"  slider move (split) vs LangChain     {t_split / t_lc:6.3f}x")
    print(f"  rank file parse: {parse:.0f} ms once per session")


if __name__ == "__main__":
    main()
