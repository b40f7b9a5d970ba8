"""Term options (`retrieval.terms`): English stop words and Snowball English stemming, as bm25s applies them.

bm25s's tokenizer (bm25s/tokenization.py, `Tokenizer.streaming_tokenize`) drops a lower-cased
token that is a stop word, then stems what is left; the same `Analyzer` is applied to document
terms and query terms. Stemming uses the pure-Python `snowballstemmer` package, imported only
when a request asks for it: it is not a dependency of the core.
"""

from dataclasses import dataclass, field

from ragsim.errors import RequestError
from ragsim.fields import shown

# bm25s/stopwords.py STOPWORDS_EN (bm25s 0.2-0.3), what `bm25s.tokenize(stopwords="english")` drops:
# the 33 words of Lucene's EnglishAnalyzer stop set.
# A conformance test holds this set equal to the installed bm25s's.
STOPWORDS_ENGLISH = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "will", "with",
))

STOPWORD_LISTS = {"english": STOPWORDS_ENGLISH}
STEMMERS = ("snowball-english",)


@dataclass(frozen=True, eq=False)
class Analyzer:
    """Maps a list of terms to the terms BM25 counts: stop words out, then stems."""

    stopwords: str | None
    stemmer: str | None
    _stem: object = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple:
        """What caches key on: two analyzers with the same key map terms the same way."""
        return (self.stopwords, self.stemmer)

    def __call__(self, terms: list[str]) -> list[str]:
        if self.stopwords is not None:
            stop = STOPWORD_LISTS[self.stopwords]
            terms = [t for t in terms if t not in stop]
        if self._stem is not None:
            cache = self._cache
            out = []
            for t in terms:
                s = cache.get(t)
                if s is None:
                    s = cache[t] = self._stem(t)
                out.append(s)
            terms = out
        return terms


def _snowball_english():
    try:
        import snowballstemmer  # lazily: only a request that asks for stemming needs it
    except ImportError:
        raise RequestError(
            "retrieval.terms",
            "Stemming needs the snowballstemmer package, which is not installed here; turn stemming off or install it.",
        ) from None
    return snowballstemmer.stemmer("english").stemWord


def read_options(retrieval: dict) -> tuple[str | None, str | None]:
    """`retrieval.terms` checked: (stop-word list name or None, stemmer name or None)."""
    options = retrieval.get("terms")
    if options is None:
        return None, None
    if not isinstance(options, dict):
        raise RequestError("retrieval.terms", 'Give retrieval.terms as {"stopwords": "english", "stemmer": "snowball-english"} or leave it out.')
    unknown = set(options) - {"stopwords", "stemmer"}
    if unknown:
        raise RequestError("retrieval.terms", f"retrieval.terms takes only stopwords and stemmer (got {sorted(unknown)}).")
    stopwords = options.get("stopwords")
    if stopwords is not None and (not isinstance(stopwords, str) or stopwords not in STOPWORD_LISTS):
        raise RequestError("retrieval.terms.stopwords", f"retrieval.terms.stopwords must be \"english\" or null (got {shown(stopwords)}).")
    stemmer = options.get("stemmer")
    if stemmer is not None and (not isinstance(stemmer, str) or stemmer not in STEMMERS):
        raise RequestError("retrieval.terms.stemmer", f"retrieval.terms.stemmer must be \"snowball-english\" or null (got {shown(stemmer)}).")
    return stopwords, stemmer


def read_terms(retrieval: dict) -> Analyzer | None:
    """The analyzer `retrieval.terms` asks for, or None for the plain terms of SPEC section 3."""
    stopwords, stemmer = read_options(retrieval)
    if stopwords is None and stemmer is None:
        return None
    return Analyzer(stopwords, stemmer, _snowball_english() if stemmer else None)
