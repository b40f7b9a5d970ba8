// The canvas colours, read from the stylesheet's custom properties (--pic-*),
// so the picture and the lanes follow the light or dark scheme like the rest of the page. The
// values are read again when the scheme changes; a canvas repaints through onSchemeChange.

const NAMES = {
  retrieved: "--pic-retrieved", onRetrieved: "--pic-on-retrieved", faint: "--pic-faint", faintEdge: "--pic-faint-edge",
  band: "--pic-band", bandEdge: "--pic-band-edge", strip: "--pic-strip", stripHover: "--pic-strip-hover",
  focus: "--pic-focus", hover: "--pic-hover", text: "--pic-text", noOverlap: "--pic-no-overlap",
  stored: "--pic-stored", storedEdge: "--pic-stored-edge", storedRetrieved: "--pic-stored-retrieved",
  lane: "--pic-lane", laneFaint: "--pic-lane-faint", laneBand: "--pic-lane-band", selected: "--pic-selected",
};

/** name -> colour; filled by read() (the light scheme's values until the stylesheet answers). */
export const COLORS = {
  retrieved: "#1f5fa8", onRetrieved: "#ffffff", faint: "rgba(214,223,233,0.7)", faintEdge: "#8797a8",
  band: "rgba(242,140,40,0.5)", bandEdge: "#c25e00", strip: "rgba(190,200,212,0.55)", stripHover: "rgba(194,94,0,0.6)",
  focus: "#6d28d9", hover: "#1d232b", text: "#56606b", noOverlap: "#b3261e",
  stored: "rgba(46,140,90,0.28)", storedEdge: "#1f7a4a", storedRetrieved: "#1f7a4a",
  lane: "rgba(214,223,233,0.55)", laneFaint: "rgba(135,151,168,0.35)", laneBand: "rgba(242,140,40,0.75)", selected: "#1d232b",
};

function read() {
  const style = getComputedStyle(document.documentElement);
  for (const [key, name] of Object.entries(NAMES)) {
    const value = style.getPropertyValue(name).trim();
    if (value) COLORS[key] = value;
  }
}

const dark = window.matchMedia("(prefers-color-scheme: dark)");
const listeners = [];
dark.addEventListener("change", () => { read(); for (const f of listeners) f(); });
read();

/** Call `repaint` whenever the colour scheme changes (after COLORS holds the new colours). */
export function onSchemeChange(repaint) {
  listeners.push(repaint);
}

// A touch screen (no hover): the picture's words say "tap", not "hover" or "click".
const NO_HOVER = typeof matchMedia === "function" ? matchMedia("(hover: none)") : null;
export const touchScreen = () => Boolean(NO_HOVER && NO_HOVER.matches);

/** `text` cut with an ellipsis to fit `width` px in the context's current font. */
export function fitText(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) { // the longest prefix that fits with its ellipsis
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${text.slice(0, mid)}…`).width <= width) lo = mid; else hi = mid - 1;
  }
  return `${text.slice(0, lo).trimEnd()}…`;
}
