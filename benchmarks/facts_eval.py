"""The fact finder measured against facts careful readers labelled (`tests/data/facts/`), and its speed.

    python benchmarks/facts_eval.py [--split dev|test|all] [--misses] [--corpora PATH/TO/corpora]

Prints precision and recall per kind of text and in all, the finder's false pairs by the kind the
labels give them (a citation year, an identifier, a value of another name, ...) and its misses; then
the finder's speed in MB/s beside the rule it replaced (`benchmarks/facts_rule_before.py`, the
finder as it stood before it was measured) on the same text, and the whole audit's time over a
knowledge base (a folder given with --corpora, audited as the command line streams it) with each
finder. Nothing is cached between the runs: each detects from the text.

Matching: a reported fact matches a labelled fact when their values overlap and their names overlap;
each labelled fact is matched once (README in the data folder).
"""

import argparse
import collections
import importlib.util
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "facts"
sys.path.insert(0, str(ROOT / "py"))

from ragsim.judge import facts as finder  # noqa: E402


def load(split: str = "all") -> list[dict]:
    """Each labelled passage: its text, kind, split, facts and non-facts (offsets into its text)."""
    passages = {r["id"]: r for r in map(json.loads, (DATA / "passages.jsonl").read_text(encoding="utf-8").splitlines())}
    out = []
    for path in sorted((DATA / "labels").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            p = passages[row["passage"]]
            if split != "all" and p["split"] != split:
                continue
            out.append({**p, "facts": row.get("facts", []), "not_facts": row.get("not_facts", [])})
    return out


def _span(item: dict, key: str) -> tuple[int, int]:
    s = item[f"{key}_start"]
    return (s, s + len(item[key])) if s >= 0 else (-1, -1)


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def judge(passage: dict, found: list) -> dict:
    """Matches the finder's facts to the labels: true pairs, false pairs (with the label's `why`
    where the labels name the pair), missed facts."""
    gold = [(_span(f, "name"), _span(f, "value"), f) for f in passage["facts"]]
    used = set()
    true, false = [], []
    for f in found:
        hit = next((i for i, (n, v, _) in enumerate(gold) if i not in used and _overlap(v, f.value) and _overlap(n, f.name)), None)
        if hit is not None:
            used.add(hit)
            true.append(f)
            continue
        why = next((nf["why"] for nf in passage["not_facts"] if _overlap(_span(nf, "value"), f.value)), None)
        if why is None and any(_overlap(v, f.value) for _, v, _ in gold):
            why = "wrong_name"  # the value is a fact's, paired with another name
        false.append((f, why or "unlabelled"))
    missed = [g[2] for i, g in enumerate(gold) if i not in used]
    return {"true": true, "false": false, "missed": missed}


def measure(passages: list[dict], detect=finder.detect) -> dict:
    per_kind = collections.defaultdict(lambda: {"found": 0, "true": 0, "labelled": 0})
    false_by, misses = collections.Counter(), []
    falses = []
    for p in passages:
        found = detect(p["text"])
        j = judge(p, found)
        for key in (p["kind"], "all"):
            per_kind[key]["found"] += len(found)
            per_kind[key]["true"] += len(j["true"])
            per_kind[key]["labelled"] += len(p["facts"])
        for f, why in j["false"]:
            false_by[why] += 1
            falses.append((p["id"], why, p["text"][f.name[0]:f.name[1]], p["text"][f.value[0]:f.value[1]]))
        misses += [(p["id"], m["name"], m["value"]) for m in j["missed"]]
    for row in per_kind.values():
        row["precision"] = row["true"] / row["found"] if row["found"] else 1.0
        row["recall"] = row["true"] / row["labelled"] if row["labelled"] else 1.0
    return {"kinds": dict(per_kind), "false_by": false_by, "falses": falses, "misses": misses}


def agreement() -> dict:
    """The labels of a second reader who labelled two kinds of the first round on their own
    (`second_reader/`), against the set's: facts both marked, and those only one of them marked."""
    first = {p["id"]: p for p in load("all")}
    out = {}
    for path in sorted((DATA / "second_reader").glob("*.jsonl")):
        both = only_first = only_second = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            mine = [(_span(f, "name"), _span(f, "value")) for f in first[row["passage"]]["facts"]]
            theirs = [(_span(f, "name"), _span(f, "value")) for f in row["facts"]]
            matched = sum(1 for n, v in mine if any(_overlap(n, m) and _overlap(v, w) for m, w in theirs))
            both += matched
            only_first += len(mine) - matched
            only_second += sum(1 for n, v in theirs if not any(_overlap(n, m) and _overlap(v, w) for m, w in mine))
        out[path.stem] = {"both": both, "only_first": only_first, "only_second": only_second}
    return out


def old_finder():
    spec = importlib.util.spec_from_file_location("facts_rule_before", ROOT / "benchmarks" / "facts_rule_before.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _speed(detect, text: str, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        detect(text)
        best = min(best, time.perf_counter() - t0)
    return len(text.encode("utf-8")) / best / 1e6


def _audit_time(folder: pathlib.Path, detect) -> tuple[float, str]:
    """A knowledge base's audit as the command line streams it (one worker, in this process: the
    finder is swapped in the module every caller reads it from), and its corpus sentence."""
    import contextlib
    import io

    from ragsim.host.commands import audit_cli
    saved = finder.detect
    finder.detect = detect
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out):
            t0 = time.perf_counter()
            audit_cli.main([str(folder), "--size", "900", "--workers", "1", "--quiet"])
            took = time.perf_counter() - t0
        out.seek(0)
        return took, next((line for line in out.read().splitlines() if "of this shape" in line), "")
    finally:
        finder.detect = saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="all")
    ap.add_argument("--misses", action="store_true", help="list every false pair and every miss")
    ap.add_argument("--corpora", type=pathlib.Path, help="chunking_evaluation's corpora folder, for the speed runs")
    args = ap.parse_args(argv)
    passages = load(args.split)
    m = measure(passages)
    print(f"{len(passages)} labelled passages ({args.split}), {m['kinds']['all']['labelled']} facts labelled\n")
    print(f"{'kind':<14}{'labelled':>9}{'found':>7}{'true':>6}{'precision':>11}{'recall':>8}")
    for kind in sorted(m["kinds"], key=lambda k: (k == "all", k)):
        r = m["kinds"][kind]
        print(f"{kind:<14}{r['labelled']:>9}{r['found']:>7}{r['true']:>6}{r['precision']:>11.3f}{r['recall']:>8.3f}")
    print("\nfalse pairs by kind: " + (", ".join(f"{k} {v}" for k, v in m["false_by"].most_common()) or "none"))
    misses = collections.Counter(p.split("-")[0] for p, _, _ in m["misses"])
    print("misses by kind of text: " + (", ".join(f"{k} {v}" for k, v in misses.most_common()) or "none"))
    if args.misses:
        for pid, why, name, value in m["falses"]:
            print(f"  false  {pid:<12} {why:<11} {name!r} = {value!r}")
        for pid, name, value in m["misses"]:
            print(f"  missed {pid:<12} {name!r} = {value!r}")

    for kind, a in agreement().items():
        print(f"a second reader on the first round's {kind} passages: {a['both']} facts marked by both, "
              f"{a['only_first']} by the set's reader alone, {a['only_second']} by the second alone")
    old = old_finder()
    before = measure(passages, old.detect)["kinds"]["all"]
    print(f"\nthe rule before: precision {before['precision']:.3f}, recall {before['recall']:.3f} "
          f"({before['found']} found, {before['true']} true)")
    if args.corpora:
        texts = [p.read_text(encoding="utf-8") for p in sorted(args.corpora.glob("*.md"))]
    else:
        texts = [p["text"] for p in load("all")]
    text = "\n\n".join(texts)
    new_s, old_s = _speed(finder.detect, text, 3), _speed(old.detect, text, 3)
    print(f"speed on {len(text.encode('utf-8')) / 1e6:.2f} MB: {new_s:.2f} MB/s against {old_s:.2f} MB/s "
          f"before ({new_s / old_s:.2f}x)")
    if args.corpora:
        t_new, said_new = _audit_time(args.corpora, finder.detect)
        t_old, said_old = _audit_time(args.corpora, old.detect)
        print(f"the audit of that folder as a knowledge base (900 characters, six overlaps): {t_new:.2f} s against "
              f"{t_old:.2f} s before, throughput {t_old / t_new:.2f}x\n  now:    {said_new}\n  before: {said_old}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
