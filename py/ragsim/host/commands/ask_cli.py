"""`python -m ragsim ask FILE... --question Q --endpoint URL --model M [--samples 3] [--temperature T]
[--answer TEXT] [--prompt-file F] [--api-key-env NAME] [--timeout S] [--strategy/--unit/--size/--overlap/--k
...as eval takes them] [--json]`.

Retrieves the context of the question at one setting, exactly as the simulator does (ragsim.api), sends
it to an OpenAI-compatible chat endpoint (ragsim.host.clients.ask) and prints that context, each sample
verbatim as the model's answer, and two plain checks per sample (ragsim.wire.ask_checks): whether it
contains the marked answer and whether it says NOT IN CONTEXT. `eval ... --ask` does the same for
every question of a set (`ask_set`). The endpoint may be anywhere; a key comes from the environment
variable --api-key-env names (OPENAI_API_KEY by default), never from a flag or a file.
Exit status 0; 2 for a refused setting or an endpoint that gave no answer (one line on stderr); 1 for
files that cannot be read; 130 when stopped with Ctrl-C (a slow model: the samples so far are shown).
"""

import argparse
import json
import sys

from ragsim.wire import ask_checks
from ragsim.wire.api import Session, simulate
from ragsim.errors import RequestError
from ragsim.host.commands.cli_common import (
    Parser, add_setting_arguments, read_documents, setting_fields)
from ragsim.host.clients.files import read_text_file, unreadable
from ragsim.host.clients.ask import DEFAULT_TIMEOUT, AskError, api_key, check_endpoint, sample
from ragsim.host.commands import cli_rerank, cli_retrieval, console

PROG = "ragsim ask"
RULE = "-" * 72


def add_model_arguments(parser: argparse.ArgumentParser, required: bool) -> None:
    """The model to ask and how (shared with `eval --ask`, where none of them is required)."""
    parser.add_argument("--endpoint", required=required, help="The OpenAI-compatible base URL, e.g. "
                        "http://localhost:11434/v1 (Ollama).")
    parser.add_argument("--model", required=required, help="The model's name as the server knows it.")
    parser.add_argument("--samples", type=int, default=3, help="How many answers to ask for, one request each (default 3).")
    parser.add_argument("--temperature", type=float, default=None, help="The sampling temperature (the server's "
                        "default when not given).")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="The seconds one sample may take.")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="The environment variable holding the "
                        "key, if the server needs one (default OPENAI_API_KEY).")
    parser.add_argument("--prompt-file", default=None, help="A prompt template with {context} and {question} "
                        "(default: the prompt printed with each run).")


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m ragsim ask", description="What your own model answers from exactly the context "
                    "ragsim would send it, for the files at one setting (an OpenAI-compatible server you name).")
    add_setting_arguments(parser)
    parser.add_argument("--question", required=True, help="The question asked (and searched with).")
    parser.add_argument("--answer", default=None, help="The answer's text, to check each sample against (and, "
                        "when found in a document, to give the verdict).")
    add_model_arguments(parser, required=True)
    parser.add_argument("--json", action="store_true", help="Print the context, samples and checks as JSON.")
    return parser


class Asker:
    """The model and the prompt of one run, checked before anything is asked."""

    def __init__(self, args):
        if args.samples < 1 or args.samples > 100:
            raise AskError("--samples takes a whole number from 1 to 100.")
        if args.timeout <= 0:
            raise AskError("--timeout takes a number of seconds above 0.")
        self.endpoint = check_endpoint(args.endpoint)
        self.model, self.samples, self.temperature, self.timeout = args.model, args.samples, args.temperature, args.timeout
        self.key = api_key(args.api_key_env)
        self.template = ask_checks.DEFAULT_PROMPT
        if args.prompt_file is not None:
            try:
                self.template = read_text_file(args.prompt_file)
            except (OSError, ValueError) as e:
                raise AskError(f"The prompt file cannot be read: {unreadable(e)}.") from None
        try:
            ask_checks.prompt(self.template, "", "")  # refused now, not after the context is built
        except RequestError as e:
            raise AskError(e.message) from None

    def ask(self, context: str, question: str, answers: list[str], each=None) -> list[dict]:
        """Every sample of one question, each {"text", "contains_answer", "not_in_context"}; `each(i,
        sample)` sees each as it arrives (a slow model's first answer is shown before the last)."""
        messages = ask_checks.messages(self.template, context, question)
        out = []
        for i in range(self.samples):
            [text] = sample(self.endpoint, self.model, messages, 1, temperature=self.temperature, key=self.key,
                            timeout=self.timeout)
            out.append({"text": text, **ask_checks.check(text, answers)})
            if each:
                each(i, out[-1])
        return out

    def header(self) -> str:
        t = "the server's default temperature" if self.temperature is None else f"temperature {self.temperature:g}"
        return f"Model {self.model} at {self.endpoint}, {self.samples} sample{'s' * (self.samples != 1)}, {t}"


def _yes(value) -> str:
    return "(no answer marked)" if value is None else "yes" if value else "no"


def sample_lines(i: int, n: int, s: dict, answers: list[str]) -> str:
    """One sample, verbatim, labelled as the model's, with both checks."""
    marked = " + ".join(f"“{a}”" for a in answers) or "the marked answer"
    return (f"\nSample {i + 1} of {n}, the model's answer (verbatim):\n{s['text']}\n"
            f"  contains {marked}: {_yes(s['contains_answer'])} · says NOT IN CONTEXT: {_yes(s['not_in_context'])}")


def summary(samples: list[dict]) -> str:
    n = len(samples)
    hits = [s["contains_answer"] for s in samples]
    found = "no answer marked" if hits and hits[0] is None else f"{sum(bool(h) for h in hits)} of {n} contain the marked answer"
    return f"{n} samples: {found}, {sum(s['not_in_context'] for s in samples)} of {n} say NOT IN CONTEXT."


def _locate(documents: list[dict], answer: str | None) -> dict | None:
    """The marked answer as a span: its first occurrence in the documents (None when not found)."""
    if not answer or not answer.strip():
        return None
    for d in documents:
        at = d["text"].find(answer.strip())
        if at >= 0:
            return {"doc": d["id"], "start": at, "end": at + len(answer.strip())}
    return None


def _context_request(args, documents: list[dict], question: str, span: dict | None) -> dict:
    chunking, retrieval = setting_fields(args)
    return {"documents": documents, "query": question, "chunking": chunking, "retrieval": retrieval, "span": span}


def _verdict_line(response: dict, span: dict | None, answer: str | None) -> str:
    if not answer:
        return "no answer given (--answer TEXT): the samples are checked for NOT IN CONTEXT only"
    if span is None:
        return "the answer's text is in no document as given, so there is no verdict"
    v = response["verdict"]
    return (f"verdict for the answer: {cli_rerank.verdict_words(v)} "
            f"(best rank {v['best_rank'] if v['best_rank'] is not None else '-'})")


def _out(text: str) -> None:
    console.out(text)  # a model's reply may hold a terminal's escape sequences: written escaped


def run_ask(args) -> int:
    asker = Asker(args)
    try:
        documents = read_documents(args)
    except (OSError, ValueError) as e:
        console.say(f"{PROG}: {unreadable(e)}.")
        return 1
    span = _locate(documents, args.answer)
    response = simulate(_context_request(args, documents, args.question, span))
    if "error" in response:
        console.say(f"{PROG}: {response['error']['field']}: {response['error']['message']}")
        return 2
    context, answers = response["context"], [args.answer] if args.answer and args.answer.strip() else []
    ranked = [c["number"] for c in sorted((c for c in response["chunks"] if c["retrieved"]), key=lambda c: c["rank"])]
    if not args.json:
        _out(f"Question: {args.question}\n{_verdict_line(response, span, args.answer)}\n"
             f"Context sent ({len(context):,} characters: chunks {', '.join(f'#{n}' for n in ranked) or 'none'} in rank "
             f"order, joined by a blank line):\n{RULE}\n{context}\n{RULE}\n"
             f"Prompt ({'the default' if args.prompt_file is None else args.prompt_file}; the context and the question "
             f"go where it says {{context}} and {{question}}):\n{RULE}\n{asker.template}\n{RULE}\n{asker.header()}")
    each = None if args.json else (lambda i, s: _out(sample_lines(i, asker.samples, s, answers)))
    samples = asker.ask(context, args.question, answers, each)
    if args.json:
        _out(json.dumps({"question": args.question, "answer": args.answer, "verdict": response["verdict"] if span else None,
                         "context": context, "retrieved": ranked, "endpoint": asker.endpoint, "model": asker.model,
                         "temperature": asker.temperature,
                         "prompt": ask_checks.prompt(asker.template, context, args.question), "samples": samples},
                        ensure_ascii=False, indent=1))
    else:
        _out("\n" + summary(samples))
    return 0


def ask_set(args, request: dict, response: dict, table: str | None) -> int:
    """`eval --ask`: every question of the set asked with its own context at the set's setting; the
    eval table (plain) or response (JSON, with `"ask"` added) printed with the samples."""
    try:
        asker = Asker(args)
    except AskError as e:
        return _refuse(e, "ragsim eval")
    texts = {d["id"]: d["text"] for d in request["documents"]}
    session = Session()

    def contexts():
        for q in request["questions"]:
            answers = [texts[r["doc"]][r["start"]:r["end"]].strip() for r in q["references"]]
            one = {"documents": request["documents"], "query": q["query"], "chunking": request["chunking"],
                   "retrieval": request["retrieval"]}
            yield q["query"], simulate(one, session)["context"], answers

    return ask_each(asker, contexts(), response, table)


def ask_each(asker, contexts, response: dict, table: str | None) -> int:
    """Each question of `response` asked with its (query, context, reference texts) from `contexts`,
    in order (one request's, or a streamed run's: `host.jobs.eval_run.contexts`); printed as `ask_set` says."""
    asked = []
    if table is not None:
        _out(f"{table}\n\n{asker.header()}, each question with the context it retrieves:")
    try:
        for (query, context, answers), scored in zip(contexts, response["questions"]):
            if table is not None:
                _out(f"\n{RULE}\n{scored['id']} ({scored['verdict']}): {query}\n"
                     f"context sent: {len(context):,} characters")
            each = None if table is None else (lambda i, s, a=answers: _out(sample_lines(i, asker.samples, s, a)))
            samples = asker.ask(context, query, answers, each)
            asked.append({"id": scored["id"], "verdict": scored["verdict"], "context": context, "samples": samples})
    except AskError as e:
        return _refuse(e, "ragsim eval")
    except KeyboardInterrupt:
        return _stopped("ragsim eval")
    if table is None:
        _out(json.dumps({**response, "ask": asked}, ensure_ascii=False, indent=1))
        return 0
    _out(f"\n{RULE}\n{'question':<12} {'verdict':<10} {'contain the answer':>18} {'say NOT IN CONTEXT':>18}")
    for a in asked:
        n = len(a["samples"])
        _out(f"{a['id'][:12]:<12} {a['verdict']:<10} {sum(bool(s['contains_answer']) for s in a['samples']):>13} of {n} "
             f"{sum(s['not_in_context'] for s in a['samples']):>13} of {n}")
    return 0


def _stopped(prog: str = PROG) -> int:
    console.say(f"{prog}: stopped (Ctrl-C) before every sample was asked.")
    return 130


def _refuse(e: Exception, prog: str = PROG) -> int:
    console.say(f"{prog}: {e}")
    return 2


def main(argv) -> int:
    args = _parser().parse_args(argv)
    if cli_retrieval.refused_endpoint(args, PROG):
        return 2
    try:
        return run_ask(args)
    except AskError as e:
        return _refuse(e)
    except KeyboardInterrupt:
        return _stopped()
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of ours
        sys.stderr.close()
        return 0
