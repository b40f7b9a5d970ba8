"""What a request will cost, estimated before any work starts: seconds and bytes.

Each term is a count of the work a request asks for times a constant: characters indexed, chunks
made and scored, questions x chunks x map cells ranked, characters tokenized, characters searched by
a separator pattern, characters of context assembled (k x chunk length) or expanded. `estimate` takes
the read request (`wire.answers.read`: documents, k, method and tokenizer checked, the answers it
wants); the splitter's fields and the wanted answers' inputs it reads defensively, as sent (their
readers check them after the guard, so a bad one never costs work). The number of chunks comes from
the size, overlap and unit as a window over the documents would make them. `work` is the same
arithmetic over plain counts (the audit's estimate: a sweep of its overlaps).

`guard` refuses, on the field of the largest term, a request over the budget: a single request (the
page's worker, `python -m ragsim`) gets INTERACTIVE, about 30 s and 1 GB; `audit` and `eval` print
the estimate and run under BATCH, which refuses only what could not finish in memory.

The constants are CPython's on the reference machine (2 cores, 3.11), measured by
benchmarks/cost_calibration.py, which runs each kind of work at two sizes and prints the seconds and
bytes per unit; they are rounded up, so the estimate is an upper bound within a factor of about 2
for the requests the calibration runs. Pyodide in a page runs 1.5-3x slower: the worker's deadline
still stands behind the guard. Pure: no I/O.
"""

from collections import OrderedDict
from dataclasses import dataclass

from ragsim import limits
from ragsim.errors import RequestError

# --- seconds per unit of work: about 1.5x the CPU time measured (benchmarks/cost_calibration.py) ---
S_INDEX = 1e-6  # a character indexed (terms, words, postings): measured 7.0e-7
S_LAYOUT = 7e-6  # a unit laid out again by a sweep's overlap (a whole simulation each): 4.8e-6
S_CELL = 1e-7  # a unit laid out again by a map cell (split and layout only): 4.9e-8
S_CHUNK = 1.5e-5  # a chunk split, laid out and scored for the query: 8.6e-6
S_QUESTION = 1.2e-6  # a question ranked over one chunk (lanes and MaxScore prune most of it): 7.5e-7
S_TOKEN = 2e-6  # a character tokenized by the pure-Python tiktoken (BPE), ASCII prose: 1.4e-6
S_TOKEN_HARD = 8e-6  # the same for text that is not ASCII (CJK 3.4e-6, a run of one letter 8.0e-6)
S_SENTENCE = 4e-6  # a character of LlamaIndex's SentenceSplitter besides its tokens: 0.6e-6 on the
#                    calibration's prose, up to 11e-6 on short sentences (115 s for 10 M)
S_SEPARATOR = 1e-7  # a character searched by one separator character (LangChain's passes): 7.6e-8
S_CONTEXT = 2e-8  # a character of context assembled (too small to measure at 8 M characters)
S_EMBED = 2e-5  # a character embedded by the dense model on the CPU (at most 1,200 a chunk)
S_RUN = 5e-6  # a run of pieces weighed by Chroma's ClusterSemanticChunker (its block's sum begun): 3.5e-6
S_BLOCK = 1e-7  # an entry of such a run's block summed (numpy's pairwise order, in Python): 6e-8
# --- bytes per unit -------------------------------------------------------------------------
B_INDEX = 70  # a character indexed (the text, its words, terms and postings)
B_CHUNK = 1_100  # a chunk (its extent, layout, score and response object)
B_CONTEXT = 6  # a character of context (the string, its JSON)
B_QUESTION_CHUNK = 16  # a question's scores over one chunk, while it is ranked


@dataclass(frozen=True)
class Budget:
    """The most a request may cost: seconds (None: any time) and bytes."""

    seconds: float | None
    bytes: float


INTERACTIVE = Budget(30.0, 1 << 30)
BATCH = Budget(None, 12 << 30)  # the commands: whatever finishes in memory


@dataclass(frozen=True)
class Term:
    field: str  # the request field that asks for this work
    what: str  # the work, in words
    seconds: float
    bytes: float


@dataclass(frozen=True)
class Cost:
    terms: tuple

    @property
    def seconds(self) -> float:
        return sum(t.seconds for t in self.terms)

    @property
    def bytes(self) -> float:
        return sum(t.bytes for t in self.terms)

    def largest(self, key: str = "seconds") -> Term:
        return max(self.terms, key=lambda t: getattr(t, key))

    def sentence(self) -> str:
        """"about 40 s and 1.2 GB, mostly 20 questions x 150,000 chunks x 400 map cells"."""
        return f"about {_seconds(self.seconds)} and {_bytes(self.bytes)}, mostly {self.largest().what}"


def _seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 100 else f"{s / 60:,.0f} minutes"


def _bytes(b: float) -> str:
    return f"{b / 2**20:,.0f} MB" if b < 2**30 else f"{b / 2**30:,.1f} GB"


def _int(obj, key: str, default: int, lo: int = 0) -> int:
    v = obj.get(key, default) if isinstance(obj, dict) else default
    return max(lo, v) if isinstance(v, int) and not isinstance(v, bool) else default


def _list(obj, key: str) -> list:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, list) else []


TOKEN_STRATEGIES = ("langchain-token", "llamaindex-sentence", "llamaindex-token")


def unit_of(chunking: dict) -> str:
    """The unit the size counts in, as the strategies read it: chars, words or tokens."""
    strategy = chunking.get("strategy", "window")
    if strategy in TOKEN_STRATEGIES or chunking.get("length") == "tokens":
        return "tokens"
    if strategy in ("window", "sentences"):
        unit = chunking.get("unit", "words")
        return unit if unit in ("chars", "words", "tokens") else "words"
    if strategy == "haystack":
        return "words"
    return "chars"  # LangChain's character splitters, markdown sections


# A drag sends the same documents at every move: their word counts are kept for the last few long
# texts (found by length and start, confirmed equal), so a move does not count a book's spaces again
# (4 ms at 65,000 words of non-ASCII text). Short texts are counted each time.
_WORDS: OrderedDict = OrderedDict()
_WORDS_KEPT, _WORDS_FROM = 8, 20_000


def _words(text: str) -> int:
    """Spaces and newlines in `text`, plus one: an upper bound of its words."""
    if len(text) < _WORDS_FROM:
        return text.count(" ") + text.count("\n") + 1
    key = (len(text), text[:64])
    hit = _WORDS.get(key)
    if hit is not None and (hit[0] is text or hit[0] == text):
        _WORDS.move_to_end(key)
        return hit[1]
    _WORDS[key] = (text, text.count(" ") + text.count("\n") + 1)
    while len(_WORDS) > _WORDS_KEPT:
        _WORDS.popitem(last=False)
    return _WORDS[key][1]


def units_in(docs: list[dict], unit: str) -> tuple[int, float]:
    """(units in the documents, characters per unit), counted cheaply: words as runs after spaces and
    newlines (an upper bound), tokens as a character each for text that is not ASCII, else 4 characters."""
    chars = sum(len(d["text"]) for d in docs)
    if unit == "chars" or chars == 0:
        return chars, 1.0
    if unit == "words":
        words = sum(_words(d["text"]) for d in docs)
        return words, max(1.0, chars / words)
    ascii_ = all(d["text"].isascii() for d in docs)
    return (chars // 4 + len(docs), 4.0) if ascii_ else (chars, 1.0)


def chunks_for(units: int, docs: int, size: int, overlap: int) -> int:
    """Chunks a window of `size` units stepping `size - overlap` makes, at most the chunk limit + 1."""
    step = max(1, size - overlap) if 0 <= overlap < size else max(1, size)
    return min(limits.MAX_CHUNKS + 1, units // step + docs)


def estimate(req) -> Cost:
    """The cost of the read request `req` (`wire.answers.read`: its documents checked, the answers it
    wants in `req.asks`); the splitter's fields and the answers' inputs are read as sent (their
    readers check them after the guard), and only the wanted answers' inputs count."""
    inputs = req.asks.inputs
    return work(req.docs, req.chunking, k=req.k, dense=req.retriever.method in ("dense", "hybrid"),
                tokenizer=req.tokenizer is not None, questions=_list(inputs, "questions"), grid=inputs.get("map"),
                sweep=_list(inputs, "sweep"), expand=inputs.get("expand"))


def work(docs: list[dict], chunking: dict, k: int = 1, dense: bool = False, tokenizer: bool = False,
         questions: list = (), grid=None, sweep: list = (), expand=None) -> Cost:
    """The cost of splitting `docs` by `chunking` and ranking `questions` (or the one query) for the
    top `k`, by dense retrieval or not, with exact tokens or not, over a map `grid` (its `sizes` and
    `overlaps`), a `sweep` of overlaps and an `expand`sion (terms of zero cost left out)."""
    chars = sum(len(d["text"]) for d in docs)
    unit = unit_of(chunking)
    units, per_unit = units_in(docs, unit)
    size = _int(chunking, "size", 200 if unit != "tokens" else 1024, lo=1)
    overlap = _int(chunking, "overlap", 0)
    n = chunks_for(units, len(docs), size, overlap)
    chunk_chars = min(chars, size * per_unit)
    terms = [Term("documents", f"{chars:,} characters indexed", chars * S_INDEX, chars * B_INDEX),
             Term("chunking.size", f"{n:,} chunks", n * S_CHUNK, n * B_CHUNK)]
    per_token = S_TOKEN if all(d["text"].isascii() for d in docs) else S_TOKEN_HARD
    terms += split_terms(chunking, unit, chars, per_token)
    terms += cluster_terms(chunking, docs)
    count = len(questions) or 1
    cells = _map_cells(grid, units, len(docs))
    terms.append(Term("questions", f"{count:,} questions x {n:,} chunks", count * n * S_QUESTION, n * B_QUESTION_CHUNK))
    if cells:
        cell_count, cell_chunks = cells  # chunks over all cells together
        seconds = cell_count * units * S_CELL + cell_chunks * S_CHUNK + count * cell_chunks * S_QUESTION
        terms.append(Term("map", f"{count:,} questions x {cell_chunks:,} chunks in {cell_count} map cells", seconds,
                          cell_chunks // max(1, cell_count) * 2 * B_CHUNK))
    sweep = sweep[:50]
    if sweep:
        terms.append(Term("sweep", f"{len(sweep)} overlaps x {units:,} {unit}", len(sweep) * (units * S_LAYOUT + n * S_CHUNK),
                          n * B_CHUNK))
    terms += _context_terms(min(k, n), n, chunk_chars, count, per_token, tokenizer, expand)
    if dense:
        read = n * min(chunk_chars, 1_200)
        terms.append(Term("retrieval.method", f"{n:,} chunks embedded", read * S_EMBED, n * 4 * 384))
    return Cost(tuple(terms))


def split_terms(chunking: dict, unit: str, chars: int, per_token: float) -> list[Term]:
    strategy = chunking.get("strategy", "window")
    out = []
    if unit == "tokens" or chunking.get("tokenizer") is not None:
        out.append(Term("chunking.tokenizer", f"{chars:,} characters tokenized", chars * per_token,
                        chars * B_INDEX / 2))
    if strategy == "llamaindex-sentence":
        out.append(Term("chunking.strategy", f"{chars:,} characters of sentence splitting", chars * S_SENTENCE, 0))
    if strategy in ("langchain-recursive", "langchain-character"):
        seps = _list(chunking, "separators")[: limits.MAX_SEPARATORS] or ["\n\n", "\n", " ", ""]
        width = sum(len(s) for s in seps if isinstance(s, str)) + len(seps)
        out.append(Term("chunking.separators", f"{len(seps)} separators over {chars:,} characters",
                        width * chars * S_SEPARATOR, 0))
    return out


def cluster_terms(chunking: dict, docs: list[dict]) -> list[Term]:
    """Chroma's ClusterSemanticChunker weighs every run of up to size // min_chunk_size pieces ending at
    each piece, summing the run's square block of similarities: about pieces x runs x run^2 / 3 entries
    (a piece holds min_chunk_size tokens, or fewer where the text's separators come sooner)."""
    if chunking.get("strategy") != "chroma-cluster":
        return []
    least = _int(chunking, "min_chunk_size", 50, lo=1)
    longest = max(1, _int(chunking, "size", 400, lo=1) // least)
    runs = entries = pieces_all = 0
    for d in docs:
        tokens = units_in([d], "tokens")[0]
        pieces = min(tokens, 2 * tokens // least + 1)
        m = min(longest, pieces)
        runs += pieces * m
        entries += max(0, pieces - m) * m ** 3 // 3 + m ** 4 // 12  # the first m pieces end shorter runs
        pieces_all += pieces
    return [Term("chunking.min_chunk_size", f"{pieces_all:,} pieces clustered in runs of up to {longest:,}",
                 runs * S_RUN + entries * S_BLOCK, 0)]


def _map_cells(m, units: int, docs: int):
    """(cells, chunks of all cells together) of a map `{"sizes", "overlaps"}` as sent, or None (no map,
    or one its reader refuses: over 400 cells)."""
    sizes = [s for s in _list(m, "sizes")[:10_000] if isinstance(s, int) and not isinstance(s, bool) and s > 0]
    overlaps = [o for o in _list(m, "overlaps")[:10_000] if isinstance(o, int) and not isinstance(o, bool) and o >= 0]
    if not sizes or not overlaps:
        return None
    sizes, overlaps = set(sizes), set(overlaps)
    if len(sizes) * len(overlaps) > 400:
        return None  # refused by the map's reader before any cell is made
    pairs = [(s, o) for s in sizes for o in overlaps if o < s]
    return len(pairs), sum(chunks_for(units, docs, s, o) for s, o in pairs)


def _context_terms(k: int, n: int, chunk_chars: float, questions: int, per_token: float, tokenizer: bool,
                   expand) -> list[Term]:
    context = k * chunk_chars
    out = [Term("retrieval.k", f"a context of {k:,} chunks x {chunk_chars:,.0f} characters, for {questions:,} "
                "questions", questions * context * S_CONTEXT, context * B_CONTEXT)]
    if tokenizer:
        out.append(Term("tokenizer", f"{questions:,} contexts of {context:,.0f} characters tokenized",
                        questions * context * per_token, 0))
    if isinstance(expand, dict):
        reach = min(n, k * (2 * _int(expand, "neighbours", 0) + 1))
        sent = min(reach * chunk_chars, n * chunk_chars)
        per_char = S_CONTEXT + (per_token if tokenizer else 0)
        out.append(Term("expand.neighbours", f"{k:,} chunks expanded by their neighbours", sent * per_char
                        + reach * S_CHUNK, sent * B_CONTEXT))
    return out


def guard(cost: Cost, budget: Budget) -> None:
    """RequestError naming the field of the largest term when `cost` is over `budget`."""
    if cost.bytes > budget.bytes:
        term = cost.largest("bytes")
        raise RequestError(term.field, f"This request would take {cost.sentence()}, over the {_bytes(budget.bytes)} one "
                           f"request may use; ask for less ({term.what}): fewer documents, questions or cells, or larger chunks.")
    if budget.seconds is not None and cost.seconds > budget.seconds:
        term = cost.largest()
        raise RequestError(term.field, f"This request would take {cost.sentence()}, over the {budget.seconds:.0f} s one "
                           "request may take here; ask for less, or run it with python -m ragsim eval or audit, which "
                           "show progress.")
