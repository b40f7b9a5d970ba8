"""What `identify` says about the splitter it found: the result's shape (SPEC section 11's
`splitter` entry), the sentence for people, the first chunk that differs, and whether the splitter
moves its later cuts when only the overlap changes (measured by splitting again); and which token
encodings could be tried."""

from ragsim import split as splitters
from ragsim.text import tokens
from ragsim.errors import RequestError


def _starts(index, chunking: dict) -> list | None:
    try:
        return splitters.split(index, chunking).starts
    except RequestError:
        return None


class Loadable:
    """Whether a family's tokenizer can be had (its rank file loads), asked once per encoding; a
    sentence in `skipped` for each that cannot."""

    def __init__(self):
        self.state: dict[str, bool] = {}
        self.skipped: list[str] = []

    def __call__(self, family) -> bool:
        if not isinstance(family.unit, tuple) or family.unit[0] not in ("tokens", "pieces"):
            return True
        name = family.unit[1]
        if name not in self.state:
            try:
                tokens.loaded(name) or tokens.get(name, "tokenizer")
                self.state[name] = True
            except (RequestError, ValueError) as e:
                self.state[name] = False
                reason = e.message if isinstance(e, RequestError) else str(e)
                self.skipped.append(f"Splitters counting {name} tokens were not tried: {reason}")
        return self.state[name]


def report(ctx, doc, best, skipped: list[str]) -> dict:
    """The result for one document, its sentence, and what differs from the named or nearest splitter."""
    out = {"doc": doc, "strategy": None, "fields": None, "reproduced": 0, "chunks": ctx.n,
           "moves_with_overlap": None, "line": "", "differs": None, "nearest": None, "skipped": skipped}
    if best is None:
        out["line"] = ("No stored chunk lies in the document with its own text, so no splitter can be named."
                       if ctx.n else "There are no chunks to compare.")
        return out
    fields = {k: v for k, v in best.chunking.items() if k != "strategy"}
    differs = first_difference(ctx, best.extents)
    said = f"{describe(best.chunking)}: {best.reproduced:,} of {ctx.n:,} chunks exactly"
    if 2 * best.reproduced >= ctx.n:
        out.update(strategy=best.chunking["strategy"], fields=fields, reproduced=best.reproduced,
                   moves_with_overlap=moves_with_overlap(ctx.index, best.chunking), differs=differs,
                   line=said + (f"; {_difference_said(differs)}" if differs else ""))
        return out
    out.update(reproduced=best.reproduced, differs=differs,
               nearest={"strategy": best.chunking["strategy"], "fields": fields, "reproduced": best.reproduced,
                        "differs": differs},
               line=f"No mirrored splitter reproduces half of these chunks; the nearest is {said}"
                    + (f"; {_difference_said(differs)}" if differs else ""))
    return out


def first_difference(ctx, sim: list) -> dict | None:
    """The first stored chunk (in document order) that `sim` does not have at the same place."""
    for i, (extent, ok) in enumerate(zip(ctx.placed, ctx.ok)):
        other = sim[i] if i < len(sim) else None
        if ok and extent == other:
            continue
        return {"number": i + 1, "stored": list(extent), "simulated": list(other) if other else None,
                "text_differs": not ok, "simulated_chunks": len(sim)}
    if len(sim) != len(ctx.placed):
        return {"number": len(ctx.placed) + 1, "stored": None,
                "simulated": list(sim[len(ctx.placed)]) if len(sim) > len(ctx.placed) else None,
                "text_differs": False, "simulated_chunks": len(sim)}
    return None


def _difference_said(d: dict) -> str:
    where = f"first difference at chunk {d['number']}"
    stored = f"stored {d['stored'][0]}-{d['stored'][1]}" if d["stored"] else "no stored chunk"
    simulated = f"simulated {d['simulated'][0]}-{d['simulated'][1]}" if d["simulated"] else "no simulated chunk"
    if d["text_differs"]:
        return f"{where}: its stored text is not the document's at {d['stored'][0]}-{d['stored'][1]} ({simulated})"
    return f"{where}: {stored}, {simulated}"


def moves_with_overlap(index, chunking: dict) -> bool:
    """Whether the chunks after the first start elsewhere when only the overlap changes, measured by
    splitting again with other overlaps (none, a quarter and half of the size, one more)."""
    base = _starts(index, chunking)
    if base is None:
        return False
    size, overlap = chunking.get("size"), chunking.get("overlap", 0)
    others = (0, size // 4, size // 2, overlap + 1) if size else (overlap + 1, overlap + 8)
    for other in others:
        if other == overlap or (size and other >= size):
            continue
        starts = _starts(index, {**chunking, "overlap": other})
        if starts is not None and starts[1:] != base[1:]:
            return True
    return False


_UNIT_WORDS = {"chars": "characters", "words": "words"}


def describe(chunking: dict) -> str:
    """The splitter as its library spells it: `LangChain RecursiveCharacterTextSplitter(chunk_size=1000, ...)`."""
    s, size, overlap = chunking["strategy"], chunking.get("size"), chunking.get("overlap")
    tokenizer = chunking.get("tokenizer", tokens.DEFAULT)
    sized = f"chunk_size={size}, chunk_overlap={overlap}"
    if s == "langchain-recursive" and chunking.get("length") == "tokens":
        return f'LangChain RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name="{tokenizer}", {sized})'
    if s == "langchain-recursive":
        return f"LangChain RecursiveCharacterTextSplitter({sized})"
    if s == "langchain-character":
        separator = chunking.get("separator", "\n\n").encode("unicode_escape").decode("ascii")
        return f'LangChain CharacterTextSplitter(separator="{separator}", {sized})'
    if s == "langchain-token":
        return f'LangChain TokenTextSplitter(encoding_name="{tokenizer}", {sized})'
    if s == "haystack":
        return (f'Haystack DocumentSplitter(split_by="{chunking.get("split_by", "word")}", '
                f"split_length={size}, split_overlap={overlap})")
    if s == "llamaindex-sentence":
        return f"LlamaIndex SentenceSplitter({sized})"
    if s == "llamaindex-token":
        return f"LlamaIndex TokenTextSplitter({sized})"
    if s == "llamaindex-markdown":
        return "LlamaIndex MarkdownNodeParser()"
    unit = chunking.get("unit", "words")
    unit = _UNIT_WORDS.get(unit, f"{tokenizer} tokens")
    if s == "sentences":
        return f"ragsim sentence packing (size {size} {unit}, overlap {overlap})"
    return f"fixed windows of {size} {unit} (overlap {overlap})"
