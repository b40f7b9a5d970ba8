"""ragsim's pure-Python tiktoken and LangChain token splitters against the real libraries.

tiktoken (Rust) reads the same verified rank files: TIKTOKEN_CACHE_DIR points at a folder holding
them under the names tiktoken's cache gives them (the sha1 of each file's URL), so nothing is
downloaded. Token ids must be equal on every input; chunk texts equal LangChain's, except where a
LangChain TokenTextSplitter window boundary falls inside a character (see test_the_one_divergence).
"""

import functools
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter

from corpus import TEXTS, ragsim_split
from test_splitters_conformance import rejoined
from ragsim.text import tokens
from ragsim.text.tokens.patterns import REPRESENTATIVE, representative

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import build  # noqa: E402

NAMES = tokens.NAMES

# Unicode-heavy texts: CJK, emoji (ZWJ sequences, skin tones, flags), combining marks, RTL scripts,
# astral letters and digits, the white space tiktoken's \s takes and Python's \s adds.
UNICODE_TEXTS = {
    "cjk": "日本語のテキストを分割します。中文文本，韩国어 텍스트도 있습니다。１２３４５ 全角",
    "emoji": "Family 👨‍👩‍👧‍👦 thumbs 👍🏽👍🏿 flags 🇫🇷🇯🇵 faces 😀😃😄 keycap 1️⃣ done.",
    "combining": "e\u0301 a\u0308 n\u0303 Z\u0335\u0321\u0358a\u0337\u0322l\u0334g\u0336o\u0335 ﷺ ᾅ ǅemal ʰʲ",
    "rtl": "שָׁלוֹם עוֹלָם — مرحبا بالعالم! العربية 123 ١٢٣ ‏mixed‎ עברית",
    "astral": "𝐀𝐁𝐂 𝟏𝟐𝟑 𐐀𐐨 𝔘𝔫𝔦 𝕬 𓀀𓀁 𠀀𠀁 🝖 𞤀𞤢",
    "spaces": "a\u00a0b\u2003c\u3000d\u1680e\u2028f\u2029g\x1c\x1d\x1e\x1fh\x85i\u200bj\u202fk  \n\r\n\t \n",
    "specials": "<|endoftext|>x<|fim_prefix|> a<|fim_middle|>b<|fim_suffix|><|endofprompt|> <|endoftext",
    "contractions": "I'm you're we've they'll he'd it's DON'T 'S 'ſ 'ſſ ÉTÉ'S l'été",
    "numbers": "1 12 123 1234 12345 3.14159 1,000,000 ²³ ½ Ⅻ ①②",
}


@pytest.fixture(scope="module", autouse=True)
def rank_files(tmp_path_factory):
    """The verified rank files, for ragsim (tokens.provide) and for tiktoken (its cache folder)."""
    files = build.tiktoken_rank_files()
    cache = tmp_path_factory.mktemp("tiktoken_cache")
    for name, data in files.items():
        (cache / tokens.ENCODINGS[name]["cache_name"]).write_bytes(data)
        tokens.provide(name, data)
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    yield files
    mp.undo()
    shutil.rmtree(cache, ignore_errors=True)


def reference(name):
    return tiktoken.get_encoding(name)


def assert_same_tokens(name, text):
    want = reference(name).encode(text, allowed_special="all")
    assert tokens.get(name).encode(text) == want
    ids, starts, ends = tokens.get(name).encode_with_offsets(text)
    assert ids == want
    assert_offsets(name, text, ids, starts, ends)


def assert_offsets(name, text, ids, starts, ends):
    """SPEC section 9: each token runs from the start of the character holding its first byte to
    the end of the character holding its last byte (checked on the tokens' own bytes)."""
    enc = tokens.get(name)
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if len(clean) != len(text):
        return  # surrogate pairs given as two code points: covered by test_surrogates
    char_of = [i for i, ch in enumerate(clean) for _ in ch.encode("utf-8")]
    pos = 0
    for i, s, e in zip(ids, starts, ends):
        n = len(enc.decode_bytes([i]))
        assert (s, e) == (char_of[pos], char_of[pos + n - 1] + 1)
        pos += n
    assert pos == len(char_of)


# -- the rank files -----------------------------------------------------------------------------


def test_rank_file_hashes_are_tiktokens_own():
    source = inspect.getsource(openai_public)
    for name in NAMES:
        sha = tokens.ENCODINGS[name]["sha256"]
        assert f'"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken",\n' \
               f'        expected_hash="{sha}"' in source
        assert build.TIKTOKEN_FILES[name] == (sha, tokens.ENCODINGS[name]["cache_name"])


def test_special_tokens_and_ranks_are_tiktokens(rank_files):
    for name in NAMES:
        spec = openai_public.ENCODING_CONSTRUCTORS[name]()
        enc = tokens.get(name)
        assert enc.special == spec["special_tokens"]
        assert enc.ranks == spec["mergeable_ranks"]


# -- token ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text_name", sorted(TEXTS) + sorted(UNICODE_TEXTS))
def test_token_ids_equal_tiktoken(name, text_name):
    assert_same_tokens(name, TEXTS.get(text_name) or UNICODE_TEXTS[text_name])


@pytest.mark.parametrize("name", NAMES)
def test_edge_cases(name):
    for text in ("", " ", "\n", "x\n", "x \n", "x  ", " \n \n", "a" * 3000, "ab" * 700 + "日本" * 300,
                 "'s", "''s'", "1234567", "\r\n\r\n", " 'll", "<|endoftext|>", "<|endoftext|><|endoftext|>"):
        assert_same_tokens(name, text)


@pytest.mark.parametrize("name", NAMES)
def test_surrogates(name):
    """tiktoken replaces lone surrogates by U+FFFD and joins a pair given as two code points."""
    enc = tokens.get(name)
    for text in ("a\ud800b", "\udfff", "x \ud83d\ude00 y \ud83d"):
        want = reference(name).encode(text, allowed_special="all")
        ids, starts, ends = enc.encode_with_offsets(text)
        assert ids == want == enc.encode(text)
        assert starts[0] == 0 and ends[-1] == len(text)
        assert all(a < b for a, b in zip(starts, ends))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80), st.sampled_from(NAMES))
def test_any_text(text, name):
    assert_same_tokens(name, text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "A", "é", "É", "ǅ", "ʰ", "日", "\u0301", "1", "²", " ", "\n", "\r", "\t",
                                 "'", "s", "S", "ſ", "t", "ll", "/", "!", "\u00a0", "\u3000", "\x1c", "😀",
                                 "<|endoftext|>", "_", "-"]), max_size=40).map("".join),
       st.sampled_from(NAMES))
def test_texts_made_of_the_patterns_edges(text, name):
    assert_same_tokens(name, text)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdeéz日本ſ", min_size=30, max_size=400), st.sampled_from(NAMES))
def test_long_pieces(text, name):
    """One letter run of 30-400 characters: over 64 bytes the merge takes the heap path."""
    assert_same_tokens(name, text)


@functools.cache
def classes_sample():
    """Code points to try one by one: every one whose class the running Python's Unicode database
    (14 in CPython 3.11) would give otherwise than the committed tables do, and every 97th other."""
    def interpreter_class(ch):
        cat = unicodedata.category(ch)
        group = cat if cat in ("Lu", "Ll", "Lt", "Lm", "Lo") else {"M": "M", "N": "N"}.get(cat[0])
        return REPRESENTATIVE[group] if group else None

    out = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        ours = representative(ch)
        mine = ours if ours not in (REPRESENTATIVE["WS"], REPRESENTATIVE["other"]) else None
        if cp < 128:
            continue
        if mine != interpreter_class(ch) or cp % 97 == 0:
            out.append(ch)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_character_classes_match_tiktokens(name):
    """Each sampled character in contexts where its class decides the pieces (letters of each
    case, numbers in threes, white space, contractions); 1,000 at a time, then one by one on a miss."""
    ref = reference(name)
    enc = tokens.get(name)

    def context(c):
        return f"a{c}b 12{c}34 A{c}a a{c}A {c}x '{c}\n{c}{c}  {c} "

    missed = []

    def check(chars):
        text = "".join(map(context, chars))
        if enc.encode(text) == ref.encode(text, allowed_special="all"):
            return
        if len(chars) == 1:
            missed.append(f"U+{ord(chars[0]):04X}")
            return
        check(chars[: len(chars) // 2])
        check(chars[len(chars) // 2:])

    sample = classes_sample()
    assert len(sample) > 10_000  # Unicode 15 and 16 added some 9,500 letters, marks and numbers
    for i in range(0, len(sample), 1000):
        check(sample[i:i + 1000])
    assert missed == []


@pytest.mark.parametrize("name", NAMES)
def test_unicode_version_is_tiktokens(name):
    """The tables are Unicode 16, as tiktoken's regex-syntax: a letter new in Unicode 17 (U+10940
    SIDETIC LETTER N01) is "other" to both, and U+0295, Ll until Unicode 17 made it Lo, is lower case
    to both. If tiktoken moves to Unicode 17 this fails: regenerate _unicode_data.py (its docstring)."""
    assert tokens.UNICODE_VERSION == "16.0.0"
    for text in ("a\U00010940b", "\U00010940\U00010940x", "A\u0295a", "\u0295A", "1\U00010940 2"):
        assert_same_tokens(name, text)


# -- LangChain's token splitters ----------------------------------------------------------------

SIZES = ((7, 0), (50, 10), (256, 64))


def lc_token_chunks(text, name, size, overlap):
    splitter = TokenTextSplitter(encoding_name=name, chunk_size=size, chunk_overlap=overlap, allowed_special="all")
    return splitter.split_text(text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("size,overlap", SIZES)
@pytest.mark.parametrize("text_name", sorted(TEXTS) + sorted(UNICODE_TEXTS))
def test_langchain_token_text_splitter(name, size, overlap, text_name):
    text = TEXTS.get(text_name) or UNICODE_TEXTS[text_name]
    want = lc_token_chunks(text, name, size, overlap)
    got, extents, unit = ragsim_split(text, {"strategy": "langchain-token", "size": size, "overlap": overlap,
                                            "tokenizer": name})
    assert unit == "tokens" and len(got) == len(want)
    enc = tokens.get(name)
    ids = enc.encode(text)
    step = size - overlap
    for i, (ours, theirs) in enumerate(zip(got, want)):
        window = enc.decode_bytes(ids[i * step: i * step + size])
        assert theirs == window.decode("utf-8", errors="replace")
        if ours != theirs:
            # The one divergence: the window starts or ends inside a character. Ours holds the whole
            # character, LangChain's decoded text has U+FFFD for its bytes.
            assert "\ufffd" in theirs
            whole = ours.encode("utf-8")
            k = whole.find(window)
            assert 0 <= k < 4 and len(whole) - k - len(window) < 4


@pytest.mark.parametrize("name", NAMES)
def test_the_one_divergence(name):
    """A window that ends inside an emoji: LangChain's text ends with U+FFFD, ours with the emoji."""
    text = "ok 👨‍👩‍👧‍👦 fine"
    enc = tokens.get(name)
    ids, starts, ends = enc.encode_with_offsets(text)
    cut = next(i for i in range(1, len(ids)) if starts[i] < ends[i - 1])  # two tokens share a character
    size = cut
    want = lc_token_chunks(text, name, size, 0)
    got, extents, _ = ragsim_split(text, {"strategy": "langchain-token", "size": size, "overlap": 0, "tokenizer": name})
    assert "\ufffd" in want[0] and got[0] != want[0]
    assert got[0] == text[: ends[cut - 1]] and got[0].startswith(want[0].rstrip("\ufffd"))
    assert got[1].startswith(text[starts[cut]])  # the shared character opens the next chunk too


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("size,overlap", SIZES)
@pytest.mark.parametrize("text_name", sorted(TEXTS) + ["cjk", "emoji", "rtl"])
def test_langchain_recursive_from_tiktoken_encoder(name, size, overlap, text_name):
    text = TEXTS.get(text_name) or UNICODE_TEXTS[text_name]
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=name, chunk_size=size, chunk_overlap=overlap)
    want = splitter.split_text(text)
    got, extents, unit = ragsim_split(text, {"strategy": "langchain-recursive", "length": "tokens",
                                            "size": size, "overlap": overlap, "tokenizer": name})
    assert unit == "tokens"
    assert got == want


@pytest.mark.parametrize("options", [{"separators": ["\n\n", "\n", " ", ""], "keep_separator": False},
                                     {"language": "markdown"}, {"strip_whitespace": False}])
def test_langchain_recursive_tokens_options(options):
    text = TEXTS["markdown.md"] + "\n\n" + TEXTS["prose.txt"]
    kwargs = {"separators": options.get("separators"), "keep_separator": options.get("keep_separator", True),
              "strip_whitespace": options.get("strip_whitespace", True)}
    if "language" in options:
        splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=60, chunk_overlap=15,
            separators=RecursiveCharacterTextSplitter.get_separators_for_language("markdown"),
            is_separator_regex=True)
    else:
        splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=60, chunk_overlap=15,
            **{k: v for k, v in kwargs.items() if v is not None})
    got, _, _ = ragsim_split(text, {"strategy": "langchain-recursive", "length": "tokens", "size": 60,
                                    "overlap": 15, **options})
    assert got == splitter.split_text(text)


# -- the equivalent code ------------------------------------------------------------------------

CODE_CASES = (
    ("prose.txt", {"unit": "tokens", "size": 40, "overlap": 8}),
    ("emoji", {"unit": "tokens", "size": 5, "overlap": 1, "tokenizer": "o200k_base"}),
    ("pydoc_topics", {"strategy": "langchain-token", "size": 64, "overlap": 16}),
    ("prose.txt", {"strategy": "sentences", "unit": "tokens", "size": 60, "overlap": 20, "tokenizer": "o200k_base"}),
    ("markdown.md", {"strategy": "langchain-recursive", "length": "tokens", "language": "markdown", "size": 50,
                     "overlap": 10, "tokenizer": "o200k_base"}),
    ("textwrap.py", {"strategy": "langchain-recursive", "length": "tokens", "size": 120, "overlap": 30,
                     "keep_separator": False, "strip_whitespace": False}),
)


@pytest.mark.parametrize("text_name,chunking", CODE_CASES)
def test_equivalent_code_reproduces_the_chunks(text_name, chunking):
    from helpers import make_request
    from ragsim.wire.api import simulate
    from ragsim.wire.codegen import equivalent_code

    text = TEXTS.get(text_name) or UNICODE_TEXTS[text_name]
    request = make_request(text, query="the text", k=3)
    request["chunking"] = chunking
    response = simulate(request)
    assert "error" not in response, response
    code = equivalent_code(request)
    namespace = {"text": text}
    exec(compile(code, f"<equivalent code for {text_name}>", "exec"), namespace)
    assert namespace["chunks"] == [text[c["start"]:c["end"]] for c in response["chunks"]]


def test_the_sentences_code_runs_in_a_python_that_registered_nothing(tmp_path):
    """The code for ragsim's own sentence packing registers CPython's hosts itself: importing a host
    module registers nothing, and a fresh Python has no rank file otherwise."""
    from helpers import make_request
    from ragsim.wire.api import simulate
    from ragsim.wire.codegen import equivalent_code

    text = TEXTS["prose.txt"]
    request = make_request(text, query="the text", k=3)
    request["chunking"] = {"strategy": "sentences", "unit": "tokens", "size": 60, "overlap": 20}
    script = tmp_path / "equivalent.py"
    script.write_text("import json, sys\ntext = sys.stdin.read()\n" + equivalent_code(request)
                      + "\nprint(json.dumps(chunks))\n")
    run = subprocess.run([sys.executable, str(script)], input=text, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "py")})
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == [text[c["start"]:c["end"]] for c in simulate(request)["chunks"]]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["word", "Token", "日本語", "😀", " ", "  ", "\n", "\n\n", "\n\n\n", ".", "ab" * 9]),
                max_size=60).map("".join),
       st.integers(1, 30), st.integers(0, 12), st.sampled_from(NAMES), st.booleans())
def test_recursive_from_tiktoken_encoder_on_any_text(text, size, overlap, name, keep):
    overlap = min(overlap, size)
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=name, chunk_size=size, chunk_overlap=overlap, keep_separator=keep)
    got, _, _ = ragsim_split(text, {"strategy": "langchain-recursive", "length": "tokens", "size": size,
                                    "overlap": overlap, "tokenizer": name, "keep_separator": keep})
    want = splitter.split_text(text)
    assert len(got) == len(want)
    for mine, theirs in zip(got, want):
        # LangChain's one quirk (docs/splitters.md): without keep_separator, pieces around dropped
        # empty ones are re-joined by a single separator, so its chunk is not in the document
        assert mine == theirs or (not keep and any(rejoined(mine, theirs, s, re.escape(s), True)
                                                   for s in ("\n\n", "\n", " "))), (mine, theirs)
