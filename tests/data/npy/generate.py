# SPDX-License-Identifier: MIT
"""Fixtures for normkit-inspect: a layer's input, gain and the output a framework produced.

Each reference output is written from the framework's own lines (HF transformers v4.44.2 and
PyTorch), in NumPy with ml_dtypes for bf16, independently of normkit's code; NumPy's pairwise
float32 mean stands in for the framework's reduction (a different order than normkit's canonical
sum, as in a real dump). Run from anywhere; it rewrites the .npy files next to it:

    python3 -m pip install numpy ml_dtypes
    python3 tests/data/npy/generate.py

The files are committed; the tests only read them. Written with numpy 2.4.6 and ml_dtypes 0.7.0
(the seeded generator and np.save are deterministic: a rerun reproduces them byte for byte).
"""
import os

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
bf16 = ml_dtypes.bfloat16
f32 = np.float32


def save(name, a, raw_bits=False):
    """bf16 as ml_dtypes' bfloat16 ('<V2'), or as its raw bits ('<u2') with raw_bits."""
    if raw_bits:
        a = a.view(np.uint16)
    np.save(os.path.join(HERE, name + ".npy"), np.ascontiguousarray(a))


def activations(rng, rows, cols, dtype):
    # Rows of different scales, as a residual stream has (0.05 .. 20).
    scale = np.exp(rng.uniform(np.log(0.05), np.log(20.0), (rows, 1)))
    return (rng.standard_normal((rows, cols)) * scale).astype(f32).astype(dtype)


def rsqrt(v):
    return f32(1.0) / np.sqrt(v)  # torch.rsqrt on the float32 tensor


def llama_rms_norm(x, weight, eps):
    # LlamaRMSNorm.forward:
    #   input_dtype = hidden_states.dtype
    #   hidden_states = hidden_states.to(torch.float32)
    #   variance = hidden_states.pow(2).mean(-1, keepdim=True)
    #   hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
    #   return self.weight * hidden_states.to(input_dtype)
    h = x.astype(f32)
    variance = np.mean(h * h, axis=-1, keepdims=True, dtype=f32)
    h = h * rsqrt(variance + f32(eps))
    h = h.astype(x.dtype)
    # torch type promotion: bf16 * bf16 -> bf16 (computed in float, rounded once);
    # fp32 weight * bf16 -> fp32.
    out_dtype = x.dtype if weight.dtype == x.dtype else f32
    return (weight.astype(f32) * h.astype(f32)).astype(out_dtype)


def gemma_rms_norm(x, weight, eps):
    # GemmaRMSNorm:
    #   def _norm(self, x): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
    #   output = self._norm(x.float())
    #   output = output * (1.0 + self.weight.float())
    #   return output.type_as(x)
    h = x.astype(f32)
    out = h * rsqrt(np.mean(h * h, axis=-1, keepdims=True, dtype=f32) + f32(eps))
    out = out * (f32(1.0) + weight.astype(f32))
    return out.astype(x.dtype)


def torch_layer_norm(x, weight, bias, eps):
    # torch.nn.functional.layer_norm on CPU: mean and variance in float (opmath), then
    # (x - mean) * rstd * weight + bias in float, one cast to the input dtype.
    h = x.astype(f32)
    mean = np.mean(h, axis=-1, keepdims=True, dtype=f32)
    var = np.mean((h - mean) * (h - mean), axis=-1, keepdims=True, dtype=f32)
    out = (h - mean) * rsqrt(var + f32(eps)) * weight.astype(f32) + bias.astype(f32)
    return out.astype(x.dtype)


def main():
    rng = np.random.default_rng(20261201)

    # Llama (Qwen2/3, Mistral): bf16 activations and weight, eps 1e-5, ml_dtypes bfloat16 files.
    x = activations(rng, 8, 512, bf16)
    w = (1.0 + 0.1 * rng.standard_normal(512)).astype(f32).astype(bf16)
    save("llama_x", x)
    save("llama_gamma", w)
    save("llama_ref", llama_rms_norm(x, w, 1e-5))

    # Llama with an fp32 weight (a checkpoint kept in fp32): the output is fp32.
    x = activations(rng, 4, 256, bf16)
    w = (1.0 + 0.1 * rng.standard_normal(256)).astype(f32)
    save("llama_f32gain_x", x)
    save("llama_f32gain_gamma", w)
    save("llama_f32gain_ref", llama_rms_norm(x, w, 1e-5))

    # Gemma: bf16 activations, the weight stored as an offset from 1 (near 0), eps 1e-6; bf16
    # stored as raw bits ('<u2').
    x = activations(rng, 8, 512, bf16)
    w = (0.1 * rng.standard_normal(512)).astype(f32).astype(bf16)
    save("gemma_x", x, raw_bits=True)
    save("gemma_gamma", w, raw_bits=True)
    save("gemma_ref", gemma_rms_norm(x, w, 1e-6), raw_bits=True)

    # torch.nn.LayerNorm in fp16 with a bias, eps 1e-5; three leading dimensions (2, 3, 128).
    x = (rng.standard_normal((2, 3, 128)) * 2.0 + 0.5).astype(np.float16)
    w = (1.0 + 0.1 * rng.standard_normal(128)).astype(np.float16)
    b = (0.1 * rng.standard_normal(128)).astype(np.float16)
    save("layer_x", x)
    save("layer_gamma", w)
    save("layer_beta", b)
    save("layer_ref", torch_layer_norm(x, w, b, 1e-5))

    # fp32 throughout (x, weight, output): every ulp of the statistics shows in the outputs, so
    # rows whose mean square NumPy sums to another ulp than normkit's canonical order differ by a
    # few ulps; the others are bit-exact. One x, a Llama and a Gemma reference.
    x = activations(rng, 16, 256, f32)
    w = (1.0 + 0.1 * rng.standard_normal(256)).astype(f32)
    w_offset = (0.1 * rng.standard_normal(256)).astype(f32)
    save("f32_x", x)
    save("f32_llama_gamma", w)
    save("f32_llama_ref", llama_rms_norm(x, w, 1e-6))
    save("f32_gemma_gamma", w_offset)
    save("f32_gemma_ref", gemma_rms_norm(x, w_offset, 1e-6))


if __name__ == "__main__":
    main()
