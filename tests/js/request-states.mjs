// A few page states for the request tests: the example, a question set with the panels' questions,
// hybrid with a multi-span answer and a fact, your index's stored chunks, a token splitter counted
// by tiktoken with your own model, and the embedded page. Short documents, so the recorded
// requests stay readable.

const ONE = "Fog closes the harbour at dawn. The pilot boat leaves at nine. Tickets cost four euros at the kiosk.";
const TWO = "🙂 Ferry times: the first ferry leaves at seven. The last ferry returns at ten. Bikes ride free.";

export function pageStates(defaultState) {
  const base = () => {
    const s = defaultState();
    s.docs = [{ id: "a", title: "Harbour", text: ONE }, { id: "b", title: "Ferry", text: TWO }];
    s.sel = 0;
    s.doc = ONE;
    s.q = "When does the pilot boat leave?";
    s.size = 8;
    s.overlap = 2;
    s.span = { doc: "a", start: ONE.indexOf("The pilot"), end: ONE.indexOf("nine.") + 5 };
    return s;
  };
  const states = {};
  states.example = { state: defaultState(), embed: false };
  states.plain = { state: base(), embed: false };
  const set = base();
  set.find = "ferry";
  set.expand = "1";
  set.questions = [
    { id: "1", query: "first ferry", refs: [{ doc: "b", start: TWO.indexOf("the first"), end: TWO.indexOf("seven.") + 6 }] },
    { id: "2", query: "ticket price", refs: [{ doc: "a", start: ONE.indexOf("Tickets"), end: ONE.length }] },
    { id: "3", query: "gone", refs: [{ doc: "zzz", start: 0, end: 3 }] },
  ];
  set.overlaps = [0, 1, 3];
  states.set = { state: set, embed: false };
  const hybrid = base();
  Object.assign(hybrid, { method: "hybrid", w_bm25: 0.3, w_dense: 0.7, stem: true, stopwords: true, expand: "section", sel: 1, doc: TWO });
  hybrid.spans = [{ ...hybrid.span }, { doc: "b", start: TWO.indexOf("The last"), end: TWO.indexOf("ten.") + 4 }];
  hybrid.fact = { doc: "a", name: { start: ONE.indexOf("Tickets"), end: ONE.indexOf("Tickets") + 7 }, value: { start: ONE.indexOf("four"), end: ONE.indexOf("euros") + 5 } };
  hybrid.yourReranker = { endpoint: "http://127.0.0.1:9/rerank", model: "tiny", depth: 10 };
  states.hybrid = { state: hybrid, embed: false };
  const stored = base();
  stored.index = { name: "chunks.jsonl", extents: { a: [[0, 30], [31, 62]], b: [[0, 40]], c: [[0, 5]] }, result: {}, rebuiltAll: false };
  stored.indexMode = "index";
  states.stored = { state: stored, embed: false };
  const tokens = base();
  Object.assign(tokens, { strategy: "langchain-token", size: 12, overlap: 3, count: "cl100k_base", method: "dense", model: "yours",
    yourModel: { endpoint: "http://127.0.0.1:9/v1", model: "mini" }, find: "  ", price: 5 });
  states.tokens = { state: tokens, embed: false };
  const embed = base();
  embed.find = "ferry";
  embed.questions = set.questions;
  states.embed = { state: embed, embed: true };
  return states;
}
