"""Every splitter, registered once with what the rest of ragsim needs of it.

A `Splitter` names its `split` function, the fields it reads from `chunking` (defaults, the page's
first values, the library's own argument names, when each applies), the unit its size counts in,
whether and how its chunk count is known before splitting, which fields a settings-map cell sets,
and the library class it mirrors. `ragsim.split` (STRATEGIES, `estimate`), the pipeline, the settings
map, the code panel's dispatch (`wire/codegen.py`) and the page (build.py writes `registry_json()`
into the page's `assets/js/splitters.js`) all read this table. A new splitter is one module and one
entry here (docs/architecture.md, "A new splitter").
"""

import json
from dataclasses import dataclass, field as _field

from ragsim.split import haystack, langchain_character, langchain_recursive, langchain_token, sentences, windows
from ragsim.split import llamaindex_markdown, llamaindex_sentence, llamaindex_token, semantic_split
from ragsim.split.semantic_langchain import BREAKPOINT_DEFAULTS, LANGCHAIN_SENTENCE_REGEX
from ragsim.split.langchain_common import DEFAULT_OVERLAP as LC_OVERLAP, DEFAULT_SIZE as LC_SIZE
from ragsim.split.llamaindex_common import DEFAULT_CHUNK_SIZE as LI_SIZE
from ragsim.text.tokens import DEFAULT as TOKENIZER

REQUIRED = None  # a field's `default` when the splitter refuses a request without it


@dataclass(frozen=True)
class Field:
    """One `chunking` field a splitter reads. `default`: the splitter's value when the field is
    missing (REQUIRED: none); `start`: the page's first value where it differs; `library`: the
    library's argument name; the field applies only when `when`'s fields hold those values (the
    page's values) and `unless` names no field that is set."""
    name: str
    default: object = REQUIRED
    start: object = None
    library: str | None = None
    when: tuple = ()
    unless: str | None = None
    minimum: object = None  # the least value the splitter takes (None: no bound given here)
    maximum: object = None
    choices: tuple | None = None  # the values it takes, where it takes only a few
    number: bool = False  # takes any real number (not only whole ones): a map axis of such a field too
    default_by: tuple = ()  # (field, {value: default}): the default follows another field's value

    def as_json(self) -> dict:
        out = {"name": self.name, "default": self.default, "start": self.default if self.start is None else self.start}
        if self.library:
            out["library"] = self.library
        for key, value in (("min", self.minimum), ("max", self.maximum), ("choices", self.choices)):
            if value is not None:
                out[key] = list(value) if key == "choices" else value
        if self.number:
            out["number"] = True
        if self.default_by:
            out["default_by"] = {"field": self.default_by[0], "values": dict(self.default_by[1])}
        if self.when:
            out["when"] = dict(self.when)
        if self.unless:
            out["unless"] = self.unless
        return out


@dataclass(frozen=True)
class Splitter:
    """One `chunking.strategy`.

    - `unit`: the unit its size counts in, by name; with `unit_field`, that field's value picks the
      name from `units` (`unit` when the value is missing or unknown).
    - `count(doc, chunking, size, overlap)`: its chunk count by arithmetic before splitting
      (`counted`: "exact", or "at most" where some windows may be skipped), given a size and overlap
      already seen to be whole numbers with 0 <= overlap < size; 0 where it cannot tell; None:
      counted only after splitting.
    - `grid`: the (size, overlap) fields a settings-map cell sets, in its own unit; None: no size.
    - `monotone_in`: the units (values of `unit_field`) in which its chunks walk forward.
    - `overlap_below_size`: overlap must be smaller than the size (else at most the size).
    - `overlap_kept`: every stretch of at most `overlap` units lies whole in some chunk.
    - `size_max`: the page's slider maximum, one number or by `unit_field` value.
    - `overlap_note`: why a boundary may share nothing although overlap was asked for.
    """
    name: str
    title: str
    split: object
    fields: tuple
    unit: str
    unit_field: str | None = None
    units: dict = _field(default_factory=dict)
    library: str | None = None
    cls: str | None = None
    count: object = None
    counted: str | None = None
    grid: tuple | None = ("size", "overlap")
    monotone_in: tuple = ()
    overlap_below_size: bool = True
    overlap_kept: bool = False
    size_max: object = 8000
    overlap_note: str | None = None
    embeds: bool = False  # needs embeddings: `split(doc, chunking, embeddings)` (SPEC section 12)

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def monotone(self, chunking: dict) -> bool:
        """Whether this chunking's chunks walk forward (start and end both increase) by construction."""
        if not (self.monotone_in and self.unit_field):
            return False
        return chunking.get(self.unit_field, self.field(self.unit_field).default) in self.monotone_in

    def describe(self, chunking: dict) -> str:
        """`LangChain RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)` for reports: the
        fields the chunking sets and its size and overlap, by the library's names (ragsim's own
        splitters by their title and field names)."""
        args = [f"{f.library or f.name}={chunking.get(f.name, f.default)!r}" for f in self.fields
                if f.name in chunking or (f.name in (self.grid or ()) and f.default is not REQUIRED)]
        head = f"{self.library} {self.cls}" if self.cls else self.title
        return f"{head}({', '.join(args)})"

    def as_json(self) -> dict:
        out = {"name": self.name, "title": self.title, "fields": [f.as_json() for f in self.fields],
               "unit": self.unit, "unit_field": self.unit_field, "units": self.units,
               "library": self.library, "class": self.cls, "counted": self.counted if self.count else None,
               "grid": list(self.grid) if self.grid else None, "monotone_in": list(self.monotone_in),
               "overlap_below_size": self.overlap_below_size, "overlap_kept": self.overlap_kept,
               "size_max": self.size_max, "overlap_note": self.overlap_note, "embeds": self.embeds}
        return out


def _sized(size, overlap, size_name="chunk_size", overlap_name="chunk_overlap", start=(None, None)) -> tuple:
    return (Field("size", size, start[0], size_name), Field("overlap", overlap, start[1], overlap_name))


_TOKENIZER = Field("tokenizer", TOKENIZER, library="encoding_name")
_OWN_UNITS = {"words": "words", "chars": "characters", "tokens": "tokens"}
_OWN_MAX = {"words": 400, "chars": 4000, "tokens": 2000}
_PIECES = "this splitter only overlaps whole pieces, and these pieces are longer than the overlap."
_LC_COMMON = (Field("is_separator_regex", False), Field("keep_separator", False),
              Field("strip_whitespace", True))
_LI_METADATA = Field("metadata", "", library="metadata_str")

SPLITTERS = (
    Splitter("window", "Fixed windows (ragsim)", windows.split,
             (Field("unit", "words"), Field("tokenizer", TOKENIZER, when=(("unit", "tokens"),)),
              Field("size", REQUIRED, 24), Field("overlap", 0, 6)),
             "words", "unit", _OWN_UNITS, count=windows.count, counted="exact", monotone_in=("words", "chars"),
             overlap_kept=True, size_max=_OWN_MAX),
    Splitter("langchain-character", "LangChain CharacterTextSplitter", langchain_character.split,
             (*_sized(LC_SIZE, LC_OVERLAP), Field("separator", "\n\n"), *_LC_COMMON),
             "characters", library="LangChain", cls="CharacterTextSplitter", overlap_below_size=False,
             overlap_note=_PIECES),
    Splitter("langchain-recursive", "LangChain RecursiveCharacterTextSplitter",
             langchain_token.split_recursive_by_length,
             (Field("length", "chars", library="length_function"),
              Field("tokenizer", TOKENIZER, library="encoding_name", when=(("length", "tokens"),)),
              *_sized(LC_SIZE, LC_OVERLAP), Field("language", None),
              Field("separators", list(langchain_recursive.DEFAULT_SEPARATORS), unless="language"),
              Field("is_separator_regex", False, unless="language"), Field("keep_separator", True),
              Field("strip_whitespace", True)),
             "characters", "length", {"chars": "characters", "tokens": "tokens"}, library="LangChain",
             cls="RecursiveCharacterTextSplitter", overlap_below_size=False, overlap_note=_PIECES),
    Splitter("langchain-token", "LangChain TokenTextSplitter", langchain_token.split,
             (_TOKENIZER, *_sized(LC_SIZE, LC_OVERLAP)), "tokens", library="LangChain", cls="TokenTextSplitter"),
    Splitter("haystack", "Haystack DocumentSplitter", haystack.split,
             (Field("split_by", "word"), *_sized(200, 0, "split_length", "split_overlap"), Field("split_threshold", 0)),
             "words", "split_by", {k: unit for k, (_, unit) in haystack.SPLIT_BY.items()}, library="Haystack",
             cls="DocumentSplitter", count=haystack.count, counted="at most",
             size_max={k: 1000 if k == "word" else 100 for k in haystack.SPLIT_BY},
             overlap_note="Haystack repeats whole split units, and a chunk merged by split_threshold or an empty "
                          "unit repeats nothing."),
    Splitter("sentences", "Sentence packing (ragsim)", sentences.split,
             (Field("unit", "words"), Field("tokenizer", TOKENIZER, when=(("unit", "tokens"),)),
              Field("size", REQUIRED, 40), Field("overlap", 0, 10)),
             "words", "unit", _OWN_UNITS, size_max=_OWN_MAX,
             overlap_note="sentence packing only overlaps whole sentences, and these sentences are longer than "
                          "the overlap."),
    # LlamaIndex (llama-index-core 0.14.25): sizes in tiktoken tokens; markdown sections have no size
    Splitter("llamaindex-sentence", "LlamaIndex SentenceSplitter", llamaindex_sentence.split,
             (_TOKENIZER, *_sized(LI_SIZE, llamaindex_sentence.SENTENCE_CHUNK_OVERLAP), Field("separator", " "),
              Field("paragraph_separator", llamaindex_sentence.DEFAULT_PARAGRAPH_SEP),
              Field("secondary_chunking_regex", llamaindex_sentence.CHUNKING_REGEX), _LI_METADATA),
             "tokens", library="LlamaIndex", cls="SentenceSplitter", overlap_below_size=False),
    Splitter("llamaindex-token", "LlamaIndex TokenTextSplitter", llamaindex_token.split,
             (_TOKENIZER, *_sized(LI_SIZE, llamaindex_token.DEFAULT_CHUNK_OVERLAP), Field("separator", " "),
              Field("backup_separators", ["\n"]), _LI_METADATA),
             "tokens", library="LlamaIndex", cls="TokenTextSplitter", overlap_below_size=False),
    Splitter("llamaindex-markdown", "LlamaIndex MarkdownNodeParser", llamaindex_markdown.split, (),
             "characters", library="LlamaIndex", cls="MarkdownNodeParser", grid=None),
    # Semantic chunkers (SPEC section 12, docs/semantic.md): cut where neighbouring sentence windows'
    # embeddings differ; their chunk count is known only after splitting, and a map cell moves the
    # fields that re-cut from kept distances (never one that needs a new embedding)
    Splitter("langchain-semantic", "LangChain SemanticChunker", semantic_split.split,
             (Field("buffer_size", 1, minimum=0, maximum=10),
              Field("breakpoint_threshold_type", "percentile", choices=tuple(BREAKPOINT_DEFAULTS)),
              Field("breakpoint_threshold_amount", None, 95, minimum=0, number=True,
                    default_by=("breakpoint_threshold_type", tuple(BREAKPOINT_DEFAULTS.items()))),
              Field("number_of_chunks", None, minimum=1),
              Field("sentence_split_regex", LANGCHAIN_SENTENCE_REGEX),
              Field("min_chunk_size", None, 0, minimum=0)),
             "characters", library="LangChain", cls="SemanticChunker",
             grid=("breakpoint_threshold_amount", "min_chunk_size"), size_max=None, embeds=True),
    Splitter("llamaindex-semantic", "LlamaIndex SemanticSplitterNodeParser", semantic_split.split,
             (Field("buffer_size", 1, minimum=0, maximum=10),
              Field("breakpoint_percentile_threshold", 95, minimum=0, maximum=100)),
             "characters", library="LlamaIndex", cls="SemanticSplitterNodeParser",
             grid=("breakpoint_percentile_threshold",), size_max=None, embeds=True),
    # Chroma's chunkers (brandonstarxel/chunking_evaluation d451fc4): sizes in cl100k_base tokens
    Splitter("chroma-cluster", "Chroma ClusterSemanticChunker", semantic_split.split,
             (Field("size", 400, library="max_chunk_size", minimum=1),
              Field("min_chunk_size", 50, library="min_chunk_size", minimum=1), Field("tokenizer", TOKENIZER)),
             "tokens", library="Chroma", cls="ClusterSemanticChunker", grid=("size",), size_max=2000, embeds=True),
    Splitter("chroma-kamradt", "Chroma KamradtModifiedChunker", semantic_split.split,
             (Field("size", 400, library="avg_chunk_size", minimum=1),
              Field("min_chunk_size", 50, library="min_chunk_size", minimum=1), Field("tokenizer", TOKENIZER)),
             "tokens", library="Chroma", cls="KamradtModifiedChunker", grid=("size",), size_max=2000, embeds=True),
)
BY_NAME = {s.name: s for s in SPLITTERS}
EMBEDDING = frozenset(s.name for s in SPLITTERS if s.embeds)
DEFAULT = "window"


def of(chunking: dict) -> Splitter | None:
    """The registered splitter a chunking names (the default when it names none); None when unknown."""
    name = chunking.get("strategy", DEFAULT)
    return BY_NAME.get(name) if isinstance(name, str) else None


def monotone(chunking: dict) -> bool:
    """Whether the chunking's chunks walk forward by construction (False for an unknown splitter)."""
    s = of(chunking)
    return s is not None and s.monotone(chunking)


def grid_fields(chunking: dict) -> tuple:
    """The fields a settings-map cell sets: the splitter's grid, () when it has no size, and
    ("size", "overlap") for a name the splitter refuses anyway (its own error then comes)."""
    s = of(chunking)
    return ("size", "overlap") if s is None else s.grid or ()


def registry_json() -> str:
    """The table for the page: `{"default": name, "splitters": [...]}` in registration order."""
    return json.dumps({"default": DEFAULT, "splitters": [s.as_json() for s in SPLITTERS]},
                      ensure_ascii=False)  # insertion order: the page lists units and choices as registered
