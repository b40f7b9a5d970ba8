// Python's boot, as the worker reports it ({type: "status", stage}): the progress bar and its line,
// and what the page says when Python cannot be loaded.

import { $ } from "../dom.js";
import { renderVerdictFailure } from "./verdict.js";

// The steps of the load, in the order they usually come; the bar never goes back (the runtime's
// files may arrive in another order), only a restart starts it again.
const STAGES = {
  runtime: [5, "Loading the Python runtime…"],
  "runtime-lock": [10, "Loading the Python runtime: its package list has arrived…"],
  "runtime-script": [20, "Loading the Python runtime: its script has arrived, its WebAssembly is on its way…"],
  "runtime-stdlib": [35, "Loading the Python runtime: its standard library has arrived…"],
  "runtime-wasm": [65, "Starting Python: the runtime's WebAssembly is compiled…"],
  snapshot: [40, "Restoring Python as this browser kept it…"],
  core: [85, "Installing the ragsim core…"],
  ready: [100, "Python is ready."],
};
const SLOW_BOOT_MS = 90_000;
// While a worker lost by the supervisor is replaced: why ("a memory error"), for every stage's line.
let restarting = null;

/** A worker was lost and a fresh one boots: the boot line says so, then follows its stages. */
export function renderRestart(reason) {
  restarting = reason || "an error";
  $("boot").classList.remove("failed");
  $("boot-progress").hidden = false;
  $("boot-progress").value = 0;
  renderBoot({ stage: "runtime" });
}

/** Show a boot stage. */
export function renderBoot({ stage, message }) {
  const text = $("boot-text"), bar = $("boot-progress");
  if (stage === "ready" || stage === "failed") restarting = null;
  if (stage === "failed") {
    $("boot").classList.add("failed");
    bar.hidden = true;
    text.textContent = `Python could not be loaded, so nothing can be computed: ${message || "no reason was given"}`;
    renderVerdictFailure("Python could not be loaded", message || "The simulator's worker failed to start.");
    return;
  }
  const [value, words] = STAGES[stage] || [Number(bar.value) + 5, `Loading (${stage})…`];
  bar.value = Math.max(Number(bar.value), value);
  // "Restarting Python after a memory error: loading the Python runtime…"
  text.textContent = restarting ? `Restarting Python after ${restarting}: ${words[0].toLowerCase()}${words.slice(1)}` : words;
}

/** Pyodide does not always reject when its runtime cannot be fetched; say so instead of waiting
 * silently. `stillLoading()` is asked when the time is up. */
export function watchSlowBoot(stillLoading) {
  setTimeout(() => {
    if (stillLoading()) {
      $("boot-text").textContent = "Python has not finished loading after 90 seconds: the connection may be slow, " +
        "or something (a proxy, an extension) is blocking the Pyodide files. The browser console has details.";
    }
  }, SLOW_BOOT_MS);
}
