// The controls, built from the parameter table: one per row, in the container its kind or group
// names. A control only reports input (onInput(param)) and shows values it is given (sync); it
// never computes and never draws results.

import { $ } from "./dom.js";
import { CONTROL_ROWS, applies, bound, fieldOf, formatParam, heldRows, unitName } from "./params.js";

export class Controls {
  /** onInput(param): the user changed the row's control (read it with value(param)). */
  constructor(onInput) {
    this.byName = {}; // name -> {input, output, wrap, libName, note}
    for (const p of CONTROL_ROWS) {
      const control = makeControl(p);
      this.byName[p.name] = control;
      control.input.addEventListener(p.kind === "choice" || p.kind === "check" || p.kind === "json" ? "change" : "input", () => onInput(p));
      if (control.box) { // a slider's number box: an exact value typed (900, 1000) moves the slider and counts as its input
        control.box.addEventListener("input", () => {
          if (control.box.value === "" || !Number.isFinite(Number(control.box.value))) return; // half typed: wait
          control.input.value = control.box.value;
          onInput(p);
        });
      }
      const home = p.group === "retrieval" ? "retrieval-controls" : p.kind === "textarea" || p.kind === "text" ? "text-controls" : "slider-controls";
      $(home).append(control.wrap);
    }
    // Under the sliders, in a line that keeps its height (so it moves nothing, style.css): a value held
    // below what the user set, for now; else, at rest, the fix for a cut answer (the FixNote panel).
    const line = document.createElement("div");
    line.className = "dock-note";
    this.held = document.createElement("p");
    this.held.id = "held-note";
    this.held.className = "held-note";
    this.held.hidden = true;
    const fix = document.createElement("p");
    fix.id = "fix-note";
    fix.className = "fix-note";
    fix.hidden = true;
    line.append(this.held, fix);
    $("slider-controls").after(line);
  }

  input(name) {
    return this.byName[name].input;
  }

  /** What the user set: the box's text, or a checkbox's state. */
  value(p) {
    const { input } = this.byName[p.name];
    return p.kind === "check" ? input.checked : input.value;
  }

  invalid(name) {
    this.byName[name].input.setAttribute("aria-invalid", "true");
  }

  /** The line beside a row that needs a package: kind "loading" or "error", and its text. */
  note(name, kind, text) {
    const { note } = this.byName[name];
    if (kind) note.dataset.kind = kind;
    if (note.textContent !== text) note.textContent = text;
  }

  noteKind(name) {
    return this.byName[name].note.dataset.kind;
  }

  /** Show the state in the controls. The document is only written when asked (it may be megabytes). */
  sync(state, { withDoc = false } = {}) {
    for (const p of CONTROL_ROWS) {
      const { input, output, wrap, libName } = this.byName[p.name];
      if (p.name === "doc" && !withDoc) continue;
      // Each write only when it changes something: this runs at every move of a drag, and a write of
      // the same value still invalidates the element's style.
      const hidden = !applies(p, state);
      if (wrap.hidden !== hidden) wrap.hidden = hidden;
      if (p.kind === "range") {
        const max = String(bound(p.max, state)), min = String(p.min);
        if (input.max !== max) input.max = max;
        if (input.min !== min) input.min = min;
        const { box } = this.byName[p.name];
        if (box.max !== max) box.max = max;
        if (box.min !== min) box.min = min;
        // the box shows the value in force, except while the user is typing in it
        if (document.activeElement !== box && box.value !== String(state[p.name])) box.value = String(state[p.name]);
      }
      const text = formatParam(p, state[p.name]);
      if (p.kind === "check") input.checked = Boolean(state[p.name]);
      else if (input.value !== text && !(p.kind === "number" && Number(input.value) === state[p.name])) input.value = text;
      if (output) {
        const shown = p.inUnits ? `${state[p.name]} ${unitName(state)}` : String(state[p.name]);
        if (output.textContent !== shown) output.textContent = shown;
        const said = valueText(p, state); // "24 words", "2 chunks": a value with its unit
        if (input.getAttribute("aria-valuetext") !== said) input.setAttribute("aria-valuetext", said);
      }
      if (libName) {
        const name = (fieldOf(state, p.name) || {}).library || ""; // the splitter's registered name for it
        if (libName.textContent !== name) libName.textContent = name;
      }
      if (input.hasAttribute("aria-invalid")) input.removeAttribute("aria-invalid");
    }
    this.showHeld(state);
  }

  /** Say that a value is held down by another (overlap by the size) and comes back: shown while it lasts. */
  showHeld(state) {
    const held = heldRows(state);
    for (const p of CONTROL_ROWS) {
      const { output } = this.byName[p.name];
      if (output) output.classList.toggle("held", held.some((h) => h.param === p));
    }
    const unit = unitName(state);
    const text = held.map(({ param, wanted }) => {
      const rule = bound(param.max, state) === state.size ? "within" : "below";
      const u = param.inUnits ? ` ${unit}` : "";
      return `${param.label} lowered to ${state[param.name]}${u} to stay ${rule} the size (${state.size}${u})${storedWords(param, state)}. ` +
        `Back to your ${wanted}${u} once the size allows.`;
    }).join(" ");
    if (this.held.textContent !== text) this.held.textContent = text;
    if (this.held.hidden !== !text) this.held.hidden = !text;
  }
}

/** The storage an overlap held just below the size costs, said with it (a fixed window advances by
 * size - overlap, so each piece of text is stored about size / (size - overlap) times). */
function storedWords(param, state) {
  if (param.name !== "overlap" || !state.overlap || state.size <= state.overlap) return "";
  const times = state.size / (state.size - state.overlap);
  return `: about ${times < 10 ? times.toFixed(1) : Math.round(times)}× the text stored`;
}

/** What a screen reader says for a slider's value: the number with its unit. */
function valueText(p, state) {
  const n = state[p.name];
  if (p.inUnits) return `${n} ${unitName(state)}`;
  if (p.name === "k") return `top ${n} ${n === 1 ? "chunk" : "chunks"}`;
  return String(n);
}

/** A row's control: its input, label and, for sliders, the value shown beside the label. */
function makeControl(p) {
  const wrap = document.createElement("div");
  wrap.className = `control control-${p.name}` + (p.kind === "range" ? " slider" : "");
  if (!p.embed) wrap.classList.add("full-only");
  const id = `param-${p.name}`;
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = p.label;
  const input = makeInput(p);
  input.id = id;
  input.name = p.name;
  let output = null, libName = null, box = null;
  if (p.kind === "range") {
    const head = document.createElement("div");
    head.className = "label";
    output = document.createElement("output");
    output.htmlFor = id;
    output.id = `${id}-value`;
    output.setAttribute("aria-live", "off"); // the slider speaks its own value (aria-valuetext); no second voice per step
    const named = document.createElement("span");
    named.append(label);
    if (p.libLabel) { // the library's own name for this control, beside ours (not part of the label)
      libName = document.createElement("code");
      libName.className = "lib-name";
      named.append(" ", libName);
    }
    box = document.createElement("input"); // the exact value, typed: 1-4000 on a slider is 12 characters a pixel
    box.type = "number";
    box.className = "exact";
    box.id = `${id}-exact`;
    box.step = p.step;
    box.inputMode = "numeric";
    box.setAttribute("aria-label", `${p.label}, exact value`);
    const shown = document.createElement("span"); // the value with its unit, and the box to type it in
    shown.className = "value";
    shown.append(output, box);
    head.append(named, shown);
    const row = document.createElement("div");
    row.className = "row";
    row.append(input);
    wrap.append(head, row);
  } else if (p.kind === "check") {
    wrap.classList.add("check");
    wrap.append(input, label);
  } else {
    wrap.append(label, input);
  }
  let note = null;
  if (p.needs) { // where installing the package is reported
    note = document.createElement("span");
    note.className = "needs-note";
    note.setAttribute("role", "status");
    wrap.append(note);
  }
  return { input, output, wrap, libName, note, box };
}

function makeInput(p) {
  let input;
  if (p.kind === "textarea") {
    input = document.createElement("textarea");
    input.spellcheck = false;
  } else if (p.kind === "choice") {
    input = document.createElement("select");
    for (const [value, text] of Object.entries(p.choices)) input.append(new Option(text, value));
  } else {
    input = document.createElement("input");
    input.type = { check: "checkbox", json: "text" }[p.kind] || p.kind;
    if (p.kind === "text" || p.kind === "json") { input.autocomplete = "off"; input.spellcheck = false; }
    else if (p.kind !== "check") { input.min = p.min; input.step = p.step; }
  }
  if (p.kind === "json") input.classList.add("code-input");
  return input;
}
