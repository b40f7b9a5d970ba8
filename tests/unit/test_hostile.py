"""Hostile requests: each representative the fuzz campaign found, then the class it stands for.

No traceback, no hang, no gigabyte: every request gets a response or `{"error": {field, message}}`
with a short message, the commands write valid UTF-8 and exit 2 naming the field, and work that would
take minutes or gigabytes is refused before it starts (ragsim.wire.cost), or made linear.
"""

import base64
import functools
import json
import os
import pathlib
import time

import pytest

from helpers import CORE, bare_env, make_request, run_cli
from ragsim import fields, limits
from ragsim.errors import MAX_MESSAGE, RequestError
from ragsim.text import safe_regex
from ragsim.wire import api, cost
from ragsim.wire.api import simulate, simulate_json, simulate_packed
from ragsim.wire.audit import audit

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = "The harbour opens at dawn. Ships wait outside when fog rolls in; the pilot boat leaves at nine."
VARIANTS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


ragsim = functools.partial(run_cli, stdin=b"", cwd=CORE, text=False)  # `python -m ragsim ARGS` in py/, in bytes


def error_of(response: dict) -> dict:
    assert "error" in response, "expected a refusal"
    err = response["error"]
    assert set(err) == {"field", "message"} and len(err["message"]) <= MAX_MESSAGE
    return err


def request(**extra):
    return make_request(TEXT, query="fog ships", unit="words", size=6, overlap=2, k=2, **extra)


# --- the binary wire on the command line ----------------------------------------------------------

def test_the_command_line_answers_the_binary_wire_as_base64():
    done = ragsim(stdin=json.dumps(request(wire="binary")).encode())
    assert done.returncode == 0 and not done.stderr, done.stderr
    out = json.loads(done.stdout)
    data = base64.b64decode(out["chunk_bytes"]["data"])
    _, packed = simulate_packed(json.dumps(request(wire="binary")))
    assert data == packed and json.loads(simulate_json(json.dumps(request(wire="binary")))) == out


# --- a lone surrogate everywhere it can go --------------------------------------------------------

def test_dense_and_hybrid_take_a_lone_surrogate_in_the_text_and_the_query():
    pytest.importorskip("onnxruntime")
    for method in ("dense", "hybrid"):
        for where in ("text", "query"):
            req = make_request("\ud83d" + TEXT if where == "text" else TEXT, query="fog \udcff", size=6, overlap=2,
                               retrieval={"k": 2, "method": method})
            r = simulate(req)
            assert "error" not in r, r
            assert len(r["chunks"]) == r["stats"]["chunks"] > 0
            simulate_json(json.dumps(req)).encode("utf-8")


def test_the_tokenizer_reads_a_surrogate_as_the_replacement_character_both_hosts_drop():
    from ragsim.host.clients import embed_onnx
    from ragsim.text import wordpiece

    assert embed_onnx.readable("a\ud83db\udfff") == "a\ufffdb\ufffd"
    assert embed_onnx.readable("plain") == "plain"
    # the core's WordPiece drops both, so truncation is reported where the model stops
    long = "\ud83d " + " ".join(["word"] * 400)
    assert wordpiece.read_end(long) == wordpiece.read_end("\ufffd " + " ".join(["word"] * 400))


# --- every formula's denominator at the bounds ----------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_a_subnormal_k1_is_refused_naming_it_and_the_least_allowed_k1_scores(variant):
    text = "the cat sat on the mat and the dog ran far away today x"
    questions = [{"id": "q", "query": "cat dog", "references": [{"doc": "d", "start": 4, "end": 7}]}]
    for k1 in (5e-324, 1e-300, 9.99e-7):
        for b in (0.75, 1.0):
            req = make_request(text, query="cat", size=5, overlap=0, retrieval={"k": 2, "variant": variant,
                                                                                "k1": k1, "b": b})
            assert error_of(simulate(req))["field"] == "retrieval.k1"
    for k1, b, delta in ((1e-6, 1.0, 0.0), (1e-6, 0.75, 1e-300), (0.0, 0.5, 0.5), (1000, 5e-324, 1000)):
        if variant == "bm25+" and k1 == 0:
            continue  # refused by bm25.check_parameters: 0 / 0 for every chunk (tests/unit/test_bm25.py)
        req = make_request(text, query="cat", size=5, overlap=0, questions=questions,
                           map={"sizes": [3, 5], "overlaps": [0, 1]},
                           retrieval={"k": 2, "variant": variant, "k1": k1, "b": b, "delta": delta})
        r = simulate(req)
        assert "error" not in r, r
        assert all(c["score"] == c["score"] and c["score"] >= 0 for c in r["chunks"])


# --- every pattern a user gives -------------------------------------------------------------------

def test_a_secondary_regex_that_recurses_without_end_is_refused_on_its_field():
    for text in ("鼠鼠 hello", "😀 😀", "Ω" * 300):
        req = make_request(text, size=1, overlap=0, chunking={"strategy": "llamaindex-sentence", "size": 1,
                                                              "overlap": 0, "secondary_chunking_regex": ".?"})
        assert error_of(simulate(req))["field"] == "chunking.secondary_chunking_regex"


@pytest.mark.parametrize("pattern", ["(" * 400, "(?:" * 200 + "a" + ")" * 200, "a{99999999999}", "[" * 300,
                                     "x" * 600])
@pytest.mark.parametrize("where", ["separator", "separators", "secondary_chunking_regex"])
def test_patterns_nested_too_deeply_too_long_or_invalid_name_their_field(pattern, where):
    chunking = {"separator": {"strategy": "langchain-character", "separator": pattern, "is_separator_regex": True},
                "separators": {"strategy": "langchain-recursive", "separators": [pattern], "is_separator_regex": True},
                "secondary_chunking_regex": {"strategy": "llamaindex-sentence", "secondary_chunking_regex": pattern},
                }[where]
    err = error_of(simulate(make_request(TEXT, chunking={**chunking, "size": 20, "overlap": 0})))
    assert err["field"] == f"chunking.{where}"
    assert len(err["message"]) < 300


@pytest.mark.parametrize("pattern", [" *x", "a+b", ".*x", "\\s*\\n", "a{1,100}b", "(?:ab)*c",
                                     # a guard before the run, but many starts reach it through an unbounded part
                                     "a*Z\\s+x", "\\nP.*Q\\s+x"])
def test_a_pattern_a_search_restarts_inside_is_refused_as_quadratic(pattern):
    with pytest.raises(RequestError, match="quadratic"):
        safe_regex.compile_pattern(pattern, "chunking.separators")
    start = time.perf_counter()
    req = make_request(" " * 200_000 + "ab" * 10, chunking={"strategy": "langchain-recursive", "size": 50, "overlap": 0,
                                                           "separators": [pattern], "is_separator_regex": True})
    assert error_of(simulate(req))["field"] == "chunking.separators"
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize("pattern", ["\\n\\*\\*\\*+\\n", "\\n+\\s*", "(?<=\\. )", "\\n#{1,6} ", "[.!?]\\s+", "\n\n",
                                     "[^,.;。？！]+[,.;。？！]?|[,.;。？！]"])
def test_linear_patterns_pass(pattern):
    safe_regex.compile_pattern(pattern, "chunking.separators")


def test_every_language_preset_passes_the_check():
    from ragsim.split.langchain_recursive import LANGUAGES

    for separators in LANGUAGES.values():
        for s in separators:
            safe_regex.compile_pattern(s, "chunking.separators")


VB6_PROPERTY = "\\n(?!End\\s)(?:Public|Private|Friend|Global|Static)\\s+?Property\\s+(?:Get|Let|Set)\\s+"


@pytest.mark.parametrize("text", [
    "\n" * 200_000, " " * 200_000, "\nPublic Property" + " " * 200_000, "\nPublic Property " * 15_000,
    "\nPublic" + " \n" * 100_000 + "Property" + " " * 100_000 + "x",
])
def test_a_run_reached_only_past_a_guard_splits_in_linear_time(text):
    """Visual Basic 6's separators: each can start only at a newline followed by a keyword, so a
    search that starts inside a run of spaces fails at once; 200,000 characters split in well under
    a second (the quadratic shapes above take seconds at a tenth of the length)."""
    safe_regex.compile_pattern(VB6_PROPERTY, "chunking.separators")
    req = make_request(text, chunking={"strategy": "langchain-recursive", "size": 4000, "overlap": 0,
                                       "language": "visualbasic6"})
    start = time.perf_counter()
    assert "error" not in simulate(req)
    assert time.perf_counter() - start < 2


# --- every message quotes a short excerpt ---------------------------------------------------------

HUGE = "x" * 1_000_000


@pytest.mark.parametrize("change", [
    {"tokenizer": HUGE},
    {"chunking": {"unit": "tokens", "size": 5, "overlap": 0, "tokenizer": HUGE}},
    {"chunking": {"strategy": "langchain-recursive", "length": HUGE, "size": 5, "overlap": 0}},
    {"chunking": {"strategy": "llamaindex-sentence", "secondary_chunking_regex": "(" + HUGE}},
    {"chunking": {"strategy": HUGE}},
    {"questions": [{"id": "q", "query": "fog", "references": [{"doc": HUGE, "start": 0, "end": 3}]}]},
    {"questions": [{"id": HUGE, "query": "fog", "references": [{"doc": "d", "start": 0, "end": 3}]}] * 2},
    {"documents": [{"id": HUGE, "title": "", "text": "a"}] * 2},
    {"span": {"doc": HUGE, "start": 0, "end": 2}},
    {"retrieval": {"k": 2, "variant": HUGE}},
    {"retrieval": {"k": HUGE}},
    {"retrieval": {"k": 2, "terms": {"stopwords": HUGE}}},
    {"wire": HUGE},
])
def test_a_message_quotes_at_most_a_short_excerpt(change):
    err = error_of(simulate({**request(), **change}))
    assert "x" * (fields.SHOWN + 1) not in err["message"]
    assert len(err["message"]) < 300


def test_shown_cuts_with_an_ellipsis_and_request_error_bounds_any_message():
    assert fields.shown("y" * 100) == repr("y" * 100)[: fields.SHOWN - 1] + "…"
    assert fields.shown("short") == "'short'"
    e = RequestError("f", "start " + "z" * 5000 + " do this.")
    assert len(e.message) <= MAX_MESSAGE and e.message.startswith("start ") and e.message.endswith(" do this.")


# --- output that cannot be printed ----------------------------------------------------------------

@pytest.fixture()
def eval_files(tmp_path):
    doc = tmp_path / "harbour\udcff.txt"  # a name holding the byte \xff (surrogateescape)
    doc.write_bytes(TEXT.encode())
    fog = TEXT.index("Ships wait")
    qs = {"questions": [{"id": "fog\ud800", "query": "fog \udcff ships",
                         "references": [{"doc": str(doc), "start": fog, "end": fog + 30}]}]}
    (tmp_path / "q.json").write_text(json.dumps(qs), encoding="utf-8")
    return doc, tmp_path / "q.json"


@pytest.mark.parametrize("as_json", [False, True])
def test_eval_prints_lone_surrogates_and_odd_file_names_as_valid_utf8(eval_files, as_json):
    doc, questions = eval_files
    done = ragsim("eval", os.fsencode(doc).decode("utf-8", "surrogateescape"), "--questions", questions,
                  "--size", "8", *(["--json"] if as_json else []))
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("utf-8")  # strict: raises on anything that is not UTF-8
    assert "Traceback" not in done.stderr.decode("utf-8")
    if as_json:
        out = json.loads(text)
        assert out["questions"][0]["id"] == "fog\ud800"
    else:
        assert "fog\\ud800" in text


@pytest.mark.slow
def test_a_users_pattern_over_the_recursion_limit_names_the_field_with_exit_2():
    req = make_request("鼠鼠 hello", chunking={"strategy": "llamaindex-sentence", "size": 1, "overlap": 0,
                                              "secondary_chunking_regex": ".?"})
    done = ragsim(stdin=json.dumps(req).encode())
    assert done.returncode == 2
    line = done.stderr.decode("utf-8").strip()
    assert line.startswith("ragsim: chunking.secondary_chunking_regex:") and "\n" not in line


# --- limits applied before the work ---------------------------------------------------------------

def quick(fn, seconds: float = 3.0):
    start = time.perf_counter()
    out = fn()
    assert time.perf_counter() - start < seconds, "the refusal came after the work"
    return out


def test_audit_applies_the_chunk_limit_before_splitting():
    text = "word " * 60_000  # 300,000 characters: size 1 would make 300,000 chunks
    r = quick(lambda: audit({"documents": [{"id": "d", "text": text}], "chunking": {"unit": "chars", "size": 1},
                             "overlaps": [0]}))
    assert r["rows"][0]["error"].startswith("These settings would make")


def test_audit_caps_the_number_of_overlaps_and_deduplicates_in_linear_time():
    doc = [{"id": "d", "text": TEXT}]
    err = error_of(quick(lambda: audit({"documents": doc, "chunking": {"unit": "chars", "size": 900},
                                        "overlaps": list(range(900))})))
    assert err["field"] == "overlaps" and str(limits.MAX_OVERLAPS) in err["message"]
    r = quick(lambda: audit({"documents": doc, "chunking": {"unit": "chars", "size": 900}, "overlaps": [0, 3] * 50_000}))
    assert r["overlaps"] == [0, 3]


def test_a_huge_k_is_refused_before_the_context_is_assembled():
    text = "lorem ipsum dolor sit amet " * 40_000  # about 1 M characters
    req = make_request(text, unit="chars", size=10_000, overlap=9_990, k=100_000)
    err = error_of(quick(lambda: simulate(req)))
    assert err["field"] == "retrieval.k" and "GB" in err["message"]
    # the exact check on the top k's lengths, whatever the budget
    with pytest.raises(RequestError, match="one context may hold"):
        limits.check_context(limits.MAX_CONTEXT_CHARS + 1)


def test_a_long_sizes_list_is_deduplicated_in_linear_time_before_the_cell_check():
    sizes = list(range(1, 100_001))
    req = request(questions=[{"id": "q", "query": "fog", "references": [{"doc": "d", "start": 0, "end": 3}]}],
                  map={"sizes": sizes, "overlaps": [0, 1]})
    assert error_of(quick(lambda: simulate(req)))["field"] == "map"
    req["map"]["sizes"] = [4, 8] * 50_000
    r = quick(lambda: simulate(req))
    assert r["map"]["sizes"] == [4, 8]


@pytest.mark.slow
def test_neighbours_over_many_chunks_are_linear():
    text = " ".join(f"w{i}" for i in range(50_000))
    req = make_request(text, query="w1 w2", unit="words", size=1, overlap=0, k=20_000,
                       expand={"neighbours": 20_000})
    r = quick(lambda: simulate(req), 20)
    # every chunk ties at 0 but w1 and w2: the top k are chunks 1..20,000, each bringing 20,000 more
    assert r["expanded"]["pieces"] == [[0, 0, len(" ".join(f"w{i}" for i in range(40_000)))]]


# --- the cost guard ------------------------------------------------------------------------------

def test_the_guard_refuses_a_request_over_30_seconds_with_its_estimate():
    text = "lorem ipsum dolor sit amet. " * 180_000  # 5 MB
    questions = [{"id": f"q{i}", "query": "lorem dolor", "references": [{"doc": "d", "start": 0, "end": 5}]}
                 for i in range(20)]
    req = make_request(text, unit="chars", size=200, overlap=0, questions=questions,
                       map={"sizes": list(range(100, 2100, 100)), "overlaps": list(range(0, 100, 5))})
    err = error_of(quick(lambda: simulate(req)))
    assert err["field"] == "map" and "would take about" in err["message"] and "map cells" in err["message"]
    # the same request costs what it costs; under the commands' budget only memory refuses
    estimate = api.estimate(req)
    assert estimate.seconds > 30
    cost.guard(estimate, cost.BATCH)


def test_the_guards_budgets_are_30_seconds_and_a_gigabyte_not_more():
    # each request is over one budget by less than twice, and under the other: a guard loosened (to
    # 300 s, to 4 GB) would let it run
    questions = [{"id": f"q{i}", "query": "lorem dolor", "references": [{"doc": "d", "start": 0, "end": 5}]}
                 for i in range(2)]
    slow = make_request("lorem ipsum dolor sit amet. " * 100_000, unit="chars", size=200, overlap=0, questions=questions,
                        map={"sizes": list(range(100, 1100, 100)), "overlaps": list(range(0, 100, 10))})
    estimate = api.estimate(slow)
    assert 30 < estimate.seconds < 60 and estimate.bytes < 2**30, estimate.sentence()
    err = error_of(quick(lambda: simulate(slow)))
    assert err["field"] == "map" and "over the 30 s one request may take here" in err["message"]
    big = make_request("lorem ipsum dolor sit amet. " * 357_000, unit="words", size=1, overlap=0,  # 10 M characters
                       map={"sizes": [1], "overlaps": [0]})
    estimate = api.estimate(big)
    assert estimate.seconds < 30 and 2**30 < estimate.bytes < 2 * 2**30, estimate.sentence()
    err = error_of(quick(lambda: simulate(big)))
    assert "over the 1.0 GB one request may use" in err["message"]


def test_the_estimate_of_an_ordinary_request_is_small_and_the_page_default_passes():
    req = request()
    estimate = api.estimate(req)
    assert estimate.seconds < 0.1 and estimate.bytes < 50 * 2**20
    big = make_request("lorem ipsum dolor sit amet " * 370_000, size=200, overlap=20, k=5)  # 10 M characters
    estimate = api.estimate(big)
    assert estimate.seconds < 30 and estimate.bytes < 2**30, estimate.sentence()


@pytest.mark.slow
def test_eval_and_audit_print_the_estimate_and_progress_past_a_second(tmp_path):
    text = "The fee is 40 dollars. The port opens at 9 am. " * 26_000  # 1.2 M characters
    big = tmp_path / "big.txt"
    big.write_text(text)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps({"questions": [{"id": "fee", "query": "fee", "references": [
        {"doc": str(big), "start": 0, "end": 22}]}]}))
    # one request (hybrid makes eval one): the estimate first, then how long it took
    done = ragsim("eval", big, "--questions", questions, "--size", "400", "--method", "hybrid")
    err = done.stderr.decode()
    assert done.returncode == 0 and "estimated about" in err and "done in" in err, err
    # streamed: progress only on a terminal (test_stream_audit), so a pipe's stderr stays empty
    for argv in (("eval", big, "--questions", questions, "--size", "400"), ("audit", big, "--overlaps", "0,5", "--size", "4000")):
        done = ragsim(*argv)
        assert done.returncode == 0 and done.stderr.decode() == "" and done.stdout.strip(), done.stderr.decode()


@pytest.mark.slow
def test_a_fifo_is_never_opened(tmp_path):
    """A FIFO (or a device) in a knowledge base, or named as a store or a file, is skipped or refused
    with a sentence at once: opening one waits for a writer for ever."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("The Galle Ring station orbits at 42,000 km.\n", encoding="utf-8")
    os.mkfifo(kb / "pipe.md")
    os.mkfifo(tmp_path / "x.jsonl")

    run = functools.partial(run_cli, env=bare_env(), timeout=60)

    out = run("audit", str(kb), "--size", "900", "--workers", "1", "--quiet")
    assert out.returncode == 0 and "1 document" in out.stdout, out.stderr
    assert "pipe.md" in out.stderr and "not a regular file" in out.stderr
    for args in (["inspect", str(tmp_path / "x.jsonl")], ["export", str(tmp_path / "x.jsonl"), "-o", "-"],
                 ["audit", str(kb / "pipe.md"), "--size", "900"],
                 ["eval", str(kb / "a.md"), "--questions", str(kb / "pipe.md")]):
        out = run(*args)
        assert out.returncode in (1, 2) and "not a regular file" in out.stderr and "Traceback" not in out.stderr, args


@pytest.mark.slow
def test_an_existing_output_is_replaced_only_when_asked(tmp_path):
    (tmp_path / "a.md").write_text("The Galle Ring station orbits at 42,000 km.\n", encoding="utf-8")
    keep = tmp_path / "important.txt"
    keep.write_text("a user's notes\n", encoding="utf-8")

    run = functools.partial(run_cli, env=bare_env())

    for command in (["audit", str(tmp_path / "a.md"), "--size", "900", "-o", str(keep)],
                    ["eval", str(tmp_path / "a.md"), "--questions", str(tmp_path / "nope.json"), "--jsonl", str(keep)]):
        out = run(*command, "--workers", "1", "--quiet")
        assert out.returncode in (1, 2) and "exists already; give --force" in out.stderr, out.stderr
        assert keep.read_text(encoding="utf-8") == "a user's notes\n"
    out = run("audit", str(tmp_path / "a.md"), "--size", "900", "-o", str(keep), "--force", "--workers", "1", "--quiet")
    assert out.returncode == 0 and json.loads(keep.read_text(encoding="utf-8").splitlines()[-1])["type"] == "summary"


@pytest.mark.slow
def test_text_from_a_store_never_reaches_the_terminal_as_a_control_sequence(tmp_path):
    """Stored metadata and chunk text holding escape sequences (clear screen, a window title, a carriage
    return, a bidi override) are written escaped by every text report; the JSON output keeps the value
    exact (its own \\u escapes)."""
    import json as json_

    hostile = "Harbour \x1b[2J\x1b]0;owned\x07 closes\r at nine \u202e."
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text("\n".join(json_.dumps({"id": f"c{i}\x1b[31m", "text": t, "metadata": {"source": "doc\x1b[1m.md"}})
                                for i, t in enumerate([hostile, "The pilot boat leaves at nine."])) + "\n", encoding="utf-8")
    for args in (["inspect", chunks, "--phrase", "closes"], ["export", chunks, "-o", "-"]):
        out = run_cli(*args, env=bare_env(), text=False, timeout=None)
        assert out.returncode in (0, 2), out.stderr
        for stream in (out.stdout, out.stderr):
            assert b"\x1b" not in stream and b"\r" not in stream and "\u202e".encode() not in stream, args
            assert b"Traceback" not in stream
    exported = run_cli("export", chunks, "-o", "-", env=bare_env(), text=False, timeout=None).stdout.decode().splitlines()
    assert any(json_.loads(line).get("text") == hostile for line in exported)  # the data itself is kept


@pytest.mark.slow
def test_a_stopped_inspect_leaves_no_temporary_file_and_says_so(tmp_path):
    """SIGTERM (a `timeout`, a CI job cancelled) stops `inspect` as Ctrl-C does: exit 130, one sentence,
    and its spill files (a 500 MB one was once left behind) removed."""
    import signal
    import subprocess

    from helpers import cli_env, ragsim_argv

    store = tmp_path / "store.jsonl"
    with store.open("w", encoding="utf-8") as f:
        for i in range(120_000):
            f.write(json.dumps({"page_content": f"Chunk {i}: the pilot boat leaves at nine.",
                                "metadata": {"source": f"doc{i % 300}.md"}}) + "\n")
    spills = tmp_path / "tmp"
    spills.mkdir()
    proc = subprocess.Popen(ragsim_argv("inspect", str(store)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=cli_env(TMPDIR=str(spills)))
    try:
        deadline = time.monotonic() + 60
        while not list(spills.glob("ragsim-inspect-*")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.strip() == "ragsim: stopped before the end; its temporary files were removed."
    assert list(spills.iterdir()) == []


def test_a_run_that_is_one_request_refuses_jsonl_rather_than_write_nothing(tmp_path):
    """`audit`/`eval --method hybrid` run as one request: asked for --jsonl they said nothing and wrote
    nothing; now one sentence, exit 2, and no file."""
    out = tmp_path / "out.jsonl"
    for argv in (("audit", "examples/harbour.md", "--method", "hybrid", "--jsonl", str(out)),
                 ("eval", "examples/harbour.md", "--questions", "examples/questions.json", "--method", "hybrid",
                  "--jsonl", str(out))):
        done = run_cli(*argv)
        assert done.returncode == 2 and "writes no --jsonl file" in done.stderr and "Traceback" not in done.stderr
        assert not out.exists()
