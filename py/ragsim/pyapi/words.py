"""The verdict in the page's words (assets/js/render/verdict.js, format.js `chunkList`): a headline and
one sentence saying whether the marked answer reaches the model whole."""

from __future__ import annotations

HEADLINES = {"intact": "Present and intact", "ranked_out": "Ranked out", "cut": "Cut in half",
             "pending": "Waiting for the embeddings", None: "No answer marked"}
# The verdict's colour and mark, as the page's verdict box (assets/style.css --intact, --ranked, --cut).
VERDICT_COLORS = {"intact": "#1d7a3a", "present": "#1d7a3a", "ranked_out": "#7d5200", "cut": "#b3261e",
                  "absent": "#b3261e", "destroyed": "#b3261e", None: "#56606b"}
MARKS = {"intact": "✓ ", "present": "✓ ", "ranked_out": "↓ ", "cut": "✂ ", "absent": "✂ ", "destroyed": "✂ "}


def list_numbers(nums: list) -> str:
    return ", ".join(map(str, nums[:-1])) + f" and {nums[-1]}" if len(nums) > 1 else "".join(map(str, nums))


def chunk_list(nums: list[int], max_runs: int = 3) -> str:
    """Chunk numbers as a person reads them: "chunk 7", "chunks 4 and 5", "chunks 208–226, 19 of them"."""
    n = len(nums)
    if n == 0:
        return "no chunk"
    if n == 1:
        return f"chunk {nums[0]}"
    if n <= 3:
        return f"chunks {list_numbers(nums)}"
    runs: list[list[int]] = []
    for x in nums:
        if runs and x == runs[-1][1] + 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    if len(runs) <= max_runs:
        shown = [str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}–{b}" for a, b in runs]
        text = f"chunks {list_numbers(shown)}"
        return f"{text}, {n:,} of them" if any(b > a + 1 for a, b in runs) else text
    return f"{n:,} chunks between {nums[0]} and {nums[-1]}"


def _cut(parts: list[dict]) -> str:
    nums = [c["number"] for c in parts]
    sent = [c["number"] for c in parts if c["retrieved"]]
    if len(parts) == 1:
        return f"only chunk {nums[0]} holds part of it, and it was {'' if sent else 'not '}sent."
    split = f"it is split across {chunk_list(nums)}, and "
    if not sent:
        return split + ("neither was sent." if len(parts) == 2 else "none of them was sent.")
    if len(sent) == len(parts):
        return split + ("both were sent, each with only a piece of it." if len(parts) == 2
                        else "all of them were sent, each with only a piece of it.")
    return split + f"only {chunk_list(sent)} {'was' if len(sent) == 1 else 'were'} sent."


def verdict_words(response: dict) -> tuple[str | None, str, str]:
    """(kind, headline, sentence) for a simulate response with its chunks as objects."""
    v = response.get("verdict") or {}
    kind, k, total = v.get("kind"), response["stats"]["k"], response["stats"]["chunks"]
    if kind is None:
        return None, HEADLINES[None], "Give answer= (the text that answers the query) to see whether it reaches the model whole."
    if kind == "pending":
        return kind, HEADLINES[kind], "The semantic chunker cuts once its sentence windows are embedded."
    chunks = response.get("chunks") or []
    if kind in ("intact", "ranked_out"):
        c = min((c for c in chunks if c["holds"] == "whole"), key=lambda c: c["rank"])
        if kind == "intact":
            return kind, HEADLINES[kind], (f"Chunk {c['number']} holds the whole sentence and ranks #{c['rank']} of "
                                           f"{total:,}, inside your top {k}.")
        return kind, HEADLINES[kind], f"Chunk {c['number']} holds it whole but ranks #{c['rank']}, outside your top {k}."
    return kind, HEADLINES["cut"], "No chunk holds the whole sentence: " + _cut([c for c in chunks if c["holds"] == "part"])
