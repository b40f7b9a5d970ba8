"""A semantic cut's chunks as columns, each chunk's text made only when it is read.

LangChain's `SemanticChunker` re-joins every chunk's sentences with " " (`" ".join(sentences)`);
at 65,000 words that is some 3,500 joins on every threshold move, while a move needs only the
extents (which chunks hold the answer, each chunk's terms from the document's index) and the text of
the few chunks sent as context. `Chunks` keeps the extents and units as columns and a `Texts`
sequence that joins chunk i's text the first time it is read (the same string the library builds).

    chunks = Chunks(starts, ends, units, Texts(len(starts), make))   # make(i) -> chunk i's text
    chunks.texts[7]      # joined now, kept
    chunks.tuples()      # [(start, end, units, text)], every text made (semantic.cut's answer)

`word_ranges` lays the chunks out on the document's words from their sentences' own (found once per
text and setting), where no sentence boundary cuts a word: a chunk starts where a sentence starts and
ends where one ends, so its words are the words from the first one's to the last one's.
"""

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import repeat
from operator import gt, lt


class Texts(Sequence):
    """`n` texts, text i made by `make(i)` when first read and kept."""

    __slots__ = ("n", "make", "made")

    def __init__(self, n: int, make):
        self.n, self.make, self.made = n, make, {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("chunk text index out of range")
        got = self.made.get(i)
        if got is None:
            got = self.made[i] = self.make(i)
        return got

    def __eq__(self, other) -> bool:
        """Equal to a list (or any sequence) of the same texts, as the list of them would be."""
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == self.n and all(a == b for a, b in zip(self, other))

    __hash__ = None  # as a list's

    def __repr__(self) -> str:
        return f"Texts({list(self)!r})"


class Chunks:
    """Chunks as columns: `starts`, `ends` (the extent of the sentences a chunk holds), `units`
    (the library's length) and `texts` (any sequence: a list, or `Texts` made when read)."""

    __slots__ = ("starts", "ends", "units", "texts", "sentences")

    def __init__(self, starts: list, ends: list, units: list, texts, sentences=None):
        self.starts, self.ends, self.units, self.texts = starts, ends, units, texts
        # (first, last): each chunk's first and last sentence (unit) index, where the chunk's extent
        # is its first sentence's start to its last one's end; None where not known
        self.sentences = sentences

    @classmethod
    def of(cls, tuples) -> "Chunks":
        """From `(start, end, units, text)` tuples."""
        tuples = list(tuples)
        return cls([c[0] for c in tuples], [c[1] for c in tuples], [c[2] for c in tuples], [c[3] for c in tuples])

    def __len__(self) -> int:
        return len(self.starts)

    def tuples(self) -> list:
        """`[(start, end, units, text)]`, every text made."""
        return list(zip(self.starts, self.ends, self.units, self.texts))


def joined(text: str, spans, los: list, his: list, separator: str = " ") -> Texts:
    """The texts of the groups `los[i] .. his[i] - 1` (sentences of `spans`), each its sentences
    joined with `separator` when read."""
    def make(i: int) -> str:
        return separator.join([text[a:b] for a, b in spans[los[i]:his[i]]])

    return Texts(len(los), make)


def sliced(text: str, starts: list, ends: list) -> Texts:
    """Chunk i's text is `text[starts[i]:ends[i]]`, sliced when read."""
    return Texts(len(starts), lambda i: text[starts[i]:ends[i]])


def word_ranges(index, spans, chunks: Chunks):
    """`(first whole word, end word)` of every chunk, as `DocIndex.layout` finds them, from the
    sentences' (`spans`) own; None where a sentence boundary cuts a word (the layout then looks
    each chunk up and tokenizes its clipped words) or the chunks' sentences are not known. The
    sentences' words are kept in the index's memo, by the spans' identity (a session keeps them)."""
    if chunks.sentences is None or not hasattr(index, "memo"):
        return None
    got = index.memo.get("semantic_words")
    if got is None or got[0] is not spans:
        got = index.memo["semantic_words"] = (spans, _sentence_words(index, spans))
    words = got[1]
    if words is None:
        return None
    inner_from, inner_to = words
    firsts, lasts = chunks.sentences
    return [inner_from[i] for i in firsts], [inner_to[i] for i in lasts]


def _sentence_words(index, spans):
    """Each sentence's first whole word and end word, or None if any sentence clips a word."""
    ws, we = index.word_starts, index.word_ends
    starts, ends = [a for a, _ in spans], [b for _, b in spans]
    inner_from = list(map(bisect_left, repeat(ws), starts))
    inner_to = list(map(bisect_right, repeat(we), ends))
    end_before, start_after = [-1, *we], [*ws, len(index.text) + 1]
    if any(map(gt, map(end_before.__getitem__, inner_from), starts)) or \
            any(map(lt, map(start_after.__getitem__, inner_to), ends)) or any(map(lt, inner_to, inner_from)):
        return None
    return inner_from, inner_to
