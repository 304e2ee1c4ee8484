// SPDX-License-Identifier: MIT
// normkit: RMSNorm and LayerNorm kernels for LLM inference whose every rounding is a
// compile-time policy and whose bits are the same on every ISA.
//
//   #include <normkit/normkit.hpp>
//   normkit::status s = normkit::rms_norm<normkit::llama>(x, gamma, y, rows, cols, 1e-6f);
//
// Storage types float, normkit::bf16, normkit::fp16 in any combination for x (In), gamma/beta
// (W) and y (Out); statistics always in fp32. Presets: llama, gemma, gemma3n, olmo2, t5, pytorch,
// onnx (policy.hpp). Bit-parity assumes IEEE mode: no FTZ/DAZ (which -ffast-math start-up code
// sets); including this header under -ffast-math is a compile error. No allocation but the
// per-thread fp32 scratch of composite ops (dispatch/compose.hpp: the fused add in fp32_sum mode,
// the quantized norms) and the backward passes' fold, no exceptions, no global state beyond the
// ISA choice and the streaming-store threshold (dispatch.hpp). The plain ops also take a thread
// pool's parallel_for first (rms_norm.hpp). Fused residual add and head-wise norms: add_norm.hpp,
// rms_norm_heads; 8-bit outputs (fp8, int8, Q8_0): quant.hpp; training: *_backward.hpp.
#pragma once

#include "add_norm.hpp"
#include "backward_reduce.hpp"
#include "convert.hpp"
#include "dispatch.hpp"
#include "fp8.hpp"
#include "layer_norm.hpp"
#include "layer_norm_backward.hpp"
#include "policy.hpp"
#include "quant.hpp"
#include "reference.hpp"
#include "rms_norm.hpp"
#include "rms_norm_backward.hpp"
#include "status.hpp"
#include "types.hpp"
#include "version.hpp"
