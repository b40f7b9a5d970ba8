"""The reranker options the ranking commands share (`eval`, `audit`, `inspect`, `ask`): --rerank-endpoint URL
--rerank-model NAME --rerank-depth N, sent as the request's `retrieval.rerank` (rank.reranking; the
client is host.clients.rerank_endpoint), and the lines that say what the reranker did."""

import argparse

from ragsim.rank.reranking import DEPTH, MAX_DEPTH


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rerank-endpoint", metavar="URL", help="Rerank with your own reranker: a /rerank endpoint's "
                        "base URL (TEI http://localhost:8080, vLLM http://localhost:8000/v1, Jina, Cohere); its key "
                        "from RAGSIM_RERANK_API_KEY (else RAGSIM_EMBED_API_KEY or OPENAI_API_KEY).")
    parser.add_argument("--rerank-model", metavar="NAME", help="The reranker's name at --rerank-endpoint.")
    parser.add_argument("--rerank-depth", metavar="N", type=int, default=None,
                        help=f"How many of the retriever's first chunks the reranker reorders before k is taken "
                        f"(default {DEPTH}).")


def given(args) -> bool:
    return any(getattr(args, f, None) is not None for f in ("rerank_endpoint", "rerank_model", "rerank_depth"))


def problem(args) -> str | None:
    """A sentence for options that do not make a reranker, or None (also None without any)."""
    from ragsim.host.clients.rerank_endpoint import RerankError, rerank_url

    if not given(args):
        return None
    if not args.rerank_endpoint or not args.rerank_model:
        return "Give --rerank-endpoint URL and --rerank-model NAME together."
    depth = args.rerank_depth if args.rerank_depth is not None else DEPTH
    if not 1 <= depth <= MAX_DEPTH:
        return f"--rerank-depth must be from 1 to {MAX_DEPTH} (got {depth})."
    try:
        rerank_url(args.rerank_endpoint)
    except RerankError as e:
        return e.message
    return None


def fields(args) -> dict:
    """The request's `retrieval.rerank` for the options given, or {} without them."""
    if not given(args):
        return {}
    depth = args.rerank_depth if args.rerank_depth is not None else DEPTH
    return {"rerank": {"endpoint": args.rerank_endpoint, "model": args.rerank_model, "depth": depth}}


def verdict_words(v: dict) -> str:
    """A verdict's kind, with "after reranking" where the reranker moved the answer out of k."""
    return f"{v['kind']} after reranking" if v.get("after_reranking") else str(v["kind"])


def summary(response: dict) -> str | None:
    """One line on the reranker and the questions it ranked out, or None without a reranker."""
    rr = response.get("rerank")
    if not rr:
        return None
    line = f"reranked by {rr['model']} at {rr['endpoint']}: the first {rr['depth']} chunks of each ranking reordered"
    moved = [q["id"] for q in response.get("questions") or [] if q.get("after_reranking")]
    if moved:
        shown = ", ".join(moved[:10]) + (f" and {len(moved) - 10:,} more" if len(moved) > 10 else "")
        line += f"; ranked out after reranking (within k before it): {shown}"
    return line
