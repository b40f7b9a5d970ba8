"""Chroma's all-MiniLM-L6-v2 table, run by ragsim: the rows of "Evaluating Chunking
Strategies for Retrieval" (Smith and Troynikov, Chroma, 2024) that ragsim can run, each scored by
ragsim's question-set evaluation (SPEC section 8: Chroma's recall, precision, precision Ω and IoU)
with dense retrieval (SPEC section 10, all-MiniLM-L6-v2 through onnxruntime) on Chroma's own
general evaluation data (chunking_evaluation's `general_evaluation_data`: five corpora, 472 questions).

    python benchmarks/chroma_table.py PATH/TO/general_evaluation_data [--k 5] [--rows cluster-400,...] [--json]

The data is not part of ragsim (take it from brandonstarxel/chunking_evaluation). The rows:

- `RecursiveCharacterTextSplitter` size/overlap: Chroma's `RecursiveTokenChunker` (LangChain's
  recursive splitter, lengths in cl100k_base tokens, separators "\\n\\n", "\\n", ".", "?", "!", " ", "")
  = ragsim's `langchain-recursive` with `length: tokens` and those separators;
- `TokenTextSplitter` size/overlap: Chroma's `FixedTokenChunker` (LangChain's) = `langchain-token`;
- `ClusterSemanticChunker` 400 and 200, `KamradtModifiedChunker` 300 (min 50): `chroma-cluster`,
  `chroma-kamradt`, their pieces and windows embedded by the same model (ragsim's CPython host).

Every row retrieves `--k` chunks per question (the report's 5 by default). Chroma ranks with its own
collection (HNSW over the same model's vectors, the questions' embeddings frozen in its
questions_db); ragsim ranks every chunk exactly by cosine (ties by document order).
"""

import argparse
import json
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

import ragsim.host  # noqa: E402
from ragsim.wire import cost  # noqa: E402
from ragsim.wire.api import Session, simulate  # noqa: E402
from ragsim.wire.question_io import read_set, to_request  # noqa: E402

ragsim.host.register()  # onnxruntime's all-MiniLM-L6-v2 for dense and semantic, the rank files

CHROMA_SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]


def _recursive(size: int, overlap: int) -> dict:
    return {"strategy": "langchain-recursive", "length": "tokens", "tokenizer": "cl100k_base", "size": size,
            "overlap": overlap, "separators": CHROMA_SEPARATORS}


def _token(size: int, overlap: int) -> dict:
    return {"strategy": "langchain-token", "tokenizer": "cl100k_base", "size": size, "overlap": overlap}


SIZES = ((800, 400), (400, 200), (400, 0), (250, 125), (250, 0), (200, 0))

# (name, label, size, overlap, chunking) in the report's order
ROWS = [
    *[(f"recursive-{s}-{o}", "RecursiveCharacterTextSplitter", s, o, _recursive(s, o)) for s, o in SIZES],
    *[(f"token-{s}-{o}", "TokenTextSplitter", s, o, _token(s, o)) for s, o in SIZES],
    ("kamradt-300", "KamradtModifiedChunker", 300, 0, {"strategy": "chroma-kamradt", "size": 300, "min_chunk_size": 50}),
    ("cluster-400", "ClusterSemanticChunker", 400, 0, {"strategy": "chroma-cluster", "size": 400, "min_chunk_size": 50}),
    ("cluster-250", "ClusterSemanticChunker", 250, 0, {"strategy": "chroma-cluster", "size": 250, "min_chunk_size": 50}),
    ("cluster-200", "ClusterSemanticChunker", 200, 0, {"strategy": "chroma-cluster", "size": 200, "min_chunk_size": 50}),
]

# The report's own all-MiniLM-L6-v2 figures (percent: recall, precision, precision Ω, IoU), the rows
# published as text (the project's shared chroma_table2_minilm.md); the others are images.
PUBLISHED = {
    "recursive-250-125": (78.7, 4.9, 21.9, 4.9), "token-250-125": (82.4, 3.6, 11.4, 3.5),
    "recursive-250-0": (78.5, 5.4, 26.7, 5.4), "token-250-0": (77.1, 3.3, 16.4, 3.3),
    "recursive-200-0": (75.7, 6.5, 31.2, 6.5), "token-200-0": (76.6, 4.1, 19.1, 4.1),
    "cluster-250": (77.3, 6.1, 28.6, 6.0), "cluster-200": (75.2, 7.2, 33.6, 7.2),
}
METRICS = ("recall", "precision", "precision_omega", "iou")


def gaps(name: str, got: dict) -> tuple | None:
    """ragsim's figure minus the report's, in points, per metric; None for a row the report gives no text for."""
    if name not in PUBLISHED:
        return None
    return tuple(round(100 * got[m + "_mean"] - pub, 1) for m, pub in zip(METRICS, PUBLISHED[name]))


def load(data: pathlib.Path) -> tuple[list[dict], list[dict]]:
    """The corpora as documents (id = the file's stem, Chroma's corpus_id) and the questions."""
    corpora = sorted(p for p in (data / "corpora").iterdir() if p.is_file())
    documents = [{"id": p.stem, "title": p.name, "text": p.read_text(encoding="utf-8")} for p in corpora]
    found, _ = read_set((data / "questions_df.csv").read_text(encoding="utf-8"), documents, "csv", "strict")
    return documents, to_request(found, documents)


def run_row(documents, questions, chunking: dict, k: int, session: Session) -> dict:
    request = {"documents": documents, "query": "", "chunking": chunking, "questions": questions,
               "retrieval": {"k": k, "method": "dense"}, "wire": "columns"}
    out = simulate(request, session, budget=cost.BATCH)
    if "error" in out:
        raise SystemExit(f"chroma_table: {out['error']['field']}: {out['error']['message']}")
    st = out["question_stats"]
    omega = statistics.pstdev(q["precision_omega"] for q in out["questions"])  # as np.std, like the others
    return {"chunks": sum(d["chunks"] for d in out["documents"]), "precision_omega_std": omega, **{m: st[m] for m in (
        "recall_mean", "recall_std", "precision_mean", "precision_std", "precision_omega_mean", "iou_mean", "iou_std")}}


def line(label: str, size, overlap, got: dict) -> str:
    def pct(m: str) -> str:
        return f"{100 * got[m + '_mean']:5.1f} ± {100 * got[m + '_std']:4.1f}"

    return (f"{label:<32} {size:>5} {overlap:>7}  {pct('recall')}  {pct('precision')}  {pct('precision_omega')}  "
            f"{pct('iou')}  {got['chunks']:>6}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=pathlib.Path, help="chunking_evaluation's general_evaluation_data folder")
    parser.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
    parser.add_argument("--rows", help="comma-separated row names (default: all): " + ", ".join(r[0] for r in ROWS))
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    wanted = None if not args.rows else set(args.rows.split(","))
    documents, questions = load(args.data)
    session = Session()
    print(f"{len(documents)} corpora, {sum(len(d['text']) for d in documents):,} characters, {len(questions)} "
          f"questions; dense all-MiniLM-L6-v2, k {args.k}", file=sys.stderr)
    print(f"{'chunker':<32} {'size':>5} {'overlap':>7}  {'recall':>12}  {'precision':>12}  {'precision Ω':>12}  "
          f"{'IoU':>12}  {'chunks':>6}  gap to the report (points: recall, precision, Ω, IoU)")
    results = []
    for name, label, size, overlap, chunking in ROWS:
        if wanted is not None and name not in wanted:
            continue
        began = time.perf_counter()
        got = run_row(documents, questions, chunking, args.k, session)
        gap = gaps(name, got)
        results.append({"row": name, "chunker": label, "size": size, "overlap": overlap, "chunking": chunking,
                        "published": PUBLISHED.get(name), "gap": gap, **got})
        said = "  " + ", ".join(f"{g:+.1f}" for g in gap) if gap else "  (not in the report's text)"
        print(line(label, size, overlap, got) + said, flush=True)
        print(f"  ({name}: {time.perf_counter() - began:.0f} s)", file=sys.stderr, flush=True)
    widest = max((abs(g) for r in results if r["gap"] for g in r["gap"]), default=None)
    if widest is not None:
        print(f"widest gap to the report's published rows: {widest:.1f} points", flush=True)
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
