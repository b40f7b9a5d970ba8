"""The retriever options the commands share (`audit`, `eval`): --method, --rrf-c, --weights.

Dense and hybrid rank with all-MiniLM-L6-v2 through onnxruntime (from the checkout, into its own
virtual environment: `.venv/bin/pip install -e ".[dense]"`; `python3 build.py test` installs it too);
the core checks the values and names the field when one is wrong."""

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--method", default="bm25", help="The retriever: bm25 (the default), dense or hybrid.")
    parser.add_argument("--rrf-c", type=int, default=None, help="For hybrid, the constant c of reciprocal rank fusion (default 60).")
    parser.add_argument("--weights", default=None, help="For hybrid, the BM25 and dense weights, e.g. 0.5,0.5.")
    add_endpoint_arguments(parser)


def add_endpoint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embed-endpoint", metavar="URL", help="Rank with your own embedding model: an OpenAI-"
                        "compatible base URL (Ollama http://localhost:11434/v1, TEI, vLLM, LM Studio, OpenAI); its "
                        "key from RAGSIM_EMBED_API_KEY or OPENAI_API_KEY. Implies --method dense unless hybrid.")
    parser.add_argument("--embed-model", metavar="NAME", help="The embedding model's name at --embed-endpoint.")


def use_endpoint(args) -> str | None:
    """With --embed-endpoint: the run's embedder is the user's model (`embed_endpoint.use`), and
    --method bm25 becomes dense; the model's name for the reports. None without it."""
    from ragsim.host.clients import embed_endpoint

    endpoint, model = getattr(args, "embed_endpoint", None), getattr(args, "embed_model", None)
    if endpoint is None and model is None:
        return None
    if not endpoint or not model:
        raise embed_endpoint.EndpointError("Give --embed-endpoint URL and --embed-model NAME together.")
    embed_endpoint.use(endpoint, model)
    if args.method == "bm25":
        args.method = "dense"
    return model


def endpoint_problem(args) -> str | None:
    """`use_endpoint`, its refusal as the sentence a command prints (exit 2), or None; then the
    reranker's options (`cli_rerank.problem`)."""
    from ragsim.errors import RequestError
    from ragsim.host.commands import cli_rerank

    try:
        use_endpoint(args)
    except RequestError as e:
        return e.message
    return cli_rerank.problem(args)


def refused_endpoint(args, prog: str) -> bool:
    """Whether `endpoint_problem` refuses the options: then its sentence is printed after `prog`
    and the command exits 2."""
    from ragsim.host.commands import console

    problem = endpoint_problem(args)
    if problem:
        console.say(f"{prog}: {problem}")
    return bool(problem)


def retrieval_fields(args) -> dict:
    """The request's retrieval fields for the options given (none for plain BM25), a reranker's too."""
    from ragsim.host.commands import cli_rerank

    use_endpoint(args)
    out = cli_rerank.fields(args)
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
