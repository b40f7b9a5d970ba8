"""Asking your own model: the prompt and the two checks (ragsim.wire.ask_checks), the client
(ragsim.host.clients.ask) against a local OpenAI-compatible server this file starts (tests/fake_openai.py),
and the command line (`ask`, `eval --ask`): one sentence and exit 2 for every failure, no traceback."""

import functools
import json
import pathlib
import signal
import socket
import subprocess
import time

import pytest

from fake_openai import FakeOpenAI
from helpers import CORE, cli_env, ctrl_c_as_a_terminal, ragsim_argv, run_cli
from ragsim.wire import ask_checks
from ragsim.host.clients import ask

ROOT = pathlib.Path(__file__).resolve().parents[2]
NEPTUNE = ("Neptune is the eighth planet from the Sun. Its rings are faint and dark, made of dust and ice. "
           "The Galle Ring is the innermost of them. It lies 42,000 km from the centre of Neptune, close to the "
           "planet's upper clouds. The Adams Ring is the outermost ring and holds bright arcs. Voyager 2 saw the "
           "rings in 1989 and sent back the first close pictures of them.")
QUESTION = "How far is the Galle Ring from the centre of Neptune?"
ANSWER = "42,000 km"


@pytest.fixture()
def api():
    with FakeOpenAI(answer=ANSWER, slow_s=2.0) as server:
        yield server


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the prompt and the checks (pure) ---------------------------------------------------------

def test_the_default_prompt_asks_for_the_context_only_and_names_the_refusal():
    text = ask_checks.prompt(ask_checks.DEFAULT_PROMPT, "CTX", "Q?")
    assert "using only the context" in text and "NOT IN CONTEXT" in text
    assert text.endswith("Context:\nCTX\n\nQuestion: Q?\nAnswer:")


def test_placeholders_are_filled_once_in_one_pass_and_a_missing_one_is_refused():
    # A context that itself holds "{question}" is sent as it is, not filled in again.
    assert ask_checks.prompt("{context}|{question}|{context}", "a {question} b", "Q") == "a {question} b|Q|a {question} b"
    with pytest.raises(ask_checks.RequestError, match=r"no \{context\}"):
        ask_checks.prompt("Just answer {question}", "CTX", "Q")
    assert ask_checks.messages("{context} {question}", "c", "q") == [{"role": "user", "content": "c q"}]


@pytest.mark.parametrize("reply, answers, expected", [
    ("It lies 42,000 km from the centre.", ["42,000 km"], True),
    ("It lies 42,000\n  KM from the centre.", ["42,000 km"], True),  # case and whitespace runs
    ("It lies 42000 km from the centre.", ["42,000 km"], False),  # nothing else forgiven
    ("Both: 42,000 km and the Adams Ring.", ["42,000 km", "Adams  ring"], True),  # every reference
    ("Only 42,000 km.", ["42,000 km", "Adams Ring"], False),
    ("anything", [], None), ("anything", ["  "], None),  # nothing marked
    # case folded, not lowered: "ß" folds to "ss", as "SS" does ("straße".lower() is not "strasse")
    ("Die Hafenstraße ist gesperrt.", ["HAFENSTRASSE"], True), ("DIE HAFENSTRASSE", ["Hafenstraße"], True),
])
def test_contains_answer(reply, answers, expected):
    assert ask_checks.contains_answer(reply, answers) is expected


@pytest.mark.parametrize("reply, expected", [
    ("NOT IN CONTEXT", True), ("not in context.", True), ("Sorry:  Not\nin   context", True),
    ("The answer is not in the context.", False), ("42,000 km", False),
])
def test_says_not_in_context(reply, expected):
    assert ask_checks.says_not_in_context(reply) is expected


def test_the_workers_call_gives_the_prompt_and_each_samples_checks():
    out = json.loads(ask_checks.page_json(json.dumps({
        "template": "{context}\n{question}", "context": "C", "question": "Q", "answers": ["42,000 km"],
        "samples": ["NOT IN CONTEXT", "It is 42,000 KM."]})))
    assert out == {"prompt": "C\nQ", "checks": [{"contains_answer": False, "not_in_context": True},
                                               {"contains_answer": True, "not_in_context": False}]}
    bad = json.loads(ask_checks.page_json(json.dumps({"template": "no slots", "context": "C", "question": "Q"})))
    assert bad["error"]["field"] == "prompt"
    assert json.loads(ask_checks.page_json("[1"))["error"]["message"]
    assert json.loads(ask_checks.page_json(json.dumps({"context": 1, "question": "Q"})))["error"]["field"] == "context"


# --- the client against the local server ------------------------------------------------------

@pytest.mark.slow
def test_the_model_list(api):
    assert ask.models(api.endpoint) == ["reader", "slow", "html", "garbage", "shape", "broken", "crash"]


@pytest.mark.slow
def test_a_completion_sends_the_messages_and_returns_the_first_choice_verbatim(api):
    messages = ask_checks.messages(ask_checks.DEFAULT_PROMPT, f"... {ANSWER} ...", QUESTION)
    assert ask.complete(api.endpoint + "/", "reader", messages, temperature=0.0) == f"From the context: {ANSWER}"
    assert ask.complete(api.endpoint, "reader", ask_checks.messages("{context}{question}", "x", "y")) == "NOT IN CONTEXT"
    first, second = api.chats()
    assert first == {"model": "reader", "messages": messages, "stream": False, "temperature": 0.0}
    assert "temperature" not in second  # the server's default when none is given


@pytest.mark.slow
def test_samples_are_one_request_each(api):
    replies = ask.sample(api.endpoint, "reader", [{"role": "user", "content": ANSWER}], 3)
    assert replies == [f"From the context: {ANSWER}"] * 3 and len(api.chats()) == 3


@pytest.mark.slow
def test_the_key_comes_from_the_environment_and_a_wrong_one_gets_the_servers_sentence(monkeypatch):
    with FakeOpenAI(key="sk-test") as server:
        with pytest.raises(ask.AskError) as e:
            ask.complete(server.endpoint, "reader", [{"role": "user", "content": "hi"}])
        assert "HTTP 401" in str(e.value) and "Incorrect API key provided" in str(e.value)
        monkeypatch.setenv("RAGSIM_TEST_KEY", "sk-test")
        key = ask.api_key("RAGSIM_TEST_KEY")
        assert ask.complete(server.endpoint, "reader", [{"role": "user", "content": "hi"}], key=key) == "NOT IN CONTEXT"
        assert ask.models(server.endpoint, key) == list(__import__("fake_openai").MODELS)
    monkeypatch.delenv("RAGSIM_TEST_KEY")
    assert ask.api_key("RAGSIM_TEST_KEY") is None


@pytest.mark.slow
def test_an_unknown_model_is_named_with_the_models_the_server_lists(api):
    with pytest.raises(ask.AskError) as e:
        ask.complete(api.endpoint, "llama9", [{"role": "user", "content": "hi"}])
    text = str(e.value)
    assert "HTTP 404" in text and "The model `llama9` does not exist" in text and "lists reader, slow" in text


@pytest.mark.slow
@pytest.mark.parametrize("model, words", [
    ("crash", ["HTTP 500", "The server had an error"]),
    ("garbage", ["did not answer with JSON"]),
    ("shape", ["without choices[0].message.content"]),
    ("broken", ["broke before the reply was complete"]),
])
def test_each_failure_is_one_sentence(api, model, words):
    with pytest.raises(ask.AskError) as e:
        ask.complete(api.endpoint, model, [{"role": "user", "content": "hi"}], timeout=10)
    text = str(e.value)
    assert all(w in text for w in words), text
    assert "\n" not in text and "Traceback" not in text


@pytest.mark.slow
def test_a_slow_reply_times_out_with_a_sentence(api):
    with pytest.raises(ask.AskError, match=r"did not answer within 0.5 s; a slow model needs a longer --timeout"):
        ask.complete(api.endpoint, "slow", [{"role": "user", "content": "hi"}], timeout=0.5)


def test_nothing_listening_and_a_bad_url():
    with pytest.raises(ask.AskError, match=r"Nothing answers at .* \(connection refused\)"):
        ask.complete(f"http://127.0.0.1:{free_port()}/v1", "reader", [{"role": "user", "content": "hi"}])
    with pytest.raises(ask.AskError, match="is not an http:// or https:// URL"):
        ask.complete("localhost:11434/v1", "reader", [])


# --- the command line -------------------------------------------------------------------------

cli = functools.partial(run_cli, cwd=CORE)  # `python -m ragsim ARGS`, run in py/


@pytest.fixture()
def neptune(tmp_path):
    doc = tmp_path / "neptune.txt"
    doc.write_text(NEPTUNE, encoding="utf-8")
    at = NEPTUNE.index(ANSWER)
    sentence = NEPTUNE.index("It lies"), NEPTUNE.index("clouds.") + len("clouds.")
    qs = {"questions": [
        {"id": "galle", "query": QUESTION, "references": [{"doc": str(doc), "start": at, "end": at + len(ANSWER)}]},
        {"id": "voyager", "query": "When did Voyager 2 see the rings?",
         "references": [{"doc": str(doc), "start": NEPTUNE.index("1989"), "end": NEPTUNE.index("1989") + 4}]}]}
    (tmp_path / "q.json").write_text(json.dumps(qs), encoding="utf-8")
    return doc, tmp_path / "q.json", sentence


@pytest.mark.slow
def test_ask_prints_the_context_each_sample_as_the_models_and_both_checks(api, neptune):
    doc = neptune[0]
    out = cli("ask", doc, "--question", QUESTION, "--endpoint", api.endpoint, "--model", "reader",
              "--answer", ANSWER, "--unit", "words", "--size", 20, "--overlap", 5, "--k", 1, "--temperature", 0)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    sent = api.chats()[0]["messages"][0]["content"]
    context = sent.split("Context:\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]
    assert f"{'-' * 72}\n{context}\n{'-' * 72}" in text  # the exact context, as sent
    assert ANSWER in context and "verdict for the answer: intact" in text
    assert text.count("the model's answer (verbatim):\nFrom the context: 42,000 km") == 3
    assert text.count("contains “42,000 km”: yes · says NOT IN CONTEXT: no") == 3
    assert "3 samples: 3 of 3 contain the marked answer, 0 of 3 say NOT IN CONTEXT." in text
    assert [c["temperature"] for c in api.chats()] == [0.0] * 3


@pytest.mark.slow
def test_ask_json_at_a_setting_that_ranks_the_answer_out(api, neptune):
    out = cli("ask", neptune[0], "--question", "Which ring holds bright arcs?", "--endpoint", api.endpoint,
              "--model", "reader", "--answer", ANSWER, "--size", 10, "--k", 1, "--samples", 2, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["verdict"]["kind"] in ("ranked_out", "cut") and ANSWER not in data["context"]
    assert data["samples"] == [{"text": "NOT IN CONTEXT", "contains_answer": False, "not_in_context": True}] * 2
    assert data["prompt"] == api.chats()[0]["messages"][0]["content"]
    assert data["context"] in data["prompt"] and len(api.chats()) == 2


@pytest.mark.slow
def test_ask_takes_the_key_from_the_named_variable_only(neptune):
    with FakeOpenAI(key="sk-local") as server:
        base = ["ask", neptune[0], "--question", QUESTION, "--endpoint", server.endpoint, "--model", "reader",
                "--samples", 1]
        refused = cli(*base, env=cli_env(OPENAI_API_KEY=""))
        assert refused.returncode == 2 and "HTTP 401" in refused.stderr
        assert cli(*base, "--api-key-env", "MY_KEY", env=cli_env(MY_KEY="sk-local")).returncode == 0
        assert cli(*base, env=cli_env(OPENAI_API_KEY="sk-local")).returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("model, endpoint, words", [
    ("crash", None, "HTTP 500"), ("garbage", None, "did not answer with JSON"), ("nope", None, "HTTP 404"),
    ("reader", "refused", "connection refused"), ("reader", "ftp://x/v1", "is not an http://"),
])
def test_ask_fails_with_one_line_and_exit_2(api, neptune, model, endpoint, words):
    url = {None: api.endpoint, "refused": f"http://127.0.0.1:{free_port()}/v1"}.get(endpoint, endpoint)
    out = cli("ask", neptune[0], "--question", QUESTION, "--endpoint", url, "--model", model, "--json")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("ragsim ask: ") and words in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


@pytest.mark.slow
def test_a_slow_model_is_stopped_with_ctrl_c_in_one_line(neptune):
    with FakeOpenAI(slow_s=30.0) as server:
        proc = subprocess.Popen(ragsim_argv("ask", neptune[0], "--question", QUESTION, "--endpoint", server.endpoint,
                                            "--model", "slow"), cwd=CORE, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_a_terminal)
        for _ in range(200):  # until the first sample's request has reached the server
            if server.chats():
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and err == "ragsim ask: stopped (Ctrl-C) before every sample was asked.\n"
    assert "Context sent" in out and "Sample 1" not in out


@pytest.mark.slow
def test_ask_refuses_a_prompt_without_its_context_and_a_bad_setting(api, neptune, tmp_path):
    (tmp_path / "p.txt").write_text("Answer {question}", encoding="utf-8")
    out = cli("ask", neptune[0], "--question", QUESTION, "--endpoint", api.endpoint, "--model", "reader",
              "--prompt-file", tmp_path / "p.txt")
    assert out.returncode == 2 and "no {context}" in out.stderr and api.chats() == []
    out = cli("ask", neptune[0], "--question", QUESTION, "--endpoint", api.endpoint, "--model", "reader",
              "--size", 5, "--overlap", 5)
    assert out.returncode == 2 and "overlap" in out.stderr and "Traceback" not in out.stderr and api.chats() == []


@pytest.mark.slow
def test_eval_ask_asks_every_question_with_its_own_context(api, neptune):
    doc, qs, _ = neptune
    out = cli("eval", doc, "--questions", qs, "--unit", "words", "--size", 20, "--overlap", 5, "--k", 1, "--ask",
              "--endpoint", api.endpoint, "--model", "reader", "--samples", 2)
    assert out.returncode == 0, out.stderr
    chats = api.chats()
    assert len(chats) == 4 and [c["messages"][0]["content"].rsplit("Question: ", 1)[1] for c in chats[::2]] == \
        [f"{QUESTION}\nAnswer:", "When did Voyager 2 see the rings?\nAnswer:"]
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["id", "question"]  # eval's own table first
    galle = next(ln for ln in lines if ln.startswith("galle ") and "of 2" in ln)
    assert galle.split() == ["galle", "intact", "2", "of", "2", "0", "of", "2"]
    assert out.stdout.count("the model's answer (verbatim):") == 4


@pytest.mark.slow
def test_eval_ask_json_and_its_refusals(api, neptune):
    doc, qs, _ = neptune
    out = cli("eval", doc, "--questions", qs, "--size", 20, "--k", 1, "--ask", "--endpoint", api.endpoint,
              "--model", "reader", "--samples", 1, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [a["id"] for a in data["ask"]] == ["galle", "voyager"] and data["question_stats"]["count"] == 2
    assert all(a["context"] in c["messages"][0]["content"] for a, c in zip(data["ask"], api.chats()))
    missing = cli("eval", doc, "--questions", qs, "--ask", "--model", "reader")
    assert missing.returncode == 2 and "--ask needs --endpoint" in missing.stderr
    down = cli("eval", doc, "--questions", qs, "--ask", "--endpoint", f"http://127.0.0.1:{free_port()}/v1",
               "--model", "reader")
    assert down.returncode == 2 and down.stderr.count("\n") == 1 and down.stderr.startswith("ragsim eval: ")
    assert "connection refused" in down.stderr and "Traceback" not in down.stderr


@pytest.mark.slow
def test_eval_ask_over_a_streamed_directory_sends_one_requests_contexts(api, neptune, tmp_path):
    """`eval DIR --ask` streams the corpus (a directory, which one request cannot read), then
    reads each question's chunks from their files: the contexts one request sends, chunk for chunk."""
    from ragsim.wire.api import simulate

    doc, qs, _ = neptune
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / doc.name).write_text(doc.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "other.txt").write_text("Uranus has thirteen rings. Its moons are named for Shakespeare's characters.",
                                      encoding="utf-8")
    asked = json.loads(qs.read_text(encoding="utf-8"))
    for q in asked["questions"]:
        q["references"][0]["doc"] = doc.name
    (tmp_path / "q2.json").write_text(json.dumps(asked), encoding="utf-8")
    out = cli("eval", folder, "--questions", tmp_path / "q2.json", "--unit", "words", "--size", 12, "--overlap", 3, "--k", 2, "--ask",
              "--endpoint", api.endpoint, "--model", "reader", "--samples", 1, "--json", "--quiet")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert "skipped" in data  # the streamed run's answer
    docs = [{"id": str(folder / n), "title": n, "text": (folder / n).read_text(encoding="utf-8")}
            for n in (doc.name, "other.txt")]
    for q, a in zip(asked["questions"], data["ask"]):
        one = simulate({"documents": docs, "query": q["query"], "retrieval": {"k": 2},
                        "chunking": {"strategy": "window", "unit": "words", "size": 12, "overlap": 3}})
        assert a["context"] == one["context"] and "\n\n" in a["context"]
    assert [c["messages"][0]["content"] for c in api.chats()] == \
        [ask_checks.prompt(ask_checks.DEFAULT_PROMPT, a["context"], q["query"]) for q, a in zip(asked["questions"], data["ask"])]


def test_the_pages_default_prompt_is_the_cores():
    source = (ROOT / "assets" / "js" / "ask-client.js").read_text(encoding="utf-8")
    page = source.split("export const DEFAULT_PROMPT = `", 1)[1].split("`;", 1)[0]
    assert page == ask_checks.DEFAULT_PROMPT
