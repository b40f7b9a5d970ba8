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
