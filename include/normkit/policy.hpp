// SPDX-License-Identifier: MIT
// normkit: rounding policies and model presets.
//
// A policy is a type; every knob is a compile-time choice, so a port picks its checkpoint's
// convention once and the compiler removes the others. The knobs (docs/contract.md, output step):
//   rounding   once : y = Out(n * g)                 twice : y = Out(f(Mid(n)) * g)
//   mid        the round-twice intermediate type: the input type (Llama) or the gain type (T5)
//   gain       plain : g = f(gamma)                  plus_one : g = 1.0f + f(gamma)  (fp32 add)
//   normalize  multiply : n = x * (1 / sqrt(ms + eps))   divide : n = x / sqrt(ms + eps)
#pragma once

#include "detail/abi.hpp"

namespace normkit {

enum class rounding { once, twice };
enum class mid_type { input, gain };
enum class gain_mode { plain, plus_one };
enum class normalize { multiply, divide };

template <rounding R, gain_mode G = gain_mode::plain, normalize N = normalize::multiply,
          mid_type M = mid_type::input>
struct policy {
  static constexpr rounding round = R;
  static constexpr gain_mode gain = G;
  static constexpr normalize norm = N;
  static constexpr mid_type mid = M;
  // Whether layer_norm<Policy> reproduces the convention exactly (see onnx below).
  static constexpr bool layer_norm_exact = true;
};

// The two conventions by name.
using round_once = policy<rounding::once>;
using round_twice = policy<rounding::twice>;

// ---- Model presets. Each mirrors one line of its framework's source. ----

// HF transformers v4.44.2 LlamaRMSNorm.forward:
//   `return self.weight * hidden_states.to(input_dtype)` -- the normalized value is rounded to
//   the input dtype, then multiplied by the weight (and rounded again). Also Qwen2/Qwen3 and
//   Mistral (copied from Llama).
struct llama : policy<rounding::twice> {};

// HF transformers v4.44.2 GemmaRMSNorm.forward (Gemma 1-3):
//   `output = output * (1.0 + self.weight.float()); return output.type_as(x)` -- gain 1 + w added
//   in fp32, one rounding at the end.
struct gemma : policy<rounding::once, gain_mode::plus_one> {};

// HF transformers Gemma3nRMSNorm: `_norm` is `x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) +
//   self.eps)`, then `self._norm(x.float()) * self.weight.float()` and `.type_as(x)` -- divides,
//   no offset, one rounding.
struct gemma3n : policy<rounding::once, gain_mode::plain, normalize::divide> {};

// HF transformers Olmo2RMSNorm.forward: `return (self.weight * hidden_states).to(input_dtype)` --
//   the product is taken in fp32, one rounding.
struct olmo2 : policy<rounding::once> {};

// HF transformers v4.44.2 T5LayerNorm.forward:
//   `if self.weight.dtype in [torch.float16, torch.bfloat16]: hidden_states =
//   hidden_states.to(self.weight.dtype)` then `return self.weight * hidden_states` -- rounded to
//   the *weight* dtype (a no-op for fp32 weights), then multiplied.
struct t5 : policy<rounding::twice, gain_mode::plain, normalize::multiply, mid_type::gain> {};

// PyTorch torch.nn.RMSNorm / torch.nn.LayerNorm (CPU kernels): statistics and the affine product
//   in fp32 (opmath), one cast to the output dtype.
struct pytorch : policy<rounding::once> {};

// ONNX RMSNormalization (opset 23) function body: `Normalized = Div(X, RMS)` in the stash type,
//   `NormalizedT = CastLike(Normalized, X)`, `Y = Mul(NormalizedT, Scale)` -- divides, rounds
//   twice. The ONNX LayerNormalization body rounds `Mul(NormalizedT, Scale)` once more before
//   `Add(..., B)`: a third rounding that layer_norm does not model, so layer_norm<onnx> does not
//   compile.
struct onnx : policy<rounding::twice, gain_mode::plain, normalize::divide> {
  static constexpr bool layer_norm_exact = false;
};

// ONNX Runtime's CPU RMSNormalization kernel (not the spec's function body): x / rms * scale in
//   fp32, one cast -- measured 99.98 % bit-exact on ORT 1.32 fp16 (tests/golden), where `onnx`
//   agrees on 74 %.
struct onnxruntime : policy<rounding::once, gain_mode::plain, normalize::divide> {};

inline namespace NORMKIT_ABI_NAMESPACE {  // with the rest of detail: detail/abi.hpp
namespace detail {
// The kernels see only the knobs, so presets with equal knobs share one instantiation.
template <class Policy>
using knobs_of = policy<Policy::round, Policy::gain, Policy::norm, Policy::mid>;
}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

}  // namespace normkit
