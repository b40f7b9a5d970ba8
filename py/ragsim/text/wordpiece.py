"""How much of a chunk the dense model reads (SPEC section 10): BERT's uncased WordPiece, only as far
as needed to find where the 256 word pieces (with [CLS] and [SEP]) end, in code points.

It follows Hugging Face `tokenizers` for this model's tokenizer.json step by step: BertNormalizer
(drop control characters, whitespace to a space, pad CJK ideographs, strip accents, lower-case),
BertPreTokenizer (split on whitespace, every punctuation character a word of its own), and WordPiece
(greedy longest match, `##` continuations, a word that cannot be matched or is longer than 100
characters is one [UNK]). The conformance tests compare it with `tokenizers` piece by piece.
The vocabulary is the model's own (`wordpiece_vocab`), so both hosts flag the same chunks.
"""

import functools
import re
import unicodedata

MAX_PIECES = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
SPECIAL = 2  # [CLS] and [SEP] take two of them
MAX_WORD_CHARS = 100  # WordPiece's max_input_chars_per_word: a longer word is one [UNK]

# ASCII text without control characters needs no Unicode tables: words are runs of letters and
# digits, and each ASCII punctuation character (Rust's is_ascii_punctuation) stands alone.
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# CJK ideograph blocks that BertNormalizer pads with spaces (so each is a word of its own).
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


class Vocab:
    """The word pieces of a WordPiece model (continuations carry their `##`)."""

    def __init__(self, tokens):
        self.tokens = frozenset(tokens)
        self.longest = max(map(len, self.tokens))
        self.known: dict = {}  # word -> its pieces' ends, a cache (words repeat)
        self.read: dict = {}  # (text, max pieces) -> read_end, a cache (a drag re-reads its chunks)

    def pieces(self, word: str) -> list[int]:
        ends = self.known.get(word)
        if ends is None:
            if len(self.known) > 200_000:
                self.known.clear()
            ends = self.known[word] = pieces(word, self)
        return ends


@functools.cache
def model_vocab() -> Vocab:
    """all-MiniLM-L6-v2's vocabulary (30,522 pieces), from the module that carries it."""
    from ragsim.text.wordpiece_vocab import TOKENS

    return Vocab(TOKENS.split("\n"))


@functools.lru_cache(maxsize=4096)
def _normal(c: str) -> str:
    """BertNormalizer on one character: "" (dropped), " " (a word break) or its normal form."""
    if c in "\t\n\r":
        return " "
    category = unicodedata.category(c)
    if c == "\ufffd" or category[0] == "C":  # control, format, surrogate, private, unassigned
        return ""
    if c.isspace():
        return " "
    cp = ord(c)
    if any(a <= cp <= b for a, b in _CJK):
        return f" {c} "
    stripped = "".join(x for x in unicodedata.normalize("NFD", c) if unicodedata.category(x) != "Mn")
    return stripped.lower()


def _is_punctuation(c: str) -> bool:
    return c in _ASCII_PUNCTUATION or unicodedata.category(c)[0] == "P"


def words(text: str):
    """(normalized word, origins) in text order, where origins[j] is the code point of `text` that
    the word's j-th character comes from."""
    if text.isascii() and not _ASCII_CONTROL.search(text):
        for m in _ASCII_WORD.finditer(text):
            yield m.group().lower(), range(m.start(), m.end())
        return
    word, origins = [], []
    for i, c in enumerate(text):
        for n in _normal(c):
            if n == " " or _is_punctuation(n):
                if word:
                    yield "".join(word), origins
                    word, origins = [], []
                if n != " ":
                    yield n, [i]
            else:
                word.append(n)
                origins.append(i)
    if word:
        yield "".join(word), origins


def pieces(word: str, vocab: Vocab) -> list[int]:
    """The end (in the word's characters) of each of its word pieces; one [UNK] spans the word."""
    if len(word) > MAX_WORD_CHARS:
        return [len(word)]
    ends, start = [], 0
    while start < len(word):
        end = min(len(word), start + vocab.longest)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab.tokens:
                break
            end -= 1
        if end == start:  # no piece matches here: the whole word is [UNK]
            return [len(word)]
        ends.append(end)
        start = end
    return ends


def read_end(text: str, vocab: Vocab | None = None, max_pieces: int = MAX_PIECES) -> int | None:
    """Where the model stops reading `text` (code points), or None when it reads all of it.

    The model reads `max_pieces - 2` word pieces; `text` is truncated when one more follows, and
    the answer is then the end of the last piece read (as `tokenizers`' offsets give it)."""
    budget = max_pieces - SPECIAL
    if text.isascii() and len(text) <= budget:
        return None  # every word piece holds at least one character
    vocab = vocab or model_vocab()
    key = (text, max_pieces)
    if key not in vocab.read:
        if len(vocab.read) > 20_000:
            vocab.read.clear()
        vocab.read[key] = _read_end(text, vocab, budget)
    return vocab.read[key]


def _read_end(text: str, vocab: Vocab, budget: int) -> int | None:
    read, last_end = 0, 0
    for word, origins in words(text):
        for end in vocab.pieces(word):
            if read == budget:
                return last_end
            read += 1
            last_end = origins[end - 1] + 1
    return None
