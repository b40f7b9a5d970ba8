"""The limits of ragsim.limits hold where the work would be: a session's caches stay within
their memory budget, and the chunk count is refused before any splitting for countable strategies."""

from helpers import make_request
from ragsim import limits, split as splitters
from ragsim.split import haystack
from ragsim.wire.api import Session, simulate
from ragsim.text.index import DocIndex


def test_a_session_keeps_no_more_indexed_text_or_chunks_than_its_budget(monkeypatch):
    monkeypatch.setattr(limits, "CACHE_CHARS", 1000)
    monkeypatch.setattr(limits, "CACHE_CHUNKS", 150)
    session = Session()
    texts = [f"word{i} " * 60 for i in range(6)]  # 360 to 420 characters each
    for text in texts:
        simulate(make_request(text, size=2, overlap=0), session)  # 30 chunks each
        simulate(make_request(text, size=1, overlap=0), session)  # 60 chunks each
        assert session._indexes.total <= 1000 and session._splits.total <= 150
        assert session._indexes.total == sum(len(k[0]) for k in session._indexes.data)
    assert len(session._indexes.data) == 2  # not the 6 the count bound would keep
    one = make_request("x " * 800, size=1, overlap=0)  # alone over both budgets: kept while in use
    assert simulate(one, session) == simulate(one)
    assert len(session._indexes.data) == 1 and len(session._splits.data) == 1


def test_the_window_count_is_exact_before_splitting():
    for text in ("", "a", "a b c d e f g", "one two three " * 7):
        doc = DocIndex.build(text)
        for unit in ("words", "chars"):
            for size in range(1, 6):
                for overlap in range(size):
                    chunking = {"unit": unit, "size": size, "overlap": overlap}
                    assert splitters.estimate(doc, chunking) == len(splitters.split(doc, chunking))


def test_haystack_count_is_its_window_count_before_splitting():
    doc = DocIndex.build("a b  c d e f\n\ng h. i j k l m n o p")
    for split_by in ("word", "passage", "line", "period"):
        for size in range(1, 5):
            for overlap in range(size):
                chunking = {"strategy": "haystack", "split_by": split_by, "size": size, "overlap": overlap}
                n = len(doc.text.split({"word": " ", "passage": "\n\n", "line": "\n", "period": "."}[split_by]))
                windows = haystack.windows(n, size, size - overlap)
                assert splitters.estimate(doc, chunking) == len(windows) >= len(splitters.split(doc, chunking))


def test_a_collection_over_the_character_limit_is_refused_naming_it(monkeypatch):
    monkeypatch.setattr(limits, "MAX_CHARS", 100)
    req = make_request("a " * 30)
    req["documents"].append({"id": "e", "title": "", "text": "b " * 30})
    r = simulate(req)
    assert r["error"]["field"] == "documents" and "120 characters" in r["error"]["message"]
    assert "limit of 100" in r["error"]["message"]


def test_splitters_that_cannot_be_counted_before_stop_at_the_limit(monkeypatch):
    monkeypatch.setattr(limits, "MAX_CHUNKS", 50)
    text = "a" * 3000  # one unbroken run: LangChain falls back to single characters
    for chunking in ({"strategy": "langchain-recursive", "size": 10, "overlap": 9},
                     {"strategy": "langchain-character", "separator": "", "size": 10, "overlap": 9},
                     {"strategy": "sentences", "unit": "chars", "size": 10, "overlap": 9}):
        r = simulate({**make_request(text), "chunking": chunking})
        assert r["error"]["field"] == "chunking.size" and "limit of 50" in r["error"]["message"], chunking
    assert "error" not in simulate({**make_request(text), "chunking": {"strategy": "langchain-recursive", "size": 200,
                                                                       "overlap": 50}})
