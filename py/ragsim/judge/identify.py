"""Which splitter made these chunks? (SPEC section 11, `splitter`;)

Given one document's text and its stored chunks placed in it, the mirrored splitters are searched,
each over sizes and overlaps in its own unit, for the one that reproduces the most stored chunks
exactly (same text, same extent). The search is pruned by what the chunks show:

- a chunk is never longer than the size (bar the documented fallbacks), and a packing splitter
  fills its chunks close to it, so sizes come from the longest chunk measured in the splitter's unit
  (a few below it, a span above it), with the library's defaults and round numbers tried first;
- overlaps come the same way from the longest overlap seen between neighbours, in that unit (a
  packer may carry less than its overlap: past those near it when the chunks ask for more);
- the first chunk never depends on the overlap, so a size is dropped as soon as its first chunk
  differs; a (size, overlap) is dropped as soon as the first chunks of a prefix of the document
  differ; only the survivors are split over the whole document;
- the first chunk that differs steers the rest: one that starts where the stored one starts but
  ends elsewhere condemns the size whatever the overlap; one that starts later (earlier) rules out
  every smaller (larger) overlap, since more overlap never starts a chunk later: the overlaps are
  bisected, and every size gets a short look before any gets a long one.

Token packers (LlamaIndex, LangChain's `from_tiktoken_encoder`) count each piece on its own, so a
chunk's length is measured both by the document's tokens and by its words' tokens one by one.

When nothing reproduces every chunk, a looser pass scores candidates by how many of the prefix's
chunks they reproduce, anywhere, so the nearest one can be named with the first chunk that differs.

Each splitter's search has a budget: the candidates grow with the longest chunk
and each split costs the text's length, so one chunk of a megabyte took hours. The characters one
splitter's strict search, and its looser pass, may split are FAMILY_FLOOR or FAMILY_PER_CHAR times
the document, whichever is more: linear in the document, and the splitters after one that spent its
budget are still tried. Which were cut short is said in `skipped`.
"""

from collections import Counter
from typing import NamedTuple

from ragsim import split as splitters
from ragsim.errors import RequestError
from ragsim.text.index import DocIndex
from ragsim.judge.identify_families import TOKENIZERS, Family, families  # noqa: F401 (re-exported)
from ragsim.judge.identify_families import measure_in, next_overlap, overlap_candidates, overlap_window, size_candidates
from ragsim.judge.identify_report import Loadable, describe, moves_with_overlap, report  # noqa: F401 (re-exported)

PREFIX_CHUNKS = 6  # the prefix holds this many stored chunks, and a margin after them
# Full-document splits of settings that pass on the prefix but not on the whole, per splitter, and
# per size those that say nothing about the overlap: past that, the next size is tried.
MAX_FULL = 200
MAX_FULL_PER_SIZE = 6
LOOSE_SIZES = 16  # sizes the looser pass tries per splitter, spread over the candidates
# Characters one splitter's search may split, the text's length charged per split: the floor holds
# every search of a document of tens of kilobytes (the conformance texts split under 20 million per
# splitter, a second or two); past it the work grows with the document, linearly.
FAMILY_FLOOR = 50_000_000
FAMILY_PER_CHAR = 8


class OutOfWork(Exception):
    """One splitter's search spent its budget: what it found so far stays in `Context.best`."""


class Found(NamedTuple):
    reproduced: int
    chunking: dict
    extents: list


class Context:
    """One document: its index, the stored chunks sorted by extent, a prefix to test candidates on."""

    def __init__(self, text: str, extents, texts):
        self.text = text
        self.index = DocIndex.build(text)
        self.n = len(texts)
        placed = sorted(((e[0], e[1]), t) for e, t in zip(extents, texts) if e is not None)
        self.placed = [e for e, _ in placed]
        # a chunk whose text is not the document's at its extent can never be reproduced
        self.ok = [text[a:b] == t for (a, b), t in placed]
        self.achievable = sum(self.ok)
        self._measures: dict = {}
        self.share = max(FAMILY_FLOOR, FAMILY_PER_CHAR * len(text))  # characters one search may split
        self.spent, self.budget = 0, self.share
        self.cut: list[str] = []  # the splitters whose search spent its budget
        self.best: Found | None = None  # the best found so far: it survives the budget running out
        self.full_splits = 0  # whole-document splits of the current splitter's strict search
        self.first = self._prefix(1)[0]  # where the first chunk is checked
        self.prefix, self.k = self._prefix(PREFIX_CHUNKS)

    def _prefix(self, chunks: int) -> tuple[DocIndex, int]:
        """A prefix of the document holding the first stored chunks with a margin (so its cut cannot
        reach them), and how many leading stored chunks are safe to compare on it."""
        if not self.placed:
            return self.index, 0
        longest = max(b - a for a, b in self.placed)
        k0 = min(len(self.placed), chunks)
        cut = self.placed[k0 - 1][1] + 3 * longest + 100
        # A separator's presence anywhere in the text decides how the whole text is first cut
        # (LangChain's recursive list, LlamaIndex's paragraphs): the prefix must hold each one too.
        for sep in ("\n\n\n", "\n\n", "\n", " ", "."):
            at = self.text.find(sep)
            if at >= 0:
                cut = max(cut, at + len(sep) + 1)
        if cut * 4 >= len(self.text) * 3:
            return self.index, len(self.placed)
        safe = cut - 2 * longest - 50
        k = 0
        while k < len(self.placed) and self.placed[k][1] <= safe:
            k += 1
        if k == 0:
            return self.index, len(self.placed)
        return DocIndex.build(self.text[:cut]), k

    def split(self, doc: DocIndex, chunking: dict) -> list | None:
        """`_split`, its length charged to the budget (OutOfWork once that is spent)."""
        self.spent += len(doc.text)
        if self.spent > self.budget:
            raise OutOfWork
        return _split(doc, chunking)

    def within_budget(self, search, family: Family) -> None:
        """`search(self, family)` with a budget of its own; a search that spends it is named in `cut`."""
        self.budget = self.spent + self.share
        try:
            search(self, family)
        except OutOfWork:
            name = describe({"strategy": family.strategy, **family.fixed, "size": "…", "overlap": "…"}).split("(")[0]
            if name not in self.cut:
                self.cut.append(name)

    def offer(self, found: Found) -> None:
        """Keep `found` if it is better than the best so far."""
        if better(found, self.best):
            self.best = found

    def done(self) -> bool:
        """Whether the best so far reproduces every chunk (the search stops)."""
        return self.best is not None and complete(self, self.best)

    def measure(self, unit):
        """The length of an extent `(a, b)` in `unit`, counting the units wholly inside it."""
        got = self._measures.get(unit)
        if got is None:
            got = self._measures[unit] = measure_in(self.index, unit)
        return got

    def reproduced(self, sim: list) -> int:
        """How many stored chunks `sim` holds with the same extent (their text is the document's)."""
        have = Counter(sim)
        count = 0
        for extent, ok in zip(self.placed, self.ok):
            if ok and have[extent] > 0:
                have[extent] -= 1
                count += 1
        return count

    def prefix_score(self, sim: list) -> int:
        """How many of the first `k` stored chunks `sim` holds, anywhere (the looser pass)."""
        have = set(sim)
        return sum(1 for e, ok in zip(self.placed[: self.k], self.ok) if ok and e in have)


def _split(doc: DocIndex, chunking: dict) -> list | None:
    """The extents `chunking` makes of `doc`, or None where the splitter refuses the setting."""
    try:
        s = splitters.split(doc, chunking)
    except RequestError:
        return None
    return list(zip(s.starts, s.ends))


def _shape(ctx: Context, family: Family) -> tuple[tuple[int, int], tuple[int, int]]:
    """The longest chunk and the longest neighbours' overlap in the family's unit, each as a range:
    a packer counting tokens counts each piece on its own (words with their spaces, sentences), so
    both the document's tokens and the words' are measured."""
    good = [e for e, ok in zip(ctx.placed, ctx.ok) if ok] or ctx.placed
    sized = good
    if family.strategy == "langchain-character":
        # CharacterTextSplitter keeps a piece longer than the size as it is: only a chunk holding
        # the separator (two pieces or more) is known to fit; with none, every chunk is one piece.
        sep = family.fixed["separator"]
        sized = [(a, b) for a, b in good if sep in ctx.text[a:b]]
        if not sized:
            shortest = min(b - a for a, b in good)
            return (shortest, shortest), (0, 0)
    units = [family.unit]
    if not family.exact and family.unit[0] == "tokens":
        units.append(("pieces", family.unit[1]))
    longest, seen = [], []
    for unit in units:
        measure = ctx.measure(unit)
        longest.append(max(measure(a, b) for a, b in sized))
        seen.append(max((measure(b2, a1) for (_, a1), (b2, _) in zip(good, good[1:]) if a1 > b2), default=0))
    return (min(longest), max(longest)), (min(seen), max(seen))


def better(found: Found, best: Found | None) -> bool:
    """More stored chunks reproduced, then fewer chunks made that were not stored."""
    return best is None or (found.reproduced, -len(found.extents)) > (best.reproduced, -len(best.extents))


def complete(ctx: Context, found: Found) -> bool:
    """Every stored chunk that can be reproduced is, and no other chunk is made."""
    return found.reproduced == ctx.achievable and len(found.extents) == len(ctx.placed)


def first_difference_kind(ctx: Context, sim: list, upto: int) -> str:
    """How `sim` differs from the first `upto` stored chunks: "same"; "size" when the first chunk
    that differs starts where the stored one starts but ends elsewhere (from the same start a
    splitter packs the same pieces, so only the size decides the end, unless whitespace before it may
    have been carried over and stripped); "more" / "less" when it
    starts later / earlier (the carried overlap decides where a chunk starts, and more overlap never
    starts it later); "overlap" when it cannot be told."""
    if sim[:upto] == ctx.placed[:upto]:
        return "same"
    j = next((i for i, (x, y) in enumerate(zip(sim, ctx.placed[:upto])) if x != y), None)
    if j is None or not ctx.ok[j]:
        return "overlap"
    start = sim[j][0]
    if start == ctx.placed[j][0]:
        # Pieces carried over but stripped away (whitespace) still count towards the size.
        return "size" if start == 0 or not ctx.text[start - 1].isspace() else "overlap"
    return "more" if sim[j][0] > ctx.placed[j][0] else "less"


def first_chunk_sizes(ctx: Context, family: Family, base: dict, candidates: list[int]) -> list[int]:
    """The candidates whose first chunk (on the short prefix, overlap 0) is the stored first chunk.

    Packing more almost never ends the first chunk earlier, so the sizes that end it where it ends
    are found by two bisections over the sorted candidates (the first size ending it there, the first
    ending it later), the defaults checked one by one as well; where that finds none, every
    candidate is tried, the nearest to where the bisection ended first, as the budget allows."""
    cache: dict = {}

    def first(size: int):
        if size not in cache:
            sim = ctx.split(ctx.first, {**base, "size": size, "overlap": 0})
            cache[size] = sim[0] if sim else None
        return cache[size]

    def bisect(lo: int, past) -> int:
        """The first index from `lo` whose first chunk's end satisfies `past` (a refused size's never does)."""
        hi = len(ordered)
        while lo < hi:
            mid = (lo + hi) // 2
            got = first(ordered[mid])
            lo, hi = (mid + 1, hi) if got is None or not past(got[1]) else (lo, mid)
        return lo

    ordered, target = sorted(candidates), ctx.placed[0]
    lo = bisect(0, lambda end: end >= target[1])
    upto = bisect(lo, lambda end: end > target[1])
    matching = set()
    if lo < upto and first(ordered[lo]) == target and first(ordered[upto - 1]) == target:
        matching.update(ordered[lo:upto])  # every size between ends the first chunk where they do
    if lo > 0 and first(ordered[lo - 1]) == target:  # not monotone: one below may end it there too
        matching.add(ordered[lo - 1])
    matching.update(d for d in family.sizes if d in candidates and first(d) == target)
    if not matching:  # not monotone after all (LlamaIndex re-splits sentences longer than the size:
        # at 28 tokens its first chunk ends later than at 29): every candidate, on the short prefix,
        # the nearest to where the bisection ended first (the budget may end the walk)
        near = sorted(range(len(ordered)), key=lambda i: abs(i - lo))
        matching.update(ordered[i] for i in near if first(ordered[i]) == target)
    return [s for s in candidates if s in matching]


class SizeProbe:
    """The overlap search of one size, resumable: what the chunks have shown of the overlap so far."""

    def __init__(self, ctx: Context, base: dict, size: int):
        self.size = size
        self.first = ctx.split(ctx.prefix, {**base, "size": size, "overlap": 0})
        self.above, self.below = -1, size + 1  # the overlap lies strictly between, as far as is known
        self.blind, self.tried = 0, set()  # splits that told nothing about the overlap; overlaps tried
        self.open = True  # whether overlaps are left to try


def search_family(ctx: Context, family: Family) -> None:
    """The strict search: sizes whose first chunk is the stored first chunk, then overlaps whose
    prefix chunks are the stored ones, then the whole document; each found is offered to `ctx.best`.
    Every size gets a first look (until one split tells nothing about the overlap), then those left
    open a longer one: a wrong size costs little before the right one is reached."""
    if not ctx.ok or not ctx.ok[0]:
        return  # the first chunk was edited: only the looser pass can say
    longest, seen = _shape(ctx, family)
    base = {"strategy": family.strategy, **family.fixed}
    window = overlap_window(family, seen)
    sizes = first_chunk_sizes(ctx, family, base, size_candidates(family, longest))
    probes: dict = {}
    ctx.full_splits = 0
    for cap in (1, MAX_FULL_PER_SIZE):
        for size in sizes:
            if size not in probes:
                probes[size] = SizeProbe(ctx, base, size)
            probe = probes[size]
            if probe.open and search_size(ctx, family, window, probe, cap):
                return


def search_size(ctx: Context, family: Family, window: tuple[int, int], probe: SizeProbe, cap: int) -> bool:
    """Overlaps for `probe`'s size until `cap` splits told nothing; True when the family's search
    is over (a setting reproduces every chunk, or MAX_FULL full splits were spent)."""
    base = {"strategy": family.strategy, **family.fixed, "size": probe.size}
    while probe.blind < cap:
        overlap = next_overlap(family, window, probe.above, probe.below, probe.tried)
        if overlap is None:
            probe.open = False
            return False
        probe.tried.add(overlap)
        chunking = {**base, "overlap": overlap}
        sim = probe.first if overlap == 0 else ctx.split(ctx.prefix, chunking)
        kind = "overlap" if sim is None else first_difference_kind(ctx, sim, ctx.k)
        if kind == "same":
            full = sim if ctx.prefix is ctx.index else ctx.split(ctx.index, chunking)
            found = Found(ctx.reproduced(full), chunking, full)
            ctx.offer(found)
            ctx.full_splits += 1
            if complete(ctx, found) or ctx.full_splits >= MAX_FULL:
                return True
            kind = first_difference_kind(ctx, full, len(ctx.placed))
            probe.blind += kind == "overlap"
        elif kind == "overlap" and not window[0] <= overlap <= window[1]:
            probe.blind += 1  # past the window a prefix that tells nothing counts too: it may be long
        if kind == "size":
            probe.open = False  # wrong whatever the overlap
            return False
        if kind == "more":
            probe.above = overlap
        elif kind == "less":
            probe.below = overlap
    return False  # the cap reached: left open for a longer look


def loose_family(ctx: Context, family: Family) -> None:
    """The nearest setting of one family, offered to `ctx.best`: the size that, with the overlap seen,
    reproduces most of the prefix's stored chunks, then every overlap with that size on the whole
    document."""
    longest, seen = _shape(ctx, family)
    base = {"strategy": family.strategy, **family.fixed}
    top = (-1, None)
    sizes = sorted(size_candidates(family, longest))
    stride = max(1, len(sizes) // LOOSE_SIZES)
    # every stride-th size, then every size around the best of those
    defaults = [d for d in family.sizes if d in sizes]  # first, so that they win ties
    for pick in (lambda: defaults + sizes[::stride], lambda: sizes[max(0, top[2] - stride) : top[2] + stride + 1]):
        for size in pick():
            sim = ctx.split(ctx.prefix, {**base, "size": size, "overlap": min(seen[1], size - 1)})
            if sim is not None and ctx.prefix_score(sim) > top[0]:
                top = (ctx.prefix_score(sim), size, sizes.index(size))
        if top[1] is None:
            return
    for overlap in overlap_candidates(family, seen):
        chunking = {**base, "size": top[1], "overlap": overlap}
        full = ctx.split(ctx.index, chunking) if overlap <= top[1] else None
        if full is not None:
            ctx.offer(Found(ctx.reproduced(full), chunking, full))


def identify(text: str, extents, texts, doc=None, tokenizers=None) -> dict:
    """The splitter that made one document's stored chunks: `extents[i]` is chunk i's `(start, end)`
    in code points of `text` (None when it could not be placed), `texts[i]` its stored text.

    Returns SPEC section 11's `{"doc", "strategy", "fields", "reproduced", "chunks",
    "moves_with_overlap"}` with `line` (one sentence for people), `differs` (the first chunk the
    named or nearest splitter does not reproduce), `nearest` (when `strategy` is null) and `skipped`
    (what could not be tried). `tokenizers` limits the encodings tried (default: those loadable)."""
    if len(extents) != len(texts):
        raise RequestError("chunks", f"Give one extent per chunk text (got {len(extents)} extents and {len(texts)} texts).")
    loadable = Loadable()
    ctx = Context(text, extents, texts)
    if ctx.achievable:
        # token-counted splitters last, their rank files loaded only when one is reached
        searched = families(text, TOKENIZERS if tokenizers is None else tuple(tokenizers))
        _search(ctx, searched, loadable)
    if ctx.cut:
        loadable.skipped.append(f"Not every setting of {'; '.join(ctx.cut)} was tried: one splitter's search "
                                f"stops after splitting {ctx.share:,} characters ({FAMILY_PER_CHAR} times the "
                                f"document, at least {FAMILY_FLOOR:,}).")
    return report(ctx, doc, ctx.best, loadable.skipped)


def _search(ctx: Context, searched: list, loadable: Loadable) -> None:
    """The strict search over `searched`, then the Markdown sections, then the looser pass, until a
    setting reproduces every chunk; what is found goes to `ctx.best`."""
    for family in searched:
        if loadable(family):
            ctx.within_budget(search_family, family)
            if ctx.done():
                return
    sections = _split(ctx.index, {"strategy": "llamaindex-markdown"})
    ctx.offer(Found(ctx.reproduced(sections), {"strategy": "llamaindex-markdown"}, sections))
    if ctx.done():
        return
    for family in searched:
        if loadable(family):
            ctx.within_budget(loose_family, family)
