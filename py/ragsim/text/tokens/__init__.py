"""Exact tiktoken tokens in pure Python (SPEC section 9): cl100k_base and o200k_base.

    from ragsim import tokens
    tokens.provide("cl100k_base", rank_file_bytes)   # once; sha256-checked against tiktoken's value
    enc = tokens.get("cl100k_base")                  # an `Encoding`
    enc.encode(text)                                 # == tiktoken's encode(text, allowed_special="all")
    ids, starts, ends = enc.encode_with_offsets(text)

The rank files are OpenAI's own (`<name>.tiktoken`); the core never downloads. The host gives it
their bytes: the page's worker fetches them from dist/ and calls `provide`; on CPython, `get` falls
back to `host.find_rank_file` (the environment variable RAGSIM_TIKTOKEN_DIR, the build's .cache/,
tiktoken's and LlamaIndex's caches). Parsed encodings are kept for the life of the process: they are
immutable data, like `re`'s compiled patterns.
"""

import binascii
import hashlib

from ragsim.errors import RequestError
from ragsim.text.tokens.encoding import Encoding
from ragsim.text.tokens.patterns import UNICODE_VERSION
from ragsim.fields import shown

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

# tiktoken_ext/openai_public.py (tiktoken 0.7 - 0.14): the sha256 tiktoken checks each rank file
# against, the file's name in tiktoken's cache (sha1 of its blob URL) and the special tokens.
ENCODINGS = {
    "cl100k_base": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "cache_name": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        "n_ranks": 100256,
        "special": {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                    ENDOFPROMPT: 100276},
    },
    "o200k_base": {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "cache_name": "fb374d419588a4632f3f557e76b4b70aebbca790",
        "n_ranks": 199998,
        "special": {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    },
}
DEFAULT = "cl100k_base"
NAMES = tuple(ENCODINGS)

_loaded: dict[str, Encoding] = {}


def file_name(name: str) -> str:
    """The rank file's own name, as OpenAI publishes it: `cl100k_base.tiktoken`."""
    return f"{name}.tiktoken"


def check_name(name, field: str) -> str:
    """`name` if it is a known encoding; else a RequestError for `field` that lists the names."""
    if not isinstance(name, str) or name not in ENCODINGS:  # a list or object is not hashable
        listed = ", ".join(repr(n) for n in ENCODINGS)
        raise RequestError(field, f"{field} must be one of {listed} (got {shown(name)}).")
    return name


def parse_ranks(data: bytes, n_ranks: int | None = None) -> dict[bytes, int]:
    """The mergeable ranks of a `.tiktoken` file: one `base64 rank` pair a line.

    OpenAI's files list the ranks 0, 1, 2, ... in order; with `n_ranks` (a file whose sha256 was
    checked) the numbers are not parsed at all, which halves the time."""
    fields = data.split()
    tokens = fields[0::2]
    if n_ranks is not None and len(tokens) == n_ranks:
        return dict(zip(map(binascii.a2b_base64, tokens), range(n_ranks)))
    return dict(zip(map(binascii.a2b_base64, tokens), map(int, fields[1::2])))


def provide(name: str, data: bytes) -> Encoding:
    """Check `data` is the official rank file of encoding `name` (sha256) and make it available."""
    spec = ENCODINGS[check_name(name, "tokenizer")]
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec["sha256"]:
        raise ValueError(f"{file_name(name)} has sha256 {digest}, not the official {spec['sha256']}; "
                         "get the file again (python3 build.py fetches and checks it).")
    enc = Encoding(name, parse_ranks(data, spec["n_ranks"]), spec["special"])
    _loaded[name] = enc
    return enc


def loaded(name: str) -> bool:
    """Whether `get(name)` is ready without reading a file."""
    return name in _loaded


# Where `get` finds a rank file nobody provided: finders a host registers, each
# `(find(name) -> bytes | None, missing_message(name) -> str)`; CPython's reads the files from disk
# (ragsim.host.clients.tokens_files, registered by `ragsim.host.register()`). The page provides each file instead.
FINDERS: list = []


def add_finder(find, missing_message) -> None:
    if (find, missing_message) not in FINDERS:
        FINDERS.append((find, missing_message))


def get(name: str = DEFAULT, field: str = "tokenizer") -> Encoding:
    """The encoding `name`, provided earlier or found by a host's finder; a RequestError for
    `field` when the name is unknown or the rank file cannot be had."""
    check_name(name, field)
    enc = _loaded.get(name)
    if enc is None:
        for find, _ in FINDERS:
            data = find(name)
            if data is not None:
                return provide(name, data)
        message = FINDERS[0][1](name) if FINDERS else (
            f"The rank file of {name} is not loaded here; load it first (the page does when you choose it).")
        raise RequestError(field, message)
    return enc


def request_tokenizer(request: dict) -> str | None:
    """The request's top-level `tokenizer` (SPEC section 9), checked and loaded; None when absent."""
    name = request.get("tokenizer")
    if name is None:
        return None
    get(name, "tokenizer")  # fails here, naming the field, when the rank file cannot be had
    return name


def read_tokenizer(chunking: dict, field: str = "chunking.tokenizer") -> str:
    """`chunking.tokenizer`: "cl100k_base" (default) or "o200k_base"."""
    return check_name(chunking.get("tokenizer", DEFAULT), field)


def document_tokens(doc, name: str, field: str = "chunking.tokenizer") -> tuple[list, list, list]:
    """(ids, starts, ends) of `doc.text` under encoding `name`, in code points; cached on `doc`."""
    key = ("tokens", name)
    got = doc.memo.get(key)
    if got is None:
        got = doc.memo[key] = get(name, field).encode_with_offsets(doc.text)
    return got


__all__ = ["ENCODINGS", "NAMES", "DEFAULT", "UNICODE_VERSION", "Encoding", "check_name", "file_name",
           "get", "loaded", "parse_ranks", "provide",
           "request_tokenizer", "read_tokenizer", "document_tokens"]
