// Asking your own model, the page's client: one OpenAI-compatible chat-completions
// request per sample (POST {endpoint}/chat/completions, as ragsim.host.ask does on the command line),
// to a server on this computer only, stoppable with an AbortController. Every failure is one
// sentence; nothing here touches the DOM.
//
// Only localhost and 127.0.0.1 may be asked: the page's Content-Security-Policy allows
// `connect-src 'self' http://localhost:* http://127.0.0.1:*` and nothing else, so a document never
// leaves this computer. [::1] is refused with a sentence too: a policy cannot name an IPv6 address
// (CSP's host-source has no IPv6 form), so the browser would block it anyway.

// ragsim.wire.ask_checks.DEFAULT_PROMPT, the same text (tests/unit/test_ask.py holds them equal).
export const DEFAULT_PROMPT = `Answer the question using only the context below. If the context does not contain the answer, reply with exactly NOT IN CONTEXT and nothing else.

Context:
{context}

Question: {question}
Answer:`;

export const LOCAL_HOSTS = ["localhost", "127.0.0.1"];
export const SAMPLE_TIMEOUT_S = 300; // one sample; a local model on a CPU can be slow, and Stop ends it sooner
const SHOWN = 200; // characters of a server's own error message quoted

/** {url} (no trailing slash) for an endpoint on this computer, or {problem}: one sentence. */
export function localEndpoint(text) {
  const raw = String(text || "").trim();
  if (!raw) return { problem: "Type the endpoint of a model server on this computer, e.g. http://localhost:11434/v1 (Ollama)." };
  let url;
  try { url = new URL(raw); } catch { url = null; }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return { problem: `“${raw}” is not an http:// address; type the server's OpenAI-compatible base URL, e.g. http://localhost:11434/v1.` };
  }
  if (url.hostname === "[::1]") {
    return { problem: "The page can reach localhost and 127.0.0.1 only (a page's policy cannot name [::1]); use http://127.0.0.1 with the same port." };
  }
  if (!LOCAL_HOSTS.includes(url.hostname) || url.username || url.password) {
    return { problem: `The page asks models on this computer only (localhost or 127.0.0.1), so your documents never leave it; ${url.host} is not. The command line (python -m ragsim ask) can reach any endpoint.` };
  }
  return { url: raw.replace(/\/+$/, "") };
}

/** A server's own error text: OpenAI's {"error": {"message"}}, Ollama's {"error": "..."}, or the body. */
export function serverMessage(body) {
  let text = body.trim();
  try {
    const data = JSON.parse(text);
    let err = data && (data.error ?? data.detail ?? data.message);
    if (err && typeof err === "object") err = err.message;
    if (typeof err === "string" && err.trim()) text = err.trim();
  } catch { /* not JSON: the body itself */ }
  text = text.replace(/\s+/g, " ");
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

/** The first choice's text of a chat-completions reply, or null for another shape. */
export function contentOf(data) {
  const first = data && Array.isArray(data.choices) ? data.choices[0] : null;
  const content = first && first.message ? first.message.content : null;
  return typeof content === "string" ? content : null;
}

/** One sample: {text} or {problem} (one sentence), or {stopped: true} when `signal` aborted it. */
export async function chatOnce({ url, model, messages, temperature, signal, timeoutS = SAMPLE_TIMEOUT_S }) {
  const target = `${url}/chat/completions`;
  const body = { model, messages, stream: false };
  if (temperature !== null && temperature !== undefined) body.temperature = temperature;
  const own = new AbortController();
  const stop = () => own.abort("stopped");
  if (signal) { if (signal.aborted) stop(); else signal.addEventListener("abort", stop, { once: true }); }
  const timer = setTimeout(() => own.abort("timeout"), timeoutS * 1000);
  const policy = policyWatch();
  try {
    let res;
    try {
      res = await fetch(target, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
        signal: own.signal, credentials: "omit", referrerPolicy: "no-referrer", cache: "no-store" });
    } catch (err) {
      const stopped = failed(own, err, target, timeoutS);
      if (stopped) return stopped;
      // the endpoint itself is on this computer (localEndpoint), so a connection the policy blocked
      // is where it redirected the request (the browser names only the first address)
      if (await policy.blocked()) return { problem: `${target} redirected the request to another address, which this page's policy does not let it reach (the page asks models on this computer only, so your documents never leave it); give the endpoint the server redirects to if that is on this computer, or ask from the command line (python -m ragsim ask).` };
      return { problem: `Nothing answered at ${target}, or it did not allow this page to read it (CORS): start the model's server and let it accept this page's origin (for Ollama, OLLAMA_ORIGINS; README, “Ask your own model”).` };
    }
    let text;
    try { text = await res.text(); } catch (err) {
      return failed(own, err, target, timeoutS) || { problem: `The connection to ${target} broke before the reply was complete; check the server's log.` };
    }
    if (!res.ok) {
      const hint = { 401: " (this page sends no key: use a local server that needs none)", 404: " (check the model's name and that the endpoint ends in /v1)" }[res.status] || "";
      return { problem: `${target} answered HTTP ${res.status}${hint}: ${serverMessage(text) || res.statusText || "no message"}` };
    }
    let data;
    try { data = JSON.parse(text); } catch {
      return { problem: `${target} did not answer with JSON (it sent ${text.length.toLocaleString("en")} characters of something else); is it an OpenAI-compatible endpoint?` };
    }
    const content = contentOf(data);
    if (content === null) return { problem: `${target} answered JSON without choices[0].message.content text; is it an OpenAI-compatible chat-completions endpoint?` };
    return { text: content };
  } finally {
    clearTimeout(timer);
    policy.stop();
    if (signal) signal.removeEventListener("abort", stop);
  }
}

/** The page's policy watched while one request runs: `blocked()` is the address the browser names
 * for a connection the policy kept from leaving (a redirect to another host: fetch itself only says
 * "Failed to fetch"), or null. The event may come just after the fetch fails, so `blocked()` waits
 * for it a moment (where there is a page). */
function policyWatch() {
  const seen = [];
  let wake = null;
  const listen = (e) => {
    if (String(e.effectiveDirective || e.violatedDirective || "").startsWith("connect-src")) {
      seen.push(e.blockedURI);
      if (wake) wake();
    }
  };
  const page = typeof globalThis.addEventListener === "function";
  if (page) globalThis.addEventListener("securitypolicyviolation", listen);
  return {
    async blocked(waitMs = 300) {
      if (!seen.length && page) await new Promise((resolve) => { wake = resolve; setTimeout(resolve, waitMs); });
      return seen[0] || null;
    },
    stop() { if (page) globalThis.removeEventListener("securitypolicyviolation", listen); },
  };
}

/** The answer for an aborted request: stopped by the user, or out of time; null for another failure. */
function failed(own, err, target, timeoutS) {
  if (!own.signal.aborted) return null;
  if (own.signal.reason === "timeout") return { problem: `${target} did not answer within ${timeoutS} s; press Ask again, or use a faster model.` };
  return { stopped: true };
}
