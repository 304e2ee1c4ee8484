#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Golden vectors for normkit from the real framework modules.

Runs the normalization modules of HF transformers, PyTorch, ONNX Runtime (and the ONNX spec's
own function body) and ml_dtypes on fixed pseudo-random inputs and writes inputs, gains, biases
and outputs to tests/data/golden/*.bin. tests/test_golden.cpp runs the matching normkit preset on
the same inputs and compares bits. No weights are loaded from anywhere: each module is built
directly (``LlamaRMSNorm(cols, eps)`` etc.) and its weight is overwritten with the fixed gains.
The fused residual add (ops add_rms_norm / add_layer_norm) runs whole HF decoder layers with
their sublayers stubbed (see decoder_layer): the layer's own add and post-attention norm.

Environments (exact versions; every file also records the versions it was made with)
-------------------------------------------------------------------------------------
Interpreter: CPython 3.11.7 (pyenv), torch from PyPI (the CUDA build; only its CPU kernels run).
Two venvs, because transformers 4.44.2 (the release the presets cite) has no Qwen3, Gemma3,
Gemma3n or Olmo2 modules:

  env A  (groups hf444, torch, onnx, mldtypes)   tests/golden/requirements-a.txt
         torch==2.15.0 transformers==4.44.2 onnx==1.23.2 onnxruntime==1.32.0 ml_dtypes==0.6.0
         numpy==2.4.6
  env B  (group hf457)                           tests/golden/requirements-b.txt
         torch==2.15.0 transformers==4.57.6 numpy==2.4.6

  python3.11 -m venv /tmp/golden-a && /tmp/golden-a/bin/pip install -r tests/golden/requirements-a.txt
  python3.11 -m venv /tmp/golden-b && /tmp/golden-b/bin/pip install -r tests/golden/requirements-b.txt
  /tmp/golden-a/bin/python tests/golden/generate.py --groups hf444 torch onnx mldtypes
  /tmp/golden-b/bin/python tests/golden/generate.py --groups hf457

``--check`` writes nothing: it regenerates in memory and compares with the committed files byte
for byte (exit status 1 on any difference). A group refuses to run under other package versions
(``--any-version`` overrides, for exploring; never commit such files). Results were produced on an
x86-64 CPU where torch reports CPU capability AVX2 (recorded per file): torch's and ORT's fp32
reduction order can depend on the SIMD width, so rerunning elsewhere may change a few fp32 bits.
On an AVX-512 host run with ATEN_CPU_CAPABILITY=avx2 (the header records the capability, so
``--check`` needs it; the env A torch/HF payloads were also measured identical under AVX512).

Debian's python3-torch (1.13) is not used: it has no nn.RMSNorm, no LayerNorm(bias=False), no
fp16 or mixed-dtype LayerNorm on CPU, and its bf16 LayerNorm is a different (less accurate)
algorithm; HF LlamaRMSNorm under 1.13 gives the same bits as under 2.15 on this data.

Determinism: inputs come from numpy's PCG64 seeded with (crc32 of the file name, case index);
torch and ORT run single-threaded with ORT graph optimizations off. The ONNX RMSNormalization
function body runs in onnx.reference (numpy), not ORT: ORT drops its intermediate fp16 rounding
(see onnx_function_body).

File format (little-endian), documented in tests/golden/README.md
-----------------------------------------------------------------
  8 bytes   magic b"NKGOLD01"
  u32       H, length of the text header
  H bytes   UTF-8 "key: value" lines (format, name, op, module, label, call, in, w, out, cases,
            seed, versions, generator, torch_cpu_capability, note)
  then `cases` records, each:
    u32 rows, u32 cols, u32 eps (the fp32 bits), u32 flags (bit 0: gamma present, bit 1: beta)
    x      rows*cols elements of `in`
    gamma  cols elements of `w`  (if bit 0)
    beta   cols elements of `w`  (if bit 1)
    y      rows*cols elements of `out`
  Element types: f32 (4 bytes IEEE), bf16, f16 (2 bytes, raw bits), e4m3fn, e5m2 (1 byte).
  For op "convert": one record with rows = 1, eps = 0, flags = 0: y = out(x) elementwise.
  Format 2 (ops add_rms_norm, add_layer_norm; header "format: normkit-golden 2") adds flag bit 2:
  the record then also holds the residual stream before the add (rows*cols of `in`, right after
  x) and after it (rows*cols of `in`, after y). Format-1 files are unchanged.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import platform
import struct
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "golden"
MAGIC = b"NKGOLD01"
FORMAT_VERSION = 1
FORMAT_VERSION_RESIDUAL = 2  # the fused-add files: flag bit 2, residual before and after the add

# Exact versions each group was produced with. A group refuses to run under others.
PINS = {
    "hf444": {"torch": "2.15.0", "transformers": "4.44.2", "numpy": "2.4.6"},
    "hf457": {"torch": "2.15.0", "transformers": "4.57.6", "numpy": "2.4.6"},
    "torch": {"torch": "2.15.0", "numpy": "2.4.6"},
    "onnx": {"onnx": "1.23.2", "onnxruntime": "1.32.0", "numpy": "2.4.6"},
    "mldtypes": {"ml_dtypes": "0.6.0", "numpy": "2.4.6"},
}

# ---------------------------------------------------------------------------------------------
# Shapes. The issue asks for cols {1, 7, 64, 65, 128, 768, 4096, 4097, 5120}, rows {1, 3, 17},
# eps {1e-5, 1e-6}; the full cross product is ~5 MB per file, so every col count appears with a
# sampled row count and eps (both eps values for the small widths).
FULL = [
    (17, 1, 1e-5), (17, 7, 1e-6), (17, 64, 1e-5), (3, 64, 1e-6), (17, 65, 1e-6),
    (17, 128, 1e-5), (3, 128, 1e-6), (3, 768, 1e-5), (1, 768, 1e-6),
    (1, 4096, 1e-6), (1, 4097, 1e-5), (1, 5120, 1e-6),
]
# Variants that repeat a module's code path in another dtype keep the small widths plus 4097.
SMALL = [
    (17, 1, 1e-5), (17, 7, 1e-6), (17, 64, 1e-5), (3, 65, 1e-6), (3, 128, 1e-6),
    (1, 768, 1e-5), (1, 4097, 1e-6),
]
# Qwen3 q_norm / k_norm: Qwen3RMSNorm(head_dim=128) over a [batch, seq, heads, head_dim] tensor.
QNORM = [((1, 3, 16, 128), 1e-6), ((1, 17, 4, 128), 1e-6), ((2, 1, 8, 128), 1e-5)]
NAN_CASE = (3, 64, 1e-6)  # row 1 holds one NaN: the whole row must come out NaN
# Fused-add files: the same shape, row 1 with a NaN in x (the sublayer output; it must reach the
# residual stream) and row 2 with one column where x + residual overflows the storage type to
# +Inf: 1.5 * 2^127 twice overflows fp32 itself (bf16, f32), 1.5 * 2^15 twice = 98304 is finite in
# fp32 and rounds to +Inf in f16.
ADD_BIG = {"bf16": 1.5 * 2.0**127, "f32": 1.5 * 2.0**127, "f16": 1.5 * 2.0**15}

# Per-row (mean, sigma) cycle: unit rows, tiny rows where eps matters (ms ~ 1e-6), large rows,
# and offset rows where LayerNorm's mean subtraction cancels.
ROW_STATS = [(0.0, 1.0), (0.0, 1e-3), (0.5, 3.0), (0.0, 0.05), (4.0, 0.3), (-1.0, 1.0)]

DTYPE_SIZE = {"f32": 4, "bf16": 2, "f16": 2, "e4m3fn": 1, "e5m2": 1}


@dataclass
class Case:
    rows: int
    cols: int
    eps: float
    x: np.ndarray  # float32 values, already representable in `in`
    gamma: np.ndarray | None  # float32 values representable in `w`
    beta: np.ndarray | None
    y_bytes: bytes = b""
    shape: tuple = ()  # the tensor shape the module was called with (rows*cols elements)
    residual: np.ndarray | None = None  # fused add: the residual stream before the add
    res_bytes: bytes = b""  # fused add: the residual stream after the add, as the framework stored it


@dataclass
class Spec:
    name: str
    group: str
    op: str  # rms_norm | layer_norm | convert | add_rms_norm | add_layer_norm
    module: str
    call: str
    in_t: str
    w_t: str
    out_t: str
    run: Callable[["Spec", Case], bytes]
    gamma: str | None = "plain"  # plain: ~N(1, 0.25); offset: ~N(0, 0.25) (Gemma's 1 + w)
    beta: bool = False
    shapes: str = "full"  # full | small | qnorm | convert
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return f"{self.name}.{self.in_t}-{self.w_t}-{self.out_t}.bin"


# ---------------------------------------------------------------------------------------------
# Value helpers


def round_to(values: np.ndarray, code: str) -> np.ndarray:
    """float32 values rounded (RNE) to `code` and widened back to float32 (exact)."""
    v = np.asarray(values, dtype=np.float32)
    if code == "f32":
        return v
    if code == "f16":
        return v.astype(np.float16).astype(np.float32)
    if code == "bf16":
        # Integer RNE on the fp32 bits (finite inputs only here), the same rule torch uses.
        u = v.view(np.uint32).astype(np.uint64)
        r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
        return r.astype(np.uint32).view(np.float32)
    raise ValueError(code)


def raw_bytes(values: np.ndarray, code: str) -> bytes:
    """Storage bytes of float32 values that are exactly representable in `code`."""
    v = np.ascontiguousarray(values, dtype=np.float32)
    if code == "f32":
        return v.astype("<f4").tobytes()
    if code == "f16":
        h = v.astype(np.float16)
        assert np.array_equal(h.astype(np.float32), v, equal_nan=True)
        return h.view("<u2").tobytes()
    if code == "bf16":
        u = v.view(np.uint32)
        assert not np.any(u & 0xFFFF), "value not representable in bf16"
        return (u >> 16).astype("<u2").tobytes()
    raise ValueError(code)


def make_cases(spec: Spec) -> list[Case]:
    seed = zlib.crc32(spec.filename.encode())
    if spec.shapes == "qnorm":
        shapes = [(int(np.prod(s[:-1])), s[-1], eps, s) for s, eps in QNORM]
    else:
        table = FULL if spec.shapes == "full" else SMALL
        shapes = [(r, c, eps, (r, c)) for r, c, eps in table]
        shapes.append((NAN_CASE[0], NAN_CASE[1], NAN_CASE[2], NAN_CASE[:2]))
    cases = []
    for idx, (rows, cols, eps, shape) in enumerate(shapes):
        rng = np.random.default_rng([seed, idx])
        x = np.empty((rows, cols), dtype=np.float64)
        for r in range(rows):
            mean, sigma = ROW_STATS[r % len(ROW_STATS)]
            x[r] = mean + sigma * rng.standard_normal(cols)
        x = round_to(x.astype(np.float32), spec.in_t)
        if (rows, cols, eps) == NAN_CASE and idx == len(shapes) - 1 and spec.shapes != "qnorm":
            x[1, cols // 3] = np.float32("nan")
        gamma = beta = None
        if spec.gamma == "plain":
            gamma = round_to((1.0 + 0.25 * rng.standard_normal(cols)).astype(np.float32), spec.w_t)
        elif spec.gamma == "offset":
            gamma = round_to((0.25 * rng.standard_normal(cols)).astype(np.float32), spec.w_t)
        if spec.beta:
            beta = round_to((0.2 * rng.standard_normal(cols)).astype(np.float32), spec.w_t)
        cases.append(Case(rows, cols, eps, x.reshape(-1), gamma, beta, shape=shape))
    return cases


def make_add_cases(spec: Spec) -> list[Case]:
    """Fused-add inputs: the residual stream cycles through ROW_STATS as x does in make_cases; x
    (the sublayer output) is N(0, (sigma / 2)^2) per row, of the same scale class, so the add
    rounds in most elements and the stored residual differs from the fp32 sum."""
    seed = zlib.crc32(spec.filename.encode())
    table = FULL if spec.shapes == "full" else SMALL
    shapes = list(table) + [NAN_CASE]
    cases = []
    for idx, (rows, cols, eps) in enumerate(shapes):
        rng = np.random.default_rng([seed, idx])
        res = np.empty((rows, cols), dtype=np.float64)
        x = np.empty((rows, cols), dtype=np.float64)
        for r in range(rows):
            mean, sigma = ROW_STATS[r % len(ROW_STATS)]
            res[r] = mean + sigma * rng.standard_normal(cols)
            x[r] = 0.5 * sigma * rng.standard_normal(cols)
        res = round_to(res.astype(np.float32), spec.in_t)
        x = round_to(x.astype(np.float32), spec.in_t)
        if idx == len(shapes) - 1:  # NAN_CASE: row 1 a NaN in x, row 2 an add overflowing to +Inf
            x[1, cols // 3] = np.float32("nan")
            x[2, cols // 2] = res[2, cols // 2] = np.float32(ADD_BIG[spec.in_t])
        gamma = beta = None
        if spec.gamma == "plain":
            gamma = round_to((1.0 + 0.25 * rng.standard_normal(cols)).astype(np.float32), spec.w_t)
        elif spec.gamma == "offset":
            gamma = round_to((0.25 * rng.standard_normal(cols)).astype(np.float32), spec.w_t)
        if spec.beta:
            beta = round_to((0.2 * rng.standard_normal(cols)).astype(np.float32), spec.w_t)
        cases.append(Case(rows, cols, eps, x.reshape(-1), gamma, beta, shape=(1, rows, cols),
                          residual=res.reshape(-1)))
    return cases


# ---------------------------------------------------------------------------------------------
# torch-based modules (HF transformers and torch.nn)


def torch_mod():
    import torch

    torch.set_num_threads(1)
    return torch


TORCH_DTYPE = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def tensor(values: np.ndarray, code: str, shape=None):
    torch = torch_mod()
    t = torch.from_numpy(np.array(values, dtype=np.float32))
    if shape is not None:
        t = t.reshape(shape)
    return t.to(getattr(torch, TORCH_DTYPE[code]))  # exact: values are representable


def torch_out_bytes(y, code: str) -> bytes:
    torch = torch_mod()
    want = getattr(torch, TORCH_DTYPE[code])
    if y.dtype != want:
        raise RuntimeError(f"module returned {y.dtype}, spec says {want}")
    y = y.detach().contiguous().reshape(-1)
    if code == "f32":
        return y.numpy().astype("<f4").tobytes()
    return y.view(torch.int16).numpy().view("<u2").tobytes()


def run_module(build: Callable[[int, float], object], spec: Spec, case: Case) -> bytes:
    """Builds the module for (cols, eps), loads gamma/beta as its parameters, calls it on x."""
    torch = torch_mod()
    mod = build(case.cols, case.eps)
    wdt = getattr(torch, TORCH_DTYPE[spec.w_t])
    mod = mod.to(wdt)
    with torch.no_grad():
        if case.gamma is not None:
            mod.weight.copy_(tensor(case.gamma, spec.w_t))
        if case.beta is not None:
            mod.bias.copy_(tensor(case.beta, spec.w_t))
        for p in mod.parameters():
            assert p.dtype == wdt
        y = mod(tensor(case.x, spec.in_t, case.shape))
    return torch_out_bytes(y, spec.out_t)


def hf(module_path: str, cls: str, **kwargs):
    def build(cols, eps):
        return getattr(importlib.import_module(module_path), cls)(cols, eps=eps, **kwargs)

    return lambda spec, case: run_module(build, spec, case)


def torch_nn(cls: str, **kwargs):
    def build(cols, eps):
        return getattr(torch_mod().nn, cls)(cols, eps=eps, **kwargs)

    return lambda spec, case: run_module(build, spec, case)


# ---------------------------------------------------------------------------------------------
# The fused residual add: a real HF decoder layer's forward


def decoder_layer(module_path: str, config_cls: str, layer_cls: str, eps_key: str):
    """Runs the forward of an HF decoder layer (LlamaDecoderLayer, ...) as written: its own
    `residual + hidden_states` in the storage dtype, then its own post-attention norm module. Only
    the sublayers are replaced: self_attn returns the case's x (the sublayer output) and the MLP
    returns zeros. Hooks on post_attention_layernorm record its input (the residual stream after
    the add, the tensor the layer keeps as `residual`) and its output y. The layer is built on the
    meta device (no projection weights are allocated), materialized, every parameter set to 1,
    then the norm's weight (and bias) overwritten with the case's gains."""

    def run(spec: Spec, case: Case) -> tuple[bytes, bytes]:
        torch = torch_mod()
        mod = importlib.import_module(module_path)
        cfg = getattr(mod, config_cls)(hidden_size=case.cols, intermediate_size=1, num_attention_heads=1,
                                       num_key_value_heads=1, **{eps_key: case.eps})
        x = tensor(case.x, spec.in_t, case.shape)

        class SelfAttention(torch.nn.Module):  # (attn_output, attn_weights, past_key_value)
            def forward(self, hidden_states, **kwargs):
                return x, None, None

        class Mlp(torch.nn.Module):
            def forward(self, hidden_states):
                return torch.zeros_like(hidden_states)

        with torch.device("meta"):
            layer = getattr(mod, layer_cls)(cfg, layer_idx=0)
        layer.self_attn, layer.mlp = SelfAttention(), Mlp()
        wdt = getattr(torch, TORCH_DTYPE[spec.w_t])
        layer = layer.to_empty(device="cpu").to(wdt).eval()
        norm = layer.post_attention_layernorm
        seen: dict[str, list] = {"residual": [], "y": []}
        norm.register_forward_pre_hook(lambda m, args: seen["residual"].append(args[0].detach().clone()))
        norm.register_forward_hook(lambda m, args, out: seen["y"].append(out.detach().clone()))
        with torch.no_grad():
            for p in layer.parameters():
                p.fill_(1.0)
            norm.weight.copy_(tensor(case.gamma, spec.w_t))
            if case.beta is not None:
                norm.bias.copy_(tensor(case.beta, spec.w_t))
            assert all(p.dtype == wdt for p in norm.parameters())
            assert norm.weight.shape == (case.cols,)
            assert (case.beta is None) == (getattr(norm, "bias", None) is None)
            assert getattr(norm, "variance_epsilon", getattr(norm, "eps", None)) == case.eps
            layer(tensor(case.residual, spec.in_t, case.shape))
        assert len(seen["residual"]) == 1 and len(seen["y"]) == 1, "post_attention_layernorm ran once"
        return torch_out_bytes(seen["y"][0], spec.out_t), torch_out_bytes(seen["residual"][0], spec.in_t)

    return run


# ---------------------------------------------------------------------------------------------
# ONNX Runtime


def ort_run(nodes, spec: Spec, case: Case, inputs: list[str]) -> bytes:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    elem = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
    npdt = {"f32": np.float32, "f16": np.float16}
    types = {"X": spec.in_t, "scale": spec.w_t, "B": spec.w_t}
    shapes = {"X": [case.rows, case.cols], "scale": [case.cols], "B": [case.cols]}
    graph = helper.make_graph(
        nodes, spec.name,
        [helper.make_tensor_value_info(n, elem[types[n]], shapes[n]) for n in inputs],
        [helper.make_tensor_value_info("Y", elem[spec.out_t], [case.rows, case.cols])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = {"X": case.x.reshape(case.rows, case.cols).astype(npdt[spec.in_t])}
    if "scale" in inputs:
        feeds["scale"] = case.gamma.astype(npdt[spec.w_t])
    if "B" in inputs:
        feeds["B"] = case.beta.astype(npdt[spec.w_t])
    (y,) = sess.run(None, feeds)
    if y.dtype != npdt[spec.out_t]:
        raise RuntimeError(f"ORT returned {y.dtype}")
    y = np.ascontiguousarray(y).reshape(-1)
    return y.astype("<f4").tobytes() if spec.out_t == "f32" else y.view("<u2").tobytes()


def ort_op(op: str, opset: int):
    def run(spec: Spec, case: Case) -> bytes:
        from onnx import helper

        inputs = ["X", "scale"] + (["B"] if spec.beta else [])
        node = helper.make_node(op, inputs, ["Y"], axis=-1, epsilon=case.eps)
        return ort_run([node], spec, case, inputs)

    return run


def onnx_function_body(op: str):
    """The op's function body from the onnx package's schema, evaluated node by node by
    onnx.reference.ReferenceEvaluator (numpy: Cast, Mul, ReduceMean, Sqrt, Div in the stash type,
    then Cast to X's type and Mul in it, as written). Not run by ORT: ORT has no fp16 Mul kernel
    on CPU, inserts fp32 casts around it and removes the Cast(fp16)->Cast(fp32) pair, so it drops
    the body's intermediate rounding (measured: 99.995 % equal to one rounding)."""

    def run(spec: Spec, case: Case) -> bytes:
        import onnx
        import onnx.defs
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator

        elem = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}
        npdt = {"f32": np.float32, "f16": np.float16}
        schema = onnx.defs.get_schema(op, 23)
        node = helper.make_node(op, ["X", "scale"], ["Y"], axis=-1, epsilon=case.eps)
        tp = [helper.make_tensor_type_proto(elem[t], None).SerializeToString()
              for t in (spec.in_t, spec.w_t)]
        fn = onnx.FunctionProto.FromString(
            schema.get_context_dependent_function(node.SerializeToString(), tp))
        for n in fn.node:
            assert not any(a.ref_attr_name for a in n.attribute)
        graph = helper.make_graph(
            list(fn.node), spec.name,
            [helper.make_tensor_value_info("X", elem[spec.in_t], [case.rows, case.cols]),
             helper.make_tensor_value_info("scale", elem[spec.w_t], [case.cols])],
            [helper.make_tensor_value_info("Y", elem[spec.out_t], [case.rows, case.cols])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)
        onnx.checker.check_model(model)
        feeds = {"X": case.x.reshape(case.rows, case.cols).astype(npdt[spec.in_t]),
                 "scale": case.gamma.astype(npdt[spec.w_t])}
        with np.errstate(all="ignore"):
            (y,) = ReferenceEvaluator(model).run(None, feeds)
        if y.dtype != npdt[spec.out_t]:
            raise RuntimeError(f"reference evaluator returned {y.dtype}")
        y = np.ascontiguousarray(y).reshape(-1)
        return y.astype("<f4").tobytes() if spec.out_t == "f32" else y.view("<u2").tobytes()

    return run


# ---------------------------------------------------------------------------------------------
# ml_dtypes / numpy conversions of a fixed float set


def convert_inputs() -> np.ndarray:
    """fp32 values that exercise every rounding rule of bf16, f16, e4m3fn and e5m2."""
    vals: list[np.ndarray] = []
    f = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, 2.0,
                np.finfo(np.float32).max, -np.finfo(np.float32).max,
                np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal,
                65504.0, 65520.0, 65519.996, 448.0, 464.0, 480.0, 57344.0, 61440.0, 1e30]
    vals.append(f(specials))
    # Every exponent, with mantissas at and around the bf16/f16/fp8 tie points.
    exps = np.arange(-149, 128)
    base = np.ldexp(1.0, exps).astype(np.float64)
    for m in (1.0, 1.0 + 2.0**-8, 1.0 + 2.0**-9, 1.0 + 3 * 2.0**-9, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,
              1.0 + 2.0**-4, 1.0 + 3 * 2.0**-4, 1.0 + 2.0**-3, 1.0 + 2.0**-3 + 2.0**-20, 1.9999999):
        v = (base * m).astype(np.float32)
        vals += [v, -v]
    # Exact ties and their neighbours (one fp32 ulp either side).
    rng = np.random.default_rng(20261129)
    for drop in (16, 13, 20, 21):  # bf16, f16, e4m3 (3 mantissa bits), e5m2 (2 bits)
        hi = rng.integers(0, 2**(32 - drop), size=256, dtype=np.uint64)
        tie = ((hi << drop) | (1 << (drop - 1))).astype(np.uint32)
        for d in (-1, 0, 1):
            vals.append((tie.astype(np.int64) + d).astype(np.uint32).view(np.float32))
    # Random bit patterns (NaN payloads, subnormals, huge values) and ordinary activations.
    vals.append(rng.integers(0, 2**32, size=2048, dtype=np.uint64).astype(np.uint32).view(np.float32))
    vals.append((rng.standard_normal(1024) * np.exp2(rng.integers(-20, 20, 1024))).astype(np.float32))
    return np.concatenate(vals).astype(np.float32)


def convert_run(spec: Spec, case: Case) -> bytes:
    import ml_dtypes

    target = {"bf16": ml_dtypes.bfloat16, "e4m3fn": ml_dtypes.float8_e4m3fn,
              "e5m2": ml_dtypes.float8_e5m2, "f16": np.float16}[spec.out_t]
    with np.errstate(all="ignore"):
        y = case.x.astype(target)
    y = np.ascontiguousarray(y)
    return y.view("<u2" if y.itemsize == 2 else "<u1").tobytes()


# ---------------------------------------------------------------------------------------------
# The catalogue. Each entry is one file.

L444 = "transformers.models.llama.modeling_llama"


def specs() -> list[Spec]:
    s: list[Spec] = []

    def add(name, group, op, module, call, types, run, **kw):
        i, w, o = types.split("-")
        s.append(Spec(name, group, op, module, call, i, w, o, run, **kw))

    rms, ln = "rms_norm", "layer_norm"
    # --- HF transformers 4.44.2 -------------------------------------------------------------
    llama = "transformers.models.llama.modeling_llama.LlamaRMSNorm"
    for t, shp in (("bf16-bf16-bf16", "full"), ("f16-f16-f16", "full"), ("f32-f32-f32", "full"),
                   ("bf16-f32-f32", "full"), ("f16-f32-f32", "small")):
        add("hf_llama", "hf444", rms, llama, "LlamaRMSNorm(cols, eps).to(w); module(x)", t,
            hf(L444, "LlamaRMSNorm"), shapes=shp,
            note="bf16/f16 input with fp32 weight returns fp32 (transformers #30236)"
            if t.endswith("f32-f32") and not t.startswith("f32") else "")
    add("hf_mistral", "hf444", rms, "transformers.models.mistral.modeling_mistral.MistralRMSNorm",
        "MistralRMSNorm(cols, eps).to(w); module(x)", "bf16-bf16-bf16",
        hf("transformers.models.mistral.modeling_mistral", "MistralRMSNorm"), shapes="small")
    add("hf_qwen2", "hf444", rms, "transformers.models.qwen2.modeling_qwen2.Qwen2RMSNorm",
        "Qwen2RMSNorm(cols, eps).to(w); module(x)", "bf16-bf16-bf16",
        hf("transformers.models.qwen2.modeling_qwen2", "Qwen2RMSNorm"), shapes="small")
    gemma = "transformers.models.gemma.modeling_gemma"
    for t, shp in (("bf16-bf16-bf16", "full"), ("bf16-f32-bf16", "small"), ("f16-f16-f16", "small"),
                   ("f32-f32-f32", "small")):
        add("hf_gemma", "hf444", rms, gemma + ".GemmaRMSNorm",
            "GemmaRMSNorm(cols, eps).to(w); module(x)  (gain 1 + weight)", t,
            hf(gemma, "GemmaRMSNorm"), gamma="offset", shapes=shp)
    add("hf_gemma2", "hf444", rms, "transformers.models.gemma2.modeling_gemma2.Gemma2RMSNorm",
        "Gemma2RMSNorm(cols, eps).to(w); module(x)  (gain 1 + weight)", "bf16-bf16-bf16",
        hf("transformers.models.gemma2.modeling_gemma2", "Gemma2RMSNorm"), gamma="offset",
        shapes="small")
    t5 = "transformers.models.t5.modeling_t5"
    for t, shp in (("bf16-bf16-bf16", "full"), ("f32-bf16-bf16", "full"), ("bf16-f32-f32", "small"),
                   ("f16-f16-f16", "small"), ("f32-f16-f16", "small"), ("f32-f32-f32", "small")):
        add("hf_t5", "hf444", rms, t5 + ".T5LayerNorm",
            "T5LayerNorm(cols, eps).to(w); module(x)  (rounds to the weight dtype)", t,
            hf(t5, "T5LayerNorm"), shapes=shp)
    cohere = "transformers.models.cohere.modeling_cohere"
    for t, shp in (("bf16-bf16-bf16", "full"), ("bf16-f32-bf16", "small"), ("f16-f16-f16", "small"),
                   ("f32-f32-f32", "small")):
        add("hf_cohere", "hf444", ln, cohere + ".CohereLayerNorm",
            "CohereLayerNorm(cols, eps).to(w); module(x)  (LayerNorm, no bias)", t,
            hf(cohere, "CohereLayerNorm"), shapes=shp)

    # --- HF transformers 4.57.6 (modules that 4.44.2 does not have) -------------------------
    q3 = "transformers.models.qwen3.modeling_qwen3"
    add("hf_qwen3", "hf457", rms, q3 + ".Qwen3RMSNorm", "Qwen3RMSNorm(cols, eps).to(w); module(x)",
        "bf16-bf16-bf16", hf(q3, "Qwen3RMSNorm"), shapes="full")
    add("hf_qwen3", "hf457", rms, q3 + ".Qwen3RMSNorm", "Qwen3RMSNorm(cols, eps).to(w); module(x)",
        "bf16-f32-f32", hf(q3, "Qwen3RMSNorm"), shapes="small")
    add("hf_qwen3_qnorm", "hf457", rms, q3 + ".Qwen3RMSNorm",
        "Qwen3RMSNorm(head_dim=128, eps).to(w); module(x[batch, seq, heads, 128]) (q_norm/k_norm)",
        "bf16-bf16-bf16", hf(q3, "Qwen3RMSNorm"), shapes="qnorm")
    g3 = "transformers.models.gemma3.modeling_gemma3"
    for t in ("bf16-bf16-bf16", "bf16-f32-bf16"):
        add("hf_gemma3", "hf457", rms, g3 + ".Gemma3RMSNorm",
            "Gemma3RMSNorm(cols, eps).to(w); module(x)  (gain 1 + weight)", t,
            hf(g3, "Gemma3RMSNorm"), gamma="offset", shapes="full" if t.startswith("bf16-bf16") else "small")
    g3n = "transformers.models.gemma3n.modeling_gemma3n"
    add("hf_gemma3n", "hf457", rms, g3n + ".Gemma3nRMSNorm",
        "Gemma3nRMSNorm(cols, eps).to(w); module(x)  (divides by sqrt)", "bf16-bf16-bf16",
        hf(g3n, "Gemma3nRMSNorm"), shapes="full")
    add("hf_gemma3n_noscale", "hf457", rms, g3n + ".Gemma3nRMSNorm",
        "Gemma3nRMSNorm(cols, eps, with_scale=False); module(x)  (no weight)", "bf16-bf16-bf16",
        hf(g3n, "Gemma3nRMSNorm", with_scale=False), gamma=None, shapes="small")
    o2 = "transformers.models.olmo2.modeling_olmo2"
    for t in ("bf16-bf16-bf16", "bf16-f32-bf16", "f32-f32-f32"):
        add("hf_olmo2", "hf457", rms, o2 + ".Olmo2RMSNorm",
            "Olmo2RMSNorm(cols, eps).to(w); module(x)  (product in fp32, one rounding)", t,
            hf(o2, "Olmo2RMSNorm"), shapes="full" if t.startswith("bf16-bf16") else "small")

    # --- torch.nn ---------------------------------------------------------------------------
    for t, shp in (("bf16-bf16-bf16", "full"), ("f16-f16-f16", "full"), ("f32-f32-f32", "full"),
                   ("bf16-f32-bf16", "small")):
        add("torch_layernorm", "torch", ln, "torch.nn.LayerNorm",
            "torch.nn.LayerNorm(cols, eps, dtype=w); module(x)", t, torch_nn("LayerNorm"),
            beta=True, shapes=shp)
    for t, shp in (("bf16-bf16-bf16", "full"), ("f16-f16-f16", "small"), ("f32-f32-f32", "small")):
        add("torch_layernorm_nobias", "torch", ln, "torch.nn.LayerNorm",
            "torch.nn.LayerNorm(cols, eps, bias=False, dtype=w); module(x)", t,
            torch_nn("LayerNorm", bias=False), shapes=shp)
    add("torch_layernorm_noaffine", "torch", ln, "torch.nn.LayerNorm",
        "torch.nn.LayerNorm(cols, eps, elementwise_affine=False); module(x)", "bf16-bf16-bf16",
        torch_nn("LayerNorm", elementwise_affine=False), gamma=None, shapes="small")
    for t, shp in (("bf16-bf16-bf16", "full"), ("f16-f16-f16", "full"), ("f32-f32-f32", "small"),
                   ("bf16-f32-bf16", "small")):
        add("torch_rmsnorm", "torch", rms, "torch.nn.RMSNorm",
            "torch.nn.RMSNorm(cols, eps, dtype=w); module(x)", t, torch_nn("RMSNorm"), shapes=shp)
    add("torch_rmsnorm_noaffine", "torch", rms, "torch.nn.RMSNorm",
        "torch.nn.RMSNorm(cols, eps, elementwise_affine=False); module(x)", "f16-f16-f16",
        torch_nn("RMSNorm", elementwise_affine=False), gamma=None, shapes="small")

    # --- ONNX -------------------------------------------------------------------------------
    for t in ("f32-f32-f32", "f16-f16-f16"):
        add("ort_rmsnorm", "onnx", rms, "onnxruntime CPU kernel RMSNormalization (opset 23)",
            "RMSNormalization(X, scale; axis=-1, epsilon), opset 23, ORT CPU, optimizations off", t,
            ort_op("RMSNormalization", 23), shapes="full" if t.startswith("f16") else "small")
        add("onnx_rmsnorm_body", "onnx", rms, "onnx RMSNormalization-23 function body (onnx.reference)",
            "the schema's context-dependent function body, node by node, onnx.reference.ReferenceEvaluator", t,
            onnx_function_body("RMSNormalization"), shapes="full" if t.startswith("f16") else "small")
    for t, bias in (("f32-f32-f32", True), ("f16-f16-f16", True), ("f16-f16-f16", False)):
        add("ort_layernorm" if bias else "ort_layernorm_nobias", "onnx", ln,
            "onnxruntime CPU kernel LayerNormalization (opset 17)",
            "LayerNormalization(X, scale[, B]; axis=-1, epsilon), opset 23 model, ORT CPU", t,
            ort_op("LayerNormalization", 17), beta=bias, shapes="small")

    # --- The fused residual add: HF decoder layers (transformers 4.44.2) ----------------------
    # `hidden_states = residual + hidden_states` (StableLM: `residual = residual + self_attn_output`)
    # in the storage dtype, then post_attention_layernorm on that tensor.
    for t, shp in (("bf16-bf16-bf16", "full"), ("f16-f16-f16", "small"), ("f32-f32-f32", "small"),
                   ("bf16-f32-f32", "small")):
        add("hf_llama_add", "hf444", "add_rms_norm", L444 + ".LlamaDecoderLayer",
            "LlamaDecoderLayer(LlamaConfig(hidden_size=cols, rms_norm_eps=eps)).to(w); layer(residual), "
            "self_attn returning x: its `residual + hidden_states` and post_attention_layernorm", t,
            decoder_layer(L444, "LlamaConfig", "LlamaDecoderLayer", "rms_norm_eps"), shapes=shp)
    add("hf_gemma_add", "hf444", "add_rms_norm", gemma + ".GemmaDecoderLayer",
        "GemmaDecoderLayer(GemmaConfig(hidden_size=cols, rms_norm_eps=eps)).to(w); layer(residual), "
        "self_attn returning x: its `residual + hidden_states` and post_attention_layernorm (1 + weight)",
        "bf16-bf16-bf16", decoder_layer(gemma, "GemmaConfig", "GemmaDecoderLayer", "rms_norm_eps"),
        gamma="offset", shapes="small")
    stablelm = "transformers.models.stablelm.modeling_stablelm"
    add("hf_stablelm_add", "hf444", "add_layer_norm", stablelm + ".StableLmDecoderLayer",
        "StableLmDecoderLayer(StableLmConfig(hidden_size=cols, layer_norm_eps=eps)).to(w); layer(residual), "
        "self_attn returning x: its `residual = residual + self_attn_output` and post_attention_layernorm "
        "(torch.nn.LayerNorm with bias)",
        "bf16-bf16-bf16", decoder_layer(stablelm, "StableLmConfig", "StableLmDecoderLayer", "layer_norm_eps"),
        beta=True, shapes="small")

    # --- ml_dtypes / numpy conversions ------------------------------------------------------
    for out, mod in (("bf16", "ml_dtypes.bfloat16"), ("e4m3fn", "ml_dtypes.float8_e4m3fn"),
                     ("e5m2", "ml_dtypes.float8_e5m2"), ("f16", "numpy.float16")):
        add("mldtypes_convert", "mldtypes", "convert", mod, f"np.asarray(x, float32).astype({mod})",
            f"f32-f32-{out}", convert_run, gamma=None, shapes="convert")
    return s


# ---------------------------------------------------------------------------------------------


# Table labels (tests/test_golden.cpp prints them; the README table is its output).
LABELS = {
    "hf_llama": "HF LlamaRMSNorm", "hf_mistral": "HF MistralRMSNorm", "hf_qwen2": "HF Qwen2RMSNorm",
    "hf_qwen3": "HF Qwen3RMSNorm", "hf_qwen3_qnorm": "HF Qwen3RMSNorm q_norm (head_dim 128)",
    "hf_gemma": "HF GemmaRMSNorm", "hf_gemma2": "HF Gemma2RMSNorm", "hf_gemma3": "HF Gemma3RMSNorm",
    "hf_gemma3n": "HF Gemma3nRMSNorm", "hf_gemma3n_noscale": "HF Gemma3nRMSNorm with_scale=False",
    "hf_olmo2": "HF Olmo2RMSNorm", "hf_t5": "HF T5LayerNorm", "hf_cohere": "HF CohereLayerNorm",
    "torch_layernorm": "torch.nn.LayerNorm", "torch_layernorm_nobias": "torch.nn.LayerNorm bias=False",
    "torch_layernorm_noaffine": "torch.nn.LayerNorm elementwise_affine=False",
    "torch_rmsnorm": "torch.nn.RMSNorm", "torch_rmsnorm_noaffine": "torch.nn.RMSNorm elementwise_affine=False",
    "ort_rmsnorm": "ORT RMSNormalization kernel", "onnx_rmsnorm_body": "ONNX RMSNormalization-23 body",
    "ort_layernorm": "ORT LayerNormalization kernel", "ort_layernorm_nobias": "ORT LayerNormalization kernel, no B",
    "hf_llama_add": "HF LlamaDecoderLayer add + LlamaRMSNorm",
    "hf_gemma_add": "HF GemmaDecoderLayer add + GemmaRMSNorm",
    "hf_stablelm_add": "HF StableLmDecoderLayer add + nn.LayerNorm",
}
LABEL_PACKAGE = {"hf444": "transformers", "hf457": "transformers", "torch": "torch", "mldtypes": None}


def label(spec: Spec, vers: dict[str, str]) -> str:
    if spec.op == "convert":
        pkg = spec.module.split(".")[0]
        return f"{spec.module} {vers[pkg]}"
    pkg = LABEL_PACKAGE.get(spec.group) or ("onnx" if spec.name.startswith("onnx_") else "onnxruntime")
    return f"{LABELS[spec.name]} {vers[pkg].split('+')[0]}"


def versions(group: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in PINS[group]:
        out[pkg] = importlib.import_module(pkg).__version__
    return out


def check_pins(group: str, any_version: bool) -> None:
    have = versions(group)
    bad = {k: (v, have[k]) for k, v in PINS[group].items() if not have[k].startswith(v)}
    # torch wheels carry a local suffix (+cu132 / +cpu): compare the public version only.
    bad = {k: v for k, v in bad.items() if have[k].split("+")[0] != v[0]}
    if bad and not any_version:
        sys.exit(f"group {group}: version mismatch {bad} (use --any-version to explore; do not commit)")
    # With the `kernels` package, transformers' @use_kernel_forward_from_hub may swap a module's
    # forward for a hub kernel: the golden data must come from the module's own code.
    if group.startswith("hf") and importlib.util.find_spec("kernels") is not None:
        sys.exit(f"group {group}: uninstall the `kernels` package first")


def render(spec: Spec) -> bytes:
    fused = spec.op.startswith("add_")
    if spec.shapes == "convert":
        x = convert_inputs()
        cases = [Case(1, x.size, 0.0, x, None, None, shape=(x.size,))]
    elif fused:
        cases = make_add_cases(spec)
    else:
        cases = make_cases(spec)
    for c in cases:
        if fused:
            c.y_bytes, c.res_bytes = spec.run(spec, c)
            assert len(c.res_bytes) == c.rows * c.cols * DTYPE_SIZE[spec.in_t]
        else:
            c.y_bytes = spec.run(spec, c)
        assert len(c.y_bytes) == c.rows * c.cols * DTYPE_SIZE[spec.out_t]
    vers = versions(spec.group)
    header = {
        "format": f"normkit-golden {FORMAT_VERSION_RESIDUAL if fused else FORMAT_VERSION}",
        "name": spec.filename,
        "op": spec.op,
        "module": spec.module,
        "label": label(spec, vers),
        "call": spec.call,
        "in": spec.in_t,
        "w": spec.w_t,
        "out": spec.out_t,
        "cases": str(len(cases)),
        "seed": f"numpy PCG64([crc32(name)={zlib.crc32(spec.filename.encode())}, case index])",
        "versions": " ".join(f"{k}=={v}" for k, v in vers.items()),
        "generator": "tests/golden/generate.py",
    }
    if spec.group in ("hf444", "hf457", "torch"):
        header["torch_cpu_capability"] = torch_mod().backends.cpu.get_cpu_capability()
    if spec.note:
        header["note"] = spec.note
    text = "".join(f"{k}: {v}\n" for k, v in header.items()).encode()
    out = bytearray(MAGIC + struct.pack("<I", len(text)) + text)
    for c in cases:
        flags = (1 if c.gamma is not None else 0) | (2 if c.beta is not None else 0)
        flags |= 4 if fused else 0
        eps_bits = struct.unpack("<I", struct.pack("<f", c.eps))[0]
        out += struct.pack("<IIII", c.rows, c.cols, eps_bits, flags)
        if spec.op == "convert":
            out += c.x.astype("<f4").tobytes()
        else:
            out += raw_bytes(c.x, spec.in_t)
        if fused:
            out += raw_bytes(c.residual, spec.in_t)
        if c.gamma is not None:
            out += raw_bytes(c.gamma, spec.w_t)
        if c.beta is not None:
            out += raw_bytes(c.beta, spec.w_t)
        out += c.y_bytes
        if fused:
            out += c.res_bytes
    return bytes(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", nargs="+", default=list(PINS), choices=list(PINS))
    ap.add_argument("--out", type=Path, default=DATA)
    ap.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    ap.add_argument("--any-version", action="store_true")
    ap.add_argument("--only", help="substring of the file names to (re)generate")
    args = ap.parse_args()
    for g in args.groups:
        check_pins(g, args.any_version)
    args.out.mkdir(parents=True, exist_ok=True)
    diffs = 0
    for spec in specs():
        if spec.group not in args.groups or (args.only and args.only not in spec.filename):
            continue
        data = render(spec)
        path = args.out / spec.filename
        if args.check:
            same = path.exists() and path.read_bytes() == data
            diffs += not same
            print(f"{'same' if same else 'DIFFERS'}  {spec.filename}")
        else:
            path.write_bytes(data)
            print(f"{len(data):8d}  {spec.filename}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
