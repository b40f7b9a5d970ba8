"""The dense model (SPEC section 10) against an independent implementation written here.

A plain numpy forward pass of all-MiniLM-L6-v2 (float64), from the package's own safetensors and its
own tokenizer.json read by Hugging Face `tokenizers`, must agree with the ONNX model that
tools/dense_model.py builds and onnxruntime runs, to 1e-5 in cosine. The core's pure WordPiece must
find the same truncation point as `tokenizers`.
"""

import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragsim.host.clients import embed_onnx
from ragsim.text import wordpiece

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import dense_model  # noqa: E402

pytest.importorskip("onnxruntime", reason="the dense extra is part of the test extras")
from tokenizers import Tokenizer  # noqa: E402

from helpers import DENSE_ANCHOR as ANCHOR, DENSE_LONG as LONG, DENSE_TEXTS  # noqa: E402

pytestmark = pytest.mark.slow  # builds the model and embeds hundreds of passages

TEXTS = [*DENSE_TEXTS, "The answer is right there in the document, and the model still says it does not know.", "x"]


@pytest.fixture(scope="module")
def sources():
    return dense_model.source_files(ROOT / ".cache" / "dense")


@pytest.fixture(scope="module")
def reference(sources):
    """The independent forward pass: (tokenizer, weights, config)."""
    data = sources["model.safetensors"]
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    header.pop("__metadata__", None)
    dtypes = {"F32": np.float32, "I64": np.int64}
    weights = {}
    for name, spec in header.items():
        a, b = spec["data_offsets"]
        array = np.frombuffer(data, dtype=dtypes[spec["dtype"]], count=(b - a) // np.dtype(dtypes[spec["dtype"]]).itemsize,
                              offset=8 + size + a)
        weights[name] = array.reshape(spec["shape"]).astype(np.float64)
    tokenizer = Tokenizer.from_str(sources["tokenizer.json"].decode())
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    return tokenizer, weights, json.loads(sources["config.json"])


_erf_exact = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    """erf at numpy speed, to a relative error of 1.2e-7 (Numerical Recipes' erfc, a Chebyshev fit):
    the hundreds of passages below would take minutes through math.erf one value at a time."""
    x = np.asarray(x, dtype=np.float64)
    z = np.abs(x)
    t = 1 / (1 + 0.5 * z)
    poly = (-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
        0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1 - erfc, erfc - 1)


def reference_embedding(reference, text: str, exact: bool = True) -> np.ndarray:
    """Embeddings, 6 encoder layers, mean pooling over the mask (all ones: one text), L2 norm."""
    tokenizer, w, config = reference
    ids = np.array(tokenizer.encode(text).ids)
    heads, eps = config["num_attention_heads"], config["layer_norm_eps"]

    def norm(x, p):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def dense(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = norm(x, "embeddings.LayerNorm")
    n, d = x.shape
    hd = d // heads
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (dense(x, p + f"attention.self.{m}").reshape(n, heads, hd).transpose(1, 0, 2)
                   for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, d)
        x = norm(dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = dense(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + (_erf_exact if exact else _erf)(h / math.sqrt(2)).astype(h.dtype))
        x = norm(dense(h, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


@pytest.fixture(scope="module")
def embedder():
    return embed_onnx.Embedder(embed_onnx.model_dir())


def cosine(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_onnx_model_agrees_with_the_numpy_reference(reference, embedder):
    onnx_vectors = embedder.embed(TEXTS)  # one batch: the short texts padded to the long one
    for text, vector in zip(TEXTS, onnx_vectors):
        ref = reference_embedding(reference, text)
        assert 1 - cosine(ref, vector) <= 1e-5, text
        assert np.abs(ref - vector).max() < 1e-4


def test_sanity_anchor(reference, embedder):
    ref = [reference_embedding(reference, t) for t in ANCHOR]
    assert round(cosine(*ref), 4) == 0.7553
    assert round(embedder.similarities(ANCHOR[0], [ANCHOR[1]])[0], 4) == 0.7553


def test_truncation_to_256_pieces_with_cls_and_sep(reference, untruncated, embedder):
    tokenizer = reference[0]
    assert len(untruncated.encode(LONG).ids) > 256
    ids = tokenizer.encode(LONG).ids
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102  # [CLS] ... [SEP]
    # The tail is invisible: the long text embeds exactly as its first 254 pieces do.
    end = wordpiece.read_end(LONG)
    assert end is not None and end < len(LONG)
    head, whole = embedder.embed([LONG[:end], LONG])
    assert 1 - cosine(head, whole) < 1e-6
    assert wordpiece.read_end(LONG[:end]) is None


def test_the_written_tokenizer_files_say_256(embedder):
    d = embedder.directory
    assert json.loads((d / "tokenizer_config.json").read_text())["model_max_length"] == 256
    assert json.loads((d / "tokenizer.json").read_text())["truncation"]["max_length"] == 256
    assert (d / "onnx" / "model.onnx").stat().st_size > 80_000_000  # fp32, not quantized


def test_vocab_module_is_the_models_vocabulary(sources):
    vocab = json.loads(sources["tokenizer.json"])["model"]["vocab"]
    assert sorted(wordpiece.model_vocab().tokens) == sorted(vocab)
    from ragsim.text.wordpiece_vocab import TOKENS

    assert TOKENS.split("\n") == sorted(vocab, key=vocab.get)


def test_the_build_is_reproducible(tmp_path, embedder):
    manifest = dense_model.build(tmp_path, ROOT / ".cache" / "dense", quantized=True)
    cached = json.loads((embedder.directory / "manifest.json").read_text())
    assert manifest["files"] == cached["files"]
    assert set(cached["files"]) == {"config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx",
                                    "onnx/model_quantized.onnx"}


def test_the_int8_model_is_a_close_approximation(embedder):
    import onnxruntime

    quantized = embed_onnx.Embedder(embedder.directory)
    quantized.session = onnxruntime.InferenceSession(str(embedder.directory / "onnx" / "model_quantized.onnx"),
                                                     providers=["CPUExecutionProvider"])
    assert (embedder.directory / "onnx" / "model_quantized.onnx").stat().st_size < 25_000_000
    exact, approx = embedder.embed(TEXTS), quantized.embed(TEXTS)
    cosines = (exact * approx).sum(axis=1)
    assert cosines.min() > 0.95 and cosines.mean() > 0.97  # an approximation: close, not equal
    assert cosines.max() < 1 - 1e-4


# The core's WordPiece (pure, for the truncation flag) against `tokenizers`.


@pytest.fixture(scope="module")
def untruncated(reference):
    """The package's own tokenizer, reading everything."""
    full = Tokenizer.from_str(reference[0].to_str())
    full.no_truncation()
    return full


def tokenizers_read_end(full, text):
    """Where `tokenizers` stops: None when all is read, else the end offset of the last piece."""
    pieces = full.encode(text, add_special_tokens=False)
    if len(pieces.ids) <= 254:
        return None, pieces
    return pieces.offsets[253][1], pieces


WORDS = ["retrieval", "chunk", "overlap", "unaffable", "naïve", "ÉCOLE", "東京", "😀", "x" * 120, "a-b",
         "don't", "3.14", "İstanbul", "straße", "Ⅻ", "ﬁne", "\u200b", "\x00", "\ufffd", "Σίσυφος", "한국어",
         "\u0301", "fooßbar", "€100", "¿qué?", "…", "¬", "naïve—café"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=12), min_size=0, max_size=400),
       st.sampled_from([" ", "\n", "\t", "  ", "", "\u3000"]))
def test_wordpiece_read_end_matches_tokenizers(untruncated, words, sep):
    text = sep.join(words)
    expected, pieces = tokenizers_read_end(untruncated, text)
    assert wordpiece.read_end(text) == expected, (text[:200], pieces.tokens[250:256])


def test_wordpiece_pieces_match_tokenizers_on_real_text(untruncated):
    texts = sorted((ROOT / "tests" / "conformance" / "texts").glob("*"))
    assert texts
    for path in texts:
        text = path.read_text(encoding="utf-8")
        expected = untruncated.encode(text, add_special_tokens=False)
        vocab = wordpiece.model_vocab()
        ends = [origins[e - 1] + 1 for word, origins in wordpiece.words(text) for e in wordpiece.pieces(word, vocab)]
        assert ends == [o[1] for o in expected.offsets], path.name


def real_passages() -> list[str]:
    """Hundreds of real passages: CPython's help topics cut at blank lines, short and long
    (a topic whole, far past 256 pieces), and one sentence in each of 18 languages and 12 scripts
    (Article 1 of the Universal Declaration of Human Rights: tests/conformance/texts)."""
    from pydoc_data.topics import topics

    paragraphs = [p.strip() for k in sorted(topics) for p in topics[k].split("\n\n") if len(p.strip()) > 40]
    short = paragraphs[::max(1, len(paragraphs) // 200)][:200]
    long = [topics[k] for k in sorted(topics) if len(topics[k]) > 3000][:14]
    languages = (ROOT / "tests" / "conformance" / "texts" / "udhr_article1.txt").read_text(encoding="utf-8").splitlines()
    return short + long + languages + [" ".join(languages)]


def test_onnx_model_agrees_with_the_numpy_reference_on_hundreds_of_real_passages(reference, untruncated, embedder):
    passages = real_passages()
    assert len(passages) > 200
    tokenizer, weights, config = reference  # float32 here: a quarter of a minute instead of minutes
    single = (tokenizer, {name: w.astype(np.float32) for name, w in weights.items()}, config)
    longer = [len(untruncated.encode(p).ids) > 256 for p in passages]
    assert sum(longer) >= 12  # the long ones are cut at 256 pieces, [SEP] last
    assert sum(not p.isascii() for p in passages) >= 19
    worst = 0.0
    for start in range(0, len(passages), 32):
        batch = passages[start : start + 32]
        for text, vector, cut in zip(batch, embedder.embed(batch), longer[start : start + 32]):
            worst = max(worst, 1 - cosine(reference_embedding(single, text, exact=False), vector))
            # the core's WordPiece says the model stops reading exactly when tokenizers cuts
            assert (wordpiece.read_end(text) is not None) == cut, text[:60]
    assert worst <= 1e-5, worst
