"""What the Python API answers: small objects holding the JSON the command line prints.

Each has `to_dict()` (that JSON, as plain dicts and lists), item access (`result["verdict"]`), a
text `__repr__` for a terminal (the command's own table or report) and `_repr_html_`, which Jupyter
shows: the verdict, the chunk picture (`pyapi.picture`, inline SVG) and the numbers, as the page
shows them. The HTML has no script and loads nothing; every text in it is escaped.
"""

from __future__ import annotations

import argparse
from html import escape

from ragsim.host import audit_cli, eval_cli, inspect_report
from ragsim.pyapi.picture import Bar, svg
from ragsim.pyapi.words import MARKS, VERDICT_COLORS, verdict_words

MAX_PICTURES = 3  # documents drawn; the others are counted
BOX = "font-family:system-ui,sans-serif;font-size:14px;line-height:1.4;color:#1d232b;max-width:736px"
CELL = "padding:2px 8px;text-align:left;border-bottom:1px solid #d6dfe9"


def band_colours(kind) -> tuple[str, str]:
    """(fill, edge) of an answer's band: the answer's orange, or its verdict's colour."""
    if kind is None:
        return "", ""
    colour = VERDICT_COLORS.get(kind, VERDICT_COLORS[None])
    return colour + "66", colour


def verdict_box(kind, headline: str, sentence: str) -> str:
    colour = VERDICT_COLORS.get(kind, VERDICT_COLORS[None])
    return (f'<div style="border-left:4px solid {colour};padding:4px 10px;margin:4px 0 8px">'
            f'<div style="font-size:1.2em;font-weight:700"><span style="color:{colour}">{MARKS.get(kind, "")}</span>'
            f'{escape(headline)}</div><div>{escape(sentence)}</div></div>')


def table_html(head: list[str], rows: list[list], verdict_column: int | None = None) -> str:
    """A plain table; the cells of `verdict_column` in their verdict's colour."""
    out = ['<table style="border-collapse:collapse;margin:6px 0">', "<tr>"]
    out += [f'<th style="{CELL}">{escape(str(h))}</th>' for h in head] + ["</tr>"]
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            colour = f";color:{VERDICT_COLORS.get(cell, VERDICT_COLORS[None])};font-weight:600" if i == verdict_column else ""
            out.append(f'<td style="{CELL}{colour}">{escape("-" if cell is None else str(cell))}</td>')
        out.append("</tr>")
    return "".join(out + ["</table>"])


def pictures(docs: list[dict], bars: dict, bands: dict, stored: bool = False, first=()) -> str:
    """The picture of each document with chunks (those in `first`, then the others, at most
    MAX_PICTURES), its title above it."""
    order = [d for d in docs if d["id"] in first] + [d for d in docs if d["id"] not in first and bars.get(d["id"])]
    out = []
    for d in order[:MAX_PICTURES]:
        shown = bars.get(d["id"], [])
        out.append(f'<div style="margin-top:6px;font-weight:600">{escape(str(d.get("title") or d["id"]))} '
                   f'<span style="font-weight:400;color:#56606b">· {len(shown):,} chunks</span></div>')
        out.append(svg(d["length"], shown, bands.get(d["id"], []), stored, str(d["id"])))
    if len(order) > MAX_PICTURES:
        out.append(f'<div style="color:#56606b">and {len(order) - MAX_PICTURES:,} more documents '
                   f'(to_dict() holds every chunk).</div>')
    return "".join(out)


class Result:
    """The JSON a command prints, with a text and an HTML view."""

    def __init__(self, data: dict):
        self._data = data

    def to_dict(self) -> dict:
        """The JSON the command line prints for the same input (`--json`)."""
        return self._data

    def __getitem__(self, key):
        return self._data[key]

    def keys(self):
        return self._data.keys()

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return f'<div style="{BOX}">{self.html()}</div>'

    def text(self) -> str:
        raise NotImplementedError

    def html(self) -> str:
        raise NotImplementedError


def _lengths(docs: list[dict]) -> list[dict]:
    return [{"id": d["id"], "title": d.get("title"), "length": len(d.get("text") or "")} for d in docs]


class Simulation(Result):
    """`ragsim.simulate`'s answer: the response `python -m ragsim` prints for the request."""

    def __init__(self, response: dict, request: dict):
        super().__init__(response)
        self._docs, self._span, self._query = _lengths(request["documents"]), request.get("span"), request.get("query")

    @property
    def verdict(self) -> str | None:
        """intact, ranked_out, cut, or None without an answer."""
        return (self._data.get("verdict") or {}).get("kind")

    def _numbers(self) -> str:
        st = self._data["stats"]
        return (f"{st['chunks']:,} chunks, {st['units_stored']:,} {st['unit']} stored (×{st['amplification']:.2f}), "
                f"top {st['k']}: {st['context_chars']:,} characters, {st['context_tokens']:,} tokens, "
                f"${st['cost']:.6f} per query")

    def text(self) -> str:
        kind, headline, sentence = verdict_words(self._data)
        return f"{headline}: {sentence}\n{self._numbers()}"

    def html(self) -> str:
        bars: dict = {}
        for c in self._data["chunks"]:
            bars.setdefault(c["doc"], []).append(Bar(c["start"], c["end"], c["rank"] if c["retrieved"] else None))
        span = self._span
        bands = {span["doc"]: [(span["start"], span["end"], "", "")]} if span else {}
        first = [span["doc"]] if span else []
        question = f'<div>Question: <q>{escape(self._query)}</q></div>' if self._query else ""
        return (verdict_box(*verdict_words(self._data)) + question + pictures(self._docs, bars, bands, first=first) +
                f'<div style="color:#56606b">{escape(self._numbers())}</div>')


class Evaluation(Result):
    """`ragsim.evaluate`'s answer: what `python -m ragsim eval --json` prints (questions,
    question_stats, the map when asked, skipped)."""

    def __init__(self, shown: dict, response: dict, request: dict):
        super().__init__(shown)
        self._response, self._request = response, request

    def text(self) -> str:
        return eval_cli.table(self._data, self._request)

    def html(self) -> str:
        st, req = self._data["question_stats"], self._request
        summary = (f"{st['count']} questions at {eval_cli.setting_words(req['chunking'])}, k {req['retrieval']['k']}: "
                   f"{st['intact']} intact, {st['ranked_out']} ranked out, {st['cut']} cut; recall "
                   f"{st['recall_mean']:.3f}, precision {st['precision_mean']:.3f}, IoU {st['iou_mean']:.3f}")
        asked = {q["id"]: q for q in req["questions"]}
        rows = [[q["id"], asked[q["id"]].get("query", ""), q["verdict"], q["needed_k"], f"{q['recall']:.3f}",
                 f"{q['precision']:.3f}", f"{q['iou']:.3f}"] for q in self._data["questions"]]
        bars, bands = {}, {}
        for c in self._response.get("chunks") or []:
            bars.setdefault(c["doc"], []).append(Bar(c["start"], c["end"]))
        for q in self._data["questions"]:
            for ref in asked[q["id"]]["references"]:
                bands.setdefault(ref["doc"], []).append((ref["start"], ref["end"], *band_colours(q["verdict"])))
        return (f"<div>{escape(summary)}</div>" + table_html(["id", "question", "verdict", "k needed", "recall",
                                                             "precision", "IoU"], rows, 2) +
                pictures(_lengths(req["documents"]), bars, bands, first=list(bands)))


class Audit(Result):
    """`ragsim.audit`'s answer: what `python -m ragsim audit --json` prints."""

    def text(self) -> str:
        return "\n".join([audit_cli.table(self._data), "", self._data["sentence"] + ".", "",
                          audit_cli.destroyed_facts(self._data)])

    def html(self) -> str:
        k = self._data["precision_k"]
        head = ["overlap", "chunks", "stored", "facts", "destroyed", "destroyed ≤ overlap", f"found top {k}",
                f"dropped top {k}"]
        rows = [[r["overlap"], *(["skipped: " + r["error"]] + [""] * 6 if r.get("error") else
                                 [r["chunks"], r["units_stored"], r["facts"], r["destroyed"],
                                  r["destroyed_within_overlap"], r["found_top_k"], r["dropped_top_k"]])]
                for r in self._data["rows"]]
        gone = [f for f in self._data["facts"] if f["destroyed_at"]]
        listed = [[f["name_text"], f["value_text"], f["doc"], ", ".join(map(str, f["destroyed_at"]))]
                  for f in gone[:audit_cli.LISTED]]
        facts = (table_html(["name", "value", "document", "destroyed at overlap"], listed) if gone
                 else "<div>No fact is destroyed at any of these overlaps.</div>")
        return (f"<div>{escape(self._data['sentence'])}.</div>" + table_html(head, rows) +
                f'<div style="margin-top:6px;font-weight:600">Destroyed facts ({len(gone):,})</div>' + facts)


class Inspection(Result):
    """`ragsim.inspect`'s answer: what `python -m ragsim inspect --json` prints."""

    def __init__(self, result: dict, documents: list[dict], method: str, k: int):
        super().__init__(result)
        self._docs, self._args = _lengths(documents), argparse.Namespace(method=method, k=k)

    def text(self) -> str:
        return inspect_report.report(self._data, self._args)

    def html(self) -> str:
        lines = [s.get("line") or f"{s['doc']}: no splitter named" for s in self._data["splitter"]]
        whole = self._data.get("splitter_index")
        if whole and (len(lines) > 1 or whole.get("metadata_tokens")):  # one reading of the index, as the report says
            lines = [whole["line"]]
        bars, bands = {}, {}
        for c in self._data["chunks"]:
            if c["start"] is not None:
                bars.setdefault(c["doc"], []).append(Bar(c["start"], c["end"]))
        rows = []
        for p in self._data["phrases"]:
            rows.append([p["text"], p["verdict"], ", ".join(map(str, p["chunks"])) or "-", p.get("overlap_needed")])
            if p.get("doc") is not None:
                bands.setdefault(p["doc"], []).append((p["start"], p["end"], *band_colours(p["verdict"])))
        st = self._data.get("question_stats")
        questions = (f"<div>questions: {st['count']}: {st['intact']} intact, {st['ranked_out']} ranked out, "
                     f"{st['cut']} cut</div>" if st else "")
        phrases = table_html(["phrase", "verdict", "chunks", "overlap needed"], rows, 1) if rows else ""
        return ("".join(f"<div>{escape(line)}</div>" for line in lines) + phrases + questions +
                pictures(self._docs, bars, bands, stored=True, first=list(bands)))
