// One JSON POST to a model server on this computer (your embedding model, your reranker): the
// endpoint checked before, by the ask panel's own check (ask-client.js localEndpoint). One request
// in flight per endpoint at a time (`oneAtATime`); HTTP 429 or 503 retried after Retry-After, or
// 1, 2, 4 s, then a sentence; a redirect never followed; a request past its time or stopped is
// aborted. Every bad reply is one sentence (an Error with `said: true`); `words` names what to press
// again and what a 401 or 404 usually means.
//
//   const data = await postJson(target, body, { timeoutS: 120, holder: this, again: "“Use this model”",
//     hints: { 404: " (check the model's name)" }, nan: "… NaN …", shape: "an OpenAI-compatible endpoint" });

import { serverMessage } from "./ask-client.js";

const RETRIES = 3; // after HTTP 429 or 503
const MAX_WAIT_S = 30; // Retry-After honoured, at most
const inFlight = new Map(); // endpoint -> the promise of its request now in flight

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const problem = (message) => Object.assign(new Error(message), { said: true });
const closed = (text) => (/[.!?…]$/.test(text) ? text : `${text}.`); // a server's own words end as a sentence

/** `send()` after the request in flight to `url` (one at a time per endpoint). */
export async function oneAtATime(url, send) {
  const before = inFlight.get(url) || Promise.resolve();
  const mine = before.catch(() => {}).then(send);
  inFlight.set(url, mine);
  try { return await mine; } finally { if (inFlight.get(url) === mine) inFlight.delete(url); }
}

/** The JSON reply of POST `body` to `target`, retried while busy; a sentence thrown for anything
 * else. `holder.abort` is set to the request's AbortController (Stop aborts it with "stopped"). */
export async function postJson(target, body, words) {
  for (let attempt = 0; ; attempt++) {
    const res = await post(target, body, words);
    if ((res.status === 429 || res.status === 503) && attempt < RETRIES) {
      const after = Number(res.headers.get("Retry-After"));
      await sleep(1000 * (Number.isFinite(after) && after >= 0 ? Math.min(after, MAX_WAIT_S) : 2 ** attempt));
      continue;
    }
    const text = await res.text();
    if (res.status === 429 || res.status === 503) {
      throw problem(`${target} still answered HTTP ${res.status} (too busy) after ${RETRIES} tries; wait a moment or let the server take more requests, then press ${words.again} again.`);
    }
    if (!res.ok) {
      const hint = { 401: " (this page sends no key: use a local server that needs none)", ...words.hints }[res.status] || "";
      throw problem(closed(`${target} answered HTTP ${res.status}${hint}: ${serverMessage(text) || res.statusText || "no message"}`));
    }
    try { return JSON.parse(text); } catch {
      if (/[[,:]\s*-?(NaN|Infinity)\s*[\],}]/.test(text)) throw problem(words.nan); // Python's json writes them bare
      throw problem(`${target} did not answer with JSON (it sent ${text.length.toLocaleString("en")} characters of something else); is it ${words.shape}?`);
    }
  }
}

/** The POST itself: a redirect is never followed (the page asks this computer only), a request
 * past `timeoutS` or stopped is aborted. */
async function post(target, body, { timeoutS, holder, readme }) {
  holder.abort = new AbortController();
  const own = holder.abort, timer = setTimeout(() => own.abort("timeout"), timeoutS * 1000);
  try {
    const res = await fetch(target, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body), redirect: "manual", signal: own.signal,
      credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store" });
    if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
      throw problem(`${target} redirected the request to another address, which this page does not follow (it asks models on this computer only, so your documents never leave it); give the endpoint the server redirects to if that is on this computer.`);
    }
    return res;
  } catch (error) {
    if (error.said) throw error;
    if (own.signal.aborted && own.signal.reason === "timeout") throw problem(`${target} did not answer within ${timeoutS} s; is the model loaded? Try again, or use a faster model.`);
    if (own.signal.aborted) throw own.signal.reason;
    throw problem(`Nothing answered at ${target}, or it did not allow this page to read it (CORS): start the model's server and let it accept this page's origin (for Ollama, OLLAMA_ORIGINS; README, “${readme}”).`);
  } finally {
    clearTimeout(timer);
  }
}
