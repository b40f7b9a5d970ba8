"""How the passages of the labelled fact set were drawn (run once; the output is kept in the repository).

    python tests/data/facts/sample_passages.py PATH/TO/general_evaluation_data/corpora > tests/data/facts/passages.jsonl

The corpora are Chroma's chunking_evaluation general evaluation data (brandonstarxel/chunking_evaluation,
MIT): Wikipedia articles (wikitext-103's tokenisation), PubMed Central open-access papers with their
reference lists, financial filings with their tables (lower-cased), State of the Union speeches and chat
logs. Each passage is a window of about 1,200 characters starting at a random line of its corpus
(seeded), cut at the end of a line or sentence; a passage shares no text with another. For the
biomedical papers a share of the windows is drawn from the reference lists on purpose, since references
are where a rule finds the most false pairs. Passages alternate between the "dev" split (read while the
finder was written) and the "test" split (held out, measured at the end).
"""

import json
import pathlib
import random
import re
import sys

PLAN = [  # corpus, kind, passages, passages from reference lists
    ("wikitexts.md", "encyclopedic", 26, 0),
    ("pubmed.md", "biomedical", 24, 6),
    ("finance.md", "financial", 20, 0),
    ("state_of_the_union.md", "speech", 18, 0),
    ("chatlogs.md", "chat", 12, 0),
]
# a second draw, made when the first held fewer than 300 facts: more of the kinds whose facts are
# scarce, from a seed of its own, sharing no text with the first
MORE = [("wikitexts.md", "encyclopedic", 34, 0), ("pubmed.md", "biomedical", 16, 2), ("finance.md", "financial", 20, 0),
        ("state_of_the_union.md", "speech", 12, 0), ("chatlogs.md", "chat", 8, 0)]
# a third, when the second still left the set short of 300 facts
THIRD = [("wikitexts.md", "encyclopedic", 20, 0), ("finance.md", "financial", 12, 0)]
WIDTH = 1200


def window(text: str, start: int) -> tuple[int, int]:
    # start at the beginning of a line (or, in one-line corpora, after a sentence end)
    line = text.rfind("\n", 0, start) + 1
    if start - line > 400:
        m = re.compile(r"[.!?] ").search(text, start)
        start = m.end() if m else start
    else:
        start = line
    end = min(len(text), start + WIDTH)
    cut = max(text.rfind("\n", start + WIDTH // 2, end), text.rfind(". ", start + WIDTH // 2, end) + 1)
    return start, (cut if cut > start else end)


def draw(text: str, n: int, rng: random.Random, taken: list, within=None) -> list[tuple[int, int]]:
    out, tries = [], 0
    while len(out) < n and tries < 10000:
        tries += 1
        lo, hi = within[rng.randrange(len(within))] if within else (0, len(text))
        s, e = window(text, rng.randrange(lo, max(lo + 1, hi - WIDTH)))
        if e - s < 300 or any(s < b and a < e for a, b in taken):
            continue
        taken.append((s, e))
        out.append((s, e))
    return out


def main(folder: str) -> None:
    rows, taken_by = [], {}
    for seed, plan, first in ((20261204, PLAN, True), (20261205, MORE, False), (20261206, THIRD, False)):
        rng = random.Random(seed)
        for name, kind, n, refs in plan:
            text = (pathlib.Path(folder) / name).read_text(encoding="utf-8")
            taken: list = taken_by.setdefault(name, [])
            before = len([r for r in rows if r["kind"] == kind])
            ref_spans = []
            for m in re.finditer(r"==== Refs\n", text):
                nxt = text.find("==== Front", m.end())
                ref_spans.append((m.end(), nxt if nxt > 0 else len(text)))
            spans = draw(text, refs, rng, taken, ref_spans) if refs else []
            spans += draw(text, n - refs, rng, taken)
            for i, (s, e) in enumerate(sorted(spans), before):
                rows.append({"id": f"{kind[:4]}-{i + 1:02d}", "kind": kind, "source": f"chunking_evaluation corpora/{name}",
                             "offset": s, "split": "dev" if i % 2 == 0 else "test", "text": text[s:e]})
        if first:
            first_rows = len(rows)
    rows.insert(first_rows, {"id": "neptune-01", "kind": "encyclopedic", "source": "Wikipedia, Rings of Neptune (the study's sentence, as the issue quotes it)",
                 "offset": 0, "split": "dev", "text": "The three main rings are the narrow Adams Ring, 63,000 km from the centre of Neptune, the Le Verrier Ring, at 53,000 km, and the broader, fainter Galle Ring, at 42,000 km."})
    for r in rows:
        print(json.dumps(r, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])
