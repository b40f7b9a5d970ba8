"""`langchain-semantic` and `llamaindex-semantic`: the two libraries' sentence-window chunkers.

- langchain-experimental 0.4.2, `langchain_experimental/text_splitter.py`, `SemanticChunker`
  (Greg Kamradt's notebook; the package says it is being sunset and the class has no other home:
  neither langchain-text-splitters 1.1 nor langchain-community 0.4 has one). Sentences are
  `re.split(sentence_split_regex, text)`; window i is `" ".join` of sentences i - buffer_size ..
  i + buffer_size; distance 1 - cosine (`langchain_community.utils.math.cosine_similarity`, NaN and
  infinities set to 0); a breakpoint where the distance (the gradient, for `gradient`) is strictly
  above the threshold; a group shorter than `min_chunk_size` characters is not cut but runs on into
  the next; the chunk is its sentences re-joined with " ".
- llama-index-core 0.14.25, `SemanticSplitterNodeParser` with its default sentence splitter,
  `split_by_sentence_tokenizer` (nltk's untrained Punkt, `ragsim.punkt`): each sentence runs from its
  span's start to the next span's start, so sentences tile the text from the first one on; windows
  and chunks are `"".join` (slices of the text); the threshold is the `breakpoint_percentile_threshold`
  percentile of the distances, compared strictly.
"""

import math
import re
from itertools import accumulate, compress, repeat
from operator import add, gt, itemgetter, ne, sub
from typing import Callable, NamedTuple

from ragsim.errors import RequestError
from ragsim.fields import get_int, get_number, shown
from ragsim import limits
from ragsim.text import punkt, safe_regex
from ragsim.split import semantic_numpy as npm
from ragsim.split.semantic_chunks import Chunks, joined, sliced

LANGCHAIN_SENTENCE_REGEX = r"(?<=[.?!])\s+"
# SemanticChunker's BREAKPOINT_DEFAULTS: the threshold amount of each rule.
BREAKPOINT_DEFAULTS = {"percentile": 95, "standard_deviation": 3, "interquartile": 1.5, "gradient": 95}


class Strategy(NamedTuple):
    """The four steps every semantic strategy has (see `ragsim.semantic`)."""

    units: Callable  # (text, chunking) -> sentence (piece) extents
    texts: Callable  # (text, units, chunking) -> the strings to embed
    measure: Callable  # (text, units, vectors, chunking) -> what is kept
    cut: Callable  # (text, kept, chunking) -> (Chunks, curve)


class Kept(NamedTuple):
    """Sentences as `(start, end)` and the distances between neighbouring windows; made once per
    document and setting, so what every threshold needs is made here too: the distances in order
    (`ordered`, None where one is NaN: a percentile is then NaN) and `lengths[i]`, the characters of
    the sentences before i."""

    spans: list
    distances: list
    ordered: list | None
    lengths: list
    # columns a cut reads by sentence index, so a move's chunks are a few lookups each:
    heads: list  # heads[i]: sentence i's start
    tails: list  # tails[h]: sentence h - 1's end (a group ending before sentence h ends there)
    lo_key: list  # lengths[i] + i: a group from sentence lo ...
    hi_key: list  # lengths[h] + h - 1: ... to before h is " ".join'ed to hi_key[h] - lo_key[lo] characters

    @classmethod
    def of(cls, spans, distances) -> "Kept":
        ordered = None if any(map(ne, distances, distances)) else sorted(distances)  # x != x: a NaN
        lengths = [0, *accumulate(map(sub, map(itemgetter(1), spans), map(itemgetter(0), spans)))]
        heads = list(map(itemgetter(0), spans))
        tails = [None, *map(itemgetter(1), spans)]
        lo_key = list(map(add, lengths, range(len(lengths))))
        hi_key = list(map(sub, lo_key, repeat(1)))
        return cls(spans, distances, ordered, lengths, heads, tails, lo_key, hi_key)

    def percentile(self, q: float) -> float:
        """`npm.percentile(self.distances, q)` from the kept order."""
        return npm.percentile(self.distances, q, ordered=self.ordered)


def check_count(n: int) -> None:
    """Refuse a document of more sentences (pieces) than a request may have chunks."""
    if n > limits.MAX_CHUNKS:
        raise RequestError("documents", f"This document has {n:,} sentences, over the limit of "
                           f"{limits.MAX_CHUNKS:,} windows to embed; split it into several documents.")


def curve(spans, distances, threshold, starts, **extra) -> dict:
    """The curve the page draws (SPEC section 12); `threshold` None where nothing is compared;
    `starts` the chunks' starts (the cuts are all but the first)."""
    if threshold is not None and not math.isfinite(threshold):
        threshold = None  # NaN or an infinity (a zero vector under LlamaIndex's cosine) is not JSON
    out = {"distances": _json_numbers(distances), "positions": [s[0] for s in spans[1:len(distances) + 1]],
           "threshold": threshold, "cuts": starts[1:]}
    out.update({k: _json_numbers(v) if isinstance(v, list) else v for k, v in extra.items()})
    return out


def _json_numbers(values: list) -> list:
    """The values as JSON holds them: a NaN or an infinity (a zero vector's distance under LlamaIndex's
    cosine, and the gradient beside it) as null."""
    return [x if x is None or math.isfinite(x) else None for x in values]


# -- LangChain ------------------------------------------------------------------------------------

def _read_langchain(chunking: dict) -> tuple:
    buffer_size = get_int(chunking, "buffer_size", "chunking.buffer_size", default=1, minimum=0)
    rule = chunking.get("breakpoint_threshold_type", "percentile")
    if not isinstance(rule, str) or rule not in BREAKPOINT_DEFAULTS:
        listed = ", ".join(repr(n) for n in BREAKPOINT_DEFAULTS)
        raise RequestError("chunking.breakpoint_threshold_type",
                           f"chunking.breakpoint_threshold_type must be one of {listed} (got {shown(rule)}).")
    field = "chunking.breakpoint_threshold_amount"
    amount = chunking.get("breakpoint_threshold_amount")
    amount = BREAKPOINT_DEFAULTS[rule] if amount is None else get_number(chunking, "breakpoint_threshold_amount", field)
    if rule in ("percentile", "gradient") and not 0 <= amount <= 100:
        raise RequestError(field, f"A {rule} threshold is a percentile: give 0 to 100 (got {amount:g}).")
    chunks = chunking.get("number_of_chunks")
    if chunks is not None:
        chunks = get_int(chunking, "number_of_chunks", "chunking.number_of_chunks", minimum=1)
    min_size = chunking.get("min_chunk_size")
    if min_size is not None:
        min_size = get_int(chunking, "min_chunk_size", "chunking.min_chunk_size", minimum=0)
    return buffer_size, rule, amount, chunks, min_size


def _sentence_regex(chunking: dict) -> re.Pattern:
    field = "chunking.sentence_split_regex"
    value = chunking.get("sentence_split_regex", LANGCHAIN_SENTENCE_REGEX)
    if not isinstance(value, str) or not value:
        raise RequestError(field, f"Give {field} as a non-empty regular expression (got {shown(value)}).")
    if len(value) > limits.MAX_PATTERN_CHARS:
        raise RequestError(field, f"{field} may be at most {limits.MAX_PATTERN_CHARS} characters long; shorten it.")
    try:
        pattern = re.compile(value)
    except re.error as e:
        raise RequestError(field, f"The pattern {shown(value)} is not a valid regular expression ({e}).") from None
    if value != LANGCHAIN_SENTENCE_REGEX:
        safe_regex.check(value, field)  # a pattern from whoever made the link
    return pattern


def langchain_units(text: str, chunking: dict) -> list[tuple[int, int]]:
    """`re.split(sentence_split_regex, text)` as extents: the text between matches and, as
    `re.split` returns them, each capturing group's text."""
    _read_langchain(chunking)
    pattern = _sentence_regex(chunking)
    spans, prev = [], 0
    for m in pattern.finditer(text):  # the matches re.split cuts at (empty ones too, Python >= 3.7)
        spans.append((prev, m.start()))
        for g in range(1, pattern.groups + 1):
            a, b = m.span(g)
            if a < 0:  # re.split returns None here, and SemanticChunker fails adding it to a string
                raise RequestError("chunking.sentence_split_regex",
                                   "A group of the pattern took no part in a match; write (?:...) instead.")
            spans.append((a, b))
        prev = m.end()
    spans.append((prev, len(text)))
    check_count(len(spans))
    return spans


def langchain_texts(text: str, spans, chunking: dict) -> list[str]:
    """`combine_sentences`: window i is sentences i - b .. i + b joined with " ". None for a single
    sentence (SemanticChunker returns it without embedding). With two sentences and the `gradient`
    rule LangChain embeds nothing either; both windows are still named, so that changing the rule
    needs no new embedding."""
    if len(spans) < 2:
        return []
    b = _read_langchain(chunking)[0]
    sentences = [text[s:e] for s, e in spans]
    return [" ".join(sentences[max(0, i - b): i + b + 1]) for i in range(len(sentences))]


def langchain_cosine(a, b) -> float:
    """`cosine_similarity([a], [b])[0][0]` (numpy path): dot over the outer product of row norms,
    NaN and infinities replaced by 0."""
    denominator = npm.row_norm(a) * npm.row_norm(b)
    try:
        similarity = npm.dot(a, b) / denominator
    except ZeroDivisionError:
        return 0.0
    return similarity if math.isfinite(similarity) else 0.0


def langchain_measure(text: str, spans, vectors, chunking: dict) -> Kept:
    return Kept.of(spans, [1 - langchain_cosine(vectors[i], vectors[i + 1]) for i in range(len(vectors) - 1)])


def langchain_threshold(kept: Kept, rule: str, amount: float, number_of_chunks) -> tuple[float, list]:
    """`_calculate_breakpoint_threshold` (or `_threshold_from_clusters`): the threshold and the
    array compared with it."""
    distances = kept.distances
    if number_of_chunks is not None:
        x1, y1 = len(distances), 0.0
        x2, y2 = 1.0, 100.0
        x = max(min(number_of_chunks, x1), x2)
        y = y2 if x2 == x1 else y1 + ((y2 - y1) / (x2 - x1)) * (x - x1)
        y = min(max(y, 0), 100)
        return kept.percentile(y), distances
    if rule == "percentile":
        return kept.percentile(amount), distances
    if rule == "standard_deviation":
        return npm.mean(distances) + amount * npm.std(distances), distances
    if rule == "interquartile":
        q1, q3 = kept.percentile(25), kept.percentile(75)
        return npm.mean(distances) + amount * (q3 - q1), distances
    slope = npm.gradient(distances)
    return npm.percentile(slope, amount), slope


def langchain_cut(text: str, kept: Kept, chunking: dict) -> tuple[Chunks, dict]:
    """`SemanticChunker.split_text` from kept distances: the chunks' extents and lengths now, each
    chunk's text (its sentences re-joined with " ") when it is read."""
    _, rule, amount, number_of_chunks, min_size = _read_langchain(chunking)
    spans, distances = kept.spans, kept.distances
    if len(spans) == 1 or (rule == "gradient" and len(spans) == 2):  # returned as split, unembedded
        chunks = Chunks.of((a, b, b - a, text[a:b]) for a, b in spans)
        return chunks, curve(spans, distances if len(spans) == 2 else [], None, chunks.starts)
    threshold, compared = langchain_threshold(kept, rule, amount, number_of_chunks)
    # lengths[i]: the sentences before i, in characters; a group's " ".join is their sum plus a
    # space between each two (its length, without building it)
    lengths = kept.lengths
    # after[j]: the sentence after breakpoint j (a group starts there); a drag re-cuts thousands of
    # groups, so without a minimum size each column is made by map, not by a loop
    after = compress(range(1, len(compared) + 1), map(gt, compared, repeat(threshold)))
    if min_size is None:
        los = [0, *after]
    else:
        los = [0]
        for i in after:
            if lengths[i] - lengths[los[-1]] + i - los[-1] - 1 >= min_size:
                los.append(i)  # else too short: the group runs on into the next
    his = [*los[1:], len(spans)]
    lasts = list(map(sub, his, repeat(1)))
    starts = list(map(kept.heads.__getitem__, los))
    ends = list(map(kept.tails.__getitem__, his))
    # a group's " ".join is its sentences' characters plus a space between each two
    units = list(map(sub, map(kept.hi_key.__getitem__, his), map(kept.lo_key.__getitem__, los)))
    extra = {"gradient": compared} if compared is not distances else {}
    chunks = Chunks(starts, ends, units, joined(text, spans, los, his), (los, lasts))
    return chunks, curve(spans, distances, threshold, starts, **extra)


LANGCHAIN = Strategy(langchain_units, langchain_texts, langchain_measure, langchain_cut)


# -- LlamaIndex -----------------------------------------------------------------------------------

def _read_llamaindex(chunking: dict) -> tuple[int, int]:
    buffer_size = get_int(chunking, "buffer_size", "chunking.buffer_size", default=1, minimum=0)
    field = "chunking.breakpoint_percentile_threshold"
    p = get_int(chunking, "breakpoint_percentile_threshold", field, default=95, minimum=0)
    if p > 100:
        raise RequestError(field, f"{field} is a percentile: give 0 to 100 (got {p}).")
    return buffer_size, p


def llamaindex_units(text: str, chunking: dict) -> list[tuple[int, int]]:
    """`split_by_sentence_tokenizer()(text)`: Punkt spans, each running to the next one's start."""
    _read_llamaindex(chunking)
    starts = [a for a, _ in punkt.span_tokenize(text)]
    check_count(len(starts))
    return list(zip(starts, starts[1:] + [len(text)]))


def llamaindex_texts(text: str, spans, chunking: dict) -> list[str]:
    """`_build_sentence_groups`: window i is sentences i - b .. i + b joined with nothing."""
    b = _read_llamaindex(chunking)[0]
    n = len(spans)
    return [text[spans[max(0, i - b)][0]:spans[min(n - 1, i + b)][1]] for i in range(n)]


def llamaindex_cosine(a, b) -> float:
    """`llama_index.core.base.embeddings.base.similarity`: dot over the product of the two norms
    (NaN for a zero vector, as numpy's 0 / 0)."""
    product = npm.dot(a, b)
    norm = npm.vector_norm(a) * npm.vector_norm(b)
    if norm == 0:
        return math.nan if product == 0 else math.copysign(math.inf, product)
    return product / norm


def llamaindex_measure(text: str, spans, vectors, chunking: dict) -> Kept:
    return Kept.of(spans, [1 - llamaindex_cosine(vectors[i], vectors[i + 1]) for i in range(len(vectors) - 1)])


def llamaindex_cut(text: str, kept: Kept, chunking: dict) -> tuple[Chunks, dict]:
    """`_build_node_chunks` from kept distances (each chunk a slice of the text, made when read)."""
    p = _read_llamaindex(chunking)[1]
    spans, distances = kept.spans, kept.distances
    if not distances:  # no sentence or one: the whole document (" ".join of its sentences)
        a, b = (spans[0][0], spans[-1][1]) if spans else (0, 0)
        return Chunks.of([(a, b, b - a, text[a:b])]), curve(spans, [], None, [])
    threshold = kept.percentile(p)
    firsts = [0, *(i + 1 for i in compress(range(len(distances)), map(gt, distances, repeat(threshold))))]
    starts = list(map(kept.heads.__getitem__, firsts))
    ends = list(map(kept.tails.__getitem__, firsts[1:]))
    ends.append(spans[-1][1])
    units = list(map(sub, ends, starts))
    sentences = (firsts, [i - 1 for i in firsts[1:]] + [len(spans) - 1])
    return Chunks(starts, ends, units, sliced(text, starts, ends), sentences), curve(spans, distances, threshold, starts)


LLAMAINDEX = Strategy(llamaindex_units, llamaindex_texts, llamaindex_measure, llamaindex_cut)


def read_langchain(chunking: dict) -> tuple:
    """`(buffer_size, rule, amount, number_of_chunks, min_chunk_size)` as SemanticChunker takes them (checked)."""
    return _read_langchain(chunking)


def read_llamaindex(chunking: dict) -> tuple[int, int]:
    """`(buffer_size, breakpoint_percentile_threshold)` (checked)."""
    return _read_llamaindex(chunking)
