"""The plain report of `python -m ragsim inspect` (ragsim.host.commands.inspect_cli): SPEC section 11's object
as lines a person reads: the store, the documents placed, which splitter, the stats, each phrase,
the facts destroyed, and the questions' verdicts and metrics (the collection's own query beside them)."""

from collections import Counter
from ragsim.host.commands.console import marked_fact, printable
from ragsim.host.commands import cli_rerank
from ragsim.host.clients import stored_vectors

LIST = 10  # ids listed before "and N more"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:LIST])
    return shown + (f" and {len(ids) - LIST:,} more" if len(ids) > LIST else "")


def _num(x) -> str:
    if x is None:
        return "-"
    return f"{x:,}" if isinstance(x, int) or float(x).is_integer() else f"{x:,.1f}"


def _f(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def store_lines(result: dict) -> list[str]:
    s = result["store"]
    where = s["kind"] + (f" {s['path']}" if s["path"] is not None else " (in memory)") + (
        f", collection {s['collection']!r}" if s.get("collection") else "")  # in memory: the Python API's objects
    docs = result["documents"]
    placed = sum(d["placed"] for d in docs)
    lines = [f"store: {where}: {s['chunks']:,} chunks",
             f"documents: {len(docs):,} ({sum(not d['rebuilt'] for d in docs):,} from sources, "
             f"{sum(d['rebuilt'] for d in docs):,} rebuilt from their chunks); {placed:,} chunks placed, "
             f"{len(result['unplaced']):,} unplaced" + (f": {_ids(result['unplaced'])}" if result["unplaced"] else "")]
    kinds: dict[str, Counter] = {}
    for c in result["chunks"]:
        kinds.setdefault(c["doc"], Counter())[c["placement"]] += 1
    for d in docs:
        how = ", ".join(f"{k} {n:,}" for k, n in sorted(kinds.get(d["id"], {}).items()))
        gaps = f", {len(d['gaps'])} gaps of unknown length" if d.get("gaps") else ""
        lines.append(f"  {d['id']}: {d['chunks']:,} chunks{' (' + how + ')' if how else ''}"
                     f"{' rebuilt' if d['rebuilt'] else ''}{gaps}")
    rebuilt = [d for d in docs if d["rebuilt"]]
    if rebuilt and any(d.get("gaps") for d in rebuilt):
        lines.append(f"  {_count(len(rebuilt), 'document')} rebuilt from chunks with gaps: the splitter, the cuts and "
                     "the facts below are read from that rebuilt text, not the original; give the source files with "
                     "--source FILE for an exact reading.")
    return lines


def _count(n: int, noun: str) -> str:
    """"1 fact", "2 facts"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def splitter_lines(result: dict) -> list[str]:
    lines = ["splitter:"]
    guessed = {d["id"] for d in result["documents"] if d["rebuilt"] and d.get("gaps")}
    rows, whole = result["splitter"], result.get("splitter_index")
    if whole and (len(rows) > 1 or whole["metadata_tokens"]):  # one line for the index, then those that differ
        lines = [f"splitter: {whole['line']}" + (f"; {_MOVES[whole['moves_with_overlap']]}" if _MOVES[whole["moves_with_overlap"]] else "")]
        differ = {d["doc"]: f"{d['reproduced']:,} of {d['chunks']:,} chunks with it; alone it reads as " for d in whole["differ"]}
        rows = [s for s in rows if s["doc"] in differ]
    for s in rows:
        moves = _MOVES[s["moves_with_overlap"]]
        rebuilt = " (over text rebuilt with gaps: --source would let the splitter be named)" if s["doc"] in guessed else ""
        said = differ.get(s["doc"], "") if whole and lines[0] != "splitter:" else ""
        lines.append(f"  {s['doc']}: {said}{s['line']}" + (f"; {moves}" if moves else "") + rebuilt)
    return lines


_MOVES = {True: "it moves its later cuts when only the overlap changes",
          False: "its cuts stay where they are when only the overlap changes", None: ""}


def stats_lines(result: dict) -> list[str]:
    st = result["stats"]
    tokens = "" if st["tokens_min"] is None else \
        f"; {_num(st['tokens_min'])} to {_num(st['tokens_max'])} tokens (median {_num(st['tokens_median'])})"
    overlap = "no neighbours" if st["overlap_min"] is None else \
        f"{_num(st['overlap_min'])} to {_num(st['overlap_max'])} characters (median {_num(st['overlap_median'])})"
    return [f"chunks: {_num(st['chars_min'])} to {_num(st['chars_max'])} characters (median {_num(st['chars_median'])})"
            f"{tokens}",
            f"overlap between neighbours: {overlap}; {st['boundaries_without_overlap']:,} boundaries without "
            f"overlap; {st['truncated']:,} chunks the dense model reads only in part"]


def phrase_lines(result: dict) -> list[str]:
    lines = []
    for p in result["phrases"]:
        text = p["text"] if len(p["text"]) <= 70 else p["text"][:69] + "…"
        where = f"{p['doc']} {p['start']:,}-{p['end']:,}"
        said = "" if p["source"] == "phrase" else f" ({p['source']})"
        if p["verdict"] == "present":
            lines.append(f"  present{said}: {text!r} in {where}, whole in {_ids(p['chunks'])}")
            continue
        cuts = "; ".join(f"cut at {c['at']:,} (end of {c['end_of'] or '-'}, start of {c['start_of'] or '-'})"
                         for c in p["cut_by"]) or "no placed chunk reaches it"
        advice = p.get("advice") or (f"an overlap of {p['overlap_needed']:,} characters would keep it whole in fixed "
                                     "windows")
        lines.append(f"  ABSENT{said}: {text!r} in {where}: {cuts}; {advice}")
    return ["phrases:", *lines] if lines else []


def fact_lines(result: dict) -> list[str]:
    f = result["facts"]
    lines = [f"facts: {_count(f['count'], 'name-value fact')} found, {len(f['destroyed']):,} destroyed by this index"]
    for d in f["destroyed"][:LIST * 2]:
        lines.append(f"  destroyed: {printable(repr(d['name']))} = {printable(repr(d['value']))} in {printable(d['doc'])} "
                     f"{d['stretch'][0]:,}-{d['stretch'][1]:,}")
        lines.append("    " + marked_fact({**d, "name": d["name_at"], "value": d["value_at"]}))
    if len(f["destroyed"]) > LIST * 2:
        lines.append(f"  and {len(f['destroyed']) - LIST * 2:,} more (--json lists them all)")
    if result.get("rerank") and result.get("questions") is None:  # with questions, their lines say it
        lines.append(cli_rerank.summary(result))
    return lines


def question_lines(result: dict, args) -> list[str]:
    if result.get("questions") is None:
        return []
    st, chroma = result["question_stats"], result.get("chroma_query")
    head = f"{'question':<14} {'verdict':<10} {'needed_k':>8} {'recall':>7} {'precision':>9} {'iou':>6}"
    lines = [f"questions ({args.method}, k {args.k}): {st['count']} questions: {st['intact']} intact, "
             f"{st['ranked_out']} ranked out, {st['cut']} cut; recall {_f(st['recall_mean'])}, precision "
             f"{_f(st['precision_mean'])}, IoU {_f(st['iou_mean'])}, precision Ω {_f(st['precision_omega_mean'])}",
             head + ("  chroma query" if chroma else "") + "  retrieved"]
    for q in result["questions"]:
        own = f"  {chroma[q['id']]['verdict']:<12}" if chroma else ""
        needed = q["needed_k"] if q["needed_k"] is not None else "-"
        lines.append(f"{q['id'][:14]:<14} {q['verdict']:<10} {needed:>8} {_f(q['recall']):>7} "
                     f"{_f(q['precision']):>9} {_f(q['iou']):>6}{own}  {' '.join(q['retrieved_ids'])}")
    reranked, over = cli_rerank.summary(result), stored_vectors.said(result)
    if over:
        lines.append(over)
    if reranked:
        lines.append(reranked)
    if result.get("chroma_query_note"):
        lines.append(f"the collection's own query was not run: {result['chroma_query_note']}")
    if chroma:
        counts = Counter(v["verdict"] for v in chroma.values())
        lines.append(f"the collection's own query (all-MiniLM-L6-v2 in Chroma): {counts['intact']} intact, "
                     f"{counts['ranked_out']} ranked out, {counts['cut']} cut")
    return lines


def compared_lines(result: dict) -> list[str]:
    """`--chunking`: how many stored chunks the named splitter makes too, per document."""
    got = result.get("compared")
    if not got:
        return []
    lines = [f"compared with {got['described']}: " + ("it makes exactly these chunks" if got["same"] else "not the same chunks")]
    for d in got["documents"]:
        if d["pending"]:
            lines.append(f"  {d['doc']}: not compared (its sentence windows are not embedded)")
            continue
        first = f"; the first it does not make: {d['first_difference']}" if d["first_difference"] else ""
        lines.append(f"  {d['doc']}: {d['reproduced']:,} of {d['stored']:,} stored chunks made ({d['made']:,} made){first}")
    return lines


def report(result: dict, args) -> str:
    parts = [store_lines(result), splitter_lines(result), compared_lines(result), stats_lines(result), phrase_lines(result),
             fact_lines(result), question_lines(result, args)]
    if result.get("verdict"):
        v = result["verdict"]
        parts.append([f"marked answer: {v['kind']} (best rank {v['best_rank']})"])
    return "\n".join(line for part in parts for line in part)
