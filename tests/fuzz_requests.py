"""Hostile requests from a seed: the generator and the checks that the bounded fuzz in CI
(tests/property/test_fuzz_boundary.py) and the long run (tests/fuzz_long.py) share.

`make(rng)` builds one request from a `random.Random`: every strategy with its own fields, every
retriever (bm25, dense, hybrid), every unit, question sets and the settings map, the optional
questions and wires, values at and past their bounds (size 1, overlap >= size, a subnormal k1, a
huge k, hostile patterns, lone surrogates, long strings), and in a tenth of them one value anywhere
replaced by any JSON at all. Texts are small: the aim is every code path, not big inputs (the cost
guard's own tests build those). `run(request)` sends it through `simulate`, the JSON boundary and
`simulate_packed` and returns the kind of outcome: "response", "error", or raises `Malformed`.
"""

import base64
import json
import random
import signal
import time

from ragsim.errors import MAX_MESSAGE
from ragsim.wire.api import Session, simulate, simulate_json, simulate_packed

PIECES = ["the", "cat", "sat", "a", "aaaa", "Σ", "😀", "\ud800", "\udcff", "鼠", "#", "# Head", "## Sub", ".", "!",
          "?", " ", "  ", "\n", "\n\n", "\n\n\n", "\f", "---", "1", "42", "fee", "is", "$40", "Dr.", "e.g.", "\t", "é"]
PATTERNS = ["\n\n", "\n", " ", "", ".", "(?:a+)+b", "(?:a|a)+!", "\\s*\\s*x", "[", "(a)", "(?<=\\. )", "\\n#{1,6} ",
            "a{1,3}", "x" * 600, " *x", "a+b", ".*x", ".?", "(?:" * 130 + "a" + ")" * 130, "(" * 300, "a{99999999999}",
            "\\", "[^,.;]+[,.;]?", "(?=a)", "\\b", "$", "^", "\ud800", "\\d+"]
TOKENIZERS = ["cl100k_base", "o200k_base"]
STRATEGIES = ["window", "sentences", "langchain-character", "langchain-recursive", "haystack", "langchain-token",
              "llamaindex-sentence", "llamaindex-token", "llamaindex-markdown"]
LONG = "z" * 5_000


class Malformed(AssertionError):
    """A response or refusal that breaks the contract."""


class Hang(BaseException):
    """A request ran past its time limit (a BaseException, as KeyboardInterrupt is, so that no `except
    Exception` in the code under test can turn it into an answer)."""


def warm() -> None:
    """Load what the first request of a kind would load (the dense model, the rank files), untimed."""
    doc = [{"id": "d", "title": "", "text": "warm the model up"}]
    for extra in ({"retrieval": {"k": 1, "method": "hybrid"}}, {"tokenizer": "cl100k_base"},
                  {"tokenizer": "o200k_base"}):
        simulate({"documents": doc, "query": "warm", "chunking": {"size": 2, "overlap": 0}, "retrieval": {"k": 1},
                  **extra})


def any_json(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 2 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([-5, -1, 0, 1, 2, 3, 7, 10**12, 2**63, -(2**63)])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e-320, 5e-324, 1e308, 3.7, -2.5])
    if kind == 4:
        return rng.choice(["", "a", "\ud800", "é", LONG, "words", "chars", "tokens", "lucene", "x" * 70])
    if kind == 5:
        return rng.choice([True, 1, "1"])
    if kind == 6:
        return [any_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "size", "doc", "start", "id"]): any_json(rng, depth + 1) for _ in range(rng.randrange(3))}


def text(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return rng.choice(["", " ", "\n\n\n", "a" * 60 + "!", "鼠" * 30, "Ω" * 80, "😀 " * 20])
    return " ".join(rng.choice(PIECES) for _ in range(rng.randrange(60)))


BAD = 0.06  # how often a field gets a value its reader refuses (every field may, so most requests are whole)


def pick(rng: random.Random, good: list, bad: list):
    """A value from `good`, or now and then one from `bad`."""
    return rng.choice(bad if bad and rng.random() < BAD else good)


def size(rng, hi=30):
    return pick(rng, [1, 1, 2, 3, rng.randrange(1, hi + 1), rng.randrange(1, hi + 1), 200], [0, -1, "5", 2.5])


def chunking(rng: random.Random) -> dict:
    strategy = rng.choice(STRATEGIES)
    c = {"strategy": strategy}
    fields = {
        "window": lambda: {"unit": rng.choice(["words", "chars", "tokens", "lines"]), "tokenizer": rng.choice(TOKENIZERS)},
        "sentences": lambda: {"unit": rng.choice(["words", "chars"])},
        "langchain-character": lambda: {"separator": rng.choice(PATTERNS), "is_separator_regex": rng.random() < 0.5,
                                        "keep_separator": rng.choice([True, False, "start", "end"]),
                                        "strip_whitespace": rng.random() < 0.5},
        "langchain-recursive": lambda: {
            **rng.choice([{"separators": rng.sample(PATTERNS, rng.randrange(4))},
                          {"language": rng.choice(["markdown", "python", "html", "latex"])}, {}]),
            "is_separator_regex": rng.random() < 0.5, "keep_separator": rng.choice([True, False, "start", "end"]),
            **({"length": "tokens", "tokenizer": rng.choice(TOKENIZERS)} if rng.random() < 0.3 else {})},
        "haystack": lambda: {"split_by": rng.choice(["word", "passage", "line", "period", "page"]),
                             "split_threshold": rng.randrange(4)},
        "langchain-token": lambda: {"tokenizer": rng.choice(TOKENIZERS)},
        "llamaindex-sentence": lambda: {"separator": rng.choice(PATTERNS[:5] + ["|"]),
                                        "paragraph_separator": rng.choice(["\n\n\n", "\n", "--"]),
                                        "secondary_chunking_regex": rng.choice(PATTERNS + [None]),
                                        "metadata": rng.choice(["", "title: x", LONG[:300]])},
        "llamaindex-token": lambda: {"separator": rng.choice([" ", "\n", "|"]),
                                     "backup_separators": rng.sample(["\n", ".", " ", "x"], rng.randrange(3))},
        "llamaindex-markdown": lambda: {},
    }[strategy]()
    c.update({k: v for k, v in fields.items() if rng.random() < 0.6})
    if strategy != "llamaindex-markdown":
        c["size"] = size(rng, 60 if strategy.startswith("llamaindex") else 30)
        top = c["size"] if isinstance(c["size"], int) and c["size"] > 0 else 1
        c["overlap"] = pick(rng, [0, 0, 1, 2, rng.randrange(top), top - 1], [top, top + 1, -1])
    return c


def retrieval(rng: random.Random, dense: float) -> dict:
    r = {"k": pick(rng, [1, 2, 3, 5, 12, 1000, 10**9], [0, "3"])}
    options = {
        "variant": lambda: pick(rng, ["lucene", "robertson", "atire", "bm25l", "bm25+"], ["bm42"]),
        "k1": lambda: pick(rng, [0, 1e-6, 0.5, 1.2, 1000], [5e-324, 1e-7, 1001]),
        "b": lambda: rng.choice([0, 5e-324, 0.75, 0.9999999999999999, 1]),
        "delta": lambda: rng.choice([0, 5e-324, 0.5, 2, 1000]),
        "terms": lambda: {k: v for k, v in (("stopwords", rng.choice(["english", None])),
                                            ("stemmer", rng.choice(["snowball-english", None]))) if rng.random() < 0.6},
        "rrf_c": lambda: pick(rng, [0, 1, 60, 1e6], [-1]),
        "weights": lambda: pick(rng, [[0.5, 0.5], [1, 0], [0.2, 0.8]], [[0, 0], [2, 0]]),
    }
    r.update({k: f() for k, f in options.items() if rng.random() < 0.35})
    if rng.random() < dense:  # the model embeds every new chunk on the CPU: the slowest requests
        r["method"] = rng.choice(["dense", "hybrid"])
    elif rng.random() < 0.1:
        r["method"] = pick(rng, ["bm25"], ["bm26", None])
    return r


def marks(rng: random.Random, docs: list[dict]) -> dict:
    """A span, a fact, questions and a map over one document (sometimes out of bounds)."""
    d = rng.randrange(len(docs))
    n = len(docs[d]["text"])
    solid = [i for i, ch in enumerate(docs[d]["text"]) if not ch.isspace()]  # marks hold some text
    a, b = sorted(rng.sample(solid, 2)) if len(solid) > 2 else (0, n)
    b += 1
    if rng.random() < BAD:
        b += 3
    ref = {"doc": pick(rng, [docs[d]["id"]], ["nope", LONG]), "start": a, "end": b}
    out = {}
    if rng.random() < 0.3:
        out["span"] = ref
    if rng.random() < 0.2 and b + 1 < n:
        out["fact"] = {"doc": docs[d]["id"], "name": [a, a + 1], "value": [b, b + 2]}
    if rng.random() < 0.45:
        ids = [rng.choice(["q", "q\ud800", LONG, "é"]) + str(i) for i in range(rng.randrange(1, 4))]
        if rng.random() < 0.1:
            ids.append(ids[0])
        out["questions"] = [{"id": i, "query": " ".join(rng.choice(PIECES) for _ in range(rng.randrange(5))),
                             "references": [ref] * rng.randrange(1, 3)} for i in ids]
    if rng.random() < (0.5 if "questions" in out or "span" in out else 0.03):
        out["map"] = {"sizes": [size(rng) for _ in range(rng.randrange(1, 5))] * rng.choice([1, 1, 3]),
                      "overlaps": [rng.randrange(-1, 12) for _ in range(rng.randrange(1, 4))]}
    return out


def make(rng: random.Random, dense: float = 0.15) -> dict:
    """One request; `dense` is the share that asks for dense or hybrid retrieval."""
    docs = [{"id": f"d{i}" if rng.random() < 0.95 else "d\ud800", "title": rng.choice(["", "t", "# T"]),
             "text": text(rng)} for i in range(rng.randrange(1, 4))]
    request = {"documents": docs, "query": " ".join(rng.choice(PIECES) for _ in range(rng.randrange(5))),
               "chunking": chunking(rng), "retrieval": retrieval(rng, dense)}
    request.update(marks(rng, docs))
    extras = {
        "find": lambda: rng.choice(PIECES + ["", LONG]),
        "cuts": lambda: rng.random() < 0.5,
        "sweep": lambda: [rng.randrange(12) for _ in range(rng.randrange(4))],
        "expand": lambda: {"neighbours": rng.choice([0, 1, 3, 10**6]), "section": rng.random() < 0.5},
        "wire": lambda: rng.choice(["objects", "columns", "binary", "binary"]),
        "price_per_million": lambda: pick(rng, [0, 3, 1e6], [-1]),
        "tokenizer": lambda: pick(rng, TOKENIZERS, [LONG]),
    }
    request.update({k: f() for k, f in extras.items() if rng.random() < 0.2})
    if request.get("wire") == "binary" and rng.random() < 0.5:
        request["scores"] = pick(rng, ["top", "all"], ["none"])
    if rng.random() < 0.1:  # one value anywhere replaced by any JSON at all
        places = [request, request["chunking"], request["retrieval"], docs[0]]
        where = rng.choice(places)
        where[rng.choice(sorted(where) + ["extra"])] = any_json(rng)
    return request


# --- the checks ---------------------------------------------------------------------------------

def check_error(error) -> None:
    if not (isinstance(error, dict) and set(error) == {"field", "message"}):
        raise Malformed(f"an error is not {{field, message}}: {error!r:.200}")
    field, message = error["field"], error["message"]
    if not (isinstance(field, str) and field and len(field) <= 200):
        raise Malformed(f"bad error field {field!r:.100}")
    if not (isinstance(message, str) and 12 < len(message) <= MAX_MESSAGE and message == message.strip()
            and message.endswith((".", ")"))):
        raise Malformed(f"bad error message {message!r:.200}")


def check_response(request: dict, r: dict) -> None:
    texts = {d["id"]: d["text"] for d in request["documents"]}
    stats = r["stats"]
    n, k = stats["chunks"], stats["k"]
    if r.get("chunks") is not None:
        chunks = r["chunks"]
    elif "chunk_columns" in r:
        cols = r["chunk_columns"]
        chunks = [{"doc": cols["ids"][d], "start": s, "end": e, "rank": rk}
                  for d, s, e, rk in zip(cols["doc"], cols["start"], cols["end"], cols["rank"])]
    else:  # the binary wire: the top k in rank order
        top = r["chunk_bytes"]["top"]
        if len(top) != min(k, n) or len(set(top)) != len(top):
            raise Malformed("the binary wire's top k is not min(k, N) distinct chunks")
        return
    if len(chunks) != n:
        raise Malformed("stats.chunks is not the number of chunks")
    for c in chunks:
        if not 0 <= c["start"] <= c["end"] <= len(texts[c["doc"]]):
            raise Malformed(f"an extent outside its document: {c['start']}-{c['end']}")
    if sorted(c["rank"] for c in chunks) != list(range(1, n + 1)):
        raise Malformed("ranks are not a permutation of 1..N")
    if stats["retrieved"] != min(k, n) or sum(1 for c in chunks if c["rank"] <= k) != min(k, n):
        raise Malformed("retrieved is not min(k, N)")


TIMES: list = []  # the CPU seconds of the slowest request so far (run appends only a new maximum)


def _limit(seconds: float):
    """Raise Hang after `seconds` of this process's CPU time (SIGPROF: a shared machine's load does
    not count, a loop that never ends does) or six times as long on the clock (SIGALRM: a wait)."""
    def stop(signum, frame):
        raise Hang(f"over {seconds:g} s of CPU" if signum == signal.SIGPROF else f"over {6 * seconds:g} s")

    signal.signal(signal.SIGPROF, stop)
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, 6 * seconds)


def run(request: dict, seconds: float = 20.0) -> str:
    """"response" or "error" for one request through all three entry points (together within `seconds`
    of CPU), or Malformed / Hang / whatever escaped."""
    _limit(seconds)
    began = time.process_time()
    try:
        r = simulate(request)
        kind = "error" if "error" in r else "response"
        if kind == "error":
            check_error(r["error"])
        else:
            check_response(request, r)
        as_json = json.dumps(request)
        session = Session()  # one for both: the second re-uses the first's index, as the page's worker does
        text = simulate_json(as_json, session)
        text.encode("utf-8")  # lone surrogates escaped: valid UTF-8
        answer = json.loads(text)
        packed, data = simulate_packed(as_json, session)
        packed.encode("utf-8")
        from_packed = json.loads(packed)
        if data is not None:
            from_packed["chunk_bytes"]["data"] = base64.b64encode(data).decode("ascii")
        if from_packed != answer:
            raise Malformed("simulate_json and simulate_packed disagree")
        if kind == "error":
            if answer != r:
                raise Malformed("the JSON boundary's refusal differs from simulate's")
        elif "chunk_bytes" not in r and answer != json.loads(json.dumps(r)):
            raise Malformed("the JSON boundary's response differs from simulate's")
        return kind
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        took = time.process_time() - began
        if not TIMES or took > TIMES[-1]:
            TIMES.append(took)
