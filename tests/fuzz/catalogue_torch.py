#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What PyTorch (CPU) does with the bad-input catalogue (tests/fuzz/CATALOGUE.md, README "Bad inputs").

One line per case, with the inputs of the matching test in tests/test_catalogue.cpp where PyTorch
can take them. Needs torch (2.x); not run by CI. The PyTorch column of the README table was read
from this script's output under torch 2.15.0 (CPU, 1 thread):

    OMP_NUM_THREADS=1 python3 tests/fuzz/catalogue_torch.py
"""
import math
import sys

import torch
import torch.nn.functional as F


def vals(t, n=6):
    flat = t.detach().reshape(-1)[:n].to(torch.float32).tolist()
    return "[" + ", ".join(repr(v) for v in flat) + (", ...]" if t.numel() > n else "]")


def bits(t):
    """Distinct storage bit patterns of t (hex), e.g. to see which NaN comes out."""
    w = {torch.float32: (torch.int32, 0xFFFFFFFF, 8), torch.bfloat16: (torch.int16, 0xFFFF, 4),
         torch.float16: (torch.int16, 0xFFFF, 4)}[t.dtype]
    return sorted({f"0x{b & w[1]:0{w[2]}X}" for b in t.view(w[0]).reshape(-1).tolist()})


def ln(x, eps=1e-6, w=None, b=None):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def rms(x, eps=1e-6, w=None):
    return F.rms_norm(x, (x.shape[-1],), w, eps)


def case(name, fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 -- what happens is the point
        out = f"raises {type(e).__name__}: {str(e).splitlines()[0][:140]}"
    print(f"{name}: {out}")


def f32(v):
    return torch.tensor(v, dtype=torch.float32)


print(f"torch {torch.__version__}, CPU, {torch.get_num_threads()} thread(s), python {sys.version.split()[0]}")
g = torch.Generator().manual_seed(0)

# NanRow: one NaN (several sign/payloads) in a 67-column row.
for dt in (torch.float32, torch.bfloat16, torch.float16):
    for nan in (0x7FC00000, 0xFFC00123 - (1 << 32), 0x7F800001):
        x = torch.randn(67, generator=g)
        x[5] = torch.tensor([nan], dtype=torch.int32).view(torch.float32)[0]
        x = x.to(dt)
        case(f"NanRow {dt} nan=0x{nan & 0xFFFFFFFF:08X}", lambda: f"LN bits {bits(ln(x))}; RMS bits {bits(rms(x))}")

# InfRow.
for v in (math.inf, -math.inf):
    x = torch.randn(70, generator=g)
    x[3] = v
    case(f"InfRow {v}", lambda: f"LN nan {int(ln(x).isnan().sum())}/70; RMS nan {int(rms(x).isnan().sum())}/70, "
         f"zeros {int((rms(x) == 0).sum())}/70")

# AllZeroRow.
z = torch.zeros(33)
gz = torch.tensor([-1.5 if i % 2 else 2.0 for i in range(33)])
bz = torch.tensor([0.25 * i - 3.0 for i in range(33)])
case("AllZeroRow eps=1e-6", lambda: f"LN == beta {bool(torch.equal(ln(z, 1e-6, gz, bz), bz))}; RMS {vals(rms(z, 1e-6, gz), 4)}")
case("AllZeroRow eps=0", lambda: f"LN {vals(ln(z, 0.0, gz, bz), 3)}; RMS {vals(rms(z, 0.0, gz), 3)}")

# ConstantRow: LN gives beta? RMS of a power of two with eps = 0 gives +-g?
bc = torch.empty(100).uniform_(-100, 100, generator=g)
gc = torch.empty(100).uniform_(-2, 2, generator=g)
for c in (3.0, -7.25, 10000.5, 3.0e38, -1.0e-40, 65504.0):
    x = torch.full((100,), c)
    case(f"ConstantRow LN c={c}", lambda: f"== beta {bool(torch.equal(ln(x, 1e-6, gc, bc), bc))}, "
         f"max|y-beta| {float((ln(x, 1e-6, gc, bc) - bc).abs().max())}; eps=0: {vals(ln(x, 0.0), 2)}")
for c in (0.25, -8.0, 2.0 ** 100, -(2.0 ** -60)):
    x = torch.full((100,), c)
    case(f"ConstantRow RMS c={c} eps=0 g=1.75", lambda: vals(rms(x, 0.0, torch.full((100,), 1.75)), 2))

# HugeMeanSmallSpread: mean 1e4/-3e4/1e6, spread mean*1e-6, 4096 fp32, eps = 0.
for mean in (1.0e4, -3.0e4, 1.0e6):
    x = (mean + mean * 1e-6 * torch.randn(4096, generator=g, dtype=torch.float64)).to(torch.float32)
    d = x.double()
    exact = (d - d.mean()) / torch.sqrt(((d - d.mean()) ** 2).mean())
    case(f"HugeMeanSmallSpread mean={mean}", lambda: f"LN max|y-exact| {float((ln(x, 0.0).double() - exact).abs().max()):.3g}; "
         f"fp32 E[x^2]-E[x]^2 = {float((x * x).mean() - x.mean() ** 2):.4g} (true {float(((d - d.mean()) ** 2).mean()):.3g})")

# OverflowRow.
x = torch.zeros(25)
x[0], x[1] = 3 * 2.0 ** 100, 4 * 2.0 ** 100
case("OverflowRow RMS [3,4,0..]*2^100", lambda: f"eps=0 {vals(rms(x, 0.0), 3)}; eps=1e-6 {vals(rms(x), 3)}")
case("OverflowRow LN [3,4,0..]*2^100", lambda: f"{vals(ln(x), 3)}; with beta=0.25: {vals(ln(x, 1e-6, None, torch.full((25,), 0.25)), 3)}")
x = f32([1.5 * 2.0 ** 127, -1.5 * 2.0 ** 127])
case("OverflowRow LN [1.5,-1.5]*2^127", lambda: vals(ln(x)))
big = torch.empty(1000).uniform_(1.9e19, 3.0e38, generator=g) * (torch.randint(0, 2, (1000,), generator=g) * 2 - 1)
case("OverflowRow random |x| in [1.9e19, 3e38]", lambda: f"LN nan {int(ln(big).isnan().sum())}/1000, "
     f"zeros {int((ln(big) == 0).sum())}; RMS zeros {int((rms(big) == 0).sum())}/1000")

# UnderflowRowEpsZero.
x = f32([1e-30, -1e-30, 0.0, 2e-30])
case("UnderflowRowEpsZero RMS", lambda: vals(rms(x, 0.0)))
xb = f32([1e-30, -1e-30]).to(torch.bfloat16)
case("UnderflowRowEpsZero LN bf16", lambda: vals(ln(xb, 0.0)))

# SubnormalRow (eps = 1e-6) and subnormal outputs (x = 1, eps = 0, y = g).
x = f32([2.0 ** -140, -(2.0 ** -141), 2.0 ** -149, 0.0, float.fromhex("0x1.fffffcp-127")])
inv = f32(1.0) / torch.sqrt(f32(0.0) + f32(1e-6))
case("SubnormalRow RMS", lambda: f"{vals(rms(x), 5)}; == x*(1/sqrt(eps)) {bool(torch.equal(rms(x), x * inv))}")
ones = torch.ones(4)
gs = f32([2.0 ** -140, 2.0 ** -149, -(2.0 ** -130), 2.0 ** -20])
case("Subnormal outputs f32", lambda: f"== g {bool(torch.equal(rms(ones, 0.0, gs), gs))}")
torch.set_flush_denormal(True)
case("set_flush_denormal(True): SubnormalRow RMS", lambda: vals(rms(x * 1.0), 5))
case("set_flush_denormal(True): subnormal outputs", lambda: vals(rms(ones, 0.0, gs), 4))
x = torch.zeros(8)
x[0], x[1] = 1.5 * 2.0 ** 126, 2.0 ** 127
case("set_flush_denormal(True): RMS overflow row [1.5*2^126, 2^127, 0..]", lambda: vals(rms(x), 3))
torch.set_flush_denormal(False)

# Fp16OutputOverflow: x = 1 (fp16), eps = 0, y = fp16(g).
gh = f32([65504.0, 65519.0, 65520.0, 1e5, -1e5, 3e38, -65520.0, 1.0])
x = torch.ones(8, dtype=torch.float16)
case("Fp16OutputOverflow f16 x, f32 g", lambda: f"dtype {rms(x, 0.0, gh).dtype} bits {rms(x, 0.0, gh).to(torch.float16).view(torch.int16).tolist()}")
case("Fp16OutputOverflow LN beta (f32) to f16", lambda: f"{ln(torch.full((8,), 5.0), 1e-6, None, gh).to(torch.float16).tolist()}")

# Eps.
x = torch.randn(2, 8, generator=g)
for e in (-1e-6, -1e3, math.nan, math.inf, -0.0):
    case(f"Eps {e}", lambda: f"LN {vals(ln(x, e), 3)}; RMS {vals(rms(x, e), 3)}")

# Sizes.
case("ColsZero", lambda: f"LN shape {tuple(ln(torch.empty(3, 0)).shape)}; RMS shape {tuple(rms(torch.empty(3, 0)).shape)}")
case("RowsZero", lambda: f"LN shape {tuple(ln(torch.empty(0, 5)).shape)}; RMS shape {tuple(rms(torch.empty(0, 5)).shape)}")
x = f32([[-3.0], [0.7], [1e30]])
case("ColsOne", lambda: f"RMS {vals(rms(x))}; LN beta=0.25 {vals(ln(x, 1e-6, None, torch.full((1,), 0.25)))}; "
     f"LN eps=0 {vals(ln(x, 0.0))}")
x = torch.randn(2, 2 ** 20 + 1, generator=g)
d = x.double()
ref = (d - d.mean(-1, keepdim=True)) / torch.sqrt(d.var(-1, unbiased=False, keepdim=True) + 1e-6)
case("ColsTwoPow20Plus1", lambda: f"LN max|y-exact| {float((ln(x).double() - ref).abs().max()):.3g}")

# Layout.
base = torch.randn(3 * 200 + 16, generator=g)
x = base[5:5 + 3 * 64].view(3, 64)
case("ElementOffsetPointers", lambda: f"storage_offset {x.storage_offset()}: same as a fresh copy "
     f"{bool(torch.equal(ln(x), ln(x.clone())))}")
xs = torch.randn(4, 64, generator=g)[:, :32]
case("Row stride > cols", lambda: f"stride {xs.stride()}: same as contiguous {bool(torch.equal(ln(xs), ln(xs.contiguous())))}")
xo = torch.randn(64, generator=g).as_strided((3, 8), (4, 1))  # rows overlap: stride 4 < 8 cols
case("StrideSmallerThanCols (as_strided input)", lambda: f"LN same as its contiguous copy {bool(torch.equal(ln(xo), ln(xo.contiguous())))}; "
     f"RMS {bool(torch.equal(rms(xo), rms(xo.contiguous())))}")
case("InPlace", lambda: f"aten.layer_norm_ exists: {hasattr(torch.ops.aten, 'layer_norm_')}, "
     f"aten.rms_norm_ exists: {hasattr(torch.ops.aten, 'rms_norm_')}")


def native_ln_out_overlap():
    buf = torch.randn(128, generator=g)
    out = buf[32:96].view(1, 64)
    torch.ops.aten.native_layer_norm.out(buf[:64].view(1, 64), [64], None, None, 1e-6,
                                         out0=out, out1=torch.empty(1, 1), out2=torch.empty(1, 1))
    return "accepted (output written over the overlapping input)"


case("PartialOverlap aten.native_layer_norm.out", native_ln_out_overlap)
x = torch.randn(4, 16, generator=g)
case("NullPointers (weight/bias None)", lambda: f"LN == LN(w=1, b=0): {bool(torch.equal(ln(x), ln(x, 1e-6, torch.ones(16), torch.zeros(16))))}; "
     f"RMS == RMS(w=1): {bool(torch.equal(rms(x), rms(x, 1e-6, torch.ones(16))))}")
