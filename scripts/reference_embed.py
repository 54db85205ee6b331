#!/usr/bin/env python3
"""An independent forward pass of all-MiniLM-L6-v2 in numpy, to check `LocalEmbedder`.

Reads a JSON array of sentences on stdin and writes a JSON array of embeddings (one list
of 384 floats per sentence, mean-pooled and L2-normalised) on stdout.

    scripts/reference_embed.py MODEL_DIR [--max-length 256] < sentences.json

Independent of the Rust side on purpose: the safetensors file is parsed here from its
header (no safetensors library), every layer is written out in numpy in float64, and each
sentence runs alone (no padding, no attention mask). Only the tokenisation comes from the
`tokenizers` package, reading the same tokenizer.json. Needs numpy and tokenizers.
"""

import argparse
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


def load_safetensors(path):
    """All tensors of a safetensors file, as float64 numpy arrays (integers kept as is)."""
    data = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = np.dtype(DTYPES[info["dtype"]]).newbyteorder("<")
        array = np.frombuffer(data[base + start : base + end], dtype=dtype).reshape(info["shape"])
        tensors[name] = array.astype(np.float64) if array.dtype.kind == "f" else array
    # Checkpoints saved from BertForX prefix every name with "bert.".
    if not any(k.startswith("embeddings.") for k in tensors):
        tensors = {k.removeprefix("bert."): v for k, v in tensors.items()}
    return tensors


def layer_norm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_erf = np.vectorize(math.erf)


def gelu(x):
    """The exact GELU BERT uses (erf, not the tanh approximation)."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


class Bert:
    def __init__(self, model_dir):
        self.config = json.loads((Path(model_dir) / "config.json").read_text())
        self.w = load_safetensors(Path(model_dir) / "model.safetensors")
        self.eps = self.config.get("layer_norm_eps", 1e-12)
        self.heads = self.config["num_attention_heads"]

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def norm(self, x, name):
        return layer_norm(x, self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def encode(self, ids):
        """Last hidden states, shape (tokens, hidden), of one unpadded sequence."""
        w = self.w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self.norm(x, "embeddings.LayerNorm")
        hidden = x.shape[1]
        head_dim = hidden // self.heads
        for i in range(self.config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def split(t):
                return t.reshape(n, self.heads, head_dim).transpose(1, 0, 2)

            q = split(self.linear(x, p + "attention.self.query"))
            k = split(self.linear(x, p + "attention.self.key"))
            v = split(self.linear(x, p + "attention.self.value"))
            probs = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(head_dim))
            context = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
            attn = self.linear(context, p + "attention.output.dense")
            x = self.norm(x + attn, p + "attention.output.LayerNorm")
            inner = gelu(self.linear(x, p + "intermediate.dense"))
            out = self.linear(inner, p + "output.dense")
            x = self.norm(x + out, p + "output.LayerNorm")
        return x

    def embed(self, ids):
        pooled = self.encode(ids).mean(axis=0)
        return pooled / max(np.linalg.norm(pooled), 1e-12)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir")
    parser.add_argument("--max-length", type=int, default=256)
    args = parser.parse_args()

    tokenizer = Tokenizer.from_file(str(Path(args.model_dir) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=args.max_length)
    model = Bert(args.model_dir)

    sentences = json.load(sys.stdin)
    vectors = [model.embed(tokenizer.encode(s).ids).tolist() for s in sentences]
    json.dump(vectors, sys.stdout)


if __name__ == "__main__":
    main()
