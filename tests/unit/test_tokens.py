"""ragsim.tokens: the byte-pair merge, the pretokenizer's classes, offsets, the rank files and the
token splitters, on small hand-checked cases (tiktoken itself: tests/conformance)."""

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_request
from ragsim.wire import api
from ragsim import split as splitters
from ragsim.text import tokens
from ragsim.errors import RequestError
from ragsim.text.index import DocIndex
from ragsim.text.tokens import encoding as encoding_mod
from ragsim.text.tokens.patterns import PATTERNS, REPRESENTATIVE, representative, shadow

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402


@pytest.fixture(scope="module")
def cl100k():
    data = build.tiktoken_rank_files()["cl100k_base"]
    return tokens.provide("cl100k_base", data)


# -- byte-pair merge on a toy vocabulary -----------------------------------------------------------

TOY = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5, b"aa": 6, b"aaa": 7}


def test_merge_takes_the_lowest_rank_first():
    # "abc": pairs ab (3) and bc (4): ab first, then ab+c = abc (5)
    assert encoding_mod.byte_pair_merge(TOY, b"abc") == [0, 3]
    # "bcab": bc (4) vs ca (none) vs ab (3): ab first, then bc; "bc"+"ab" is not a token
    assert encoding_mod.byte_pair_merge(TOY, b"bcab") == [0, 2, 4]


def test_merge_takes_the_leftmost_of_equal_ranks():
    # "aaaa": three pairs aa (6), the leftmost merges first (aa|a|a); then aa+a = aaa (7) loses to
    # a+a = aa (6): aa|aa, and aaaa is no token
    assert encoding_mod.byte_pair_merge(TOY, b"aaaa") == [0, 2, 4]
    assert encoding_mod.byte_pair_merge(TOY, b"aaa") == [0, 3]


def test_one_byte_and_empty():
    assert encoding_mod.byte_pair_merge(TOY, b"a") == [0, 1]
    assert encoding_mod.byte_pair_merge(TOY, b"") == [0, 0]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc", min_size=2, max_size=200))
def test_heap_merge_equals_tiktokens_scan(s):
    data = s.encode()
    assert encoding_mod._merge_heap(TOY, data) == encoding_mod._merge_scan(TOY, data) == _scan(TOY, data)


def _scan(ranks, data):
    """tiktoken's O(n * merges) loop, written out plainly."""
    parts = list(range(len(data) + 1))
    while len(parts) > 2:
        best = None
        for i in range(len(parts) - 2):
            r = ranks.get(data[parts[i]:parts[i + 2]])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        del parts[best[1] + 1]
    return parts


def test_long_pieces_use_the_heap_and_agree(cl100k):
    text = "x" + "ab" * 500 + "日本語" * 100  # one letter piece of 1,201 characters
    piece = text.encode()
    assert len(piece) >= encoding_mod._HEAP_FROM
    assert encoding_mod._merge_heap(cl100k.ranks, piece) == _scan(cl100k.ranks, piece)


# -- the pretokenizer ---------------------------------------------------------------------------


def test_shadow_keeps_ascii_and_long_s_and_maps_the_rest_by_class():
    assert shadow("Hello, world 42!\n") == "Hello, world 42!\n"
    assert representative("ſ") == "ſ"  # (?i:'s) takes it, as Rust's case folding does
    assert [representative(c) for c in "ÉéǅʰあÅ\u0301²\u3000\u2028§"] == [
        REPRESENTATIVE[k] for k in ("Lu", "Ll", "Lt", "Lm", "Lo", "Lu", "M", "N", "WS", "WS", "other")]
    # U+001C..U+001F: str.isspace() says yes, Unicode White_Space (Rust's \s) says no
    assert "\x1c".isspace() and shadow("\x1c") == "\x1c"
    assert all(ord(c) >= 128 for c in REPRESENTATIVE.values())


def test_classes_are_the_committed_unicode_16_not_the_interpreters():
    """U+105C0 TODHRI LETTER A is new in Unicode 16: a letter here even where the running Python's
    database (14 in CPython 3.11) does not know it; U+10940 (new in 17) is not one."""
    assert tokens.UNICODE_VERSION == "16.0.0"
    assert representative("\U000105c0") == REPRESENTATIVE["Lo"]
    assert representative("\U00010940") == REPRESENTATIVE["other"]
    assert representative("\u0295") == REPRESENTATIVE["Ll"]  # Lo from Unicode 17 on
    if unicodedata.unidata_version < "16":
        assert unicodedata.category("\U000105c0") == "Cn"


def test_end_of_text_is_the_end_not_before_a_final_newline(cl100k):
    # cl100k's `\s++$`: Python's `$` would also match before "\n"; the pattern uses \Z
    assert "\\Z" in PATTERNS["cl100k_base"] and "$" not in PATTERNS["cl100k_base"]
    pieces = cl100k._pieces("x  \n")
    assert pieces == ["x", "  \n"]


def test_pieces_tile_the_text(cl100k):
    text = "It's 2024: naïve café — 日本語!\r\n\n  done  "
    assert "".join(cl100k._pieces(text)) == text


# -- encoding and offsets -----------------------------------------------------------------------


def test_known_ids(cl100k):
    # tiktoken: cl100k_base.encode("hello world") == [15339, 1917]
    assert cl100k.encode("hello world") == [15339, 1917]
    assert cl100k.encode("<|endoftext|>") == [100257]
    assert cl100k.decode(cl100k.encode("naïve café 😀")) == "naïve café 😀"


def test_offsets_of_a_character_split_across_tokens(cl100k):
    """An emoji is four bytes; where tokens split it, each token names the whole character."""
    text = "a🦜b"
    ids, starts, ends = cl100k.encode_with_offsets(text)
    assert cl100k.decode_bytes(ids) == text.encode()
    assert starts[0] == 0 and ends[-1] == 3
    inside = [(s, e) for i, s, e in zip(ids, starts, ends) if len(cl100k.decode_bytes([i])) < 4 and s <= 1 < e]
    assert inside and all((s, e) in ((0, 2), (1, 2), (1, 3)) for s, e in inside)


def test_rank_files_are_checked():
    with pytest.raises(ValueError, match="sha256"):
        tokens.provide("cl100k_base", b"IQ== 0\n")
    assert tokens.parse_ranks(b"IQ== 0\nIg== 1\n") == {b"!": 0, b'"': 1}
    assert tokens.parse_ranks(b"IQ== 0\nIg== 1\n", 2) == {b"!": 0, b'"': 1}


def test_unknown_tokenizer_is_a_request_error():
    with pytest.raises(RequestError) as err:
        tokens.get("p50k_base", "chunking.tokenizer")
    assert err.value.field == "chunking.tokenizer" and "'cl100k_base'" in err.value.message


def test_missing_rank_file_says_how_to_get_it():
    from ragsim.host.clients import tokens_files as host

    message = host.missing_message("o200k_base")
    assert "python3 build.py" in message and "RAGSIM_TIKTOKEN_DIR" in message and message.count(".") >= 1


# -- splitting by tokens ------------------------------------------------------------------------


def test_token_windows_by_hand(cl100k):
    text = "The cat sat on the mat."
    # tokens: "The" " cat" " sat" " on" " the" " mat" "."
    doc = DocIndex.build(text)
    split = splitters.split(doc, {"unit": "tokens", "size": 3, "overlap": 1})
    assert [text[a:b] for a, b in zip(split.starts, split.ends)] == ["The cat sat", " sat on the", " the mat."]
    assert split.units == [3, 3, 3] and split.unit == "tokens" and split.units_in_document == 7
    same = splitters.split(doc, {"strategy": "langchain-token", "size": 3, "overlap": 1})
    assert (same.starts, same.ends) == (split.starts, split.ends)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=120), st.integers(1, 12), st.integers(0, 11))
def test_token_windows_cover_the_text_in_order(cl100k, text, size, overlap):
    overlap %= size
    split = splitters.split(DocIndex.build(text), {"unit": "tokens", "size": size, "overlap": overlap})
    ids, starts, ends = cl100k.encode_with_offsets(text)
    assert split.units_in_document == len(ids) and sum(split.units) >= len(ids)
    covered = set()
    for a, b in zip(split.starts, split.ends):
        assert 0 <= a < b <= len(text)
        covered.update(range(a, b))
    assert covered == set(range(len(text)))
    assert split.starts == sorted(split.starts) and split.ends == sorted(split.ends)


def test_sentences_packed_by_tokens(cl100k):
    text = "The cat sat on the warm mat. It purred loudly all night long. A dog barked at the very noisy mailman today."
    # sentences of 8, 8 and 12 tokens (" It" and " A" start in the space before their sentence)
    doc = DocIndex.build(text)

    def split(size, overlap):
        s = splitters.split(doc, {"strategy": "sentences", "unit": "tokens", "size": size, "overlap": overlap})
        assert s.unit == "tokens" and s.units_in_document == 28
        return [(text[a:b], u) for a, b, u in zip(s.starts, s.ends, s.units)]

    first, second, third = "The cat sat on the warm mat.", "It purred loudly all night long.", \
        "A dog barked at the very noisy mailman today."
    assert split(20, 8) == [(f"{first} {second}", 16), (f"{second} {third}", 20)]
    assert split(18, 8) == [(f"{first} {second}", 16), (third, 12)]  # no room for the overlap sentence
    # a sentence over the size: token windows (10 stepping by 7), clipped to the sentence
    assert split(10, 3) == [(first, 8), (second, 8), ("A dog barked at the very noisy mailman", 10),
                            (" noisy mailman today.", 5)]


def test_the_document_is_tokenized_once(cl100k, monkeypatch):
    doc = DocIndex.build("one two three four five six seven")
    splitters.split(doc, {"unit": "tokens", "size": 3, "overlap": 0})
    calls = []
    monkeypatch.setattr(encoding_mod.Encoding, "encode_with_offsets", lambda *a: calls.append(a))
    for size in (2, 4, 5):
        splitters.split(doc, {"unit": "tokens", "size": size, "overlap": 1})
    assert calls == []


@pytest.mark.parametrize("chunking,field", [
    ({"unit": "tokens", "size": 4, "overlap": 4}, "chunking.overlap"),
    ({"unit": "tokens", "size": 4, "overlap": 1, "tokenizer": "gpt2"}, "chunking.tokenizer"),
    ({"strategy": "langchain-token", "size": 4, "overlap": 4}, "chunking.overlap"),
    ({"strategy": "langchain-recursive", "length": "bytes", "size": 4, "overlap": 1}, "chunking.length"),
    ({"strategy": "sentences", "unit": "tokens", "size": 4, "overlap": 4}, "chunking.overlap"),
])
def test_bad_token_requests_name_the_field(cl100k, chunking, field):
    request = make_request("one two three four five six", **{})
    request["chunking"] = chunking
    response = api.simulate(request)
    assert response["error"]["field"] == field
    assert response["error"]["message"].endswith((".", ")."))


# -- exact counts at the JSON boundary (SPEC section 9) -----------------------------------------


def test_a_tokenizer_makes_context_tokens_and_cost_exact(cl100k):
    text = "naïve café 😀 " * 30 + "Hello world, this is a test."
    request = make_request(text, query="test world", size=20, overlap=5, k=2)
    estimated = api.simulate(request)["stats"]
    request["tokenizer"] = "cl100k_base"
    stats = api.simulate(request)["stats"]
    context = api.simulate(request)["context"]
    assert stats["context_tokens"] == len(cl100k.encode(context)) != stats["context_tokens_estimate"]
    assert stats["context_tokens_estimate"] == estimated["context_tokens"] == -(-len(context) // 4)
    assert stats["cost"] == stats["context_tokens"] * 3.0 / 1_000_000 and stats["tokenizer"] == "cl100k_base"
    assert estimated["tokenizer"] is None


def test_an_unknown_tokenizer_is_refused_by_name():
    request = make_request("one two three", tokenizer="p50k_base")
    assert api.simulate(request)["error"]["field"] == "tokenizer"


def test_the_tokenizer_counts_expansions_and_sweeps_too(cl100k):
    text = "Ünïcödé façade — 日本語. " * 40
    request = make_request(text, query="façade", size=12, overlap=3, k=2, tokenizer="o200k_base",
                           expand={"neighbours": 1}, sweep=[0, 2])
    response = api.simulate(request)
    o200k = tokens.get("o200k_base")
    assert response["expanded"]["context_tokens"] == len(o200k.encode(response["expanded"]["context"]))
    exact = api.simulate(dict(request, sweep=None, chunking=dict(request["chunking"], overlap=2)))
    assert response["sweep"][1]["context_tokens"] == exact["stats"]["context_tokens"]


def test_without_a_rank_file_the_request_says_how_to_get_one(monkeypatch):
    from ragsim.host.clients import tokens_files as host

    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(host, "candidate_dirs", lambda: [])
    response = api.simulate(make_request("one two three", unit="tokens", size=2, overlap=0))
    assert response["error"] == {"field": "chunking.tokenizer", "message": host.missing_message("cl100k_base")}


@pytest.mark.slow
def test_the_tables_extend_the_interpreters_database():
    """Where the running Python's Unicode database assigns a character, its class is the table's;
    the tables differ only on characters that database does not know yet (Unicode 16 vs CPython
    3.11's 14). In Pyodide (Unicode 16) they are equal: tests/pyodide checks that."""
    groups = {"Lu", "Ll", "Lt", "Lm", "Lo"}
    unknown = 0
    # planes 0-3 and 14: 4-13 are unassigned and 15-16 private use in every Unicode version so far
    for cp in (*range(0x80, 0x40000), *range(0xE0000, 0xF0000)):
        if 0xD800 <= cp <= 0xDFFF or cp == 0x17F:
            continue
        cat = unicodedata.category(chr(cp))
        group = cat if cat in groups else {"M": "M", "N": "N"}.get(cat[0])
        ours = representative(chr(cp))
        ours = None if ours in (REPRESENTATIVE["WS"], REPRESENTATIVE["other"]) else ours
        if ours != (REPRESENTATIVE[group] if group else None):
            assert cat == "Cn", (hex(cp), cat)
            unknown += 1
    if unicodedata.unidata_version == "16.0.0":
        assert unknown == 0
    if unicodedata.unidata_version == "14.0.0":  # CPython 3.11: Unicode 15 and 16's new letters and marks
        assert unknown > 9_000


def test_the_audit_measures_a_fact_in_tokens_and_holds_token_windows_to_the_overlap_rule():
    """A fact no longer than the overlap in tokens can never be destroyed by token windows (SPEC
    section 4); the audit counts each stretch in the split's own tokens."""
    from ragsim.judge.fact_chunks import facts_of, stretch_units
    from ragsim.wire.audit import audit

    text = ("The Aldwych Barrage holds 4.2 million cubic metres. Upstream, the Kessel Weir releases "
            "120 cubic metres per second in spring. The Marrow Lock lifts barges 9 metres. ") * 6
    doc = DocIndex.build(text)
    _, starts, ends = tokens.document_tokens(doc, "cl100k_base")
    facts = facts_of(doc)
    assert facts
    for f in facts:
        a, z = f.stretch
        touched = sum(1 for s, e in zip(starts, ends) if s < z and e > a)
        assert stretch_units(doc, "tokens", a, z, {"tokenizer": "cl100k_base"}) == touched > 0
    result = audit({"documents": [{"id": "d", "title": "d", "text": text}],
                    "chunking": {"strategy": "window", "unit": "tokens", "size": 24}, "overlaps": [0, 4, 12, 20]})
    assert "error" not in result
    assert any(row["destroyed"] for row in result["rows"])
    assert all(row["destroyed_within_overlap"] == 0 for row in result["rows"])
