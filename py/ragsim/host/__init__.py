"""Host modules: I/O and real libraries (command lines, onnxruntime, files), outside the pure core.

Importing this package or any of its modules registers nothing. `register()` registers CPython's
hosts with the core: tiktoken's rank files read from disk (`tokens_files`) and the all-MiniLM-L6-v2
model through onnxruntime (`embed_onnx`, loaded on first use), for dense retrieval and for the
semantic chunkers. `python -m ragsim` calls it; so must any other CPython caller that wants them.
The page's worker imports `ragsim.host.pdf` and never calls it: there the page provides the rank
files, the similarities and the semantic chunkers' vectors.
"""

_registered = False


def register() -> None:
    """Make CPython's hosts the core's (idempotent: a second call changes nothing)."""
    global _registered
    if _registered:
        return
    from ragsim.host import tokens_files
    from ragsim.rank import dense
    from ragsim.split import semantic_split
    from ragsim.text import tokens

    # looked up at each call, so a test (or a caller) may replace either function on its module
    tokens.add_finder(lambda name: tokens_files.find_rank_file(name), lambda name: tokens_files.missing_message(name))
    dense.register_host(embedder)
    # the semantic chunkers' sentence windows (SPEC section 12): the same model, embedded in batches
    semantic_split.register_host(embedder)
    _registered = True


def embedder(embedding: dict | None = None):
    """The embedding model of this run: the model a request names (`retrieval.embedding`, the
    one-request form), else the user's own endpoint when a command set one (`embed_endpoint.use`,
    `--embed-endpoint`), else all-MiniLM-L6-v2 through onnxruntime."""
    from ragsim.host import embed_endpoint, embed_onnx

    if embedding is not None:
        return embed_endpoint.of(embedding["endpoint"], embedding["model"])
    return embed_endpoint.default() if embed_endpoint.configured() else embed_onnx.default_embedder()


def registered() -> bool:
    """Whether `register()` has run in this process (a worker process of a run follows its parent)."""
    return _registered
