// SPDX-License-Identifier: MIT
// The parity harness (test_parity.cpp holds the test cases): a call of any op of the op list
// (normkit::detail::ops, ops/list.hpp) through its public entry point, on operands laid out with
// offsets, strides and poison around them, compared bit for bit with the reference on contiguous
// copies, plus a check that nothing outside the output rows was written.
//
// Each op enters through its adapter, parity_op<Op> below: how to call the public entry point
// and the reference on type-erased buffers, which gains it takes, and which presets x storage
// types its full sweep covers. Walking the op list instantiates every adapter, so an op added to
// ops/list.hpp without one does not compile here (docs/architecture.md, adding an op).
//
// Compile time: each op x preset x type combination instantiates two small trampolines behind one
// type-erased signature (call_fn); the generators, layouts, poison checks and comparisons are
// written once over run-time storage types (dtype, tests/common.hpp).
#pragma once

#include <normkit/ops/list.hpp>  // normkit::detail::ops and the op descriptions

#include "support.hpp"

#include <chrono>            // std::chrono::steady_clock
#include <cmath>             // std::ldexp, std::fma
#include <cstddef>           // std::size_t
#include <cstdint>           // std::uint32_t, std::uint64_t, std::uintptr_t
#include <cstdio>            // std::printf, std::snprintf
#include <cstring>           // std::memcmp, std::memcpy
#include <initializer_list>  // std::initializer_list
#include <string>            // std::string
#include <type_traits>       // std::is_same
#include <vector>            // std::vector

namespace normkit_test {
namespace parity {

using normkit::isa;

// ---- Storage buffers of a type chosen at run time.

// The poison put around operands: a quiet NaN with a payload around inputs (read into a row, it
// turns the row into NaNs; it is not the canonical NaN a kernel stores), a finite marker around
// outputs (any write changes it).
template <class T>
constexpr std::uint32_t nan_poison_bits() {
  constexpr std::uint32_t nan = traits<T>::canonical_nan,
                          quiet = nan & ~std::uint32_t{traits<T>::exponent_mask};
  return nan | (0x5a5a5a5au & (quiet - 1u));
}
inline std::uint32_t nan_poison(dtype t) {
  return visit(t, [](auto tag) { return nan_poison_bits<typename decltype(tag)::type>(); });
}
inline std::uint32_t out_poison(dtype t) {
  return visit(t,
               [](auto tag) { return std::uint32_t{bits_type<typename decltype(tag)::type>(0x5a5a5a5au)}; });
}

// A vector of one storage type chosen at run time; at(k) is 64-byte aligned for k = 0, so at(k)
// has the misalignment k * size_of(type) within a cache line.
class any_vec {
 public:
  any_vec() = default;
  any_vec(dtype t, std::size_t n, std::uint32_t fill_bits) : t_(t), n_(n), elem_(size_of(t)) {
    const std::size_t slack = 64 / elem_;
    store_.resize(((n + 2 * slack) * elem_ + 7) / 8);
    visit(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T v = from_bits<T>(fill_bits);
      for (std::size_t k = 0; k < n + 2 * slack; ++k)
        std::memcpy(bytes() + k * elem_, &v, elem_);
    });
    while (reinterpret_cast<std::uintptr_t>(at(0)) % 64 != 0)
      ++base_;
  }
  dtype type() const { return t_; }
  std::size_t size() const { return n_; }
  void* at(std::size_t k) { return bytes() + (base_ + k) * elem_; }
  const void* at(std::size_t k) const { return const_cast<any_vec*>(this)->at(k); }
  std::uint32_t bits_at(std::size_t k) const { return normkit_test::bits_at(at(0), k, elem_); }
  // Copies n elements of the same type.
  void copy_in(std::size_t k, const any_vec& src, std::size_t src_k, std::size_t n) {
    if (n)
      std::memcpy(at(k), src.at(src_k), n * elem_);
  }

 private:
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(store_.data()); }
  dtype t_{};
  std::size_t n_ = 0, base_ = 0, elem_ = 4;
  std::vector<std::uint64_t> store_;
};

// ---- One call behind one signature: the operands of a norm call; an op uses what it has.
struct buffers {
  const void* x;
  const void* gamma;
  const void* beta;
  void* y;
  std::size_t rows, cols;
  float eps;
  std::size_t x_stride, y_stride;
};
using call_fn = normkit::status (*)(const buffers&);

// ---- The per-op adapters. An op of the op list without one stops the build here.
template <class Op>
struct parity_op {
  static_assert(sizeof(Op) == 0,
                "tests/parity.hpp: this op of normkit::detail::ops (ops/list.hpp) has no parity_op<Op> "
                "adapter, so the parity test would not cover it: add one next to the others");
};

// What an adapter's full sweep covers (EveryPresetAndTypeCombination): each preset of Policies
// with every type combination of the op's slots, or with the listed combinations only.
template <class Policies>
struct all_combinations {};
template <class Policies, class Combos>
struct some_combinations {};

// One policy with all non-default knobs (twice, plus_one, divide, Mid = W), which no preset has,
// so that kernel-table corner is reached too.
struct all_knobs : normkit::policy<normkit::rounding::twice, normkit::gain_mode::plus_one,
                                   normkit::normalize::divide, normkit::mid_type::gain> {
  static constexpr const char* name = "policy<twice,plus_one,divide,mid=W>";
};

// Representative In/W/Out subsets: each type in each role, equal and mixed widths, and the
// round-twice intermediate (Mid = In or W) being each of the three types.
using io_subset6 =
    type_list<type_list<float, float, float>, type_list<bf16, bf16, bf16>, type_list<fp16, fp16, fp16>,
              type_list<bf16, float, bf16>, type_list<fp16, bf16, float>, type_list<float, fp16, bf16>>;
// For presets whose knobs equal a preset swept in full (same kernels): that the name maps to them.
using io_subset2 = type_list<type_list<bf16, bf16, bf16>, type_list<fp16, float, bf16>>;

template <>
struct parity_op<normkit::detail::rms_norm_op> {
  static constexpr bool has_gamma = true, has_beta = false;
  template <class Policy, class In, class W, class Out>
  static normkit::status api(const buffers& b) {
    return normkit::rms_norm<Policy>(static_cast<const In*>(b.x), static_cast<const W*>(b.gamma),
                                     static_cast<Out*>(b.y), b.rows, b.cols, b.eps, b.x_stride, b.y_stride);
  }
  template <class Policy, class In, class W, class Out>
  static normkit::status ref(const buffers& b) {  // contiguous rows
    return normkit::reference::rms_norm<Policy>(static_cast<const In*>(b.x), static_cast<const W*>(b.gamma),
                                                static_cast<Out*>(b.y), b.rows, b.cols, b.eps);
  }
  // All 27 In/W/Out for two presets (twice with Mid = In and Mid = W); six for presets with knobs of
  // their own; two for presets whose knobs equal a swept one.
  using sweep = type_list<
      all_combinations<type_list<normkit::llama, normkit::t5>>,
      some_combinations<type_list<normkit::gemma, normkit::gemma3n, normkit::olmo2, normkit::onnx, all_knobs>,
                        io_subset6>,
      some_combinations<type_list<normkit::pytorch, normkit::round_once, normkit::round_twice,
                                  normkit::onnxruntime, normkit::flashinfer, normkit::flashinfer_gemma>,
                        io_subset2>>;
  template <class Policy>
  static constexpr bool accepts = true;
};

template <>
struct parity_op<normkit::detail::layer_norm_op> {
  static constexpr bool has_gamma = true, has_beta = true;
  template <class Policy, class In, class W, class Out>
  static normkit::status api(const buffers& b) {
    return normkit::layer_norm<Policy>(static_cast<const In*>(b.x), static_cast<const W*>(b.gamma),
                                       static_cast<const W*>(b.beta), static_cast<Out*>(b.y), b.rows, b.cols,
                                       b.eps, b.x_stride, b.y_stride);
  }
  template <class Policy, class In, class W, class Out>
  static normkit::status ref(const buffers& b) {
    return normkit::reference::layer_norm<Policy>(static_cast<const In*>(b.x), static_cast<const W*>(b.gamma),
                                                  static_cast<const W*>(b.beta), static_cast<Out*>(b.y),
                                                  b.rows, b.cols, b.eps);
  }
  // All 27 for two presets (twice, and once with a bias); six or two for the others.
  using sweep = type_list<
      all_combinations<type_list<normkit::pytorch, normkit::t5>>,
      some_combinations<type_list<normkit::llama, normkit::gemma, normkit::gemma3n, all_knobs>, io_subset6>,
      some_combinations<type_list<normkit::olmo2, normkit::round_once, normkit::round_twice,
                                  normkit::onnxruntime, normkit::flashinfer, normkit::flashinfer_gemma>,
                        io_subset2>>;
  // contract: layer_norm<onnx> does not compile (layer_norm.hpp), so it is not swept.
  template <class Policy>
  static constexpr bool accepts = Policy::layer_norm_exact;
};

// convert has no policy and no rows: one call per row of the layout, and the scalar conversion
// of the storage types (core/storage.hpp: dst[i] = Dst(float(src[i]))) as the reference.
struct no_policy {
  static constexpr const char* name = nullptr;
};

template <>
struct parity_op<normkit::detail::convert_op> {
  static constexpr bool has_gamma = false, has_beta = false;
  template <class Policy, class Src, class Dst>
  static normkit::status api(const buffers& b) {
    for (std::size_t r = 0; r < b.rows; ++r) {
      const normkit::status st = normkit::convert(static_cast<const Src*>(b.x) + r * b.x_stride,
                                                  static_cast<Dst*>(b.y) + r * b.y_stride, b.cols);
      if (st != normkit::status::ok)
        return st;
    }
    return normkit::status::ok;
  }
  template <class Policy, class Src, class Dst>
  static normkit::status ref(const buffers& b) {
    const Src* x = static_cast<const Src*>(b.x);
    Dst* y = static_cast<Dst*>(b.y);
    for (std::size_t i = 0; i < b.rows * b.cols; ++i)
      y[i] = normkit::from_float<Dst>(normkit::to_float(x[i]));
    return normkit::status::ok;
  }
  using sweep = type_list<all_combinations<type_list<no_policy>>>;
  template <class Policy>
  static constexpr bool accepts = false;  // no policies
};

// residual_add reads and writes the residual: the harness's one-output layouts do not fit it, so
// tests/test_add_norm.cpp checks it against its reference on every ISA (layouts, strides,
// aliasing, NaN sums), alone and as the first stage of add_rms_norm / add_layer_norm.
template <>
struct parity_op<normkit::detail::residual_add_op> {
  static constexpr bool has_gamma = false, has_beta = false;
  using sweep = type_list<>;
  template <class Policy>
  static constexpr bool accepts = false;  // no policies
};

// quantize writes 1-byte types and scales, which this harness's buffers (the input storage types)
// do not hold: its parity -- every ISA against quantize_op::reference, on crafted values and
// through the quantized norms -- is test_quant.cpp's (label parity). The adapter says so; the
// sweep is empty.
template <>
struct parity_op<normkit::detail::quantize_op> {
  static constexpr bool has_gamma = false, has_beta = false;
  static constexpr const char* covered_by = "test_quant.cpp";
  using sweep = type_list<>;
  template <class Policy>
  static constexpr bool accepts = false;  // no policies
};

// The statically quantized norms' kernel op writes 1-byte types too: test_quant.cpp covers it
// (StaticKernelOnCraftedGains, and every static call of the quantized norms, which run it).
template <class Norm>
struct parity_op<normkit::detail::norm_static_quant_op<Norm>> {
  static constexpr bool has_gamma = false, has_beta = false;
  static constexpr const char* covered_by = "test_quant.cpp";
  using sweep = type_list<>;
  template <class Policy>
  static constexpr bool accepts = false;
};

// The forward variants that save statistics (rms_norm_fwd, layer_norm_fwd: norm_stats_op, then
// the plain norm kernel): y must be the plain forward's bits; without a bias the call is
// rms_norm_fwd, with one layer_norm_fwd (their statistics are checked bit for bit in
// test_backward.cpp).
template <>
struct parity_op<normkit::detail::norm_stats_op> {
  static constexpr bool has_gamma = true, has_beta = true;
  template <class Policy, class In>
  static normkit::status api(const buffers& b) {
    std::vector<float> rstd(b.rows), mean(b.rows);
    if (!b.beta)
      return normkit::rms_norm_fwd<Policy>(static_cast<const In*>(b.x), static_cast<const In*>(b.gamma),
                                           static_cast<In*>(b.y), rstd.data(), b.rows, b.cols, b.eps,
                                           b.x_stride, b.y_stride);
    return normkit::layer_norm_fwd<Policy>(static_cast<const In*>(b.x), static_cast<const In*>(b.gamma),
                                           static_cast<const In*>(b.beta), static_cast<In*>(b.y), mean.data(),
                                           rstd.data(), b.rows, b.cols, b.eps, b.x_stride, b.y_stride);
  }
  template <class Policy, class In>
  static normkit::status ref(const buffers& b) {
    if (!b.beta)
      return normkit::reference::rms_norm<Policy>(static_cast<const In*>(b.x),
                                                  static_cast<const In*>(b.gamma), static_cast<In*>(b.y),
                                                  b.rows, b.cols, b.eps);
    return normkit::reference::layer_norm<Policy>(
        static_cast<const In*>(b.x), static_cast<const In*>(b.gamma), static_cast<const In*>(b.beta),
        static_cast<In*>(b.y), b.rows, b.cols, b.eps);
  }
  using sweep = type_list<some_combinations<
      type_list<normkit::llama, normkit::gemma, normkit::gemma3n, normkit::olmo2, normkit::t5,
                normkit::pytorch, normkit::round_once, normkit::round_twice, normkit::onnxruntime,
                normkit::flashinfer, normkit::flashinfer_gemma>,
      type_list<type_list<float>, type_list<bf16>, type_list<fp16>>>>;
  // contract: layer_norm_fwd<onnx> does not compile, as layer_norm<onnx>.
  template <class Policy>
  static constexpr bool accepts = Policy::layer_norm_exact;
};

// The backward ops, slot T (dy, x, dx; the harness sweeps gamma in T too, other gain types are in
// test_backward.cpp): the harness's x is x, its gamma gamma and its y dx. dy is a fixed function of the
// position (the same in both calls) and the statistics come from the reference forward on x, so only dx is
// compared here; dgamma, dbeta, the partials and the statistics no forward produces are in test_backward.cpp.
template <class T>
std::vector<T> backward_dy(std::size_t rows, std::size_t cols, std::size_t stride) {
  std::vector<T> dy(rows == 0 ? 0 : (rows - 1) * stride + cols + 1);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < cols; ++i)
      dy[r * stride + i] = normkit::from_float<T>(static_cast<float>((r * 7 + i * 13) % 19) * 0.125f - 1.0f);
  return dy;
}
template <class T>
std::vector<T> contiguous(const buffers& b) {
  std::vector<T> x(b.rows * b.cols + 1);
  for (std::size_t r = 0; r < b.rows; ++r)
    for (std::size_t i = 0; i < b.cols; ++i)
      x[r * b.cols + i] = static_cast<const T*>(b.x)[r * b.x_stride + i];
  return x;
}

template <>
struct parity_op<normkit::detail::rms_norm_backward_op> {
  static constexpr bool has_gamma = true, has_beta = false;
  template <class Policy, class T, class W = T>
  static std::vector<float> rstd_of(const buffers& b) {
    const std::vector<T> x = contiguous<T>(b);
    std::vector<T> y(x.size());
    std::vector<float> rstd(b.rows + 1);
    if (normkit::reference::rms_norm_fwd<Policy>(x.data(), static_cast<const W*>(b.gamma), y.data(),
                                                 rstd.data(), b.rows, b.cols, b.eps) != normkit::status::ok)
      rstd.clear();
    return rstd;
  }
  template <class Policy, class T, class W = T>
  static normkit::status api(const buffers& b) {
    const std::vector<T> dy = backward_dy<T>(b.rows, b.cols, b.x_stride);
    const std::vector<float> rstd = rstd_of<Policy, T, W>(b);
    std::vector<float> dgamma(b.cols + 1);
    return normkit::rms_norm_backward<Policy>(
        dy.data(), static_cast<const T*>(b.x), static_cast<const W*>(b.gamma), rstd.data(),
        static_cast<T*>(b.y), dgamma.data(), b.rows, b.cols, b.x_stride, b.x_stride, b.y_stride);
  }
  template <class Policy, class T, class W = T>
  static normkit::status ref(const buffers& b) {
    const std::vector<T> dy = backward_dy<T>(b.rows, b.cols, b.cols);
    const std::vector<float> rstd = rstd_of<Policy, T, W>(b);
    std::vector<float> dgamma(b.cols + 1);
    return normkit::reference::rms_norm_backward<Policy>(dy.data(), static_cast<const T*>(b.x),
                                                         static_cast<const W*>(b.gamma), rstd.data(),
                                                         static_cast<T*>(b.y), dgamma.data(), b.rows, b.cols);
  }
  // Every T for both gain knobs; bf16 for the presets that share their kernels.
  using sweep =
      type_list<all_combinations<type_list<normkit::llama, normkit::gemma>>,
                some_combinations<
                    type_list<normkit::gemma3n, normkit::olmo2, normkit::t5, normkit::pytorch, normkit::onnx,
                              normkit::round_once, normkit::round_twice, normkit::onnxruntime,
                              normkit::flashinfer, normkit::flashinfer_gemma, all_knobs>,
                    type_list<type_list<bf16>>>>;
  template <class Policy>
  static constexpr bool accepts = true;
};

template <>
struct parity_op<normkit::detail::layer_norm_backward_op> {
  static constexpr bool has_gamma = true, has_beta = false;
  template <class Policy, class T, class W = T>
  static void stats_of(const buffers& b, std::vector<float>& mean, std::vector<float>& rstd) {
    const std::vector<T> x = contiguous<T>(b);
    std::vector<T> y(x.size());
    mean.assign(b.rows + 1, 0.0f);
    rstd.assign(b.rows + 1, 0.0f);
    // The statistics of the pytorch convention (a backward takes them from any LayerNorm forward).
    (void)normkit::reference::layer_norm_fwd<normkit::pytorch>(
        x.data(), static_cast<const W*>(b.gamma), static_cast<const W*>(nullptr), y.data(), mean.data(),
        rstd.data(), b.rows, b.cols, b.eps);
  }
  template <class Policy, class T, class W = T>
  static normkit::status api(const buffers& b) {
    const std::vector<T> dy = backward_dy<T>(b.rows, b.cols, b.x_stride);
    std::vector<float> mean, rstd, dgamma(b.cols + 1), dbeta(b.cols + 1);
    stats_of<Policy, T, W>(b, mean, rstd);
    return normkit::layer_norm_backward<Policy>(dy.data(), static_cast<const T*>(b.x),
                                                static_cast<const W*>(b.gamma), mean.data(), rstd.data(),
                                                static_cast<T*>(b.y), dgamma.data(), dbeta.data(), b.rows,
                                                b.cols, b.x_stride, b.x_stride, b.y_stride);
  }
  template <class Policy, class T, class W = T>
  static normkit::status ref(const buffers& b) {
    const std::vector<T> dy = backward_dy<T>(b.rows, b.cols, b.cols);
    std::vector<float> mean, rstd, dgamma(b.cols + 1), dbeta(b.cols + 1);
    stats_of<Policy, T, W>(b, mean, rstd);
    return normkit::reference::layer_norm_backward<Policy>(
        dy.data(), static_cast<const T*>(b.x), static_cast<const W*>(b.gamma), mean.data(), rstd.data(),
        static_cast<T*>(b.y), dgamma.data(), dbeta.data(), b.rows, b.cols);
  }
  using sweep = parity_op<normkit::detail::rms_norm_backward_op>::sweep;
  template <class Policy>
  static constexpr bool accepts = true;
};

// ---- An op x policy x type combination, type-erased: what the harness calls.
struct op_desc {
  std::string name;   // e.g. rms_norm<llama>
  std::string types;  // e.g. bf16/f32/bf16 (the op's slots in order)
  bool has_gamma, has_beta;
  dtype in, w, out;  // x, gamma/beta (x's type when the op has none), y
  call_fn api;       // the public entry point: the dispatched ISA path
  call_fn ref;       // the reference: the bits
};

template <class T, class... Ts>
struct first_last {
  using first = T;
  using last = typename first_last<Ts...>::last;
};
template <class T>
struct first_last<T> {
  using first = T;
  using last = T;
};
// The gain/bias type: the middle slot of a three-slot op.
template <class... Ts>
struct gain_slot {
  using type = typename first_last<Ts...>::first;
};
template <class In, class W, class Out>
struct gain_slot<In, W, Out> {
  using type = W;
};

template <class Op, class Policy, class... Ts>
normkit::status call_api(const buffers& b) {
  return parity_op<Op>::template api<Policy, Ts...>(b);
}
template <class Op, class Policy, class... Ts>
normkit::status call_ref(const buffers& b) {
  return parity_op<Op>::template ref<Policy, Ts...>(b);
}

// The names of a descriptor, built out of line: one copy of this code, not one per instantiation.
inline op_desc make_desc(const char* op, const char* policy, std::initializer_list<const char*> types,
                         op_desc d) {
  d.name = std::string(op) + (policy ? std::string("<") + policy + ">" : "");
  for (const char* t : types)
    d.types += (d.types.empty() ? "" : "/") + std::string(t);
  return d;
}

template <class Op, class Policy, class... Ts>
const op_desc& desc() {
  using adapter = parity_op<Op>;
  static const op_desc d = make_desc(Op::name, Policy::name, {type_name<Ts>()...},
                                     {{},
                                      {},
                                      adapter::has_gamma,
                                      adapter::has_beta,
                                      dtype_of<typename first_last<Ts...>::first>(),
                                      dtype_of<typename gain_slot<Ts...>::type>(),
                                      dtype_of<typename first_last<Ts...>::last>(),
                                      &call_api<Op, Policy, Ts...>,
                                      &call_ref<Op, Policy, Ts...>});
  return d;
}

template <class Op, class Policy, class Types>
struct desc_of;
template <class Op, class Policy, class... Ts>
struct desc_of<Op, Policy, type_list<Ts...>> {
  static const op_desc& get() { return desc<Op, Policy, Ts...>(); }
};

// ---- The op list and the type combinations of an op's slots (its description's `slots`).

// f(type_tag<Op>{}) for each op of the library's op list (or of Ops); each one's adapter must
// exist.
template <class Ops = normkit::detail::ops, class F>
void for_each_op(F&& f) {
  for_each_type(Ops{}, [&](auto op) {
    using adapter = parity_op<typename decltype(op)::type>;
    static_assert(adapter::has_gamma || !adapter::has_beta, "an op with a bias has a gain");
    f(op);
  });
}

// f(type_tag<type_list<Ts...>>{}) for every choice of one type per slot, in slot order.
template <class Chosen, class Slots>
struct combinations;
template <class... Chosen>
struct combinations<type_list<Chosen...>, type_list<>> {
  template <class F>
  static void each(F&& f) {
    f(type_tag<type_list<Chosen...>>{});
  }
};
template <class... Chosen, class... Types, class... Rest>
struct combinations<type_list<Chosen...>, type_list<type_list<Types...>, Rest...>> {
  template <class F>
  static void each(F&& f) {
    (combinations<type_list<Chosen..., Types>, type_list<Rest...>>::each(f), ...);
  }
};

// Every named preset the op accepts is in its adapter's sweep: a new preset is swept, or this fails.
template <class Policy, class Sweep>
struct in_sweep;
template <class Policy, class... Parts>
struct in_sweep<Policy, type_list<Parts...>> {
  template <class Part>
  struct in_part;
  template <class... Ps>
  struct in_part<all_combinations<type_list<Ps...>>> {
    static constexpr bool value = (std::is_same<Policy, Ps>::value || ...);
  };
  template <class... Ps, class Combos>
  struct in_part<some_combinations<type_list<Ps...>, Combos>> {
    static constexpr bool value = (std::is_same<Policy, Ps>::value || ...);
  };
  static constexpr bool value = (in_part<Parts>::value || ...);
};
template <class Op, class... Presets>
constexpr bool sweeps_every_preset(type_list<Presets...>) {
  using adapter = parity_op<Op>;
  return ((!adapter::template accepts<Presets> || in_sweep<Presets, typename adapter::sweep>::value) && ...);
}

// One part of an adapter's sweep: its presets with every combination of the op's slots, or
// with the listed ones.
template <class Op, class... Ps, class F>
void sweep_part(type_tag<all_combinations<type_list<Ps...>>>, F& f) {
  for_each_type(type_list<Ps...>{}, [&](auto p) {
    combinations<type_list<>, typename Op::slots>::each(
        [&](auto t) { f(desc_of<Op, typename decltype(p)::type, typename decltype(t)::type>::get()); });
  });
}
template <class Op, class... Ps, class Combos, class F>
void sweep_part(type_tag<some_combinations<type_list<Ps...>, Combos>>, F& f) {
  for_each_type(type_list<Ps...>{}, [&](auto p) {
    for_each_type(Combos{}, [&](auto t) {
      f(desc_of<Op, typename decltype(p)::type, typename decltype(t)::type>::get());
    });
  });
}

// f(op_desc) for each op x policy x type combination of the op's sweep.
template <class Op, class F>
void for_each_swept_desc(F&& f) {
  using adapter = parity_op<Op>;
  static_assert(sweeps_every_preset<Op>(normkit::detail::named_policies{}),
                "tests/parity.hpp: a named preset (core/policy.hpp) is missing from this op's parity sweep");
  auto part = [&](auto p) { sweep_part<Op>(p, f); };
  for_each_type(typename adapter::sweep{}, part);
}

// ---- Bit-level construction of storage values.
// sign, biased exponent and mantissa -> value (the caller keeps the exponent in range).
template <class T>
T make_value(std::uint32_t sign, std::uint32_t biased_exp, std::uint32_t mant) {
  constexpr int e = exponent_bits<T>(), m = mantissa_bits<T>();
  return from_bits<T>((sign << (e + m)) | (biased_exp << m) | (mant & ((1u << m) - 1u)));
}

template <class T>
T max_finite_value(std::uint32_t sign) {
  return make_value<T>(sign, (1u << exponent_bits<T>()) - 2u, ~0u);
}

// A finite value whose square overflows fp32 (|x| >= 2^64 > 1.84e19) where the type can hold
// one (fp32, bf16); for fp16 the largest binades (2^7 .. 2^15).
template <class T>
T huge_value(rng& r) {
  constexpr int e = exponent_bits<T>();
  const std::uint32_t top = (1u << e) - 2u;  // largest finite biased exponent
  const std::uint32_t span = e == 8 ? 64u : 9u;
  return make_value<T>(r.u32() >> 31, top - r.u32() % span, r.u32());
}

template <class T>
bool is_finite_value(T v) {
  const float f = normkit::to_float(v);
  return f - f == 0.0f;
}

// ---- Value generators: one per row.
enum class gen_kind {
  normal,             // N(0, 2^k)
  mean_shifted,       // mean +-(1..2) * 2^k, spread 2^(k-12)
  exact_stats,        // rows whose mean and variance are exact (variant k)
  constant,           // every element the same value c * 2^k: variance 0
  raw_bits,           // random bit patterns: NaN, Inf, subnormals, huge values
  finite_raw_bits,    // random finite bit patterns: overflow rows and subnormals without NaN
  huge,               // every |x_i| >= 2^64: the sum of squares overflows (fp32, bf16)
  one_huge,           // N(0, 1) with one huge element
  extremes,           // +-max finite (LayerNorm: x_i - x_0 overflows too)
  huge_mean_shifted,  // mean 2^100, spread 2^92: the centred squares overflow
  zero,               // +-0 everywhere (eps = 0 then gives NaN)
  mixed,              // row r takes the r-th generator of a fixed mix (batches)
};

struct gen {
  gen_kind kind = gen_kind::normal;
  int k = 0;
};

inline std::string to_string(gen g) {
  static const char* const names[] = {"normal",   "mean_shifted", "exact_stats", "constant",
                                      "raw_bits", "finite_raw",   "huge",        "one_huge",
                                      "extremes", "huge_shifted", "zero",        "mixed"};
  return std::string(names[static_cast<int>(g.kind)]) + "(" + std::to_string(g.k) + ")";
}

// The mix used for batch backgrounds: ordinary, NaN, overflow, zero and shifted rows interleaved.
inline gen mixed_row(std::size_t r) {
  static const gen mix[] = {{gen_kind::normal, 0},
                            {gen_kind::raw_bits, 0},
                            {gen_kind::normal, -20},
                            {gen_kind::huge, 0},
                            {gen_kind::zero, 0},
                            {gen_kind::mean_shifted, 12},
                            {gen_kind::finite_raw_bits, 0},
                            {gen_kind::normal, 30},
                            {gen_kind::constant, 3},
                            {gen_kind::one_huge, 0},
                            {gen_kind::exact_stats, 2}};
  return mix[r % (sizeof mix / sizeof mix[0])];
}

template <class T>
void fill_row(rng& r, gen g, T* row, std::size_t cols) {
  switch (g.kind) {
    case gen_kind::normal:
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = as<T>(std::ldexp(r.normal(), g.k));
      break;
    case gen_kind::mean_shifted: {
      const float mean = std::ldexp(r.uniform(1.0f, 2.0f), g.k) * (r.u32() & 1u ? -1.0f : 1.0f);
      const float spread = std::ldexp(1.0f, g.k - 12);
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = as<T>(std::fma(spread, r.normal(), mean));
      break;
    }
    case gen_kind::exact_stats:
      for (std::size_t i = 0; i < cols; ++i) {
        float v = 0.0f;
        switch (g.k % 6) {
          case 0:  // ms = 1, mean 0 (even d)
            v = i % 2 ? -1.0f : 1.0f;
            break;
          case 1:  // ms = 2^80
            v = i % 2 ? -0x1p40f : 0x1p40f;
            break;
          case 2:  // mean 1024, var 1 (even d)
            v = i % 2 ? 1023.0f : 1025.0f;
            break;
          case 3:  // small integers
            v = static_cast<float>(static_cast<int>(r.u32() % 17u) - 8);
            break;
          case 4:  // ms = 1/d
            v = i == cols / 2 ? 1.0f : 0.0f;
            break;
          default:  // squares are fp32 subnormals
            v = 0x1p-70f;
            break;
        }
        row[i] = as<T>(v);
      }
      break;
    case gen_kind::constant: {
      const T c = as<T>(std::ldexp(r.normal(), g.k));
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = c;
      break;
    }
    case gen_kind::raw_bits:
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = from_bits<T>(r.u32());
      break;
    case gen_kind::finite_raw_bits:
      for (std::size_t i = 0; i < cols; ++i) {
        do
          row[i] = from_bits<T>(r.u32());
        while (!is_finite_value(row[i]));
      }
      break;
    case gen_kind::huge:
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = huge_value<T>(r);
      break;
    case gen_kind::one_huge:
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = as<T>(r.normal());
      if (cols)
        row[r.u32() % cols] = g.k % 2 ? max_finite_value<T>(r.u32() >> 31) : huge_value<T>(r);
      break;
    case gen_kind::extremes:
      for (std::size_t i = 0; i < cols; ++i) {
        const std::uint32_t sign = g.k % 3 == 0   ? static_cast<std::uint32_t>(i % 2)  // +max, -max, ...
                                   : g.k % 3 == 1 ? (i == 0 ? 1u : 0u)                 // -max, +max, +max
                                                  : r.u32() >> 31;                     // random signs
        row[i] = max_finite_value<T>(sign);
      }
      break;
    case gen_kind::huge_mean_shifted:
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = as<T>(std::fma(0x1p92f, r.normal(), 0x1p100f));
      break;
    case gen_kind::zero:
      for (std::size_t i = 0; i < cols; ++i)
        row[i] = as<T>(r.u32() & 1u ? -0.0f : 0.0f);
      break;
    case gen_kind::mixed:
      break;  // resolved per row by the caller
  }
}

inline void fill_row(rng& r, gen g, any_vec& v, std::size_t k, std::size_t cols) {
  visit(v.type(), [&](auto t) { fill_row(r, g, static_cast<typename decltype(t)::type*>(v.at(k)), cols); });
}

// ---- Gains and biases.
enum class gain_kind {
  none,      // nullptr: g = 1 / no bias
  uniform,   // U(0.5, 1.5)
  normal,    // N(0, 1)
  raw_bits,  // NaN / Inf / subnormal columns (they affect only their column)
  large,     // +-2^8 .. 2^16: fp16 outputs overflow to Inf
  specials,  // -1, 0, -0, subnormal, +-1 +- ulp: the 1 + gamma offset hits 0 and cancels
};

inline const char* to_string(gain_kind g) {
  static const char* const names[] = {"none", "uniform", "normal", "raw_bits", "large", "specials"};
  return names[static_cast<int>(g)];
}

template <class W>
void fill_gain(rng& r, gain_kind kind, W* v, std::size_t cols) {
  static const float specials[] = {-1.0f, 0.0f,        -0.0f,        0x1p-140f,    -0x1p-140f, 1.0f,
                                   2.0f,  -1.0000001f, -0.99999994f, -0.99609375f, -1.0078125f};
  for (std::size_t i = 0; i < cols; ++i) {
    switch (kind) {
      case gain_kind::none:
        v[i] = as<W>(0.0f);
        break;
      case gain_kind::uniform:
        v[i] = as<W>(r.uniform(0.5f, 1.5f));
        break;
      case gain_kind::normal:
        v[i] = as<W>(r.normal());
        break;
      case gain_kind::raw_bits:
        v[i] = from_bits<W>(r.u32());
        break;
      case gain_kind::large:
        v[i] = as<W>(std::ldexp(r.uniform(1.0f, 2.0f), 8 + static_cast<int>(r.u32() % 8u)) *
                     (r.u32() & 1u ? -1.0f : 1.0f));
        break;
      case gain_kind::specials:
        v[i] = as<W>(specials[r.u32() % (sizeof specials / sizeof specials[0])]);
        break;
    }
  }
}

inline void fill_gain(rng& r, gain_kind kind, any_vec& v) {
  visit(v.type(),
        [&](auto t) { fill_gain(r, kind, static_cast<typename decltype(t)::type*>(v.at(0)), v.size()); });
}

// ---- A case: what it is (spec, printed on failure: a repro) and its data.
struct spec {
  std::size_t rows = 1, cols = 1;
  float eps = 1e-6f;
  gen row_gen;
  gain_kind gamma = gain_kind::uniform;
  gain_kind beta = gain_kind::none;
  std::uint64_t seed = 1;
};

inline constexpr float eps_values[] = {0.0f, 1e-6f, 1e-5f, 1.0f};

// Inputs generated from the spec, and the reference's bits on contiguous copies.
struct problem {
  const op_desc* op;
  spec s;
  any_vec x;  // rows x cols, contiguous
  any_vec gamma, beta;
  any_vec want;

  problem(const op_desc& d, const spec& sp)
      : op(&d),
        s(sp),
        x(d.in, sp.rows * sp.cols, nan_poison(d.in)),
        gamma(d.w, sp.cols, nan_poison(d.w)),
        beta(d.w, sp.cols, nan_poison(d.w)) {
    if (!d.has_gamma)
      s.gamma = gain_kind::none;
    if (!d.has_beta)
      s.beta = gain_kind::none;
    rng r(s.seed);
    for (std::size_t i = 0; i < s.rows; ++i)
      fill_row(r, s.row_gen.kind == gen_kind::mixed ? mixed_row(i) : s.row_gen, x, i * s.cols, s.cols);
    fill_gain(r, s.gamma, gamma);
    fill_gain(r, s.beta, beta);
    compute_reference();
  }
  const void* g() const { return s.gamma == gain_kind::none ? nullptr : gamma.at(0); }
  const void* b() const { return s.beta == gain_kind::none ? nullptr : beta.at(0); }
  void compute_reference() {
    want = any_vec(op->out, s.rows * s.cols, out_poison(op->out));
    const normkit::status st =
        op->ref({x.at(0), g(), b(), want.at(0), s.rows, s.cols, s.eps, s.cols, s.cols});
    EXPECT_EQ(st, normkit::status::ok) << "reference rejected a valid call";
  }
};

// Where the dispatched call finds its operands: element offsets past a 64-byte boundary, row
// strides (0 = cols), or y == x.
struct layout {
  std::size_t x_off = 0, y_off = 0, g_off = 0, b_off = 0;
  std::size_t x_stride = 0, y_stride = 0;
  bool in_place = false;
};

// Elements a rows x cols tensor with row stride `stride` spans.
inline std::size_t span(std::size_t rows, std::size_t cols, std::size_t stride) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * stride + cols;
}

// The first element outside the tensor (off, rows, cols, stride) whose bits are not `poison`;
// size() when there is none.
inline std::size_t first_touched(const any_vec& buf, std::size_t off, std::size_t rows, std::size_t cols,
                                 std::size_t stride, std::uint32_t poison) {
  const std::size_t end = off + span(rows, cols, stride);
  for (std::size_t k = 0; k < buf.size(); ++k) {
    const bool inside = k >= off && k < end && (k - off) % stride < cols;
    if (!inside && buf.bits_at(k) != poison)
      return k;
  }
  return buf.size();
}

// ---- Bookkeeping: cases per test and per ISA, a one-line summary, a cap on reported failures.
struct tally {
  std::uint64_t cases = 0, outputs = 0;
  double seconds = 0.0;
  int tests = 0;
};

inline tally& totals(isa i) {
  static tally t[normkit::detail::isa_value_count];
  return t[static_cast<std::size_t>(i)];
}

inline ::testing::AssertionResult same_bits_any(dtype t, const void* got, const void* want, std::size_t n,
                                                const std::string& what) {
  return visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return same_bits(static_cast<const T*>(got), static_cast<const T*>(want), n, what);
  });
}

class checker {
 public:
  checker(isa i, const char* test) : isa_(i), test_(test), start_(std::chrono::steady_clock::now()) {}
  ~checker() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("[ parity   ] %-6s %-34s %7llu cases, %8.3f M outputs compared, %6.2f s\n",
                normkit::to_string(isa_), test_, static_cast<unsigned long long>(cases_),
                static_cast<double>(outputs_) * 1e-6, s);
    tally& t = totals(isa_);
    t.cases += cases_;
    t.outputs += outputs_;
    t.seconds += s;
    ++t.tests;
  }
  checker(const checker&) = delete;
  checker& operator=(const checker&) = delete;

  // One bug tends to fail thousands of cases; the first few localize it.
  bool stop() const { return failures_ >= 8; }
  std::uint64_t next_seed() { return ++seed_ * 0x2545f4914f6cdd1dull; }
  const char* isa_name() const { return normkit::to_string(isa_); }

  // memcmp first (fast); on a difference, same_bits reports index, both values in hex and the case.
  template <class Describe>
  void same(dtype t, const void* got, const void* want, std::size_t n, Describe describe) {
    ++cases_;
    outputs_ += n;
    if (n == 0 || std::memcmp(got, want, n * size_of(t)) == 0)
      return;
    ++failures_;
    EXPECT_TRUE(same_bits_any(t, got, want, n,
                              std::string(isa_name()) + " " + describe() + " (dispatched vs reference)"));
  }
  void fail(const std::string& what) {
    ++failures_;
    ADD_FAILURE() << isa_name() << " " << what;
  }

 private:
  isa isa_;
  const char* test_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t cases_ = 0, outputs_ = 0, seed_ = 0;
  int failures_ = 0;
};

inline std::string describe(const problem& p, const layout& l) {
  const spec& s = p.s;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s %s rows=%zu cols=%zu eps=%g x=%s gamma=%s beta=%s seed=%llu | x_off=%zu y_off=%zu "
                "g_off=%zu b_off=%zu x_stride=%zu y_stride=%zu%s",
                p.op->name.c_str(), p.op->types.c_str(), s.rows, s.cols, static_cast<double>(s.eps),
                to_string(s.row_gen).c_str(), to_string(s.gamma), to_string(s.beta),
                static_cast<unsigned long long>(s.seed), l.x_off, l.y_off, l.g_off, l.b_off,
                l.x_stride ? l.x_stride : s.cols, l.y_stride ? l.y_stride : s.cols,
                l.in_place ? " in-place" : "");
  return buf;
}

// The core check: lay the problem's operands out as `l` says (poison around and between rows),
// call the public API, compare the rows with the reference bits and verify that nothing outside
// the rows of y was written.
inline void check(checker& c, const problem& p, const layout& l = {}) {
  const op_desc& op = *p.op;
  const std::size_t rows = p.s.rows, cols = p.s.cols;
  const std::size_t xs = l.x_stride ? l.x_stride : cols, ys = l.y_stride ? l.y_stride : cols;
  const std::size_t slack = 64 / size_of(op.out) + 3;  // poison after the last row

  any_vec xb(op.in, l.x_off + span(rows, cols, xs) + slack, nan_poison(op.in));
  for (std::size_t r = 0; r < rows; ++r)
    xb.copy_in(l.x_off + r * xs, p.x, r * cols, cols);
  any_vec gb(op.w, l.g_off + cols + slack, nan_poison(op.w)),
      bb(op.w, l.b_off + cols + slack, nan_poison(op.w));
  gb.copy_in(l.g_off, p.gamma, 0, cols);
  bb.copy_in(l.b_off, p.beta, 0, cols);
  const void* g = p.g() ? gb.at(l.g_off) : nullptr;
  const void* b = p.b() ? bb.at(l.b_off) : nullptr;

  if (l.in_place && op.in != op.out)
    return c.fail(describe(p, l) + ": in place needs In == Out (test bug)");
  any_vec yb_own =
      l.in_place ? any_vec() : any_vec(op.out, l.y_off + span(rows, cols, ys) + slack, out_poison(op.out));
  any_vec& yb = l.in_place ? xb : yb_own;
  const std::size_t y_off = l.in_place ? l.x_off : l.y_off;
  const std::uint32_t poison = l.in_place ? nan_poison(op.in) : out_poison(op.out);

  const normkit::status st = op.api({xb.at(l.x_off), g, b, yb.at(y_off), rows, cols, p.s.eps, xs, ys});
  if (st != normkit::status::ok)
    return c.fail(describe(p, l) + ": status " + normkit::to_string(st));
  any_vec got(op.out, rows * cols, 0);
  for (std::size_t r = 0; r < rows; ++r)
    got.copy_in(r * cols, yb, y_off + r * ys, cols);
  c.same(op.out, got.at(0), p.want.at(0), rows * cols, [&] { return describe(p, l); });
  const std::size_t k = first_touched(yb, y_off, rows, cols, ys, poison);
  if (k != yb.size())
    c.fail(describe(p, l) + ": wrote outside the rows of y, buffer element " + std::to_string(k) +
           " (tensor starts at " + std::to_string(y_off) + ")");
}

// Gain/bias presence variants: rms_norm 2 (gamma or not), layer_norm 4 (x beta or not), convert 1.
inline int n_variants(const op_desc& op) {
  return (op.has_gamma ? 2 : 1) * (op.has_beta ? 2 : 1);
}

inline void apply_variant(spec& s, int v, gain_kind gamma, gain_kind beta) {
  s.gamma = v & 1 ? gain_kind::none : gamma;
  s.beta = v & 2 ? gain_kind::none : beta;
}

}  // namespace parity
}  // namespace normkit_test
