"""`sentences`: whole sentences packed up to `size` (this project's own rule, no library mirrored).

Sentences come from `ragsim.sentences.split_sentences`. A chunk runs from its first sentence's
start to its last sentence's end. Its size is counted in `unit`: `words` sums the sentences'
words; `chars` is the extent's length (the spaces between its sentences included).

- Sentences are added while the chunk stays within `size`.
- The next chunk starts with the previous chunk's longest run of trailing whole sentences that
  fits in `overlap` and still leaves room for the next new sentence; it always has at least one new
  sentence, so the overlap is zero when the last sentence alone is longer than `overlap`.
- A sentence longer than `size` is cut into fixed windows of `size` with `overlap` (SPEC section
  2, `windows.window_bounds`), in its own chunks, with no sentence overlap around them.
"""


from ragsim import limits
from ragsim.text.extents import Extent, Split
from ragsim.text.sentences import split_sentences
from ragsim.text.tokens import document_tokens, read_tokenizer
from bisect import bisect_left, bisect_right
from ragsim.split.windows import read_params, window_bounds


def split(doc, chunking: dict) -> Split:
    unit, size, overlap = read_params(chunking)
    text = doc.text
    # Sentences and their first words depend on the text alone: kept on the index for the next move.
    if "sentences" not in doc.memo:
        sents = split_sentences(text)
        starts = doc.word_starts
        # words of sentence i: word indexes [first[i], first[i + 1]) (sentences end between words)
        doc.memo["sentences"] = (sents, [bisect_left(starts, s) for s, _ in sents] + [len(starts)])
    sents, first = doc.memo["sentences"]

    if unit == "tokens":  # tiktoken tokens: those touching the sentences
        tokenized = SentenceTokens(doc, read_tokenizer(chunking), sents)
        total_units, units = tokenized.total, tokenized.units
    elif unit == "words":
        total_units = len(doc.word_starts)

        def units(i: int, j: int) -> int:  # sentences i .. j-1 together
            return first[j] - first[i]
    else:
        total_units = len(text)

        def units(i: int, j: int) -> int:
            return sents[j - 1][1] - sents[i][0]

    out: list[Extent] = []
    n = len(sents)
    i = 0
    while i < n:
        if units(i, i + 1) > size and unit == "tokens":
            out.extend(tokenized.windows(sents[i], size, overlap))
            i += 1
            continue
        if units(i, i + 1) > size:
            # fixed windows over one long sentence: counted before they are made
            limits.check_chunks(len(out) + 1 + max(0, -(-(units(i, i + 1) - size) // (size - overlap))))
            out.extend(_fallback(doc, sents[i], unit, size, overlap, first[i] if unit == "words" else 0))
            i += 1
            continue
        j = i + 1
        while j < n and units(i, j + 1) <= size:
            j += 1
        out.append(Extent(sents[i][0], sents[j - 1][1], units(i, j)))
        if len(out) > limits.MAX_CHUNKS:
            limits.check_chunks(len(out))
        if j == n:
            break
        # Trailing whole sentences of [i, j) that fit in the overlap and leave room for sentence j.
        k = j
        while k - 1 > i and units(k - 1, j) <= overlap and units(k - 1, j + 1) <= size:
            k -= 1
        i = k
    return Split(tuple(out), unit, total_units)


def _fallback(doc, sent: tuple[int, int], unit: str, size: int, overlap: int, first_word: int) -> list[Extent]:
    """Fixed windows over one sentence longer than `size`."""
    s, e = sent
    if unit == "chars":
        return [Extent(s + a, s + b, b - a) for a, b in window_bounds(e - s, size, overlap)]
    w0 = first_word
    w1 = bisect_left(doc.word_starts, e)
    starts, ends = doc.word_starts, doc.word_ends
    return [Extent(starts[w0 + a], ends[w0 + b - 1], b - a) for a, b in window_bounds(w1 - w0, size, overlap)]


class SentenceTokens:
    """Token counts for the `sentences` strategy with `unit: "tokens"`: a run of sentences counts
    the document's tokens that touch it (a token that straddles a sentence boundary, like " The",
    counts on both sides). `windows` cuts a sentence over `size` into fixed token windows, each
    clipped to the sentence."""

    def __init__(self, doc, name: str, sents):
        _, self.starts, self.ends = document_tokens(doc, name)
        self.sents = sents
        self.total = len(self.starts)

    def units(self, i: int, j: int) -> int:
        """Tokens touching sentences i .. j-1 (token starts and ends are both non-decreasing)."""
        return bisect_left(self.starts, self.sents[j - 1][1]) - bisect_right(self.ends, self.sents[i][0])

    def windows(self, sent: tuple[int, int], size: int, overlap: int) -> list[Extent]:
        s, e = sent
        t0, t1 = bisect_right(self.ends, s), bisect_left(self.starts, e)
        starts, ends = self.starts, self.ends
        return [Extent(max(s, starts[t0 + a]), min(e, ends[t0 + b - 1]), b - a)
                for a, b in window_bounds(t1 - t0, size, overlap)]
