"""The splitter registry (py/ragsim/split/registry.py) drives what reads it: the strategy table,
`estimate`, the pipeline's ordered columns, the settings map's grid, the code panel's dispatch and
the page's table (build.py). A registration that disagrees with its splitter fails here."""

import json
import random

import pytest
from hypothesis import given, settings, strategies as st

import build
from helpers import make_request
from ragsim import split as splitters
from ragsim.errors import RequestError
from ragsim.judge.pipeline import split_all
from ragsim.split import registry
from ragsim.text.index import DocIndex
from ragsim.wire import api, codegen
from ragsim.wire.request import read_request

TEXT = "One two three. Four five six!\n\nSeven eight, nine ten? Eleven.\nTwelve thirteen. " * 4


def first_values(sp) -> dict:
    """A chunking that sets every field of `sp` the page starts with (where it applies)."""
    chunking = {"strategy": sp.name}
    for f in sp.fields:
        start = f.default if f.start is None else f.start
        if all(chunking.get(k, sp.field(k).default) == v for k, v in f.when) and not chunking.get(f.unless):
            if start is not None:
                chunking[f.name] = start
    return chunking


def test_the_strategy_table_is_the_registry_in_order():
    assert list(splitters.STRATEGIES) == [s.name for s in registry.SPLITTERS]
    assert all(splitters.STRATEGIES[s.name] is s.split for s in registry.SPLITTERS)


def test_every_registered_splitter_has_one_code_generator_and_no_other():
    assert set(codegen.GENERATORS) == set(registry.BY_NAME)


@pytest.mark.parametrize("sp", registry.SPLITTERS, ids=lambda s: s.name)
def test_the_code_panel_writes_each_splitter_with_its_library_class(sp):
    code = codegen.equivalent_code({"chunking": first_values(sp), "retrieval": {"k": 2}, "query": "seven"})
    assert "chunks" in code
    if sp.cls:
        assert sp.cls in code


@pytest.mark.parametrize("sp", registry.SPLITTERS, ids=lambda s: s.name)
def test_registered_defaults_are_the_splitters_own(sp):
    """Every field at its registered default splits exactly as the field left out."""
    doc = DocIndex.build(TEXT)
    base = {"strategy": sp.name, **{f.name: f.start for f in sp.fields if f.default is registry.REQUIRED}}
    given_defaults = dict(base)
    for f in sp.fields:
        applies = all(given_defaults.get(k, sp.field(k).default) == v for k, v in f.when) and not base.get(f.unless)
        if f.default is not registry.REQUIRED and applies:
            given_defaults[f.name] = f.default
    with_them, without = splitters.split(doc, given_defaults), splitters.split(doc, base)
    assert (with_them.starts, with_them.ends, with_them.units) == (without.starts, without.ends, without.units)


@pytest.mark.parametrize("sp", registry.SPLITTERS, ids=lambda s: s.name)
def test_every_registered_field_is_read_by_its_splitter(sp):
    doc = DocIndex.build(TEXT)
    for f in sp.fields:
        chunking = {"strategy": sp.name, **dict(f.when)}
        if sp.field("size") is not None and sp.field("size").default is registry.REQUIRED:
            chunking["size"] = 10
        chunking[f.name] = {"not": "a value"}
        with pytest.raises(RequestError) as e:
            splitters.split(doc, chunking)
        assert e.value.field == f"chunking.{f.name}"


def test_sized_splitters_have_a_grid_and_a_unit_for_it():
    for sp in registry.SPLITTERS:
        # a semantic chunker's grid is its own axes (a threshold, a minimum size), size or not
        assert (sp.grid is not None) == (sp.field("size") is not None or sp.embeds), sp.name
        if sp.grid:
            assert all(sp.field(name) is not None for name in sp.grid)
        if sp.unit_field:
            assert sp.field(sp.unit_field) is not None and sp.unit in sp.units.values()


def text_of(rng: random.Random) -> str:
    words = ["a", "bb", "ccc.", "dd,", "eeee", "f!", "\n\n", "\n", ".", "  ", "\f"]
    return " ".join(rng.choice(words) for _ in range(rng.randrange(0, 60)))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**9), size=st.integers(1, 12), overlap=st.integers(0, 11))
def test_estimate_is_the_chunk_count_of_every_countable_splitter(seed, size, overlap):
    rng = random.Random(seed)
    doc = DocIndex.build(text_of(rng))
    for sp in registry.SPLITTERS:
        for value in (sp.units if sp.unit_field else [None]):
            chunking = {"strategy": sp.name, "size": size, "overlap": overlap}
            if value is not None:
                chunking[sp.unit_field] = value
            try:
                n = len(splitters.split(doc, chunking))
            except RequestError:
                continue  # a refused setting: estimate need not say anything
            guess = splitters.estimate(doc, chunking)
            if sp.count is None:
                assert guess == 0
            elif guess:  # 0: the splitter cannot tell before splitting (windows over tokens)
                assert guess == n if sp.counted == "exact" else guess >= n, chunking
            if sp.name == "window" and value in ("words", "chars"):
                assert guess == n  # words and characters are countable before splitting


def test_monotone_splits_walk_forward_and_mark_the_corpus_ordered():
    rng = random.Random(7)
    for _ in range(30):
        text = text_of(rng)
        for sp in registry.SPLITTERS:
            for unit in sp.monotone_in:
                chunking = {"strategy": sp.name, sp.unit_field: unit, "size": rng.randrange(1, 9)}
                chunking["overlap"] = rng.randrange(chunking["size"])
                got = splitters.split(DocIndex.build(text), chunking)
                assert all(a <= b for a, b in zip(got.starts, got.starts[1:]))
                assert all(a <= b for a, b in zip(got.ends, got.ends[1:]))
                req = read_request({**make_request(text), "chunking": chunking})
                assert split_all(req, api.Session(), req.chunking).ordered
    assert not registry.monotone({"strategy": "window", "unit": "tokens"})
    assert not registry.monotone({"strategy": "no-such-splitter"})


def map_request(chunking: dict, sizes, overlaps) -> dict:
    req = make_request(TEXT, size=8, overlap=2)
    req["chunking"] = chunking
    start = TEXT.index("Seven")
    req["span"] = {"doc": req["documents"][0]["id"], "start": start, "end": start + 11}
    req["query"] = "seven eight"
    req["map"] = {"sizes": sizes, "overlaps": overlaps}
    return req


def test_a_map_cell_sets_the_registered_grid_fields():
    out = api.simulate(map_request({"strategy": "haystack", "size": 8, "overlap": 2}, [3, 6], [0, 3]))
    cells = out["map"]["cells"]
    assert cells[0][1] is None  # overlap 3 at size 3: the splitter's refusal of a grid field
    for i, size in enumerate([3, 6]):
        for j, overlap in enumerate([0, 3]):
            if cells[i][j] is None:
                continue
            alone = api.simulate(map_request({"strategy": "haystack", "size": size, "overlap": overlap}, [size], [overlap]))
            assert alone["map"]["cells"][0][0] == cells[i][j]
    assert registry.grid_fields({"strategy": "haystack"}) == ("size", "overlap")


def test_a_splitter_without_a_size_maps_one_setting_everywhere():
    out = api.simulate(map_request({"strategy": "llamaindex-markdown"}, [5, 50], [0, 1]))
    cells = [c for row in out["map"]["cells"] for c in row]
    assert None not in cells and all(c == cells[0] for c in cells)
    assert registry.grid_fields({"strategy": "llamaindex-markdown"}) == ()


def test_describe_uses_the_library_names():
    sp = registry.BY_NAME["langchain-recursive"]
    assert sp.describe({"strategy": sp.name, "size": 1000, "overlap": 200}) == \
        "LangChain RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)"
    assert registry.BY_NAME["haystack"].describe({}) == "Haystack DocumentSplitter(split_length=200, split_overlap=0)"


def test_the_page_gets_the_registry_as_a_module():
    table = json.loads(splitters.registry_json())
    assert table["default"] == registry.DEFAULT
    assert [s["name"] for s in table["splitters"]] == list(splitters.STRATEGIES)
    module = build.splitters_module().decode()
    assert module.splitlines()[-1] == f"export const REGISTRY = {splitters.registry_json()};"
