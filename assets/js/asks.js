// Work at rest: every request the page sends once the controls stop moving is an ask declared
// here, run by one scheduler with one rest signal and one priority order. The drag's own request
// is not an ask: the Computer sends it at once through the worker client's latest-wins gate, and
// the page is not at rest while it is in flight.
//
//   const asks = new Asks();
//   asks.moved();                              // a control moved (the page root calls it)
//   const reply = await asks.track(gate.submit(message));  // the drag's request: not at rest meanwhile
//   asks.on("rest", () => ...);                // the page came to rest: no move, nothing in flight, REST_MS
//   await asks.rest();                         // resolves at the next rest
//   const reply = await asks.ask("sweep", key, () => simulate(request));
//
// An ask runs at rest (at once when the page rests already), the most urgent lane first (PRIORITY:
// the dense client's job order, which its embedding jobs follow too), so at rest the worker is sent
// the question set before the panels and the panels before the map. Asked again with the same lane
// and key while queued or running, an ask is merged: one call, one reply for both. A lane runs one
// ask at a time, and holds at most one queued: a newer ask replaces it (the replaced one resolves
// {dropped: true}). A lane asked with {latest: true} does not wait for its running ask: the newer
// one starts, and the older one's answer is its caller's to ignore (its embedding, if any, is
// cancelled by the dense client's own lane).

export const REST_MS = 120; // no move and nothing in flight this long: the page rests

// The one priority order: lower first. The dense client's embedding jobs take theirs from here.
export const PRIORITY = {
  main: 0, // the setting on screen (the drag itself; its embedding)
  rerank: 0, // your reranker's scores of the setting on screen
  find: 0, // a phrase typed in the find box, taken once the typing rests (the panels then ask for it)
  questions: 1, // the question set at that setting
  ahead: 2, // the settings one and two steps away (dense)
  sweep: 3, // the panels below the picture: their questions, the overlap sweep
  scores: 3, // a pruned drag's missing scores
  audit: 3, // the corpus audit
  ask: 3, // your model's prompts
  code: 3, // the equivalent code
  fix: 3, // what keeps a cut answer whole, said under the sliders
  index: 3, // your index's chunks searched again for the phrase marked or typed since
  map: 4, // the settings map
};

const priorityOf = (lane) => PRIORITY[lane] ?? PRIORITY[String(lane).replace(/\d+$/, "")] ?? 3;

export class Asks {
  constructor() {
    this.lastMove = -Infinity;
    this.inFlight = 0; // the drag's requests in flight or queued (track)
    this.resting = false;
    this.timer = 0;
    this.listeners = { rest: [], move: [], restart: [] };
    this.lanes = new Map(); // lane -> {running: [entry], queued: entry | null}
    this.order = 0;
  }

  on(event, f) {
    this.listeners[event].push(f);
  }

  emit(event) {
    for (const f of this.listeners[event]) f();
  }

  /** A control moved (or the drag sent a request): not at rest until REST_MS after the last move
   * with nothing in flight. */
  moved() {
    this.lastMove = performance.now();
    if (this.resting) {
      this.resting = false;
      this.emit("move");
    }
    clearTimeout(this.timer);
    if (!this.inFlight) this.timer = setTimeout(() => this.check(), REST_MS);
  }

  /** The drag's request (or what it waits for): the page is not at rest until `promise` settles. */
  track(promise) {
    this.inFlight++;
    this.moved();
    return promise.finally(() => {
      this.inFlight--;
      this.moved();
    });
  }

  check() {
    if (this.inFlight) return; // track re-arms when it ends
    const left = REST_MS - (performance.now() - this.lastMove);
    if (left > 1) { this.timer = setTimeout(() => this.check(), left); return; }
    this.resting = true;
    this.emit("rest");
    this.pump();
  }

  /** Resolves at the next rest (at once while the page rests). */
  rest() {
    if (this.resting) return Promise.resolve();
    return new Promise((resolve) => {
      const once = () => { this.listeners.rest = this.listeners.rest.filter((f) => f !== once); resolve(); };
      this.on("rest", once);
    });
  }

  /** Resolves once the page rests with no ask queued or running: all a move set going is done (the
   * event a test waits for before it says nothing more was sent). */
  async quiet() {
    for (;;) {
      await this.rest();
      const busy = [...this.lanes.values()].flatMap((l) => [...l.running, l.queued]).filter(Boolean);
      if (!busy.length) return;
      await Promise.all(busy.map((e) => e.promise));
    }
  }

  /** `run()` (a worker call: a promise of its reply) at rest, in `lane`; merged with an ask of the
   * same lane and key still queued or running. */
  ask(lane, key, run, { latest = false } = {}) {
    const l = this.lanes.get(lane) || { running: [], queued: null };
    this.lanes.set(lane, l);
    const same = [...l.running, l.queued].find((e) => e && e.key === key);
    if (same) return same.promise;
    const entry = { lane, key, run, latest, order: this.order++ };
    entry.promise = new Promise((resolve) => { entry.resolve = resolve; });
    if (l.queued) l.queued.resolve({ dropped: true });
    l.queued = entry;
    this.pump();
    return entry.promise;
  }

  /** At rest: every lane's queued ask that may start now, the most urgent first. */
  pump() {
    if (!this.resting) return;
    const ready = [...this.lanes.values()].map((l) => l.queued)
      .filter((e) => e && (e.latest || !this.lanes.get(e.lane).running.length))
      .sort((a, b) => priorityOf(a.lane) - priorityOf(b.lane) || a.order - b.order);
    for (const e of ready) this.start(e);
  }

  start(e) {
    const l = this.lanes.get(e.lane);
    l.queued = null;
    l.running.push(e);
    let call;
    try { call = Promise.resolve(e.run()); } catch (err) { call = Promise.reject(err); } // posted now, in order
    call.catch((err) => ({ ok: false, error: { field: "", message: String((err && err.message) || err) } }))
      .then((reply) => {
        l.running = l.running.filter((r) => r !== e);
        e.resolve(reply);
        this.pump();
      });
  }
}
