"""The retriever options the commands share (`audit`, `eval`): --method, --rrf-c, --weights.

Dense and hybrid rank with all-MiniLM-L6-v2 through onnxruntime (from the checkout, into its own
virtual environment: `.venv/bin/pip install -e ".[dense]"`; `python3 build.py test` installs it too);
the core checks the values and names the field when one is wrong."""

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--method", default="bm25", help="The retriever: bm25 (the default), dense or hybrid.")
    parser.add_argument("--rrf-c", type=int, default=None, help="For hybrid, the constant c of reciprocal rank fusion (default 60).")
    parser.add_argument("--weights", default=None, help="For hybrid, the BM25 and dense weights, e.g. 0.5,0.5.")


def retrieval_fields(args) -> dict:
    """The request's retrieval fields for the options given (none for plain BM25)."""
    out = {}
    if args.method != "bm25":
        out["method"] = args.method
    if args.rrf_c is not None:
        out["rrf_c"] = args.rrf_c
    if args.weights is not None:
        try:
            out["weights"] = [float(w) for w in args.weights.split(",")]
        except ValueError:
            out["weights"] = args.weights  # the core refuses it with a sentence naming retrieval.weights
    return out
