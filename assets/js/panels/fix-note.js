// The fix for a cut answer, said under the sliders: "At size 65 words, an overlap of 61 words keeps it
// whole with this splitter." (or the size that would, where no overlap does). The core finds it by
// running the current splitter again at other overlaps and sizes (`call {fn: "fix"}`,
// ragsim.judge.overlap_advice): an ask of the "fix" lane (asks.js), sent once the page rests, so a
// drag asks once and only the newest answer is shown. The sentence reaches the page as text.
//
//   const fix = new FixNote({ send: (m) => gate.send(m), asks, line });
//   fix.show(last);   // after each result: asks when the verdict is "cut", clears the line otherwise

import { fixRequest } from "../requests.js"; // none for a document too long to split again that often

export class FixNote {
  /** send: posts a message to the worker and resolves with its reply; asks: the scheduler of work at
   * rest; line: the element the sentence goes in (under the sliders, in the line that keeps its
   * height whether it says anything or not, so nothing moves when it fills at rest). */
  constructor({ send, asks, line }) {
    this.send = send;
    this.asks = asks;
    this.line = line;
    this.seq = 0;
  }

  async show(last) {
    const seq = ++this.seq;
    this.say("");
    const request = fixRequest(last);
    if (!request) return;
    const reply = await this.asks.ask("fix", request, () => this.send({ type: "call", fn: "fix", request }), { latest: true });
    if (seq !== this.seq || !reply || !reply.ok) return; // a newer result, a dropped ask, or no fix to say
    const fix = JSON.parse(reply.result).fix;
    if (fix && fix.sentence) this.say(fix.sentence);
  }

  say(text) {
    if (this.line.textContent !== text) this.line.textContent = text;
    this.line.hidden = !text;
  }
}
