"""Checks every label's offsets against its passage, and that every passage is labelled once:
`python tests/data/facts/check_labels.py [KIND ...]` (labels/KIND.jsonl and labels/KIND-more.jsonl)."""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
WHY = {"citation", "page", "id", "in_name", "label", "date", "other_name", "no_name", "far_name"}


def load_passages() -> dict:
    return {r["id"]: r for r in map(json.loads, (HERE / "passages.jsonl").read_text(encoding="utf-8").splitlines())}


def problems(kinds=None) -> list[str]:
    passages = load_passages()
    out = []
    seen = set()
    for path in sorted((HERE / "labels").glob("*.jsonl")):
        if kinds and path.stem.split("-")[0] not in kinds:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            pid = row["passage"]
            if pid not in passages:
                out.append(f"{path.name}:{n}: no passage {pid!r}")
                continue
            if pid in seen:
                out.append(f"{path.name}:{n}: passage {pid} labelled twice")
            seen.add(pid)
            text = passages[pid]["text"]
            for group in ("facts", "not_facts"):
                for item in row.get(group, []):
                    for key in ("name", "value"):
                        s, w = item[f"{key}_start"], item[key]
                        if key == "name" and group == "not_facts" and w == "" and s == -1:
                            continue
                        if not w or text[s:s + len(w)] != w:
                            out.append(f"{path.name}:{n}: {pid} {group} {key} {w!r} is not at {s} "
                                       f"(there: {text[s:s + len(w)]!r}; first at {text.find(w)})")
                    if group == "not_facts" and item.get("why") not in WHY:
                        out.append(f"{path.name}:{n}: {pid} not_fact {item.get('value')!r} has why {item.get('why')!r}")
    for kind in sorted({r["kind"] for r in passages.values()}):
        if kinds and kind not in kinds:
            continue
        missing = [p for p, r in passages.items() if r["kind"] == kind and p not in seen]
        if missing:
            out.append(f"passages of kind {kind} not labelled: {', '.join(missing)}")
    return out


if __name__ == "__main__":
    found = problems(set(sys.argv[1:]) or None)
    print("\n".join(found) or "every label is where it says")
    sys.exit(1 if found else 0)
