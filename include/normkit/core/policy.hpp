// SPDX-License-Identifier: MIT
// normkit: rounding policies and model presets.
//
// A policy is a type; every knob is a compile-time choice, so a port picks its checkpoint's
// convention once and the compiler removes the others. The knobs (docs/contract.md, output step):
//   rounding   once : y = Out(n * g)                 twice : y = Out(f(Mid(n)) * g)
//   mid        the round-twice intermediate type: the input type (Llama) or the gain type (T5)
//   gain       plain : g = f(gamma)                  plus_one : g = 1.0f + f(gamma)  (fp32 add)
//   normalize  multiply : n = x * (1 / sqrt(ms + eps))   divide : n = x / sqrt(ms + eps)
//   residual   the fused residual add only (add_norm.hpp): what the norm reads after
//              s = f(x) + f(residual) -- stored_residual : f(Res(s)), the residual as stored
//              (HF, vLLM); fp32_sum : s itself (FlashInfer)
#pragma once

#include <cstddef>      // std::size_t
#include <type_traits>  // std::conditional_t, std::is_same

#include "abi.hpp"
#include "type_list.hpp"

namespace normkit {

enum class rounding { once, twice };
enum class mid_type { input, gain };
enum class gain_mode { plain, plus_one };
enum class normalize { multiply, divide };
enum class residual_norm { stored_residual, fp32_sum };

template <rounding R, gain_mode G = gain_mode::plain, normalize N = normalize::multiply,
          mid_type M = mid_type::input, residual_norm S = residual_norm::stored_residual>
struct policy {
  static constexpr rounding round = R;
  static constexpr gain_mode gain = G;
  static constexpr normalize norm = N;
  static constexpr mid_type mid = M;
  static constexpr residual_norm residual = S;
  // Whether layer_norm<Policy> reproduces the convention exactly (see onnx below).
  static constexpr bool layer_norm_exact = true;
};

// The two conventions by name.
struct round_once : policy<rounding::once> {
  static constexpr const char* name = "round_once";
};
struct round_twice : policy<rounding::twice> {
  static constexpr const char* name = "round_twice";
};

// ---- Model presets. Each mirrors one line of its framework's source. ----

// HF transformers v4.44.2 LlamaRMSNorm.forward:
//   `return self.weight * hidden_states.to(input_dtype)` -- the normalized value is rounded to
//   the input dtype, then multiplied by the weight (and rounded again). Also Qwen2/Qwen3 and
//   Mistral (copied from Llama).
struct llama : policy<rounding::twice> {
  static constexpr const char* name = "llama";
};

// HF transformers v4.44.2 GemmaRMSNorm.forward (Gemma 1-3):
//   `output = output * (1.0 + self.weight.float()); return output.type_as(x)` -- gain 1 + w added
//   in fp32, one rounding at the end.
struct gemma : policy<rounding::once, gain_mode::plus_one> {
  static constexpr const char* name = "gemma";
};

// HF transformers Gemma3nRMSNorm: `_norm` is `x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) +
//   self.eps)`, then `self._norm(x.float()) * self.weight.float()` and `.type_as(x)` -- divides,
//   no offset, one rounding.
struct gemma3n : policy<rounding::once, gain_mode::plain, normalize::divide> {
  static constexpr const char* name = "gemma3n";
};

// HF transformers Olmo2RMSNorm.forward: `return (self.weight * hidden_states).to(input_dtype)` --
//   the product is taken in fp32, one rounding.
struct olmo2 : policy<rounding::once> {
  static constexpr const char* name = "olmo2";
};

// HF transformers v4.44.2 T5LayerNorm.forward:
//   `if self.weight.dtype in [torch.float16, torch.bfloat16]: hidden_states =
//   hidden_states.to(self.weight.dtype)` then `return self.weight * hidden_states` -- rounded to
//   the *weight* dtype (a no-op for fp32 weights), then multiplied.
struct t5 : policy<rounding::twice, gain_mode::plain, normalize::multiply, mid_type::gain> {
  static constexpr const char* name = "t5";
};

// PyTorch torch.nn.RMSNorm / torch.nn.LayerNorm (CPU kernels): statistics and the affine product
//   in fp32 (opmath), one cast to the output dtype.
struct pytorch : policy<rounding::once> {
  static constexpr const char* name = "pytorch";
};

// ONNX RMSNormalization (opset 23) function body: `Normalized = Div(X, RMS)` in the stash type,
//   `NormalizedT = CastLike(Normalized, X)`, `Y = Mul(NormalizedT, Scale)` -- divides, rounds
//   twice. The ONNX LayerNormalization body rounds `Mul(NormalizedT, Scale)` once more before
//   `Add(..., B)`: a third rounding that layer_norm does not model, so layer_norm<onnx> does not
//   compile.
struct onnx : policy<rounding::twice, gain_mode::plain, normalize::divide> {
  static constexpr const char* name = "onnx";
  static constexpr bool layer_norm_exact = false;
};

// ONNX Runtime's CPU RMSNormalization kernel (not the spec's function body): x / rms * scale in
//   fp32, one cast -- measured 99.98 % bit-exact on ORT 1.32 fp16 (tests/golden), where `onnx`
//   agrees on 74 %.
struct onnxruntime : policy<rounding::once, gain_mode::plain, normalize::divide> {
  static constexpr const char* name = "onnxruntime";
};

// ---- The fused residual add (add_rms_norm, add_layer_norm) ----
//
// Every preset above normalizes the residual as stored (residual_norm::stored_residual): HF
// transformers v4.44.2 LlamaDecoderLayer.forward adds in the storage dtype,
// `hidden_states = residual + hidden_states`, and the next layer norm reads that tensor; vLLM
// csrc/layernorm_kernels.cu fused_add_rms_norm_kernel does the same, `scalar_t z = input[..];
// z += residual[..]; float x = (float) z; variance += x * x; residual[..] = z;`. So
// add_rms_norm<llama> is HF's add followed by LlamaRMSNorm, bit for bit.

// FlashInfer include/flashinfer/norm.cuh FusedAddRMSNormKernel: `float x = float(input_vec[j]);
//   x += float(residual_vec[j]); sum_sq += x * x; residual_vec[j] = (T)x; x_vec[j] = x;` and
//   `x_vec[j] * rms_rcp * (weight_bias + float(weight_vec[j]))` -- the norm reads the fp32 sum,
//   one rounding at the end. (Its rms_rcp is the GPU's approximate rsqrt; normkit's is the
//   contract's correctly rounded 1 / sqrt.)
struct flashinfer : policy<rounding::once, gain_mode::plain, normalize::multiply, mid_type::input,
                           residual_norm::fp32_sum> {
  static constexpr const char* name = "flashinfer";
};

// FlashInfer GemmaFusedAddRMSNorm: the same kernel with weight_bias = 1 (gain 1 + w).
struct flashinfer_gemma : policy<rounding::once, gain_mode::plus_one, normalize::multiply, mid_type::input,
                                 residual_norm::fp32_sum> {
  static constexpr const char* name = "flashinfer_gemma";
};

// Any policy with the fused add's norm reading the fp32 sum: fp32_sum_residual<llama>.
template <class Policy>
struct fp32_sum_residual : Policy {
  static constexpr residual_norm residual = residual_norm::fp32_sum;
};

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {
// Every named policy, for the build's policy selection (dispatch/selection.hpp). A new preset is
// a struct above with its name, and its line here.
using named_policies = type_list<round_once, round_twice, llama, gemma, gemma3n, olmo2, t5, pytorch, onnx,
                                 onnxruntime, flashinfer, flashinfer_gemma>;

// The kernels see only the knobs, so presets with equal knobs share one instantiation. The
// residual knob is not among them: no kernel reads it (the fused add is a composite, add_norm.hpp).
template <class Policy>
using knobs_of = policy<Policy::round, Policy::gain, Policy::norm, Policy::mid>;

// The storage type of the round-twice intermediate.
template <class Knobs, class In, class W>
using mid_of = std::conditional_t<Knobs::mid == mid_type::input, In, W>;

// Every knob set a kernel can be asked for: {once, twice through In, twice through W} x gain x
// normalize. The runtime table has one slot per set (dispatch/table.hpp).
template <std::size_t K>
using knobs_at = policy<
    K % 3 == 0 ? rounding::once : rounding::twice, (K / 3) % 2 ? gain_mode::plus_one : gain_mode::plain,
    (K / 6) % 2 ? normalize::divide : normalize::multiply, K % 3 == 2 ? mid_type::gain : mid_type::input>;
constexpr std::size_t n_knob_sets = 12;

template <class Knobs>
constexpr std::size_t knob_index = (Knobs::round == rounding::once  ? 0
                                    : Knobs::mid == mid_type::input ? 1
                                                                    : 2) +
                                   3 * (Knobs::gain == gain_mode::plus_one) +
                                   6 * (Knobs::norm == normalize::divide);

// Knobs that give the same bits share one kernel: rounding through a float intermediate is
// rounding once, and rounding through W when W is In is rounding through In.
template <class Knobs, class In, class W>
struct canonical_knobs_impl {
  static constexpr bool twice = Knobs::round == rounding::twice;
  using mid = mid_of<Knobs, In, W>;
  static constexpr rounding round = twice && std::is_same<mid, float>::value ? rounding::once : Knobs::round;
  static constexpr mid_type m =
      round == rounding::once || std::is_same<In, W>::value ? mid_type::input : Knobs::mid;
  using type = policy<round, Knobs::gain, Knobs::norm, m>;
};
template <class Knobs, class In, class W>
using canonical_knobs = typename canonical_knobs_impl<Knobs, In, W>::type;
}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

}  // namespace normkit
