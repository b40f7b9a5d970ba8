// "Copy as command line" (item 15): the request the page sends for what is on screen and
// the command that gives the same numbers from a checkout of ragsim (docs/cli.md): the core's own
// `python -m ragsim`, run by the project's Python, with the request as a here-document.
//
// The request is the page's (in requests.js commandRequest), as the worker is sent it less the page's wire fields
// (`wire`, `scores`) and the cosines the page's own dense model computed: the command line embeds
// with the same model file (SPEC section 10).

import { $ } from "./dom.js";
import { commandRequest } from "./requests.js";

export const PYTHON = ".venv/bin/python"; // made by `python3 build.py test` in the checkout (README)
const END = "RAGSIM_REQUEST"; // the here-document's end; JSON.stringify puts the request on one line

/** The shell command (with its request) that gives the numbers of `request` in a terminal. */
export function commandLine(request) {
  const { wire: _w, scores: _s, ...sent } = request;
  if (sent.retrieval) {
    const { similarities: _a, question_similarities: _b, ...retrieval } = sent.retrieval;
    if (retrieval.rerank) retrieval.rerank = { endpoint: retrieval.rerank.endpoint, model: retrieval.rerank.model, depth: retrieval.rerank.depth };
    sent.retrieval = retrieval;
  }
  return `${PYTHON} -m ragsim <<'${END}'\n${JSON.stringify(sent)}\n${END}\n`;
}

/** The button: copies the current state's command through share.share (its fallback box included). */
export function attachCopyCommand({ store, share }) {
  const button = $("copy-command");
  if (!button) return;
  // + your reranker, as the command line reaches it (the page's own scores left out)
  const request = () => commandRequest(store.state, { embed: store.embed });
  button.addEventListener("click", () => share.share(commandLine(request()),
    "Command line copied: run it in a ragsim checkout (after python3 build.py test) for the same numbers as JSON.",
    button));
}
