"""Plain helpers shared by the test folders (fixtures live in conftest.py files)."""


def make_request(text, query="", unit="words", size=24, overlap=6, k=2, span=None, fact=None, **extra):
    """A single-document request with the defaults the page opens with."""
    req = {
        "documents": [{"id": "d", "title": "doc", "text": text}],
        "query": query,
        "chunking": {"unit": unit, "size": size, "overlap": overlap},
        "retrieval": {"k": k},
        "span": None if span is None else {"doc": "d", "start": span[0], "end": span[1]},
        "fact": None if fact is None else {"doc": "d", "name": list(fact[0]), "value": list(fact[1])},
        "price_per_million": 3.0,
    }
    req.update(extra)
    return req


# Texts for the dense model's tests (SPEC section 10): the sanity anchor (cosine 0.7553 with
# all-MiniLM-L6-v2), Unicode the tokenizer must normalise, and a text longer than its 256 pieces.
DENSE_ANCHOR = ("A man is eating food.", "A man is eating a piece of bread.")
DENSE_LONG = " ".join(f"Sentence {i} says that chunk boundaries matter for retrieval quality." for i in range(60))
DENSE_TEXTS = [
    *DENSE_ANCHOR,
    "Ünïcödé façade naïve café — 東京 and ΑΘΗΝΑ, emoji 🙂 and tabs\tand\nnewlines.",
    DENSE_LONG,
]
