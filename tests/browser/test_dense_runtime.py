"""The dense model in the browser (SPEC section 10): transformers.js and onnxruntime-web's CPU wasm,
all from dist/, give the same vectors as CPython's onnxruntime, and nothing leaves the origin.

The page's dense retrieval (test_dense_page.py) builds on this; here a bare test page
(fixtures/dense.html) loads the runtime with the settings notes/dense_api.md gives the worker."""

import json

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
from ragsim.host.clients import embed_onnx
from ragsim.text import wordpiece  # noqa: E402

from helpers import DENSE_LONG as LONG, DENSE_TEXTS as TEXTS  # noqa: E402

pytestmark = pytest.mark.slow  # real Chromium on the built dist/


@pytest.fixture(scope="module")
def dense_page(booted_page, server):
    config = json.loads((server.dist / "build.json").read_text())["assets"]["assets/build-config.js"]
    return booted_page(f"__tests__/dense.html?config=/{config}")


def test_browser_vectors_equal_cpython_onnxruntime(dense_page, offsite):
    browser = np.array(dense_page.evaluate("(texts) => embed(texts)", TEXTS))
    cpython = embed_onnx.Embedder(embed_onnx.model_dir()).embed(TEXTS)
    assert browser.shape == cpython.shape == (len(TEXTS), 384)
    cosines = (browser * cpython).sum(axis=1) / np.linalg.norm(browser, axis=1) / np.linalg.norm(cpython, axis=1)
    assert (1 - cosines).max() <= 1e-5
    assert round(float(browser[0] @ browser[1]), 4) == 0.7553
    assert offsite == []


def test_browser_truncates_to_256_pieces_where_the_core_says(dense_page):
    ids = dense_page.evaluate("(text) => tokens(text).map(Number)", LONG)
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102
    head = LONG[: wordpiece.read_end(LONG)]
    assert dense_page.evaluate("(text) => tokens(text).map(Number)", head) == ids


def test_the_int8_model_loads_from_dist_too(module_page, server, offsite):
    config = json.loads((server.dist / "build.json").read_text())["assets"]["assets/build-config.js"]
    module_page.goto(server.url(f"__tests__/dense.html?config=/{config}&dtype=q8"))
    module_page.wait_for_function("() => ['ready', 'error'].includes(document.body.dataset.state)", timeout=120_000)
    assert module_page.evaluate("document.body.dataset.state") == "ready", module_page.evaluate("document.body.innerText")
    approx = np.array(module_page.evaluate("(texts) => embed(texts)", TEXTS))
    exact = embed_onnx.Embedder(embed_onnx.model_dir()).embed(TEXTS)
    assert ((approx * exact).sum(axis=1)).min() > 0.95
    assert offsite == []
