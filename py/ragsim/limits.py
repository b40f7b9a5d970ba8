"""The sizes the core and the commands accept, in one place.

Each is checked before the work it protects starts, and a request over it gets `{"error"}` with a
sentence naming the limit. The numbers keep one request within about a second or two of CPython
time and well under a gigabyte of memory (10 million characters index into about 650 MB on
CPython, 200,000 chunks cost about 200 MB and 7 s), so a page worker in Pyodide survives them.
"""

from ragsim.errors import RequestError

# The documents of one request together (a single document is a collection of one), code points.
MAX_CHARS = 10_000_000
# Documents in one request.
MAX_DOCUMENTS = 10_000
# Chunks one request may make over all its documents: size 1 over megabytes would make millions.
MAX_CHUNKS = 200_000
# The context one answer may assemble (k chunks joined), code points: k 200,000 at overlap 9,950
# would join 2 billion characters (6 GB). Checked on the top k's lengths before joining (wire.encode).
MAX_CONTEXT_CHARS = MAX_CHARS
# The overlaps one audit runs (each splits and ranks every document again), as the sweep's 50.
MAX_OVERLAPS = 50
# The query, in code points (question sets carry their own questions).
MAX_QUERY_CHARS = 100_000
# LangChain separators: how many, and how long one regular expression may be.
MAX_SEPARATORS = 100
MAX_PATTERN_CHARS = 500
# What a Session (the page's worker holds one) keeps between requests at most, besides the entry
# in use: characters of indexed text, and chunks of cached splits.
CACHE_CHARS = MAX_CHARS
CACHE_CHUNKS = 2 * MAX_CHUNKS
# The commands: bytes read from stdin (JSON escapes make a character up to 6 bytes; 10 million
# characters of plain text are about 10-40 MB of JSON) and from one file given to `audit`.
MAX_STDIN_BYTES = 64 * 1024 * 1024
MAX_FILE_BYTES = 40 * 1024 * 1024


def check_texts(docs: list[dict]) -> None:
    """Refuse a request whose documents are too many or hold too many characters together."""
    if len(docs) > MAX_DOCUMENTS:
        raise RequestError("documents", f"A request holds at most {MAX_DOCUMENTS:,} documents (got {len(docs):,}); "
                           "send fewer documents or join small ones.")
    total = sum(len(d["text"]) for d in docs)
    if total > MAX_CHARS:
        raise RequestError("documents", f"The documents hold {total:,} characters together, more than the limit of "
                           f"{MAX_CHARS:,}; split the text and simulate it in parts.")


def check_query(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise RequestError("query", f"The query has {len(query):,} characters, more than the limit of "
                           f"{MAX_QUERY_CHARS:,}; ask a shorter question.")


def check_chunks(chunks: int, field: str = "chunking.size") -> None:
    """Refuse settings that would make (or made) more than MAX_CHUNKS chunks in one request."""
    if chunks > MAX_CHUNKS:
        raise RequestError(field, f"These settings would make {chunks:,} chunks or more, over the limit of "
                           f"{MAX_CHUNKS:,}; raise chunking.size or lower chunking.overlap.")


def check_context(chars: int) -> None:
    if chars > MAX_CONTEXT_CHARS:
        raise RequestError("retrieval.k", f"The top k chunks hold {chars:,} characters together, more than the "
                           f"{MAX_CONTEXT_CHARS:,} one context may hold; lower retrieval.k or chunking.overlap.")
