"""tiktoken's encoder in pure Python: `encode(text, allowed_special="all")`, token for token.

The steps are tiktoken's (src/lib.rs, `CoreBPE._encode_native`):
1. cut the text at special tokens (`<|endoftext|>`, ...), each of which is one token;
2. split each stretch between them with the encoding's pretokenizer pattern (`patterns.py`);
3. a piece that is a token as a whole is that token; any other piece is byte-pair merged:
   repeatedly merge the adjacent pair whose bytes have the lowest rank, the leftmost on a tie.

`encode_with_offsets` also gives each token's extent in code points (SPEC section 9): from the
start of the character holding its first byte to the end of the character holding its last byte,
so a token that holds part of a character's bytes still names the whole character.
"""

import heapq
import re
from itertools import accumulate

from ragsim.text.tokens.patterns import compile_pattern, shadow

# tiktoken's Python wrapper turns lone surrogates into U+FFFD before encoding (core.py, `encode`).
_SURROGATE = re.compile("[\ud800-\udfff]")
# Pieces at least this many bytes long are merged with a heap: O(n log n) instead of tiktoken's
# O(n * merges) scan, same result (the lowest rank first, the leftmost on a tie).
_HEAP_FROM = 64
_NO_RANK = 1 << 62


class Encoding:
    """One tiktoken encoding: its mergeable ranks, its special tokens and its pretokenizer.

    Holds a cache of pieces already merged (the same words recur), bounded by `cache_limit`.
    """

    def __init__(self, name: str, ranks: dict, special: dict, cache_limit: int = 200_000):
        self.name = name
        self.ranks = ranks
        self.special = dict(special)
        self.n_vocab = max(max(ranks.values(), default=-1), max(self.special.values(), default=-1)) + 1
        self._pattern = compile_pattern(name)
        # Special tokens never prefix one another, so the order of the alternatives does not matter.
        self._special_pattern = re.compile("|".join(map(re.escape, sorted(self.special))))
        self._cache: dict = {}
        # piece -> id of the pieces that are one token as a whole (most are): at most the vocabulary
        self._whole: dict[str, int] = {}
        self._cache_limit = cache_limit
        self._decoder = None

    # -- encoding ---------------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """`tiktoken.get_encoding(name).encode(text, allowed_special="all")`."""
        ids: list[int] = []
        text = clean_surrogates(text)[0]
        for kind, a, b in self._stretches(text):
            if kind:
                ids.append(self.special[text[a:b]])
            else:
                self._encode_ordinary(text[a:b], ids)
        return ids

    def count(self, text: str) -> int:
        """The number of tokens of `text` (as `len(encode(text))`)."""
        return len(self.encode(text))

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """(ids, starts, ends): the tokens and each one's `[start, end)` in code points of `text`."""
        clean, back = clean_surrogates(text)
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        for kind, a, b in self._stretches(clean):
            if kind:
                ids.append(self.special[clean[a:b]])
                starts.append(a)
                ends.append(b)
            else:
                self._encode_offsets(clean[a:b], a, ids, starts, ends)
        if back is not None:  # surrogate pairs became one character each: map back to the text given
            starts = [back[s] for s in starts]
            ends = [back[e] for e in ends]
        return ids, starts, ends

    def _stretches(self, text: str):
        """(is_special, start, end) for the stretches of ordinary text and the special tokens."""
        pos = 0
        if "<|" in text:
            for m in self._special_pattern.finditer(text):
                if m.start() > pos:
                    yield False, pos, m.start()
                yield True, m.start(), m.end()
                pos = m.end()
        if pos < len(text):
            yield False, pos, len(text)

    def _pieces(self, text: str) -> list[str]:
        """The pretokenizer's pieces of `text`. They tile it: every alternative of the pattern
        matches one or more characters and some alternative matches at every position."""
        if text.isascii():
            return self._pattern.findall(text)
        pieces = self._pattern.findall(shadow(text))  # same lengths; cut the real pieces by them
        cuts = list(accumulate(map(len, pieces), initial=0))
        return [text[a:b] for a, b in zip(cuts, cuts[1:])]

    def _encode_ordinary(self, text: str, ids: list) -> None:
        whole = self._whole.get
        cache = self._cache
        append = ids.append
        for piece in self._pieces(text):
            rank = whole(piece)
            if rank is not None:
                append(rank)
                continue
            got = cache.get(piece) or self._first_sight(piece)
            if type(got) is int:
                append(got)
            else:
                ids.extend(got[0])

    def _first_sight(self, piece: str):
        """A piece not seen before: its id when it is one token (kept in `_whole`), else its merge."""
        rank = self.ranks.get(piece.encode("utf-8"))
        if rank is None:
            return self._merge_piece(piece)
        self._whole[piece] = rank
        return rank

    def _encode_offsets(self, text: str, base: int, ids: list, starts: list, ends: list) -> None:
        whole = self._whole.get
        cache = self._cache
        pos = base  # the pieces tile the text: a running sum of lengths places them
        for piece in self._pieces(text):
            n = len(piece)
            rank = whole(piece)
            if rank is None:
                got = cache.get(piece) or self._first_sight(piece)
                if type(got) is int:
                    rank = got
            if rank is not None:
                ids.append(rank)
                starts.append(pos)
                pos += n
                ends.append(pos)
                continue
            pids, rel_starts, rel_ends = got
            ids.extend(pids)
            starts.extend([pos + s for s in rel_starts])
            ends.extend([pos + e for e in rel_ends])
            pos += n

    def _merge_piece(self, piece: str) -> tuple:
        """(ids, relative starts, relative ends) of a piece that is not a token as a whole; cached."""
        data = piece.encode("utf-8")
        bounds = byte_pair_merge(self.ranks, data)
        ranks = self.ranks
        ids = tuple(ranks[data[a:b]] for a, b in zip(bounds, bounds[1:]))
        if len(data) == len(piece):  # ASCII: bytes are characters
            rel_starts, rel_ends = tuple(bounds[:-1]), tuple(bounds[1:])
        else:
            char_of = _char_of_byte(piece)
            rel_starts = tuple(char_of[a] for a in bounds[:-1])
            rel_ends = tuple(char_of[b - 1] + 1 for b in bounds[1:])
        got = (ids, rel_starts, rel_ends)
        if len(self._cache) >= self._cache_limit:
            self._cache.clear()
        self._cache[piece] = got
        return got

    # -- decoding ---------------------------------------------------------------------------------

    def decode_bytes(self, ids) -> bytes:
        """The bytes of the tokens `ids`, joined."""
        if self._decoder is None:
            decoder = [b""] * self.n_vocab
            for token, rank in self.ranks.items():
                decoder[rank] = token
            for token, rank in self.special.items():
                decoder[rank] = token.encode("utf-8")
            self._decoder = decoder
        decoder = self._decoder
        return b"".join([decoder[i] for i in ids])

    def decode(self, ids) -> str:
        """As tiktoken's `decode`: the bytes decoded as UTF-8, broken characters replaced by U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")


def byte_pair_merge(ranks: dict, data: bytes) -> list[int]:
    """The token boundaries of `data` (byte offsets, from 0 to len(data)) after byte-pair merging."""
    n = len(data)
    if n <= 1:
        return [0, n]
    return _merge_heap(ranks, data) if n >= _HEAP_FROM else _merge_scan(ranks, data)


def _merge_scan(ranks: dict, data: bytes) -> list[int]:
    """`byte_pair_merge` for short pieces, as tiktoken's `_byte_pair_merge` does it."""
    n = len(data)
    # tiktoken's loop: `parts[i]` starts a part; `pair[i]` is the rank of parts i and i + 1 joined.
    parts = list(range(n + 1))
    get = ranks.get
    pair = [get(data[i:i + 2], _NO_RANK) for i in range(n - 1)]
    while pair:
        best = min(pair)
        if best == _NO_RANK:
            break
        i = pair.index(best)  # the leftmost of the lowest rank
        del parts[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = get(data[parts[i]:parts[i + 2]], _NO_RANK)
        if i > 0:
            pair[i - 1] = get(data[parts[i - 1]:parts[i + 1]], _NO_RANK)
    return parts


def _merge_heap(ranks: dict, data: bytes) -> list[int]:
    """`byte_pair_merge` for long pieces: a heap of (rank, start) over a linked list of parts.

    Parts are named by their start byte, which never changes while they grow to the right, so
    (rank, start) orders candidates exactly as tiktoken's leftmost-lowest scan does. `cur[s]` is the
    rank of the pair that part s now starts (None: no such token, or s was merged away); a heap
    entry that disagrees with it is stale and skipped."""
    n = len(data)
    get = ranks.get
    nxt = list(range(1, n + 2))  # nxt[s]: start of the part after the part starting at s
    prv = list(range(-1, n))
    cur = [get(data[i:i + 2]) for i in range(n - 1)] + [None, None]
    heap = [(r, i) for i, r in enumerate(cur) if r is not None]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        rank, s = pop(heap)
        if cur[s] != rank:
            continue
        m = nxt[s]
        e = nxt[m]
        cur[m] = None  # part m joins part s
        nxt[s] = e
        if e < n:
            prv[e] = s
            r = cur[s] = get(data[s:nxt[e]])
            if r is not None:
                push(heap, (r, s))
        else:
            cur[s] = None
        p = prv[s]
        if p >= 0:
            r = cur[p] = get(data[p:e])
            if r is not None:
                push(heap, (r, p))
    bounds = []
    s = 0
    while s < n:
        bounds.append(s)
        s = nxt[s]
    bounds.append(n)
    return bounds


def _char_of_byte(piece: str) -> list[int]:
    """For each UTF-8 byte of `piece`, the index of the character it belongs to."""
    out: list[int] = []
    for i, ch in enumerate(piece):
        c = ord(ch)
        out.extend([i] * (1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4))
    return out


def clean_surrogates(text: str) -> tuple[str, list[int] | None]:
    """tiktoken's surrogate repair (`text.encode("utf-16", "surrogatepass").decode("utf-16",
    "replace")`), with a map from offsets in the repaired text back to offsets in `text`, or
    None when nothing changed in length."""
    if not _SURROGATE.search(text):
        return text, None
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if len(clean) == len(text):
        return clean, None
    back = []
    i = 0
    while i < len(text):
        back.append(i)
        pair = "\ud800" <= text[i] <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff"
        i += 2 if pair else 1
    back.append(len(text))
    return clean, back
