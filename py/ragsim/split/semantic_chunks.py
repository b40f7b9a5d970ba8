"""A semantic cut's chunks as columns, each chunk's text made only when it is read.

LangChain's `SemanticChunker` re-joins every chunk's sentences with " " (`" ".join(sentences)`);
at 65,000 words that is some 3,500 joins on every threshold move, while a move needs only the
extents (which chunks hold the answer, each chunk's terms from the document's index) and the text of
the few chunks sent as context. `Chunks` keeps the extents and units as columns and a `Texts`
sequence that joins chunk i's text the first time it is read (the same string the library builds).

    chunks = Chunks(starts, ends, units, Texts(len(starts), make))   # make(i) -> chunk i's text
    chunks.texts[7]      # joined now, kept
    chunks.tuples()      # [(start, end, units, text)], every text made (semantic.cut's answer)
"""

from collections.abc import Sequence


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

    __slots__ = ("starts", "ends", "units", "texts")

    def __init__(self, starts: list, ends: list, units: list, texts):
        self.starts, self.ends, self.units, self.texts = starts, ends, units, texts

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


def joined(text: str, spans, groups: list, separator: str = " ") -> Texts:
    """The texts of `groups` (`(lo, hi)`: sentences `lo .. hi - 1` of `spans`), each its sentences
    joined with `separator` when read."""
    def make(i: int) -> str:
        lo, hi = groups[i]
        return separator.join([text[a:b] for a, b in spans[lo:hi]])

    return Texts(len(groups), make)


def sliced(text: str, starts: list, ends: list) -> Texts:
    """Chunk i's text is `text[starts[i]:ends[i]]`, sliced when read."""
    return Texts(len(starts), lambda i: text[starts[i]:ends[i]])
