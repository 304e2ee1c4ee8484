// SPDX-License-Identifier: MIT
// normkit: the runtime-dispatch kernel table. A per-ISA translation unit instantiates
// kernel_table_for<Arch>() (templated on Arch, and in that TU's own ABI namespace, so no symbol
// is shared between ISAs); the dispatcher looks an entry up by op, knobs and storage types. The
// entries are type-erased so the dispatching TU needs no xsimd and no extern-template lists.
#pragma once

#include <cstddef>      // std::size_t
#include <type_traits>  // std::conditional_t, std::is_same
#include <utility>      // std::index_sequence

#include "../policy.hpp"
#include "../types.hpp"
#include "abi.hpp"

namespace normkit {

// What the dispatching TU and the per-ISA TUs of one build exchange. Both sides must name the
// same types, so they live in a namespace that carries the version but no configuration; it
// holds types and constants only, no function.
namespace NORMKIT_TABLE_NAMESPACE {

using kernel_fn = void (*)(const void* x, const void* gamma, const void* beta, void* y, std::size_t rows,
                           std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride);
using convert_fn = void (*)(const void* src, void* dst, std::size_t n);

constexpr std::size_t n_types = 3;   // float, bf16, fp16
constexpr std::size_t n_knobs = 12;  // {once, twice/input, twice/gain} x gain x normalize

struct kernel_table {
  kernel_fn fn[2][n_knobs][n_types][n_types][n_types];
  convert_fn convert[n_types][n_types];  // [source][destination]
};

}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using NORMKIT_TABLE_NAMESPACE::convert_fn;
using NORMKIT_TABLE_NAMESPACE::kernel_fn;
using NORMKIT_TABLE_NAMESPACE::kernel_table;
using NORMKIT_TABLE_NAMESPACE::n_knobs;
using NORMKIT_TABLE_NAMESPACE::n_types;

enum class op_kind { rms_norm = 0, layer_norm = 1 };

template <std::size_t T>
using type_at = std::conditional_t<T == 0, float, std::conditional_t<T == 1, bf16, fp16>>;

template <class T>
constexpr std::size_t type_index = std::is_same<T, float>::value  ? 0
                                   : std::is_same<T, bf16>::value ? 1
                                                                  : 2;

template <std::size_t K>
using knobs_at = policy<
    K % 3 == 0 ? rounding::once : rounding::twice, (K / 3) % 2 ? gain_mode::plus_one : gain_mode::plain,
    (K / 6) % 2 ? normalize::divide : normalize::multiply, K % 3 == 2 ? mid_type::gain : mid_type::input>;

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
  using mid = std::conditional_t<Knobs::mid == mid_type::input, In, W>;
  static constexpr rounding round = twice && std::is_same<mid, float>::value ? rounding::once : Knobs::round;
  static constexpr mid_type m =
      round == rounding::once || std::is_same<In, W>::value ? mid_type::input : Knobs::mid;
  using type = policy<round, Knobs::gain, Knobs::norm, m>;
};
template <class Knobs, class In, class W>
using canonical_knobs = typename canonical_knobs_impl<Knobs, In, W>::type;

template <op_kind Op, class Knobs, class In, class W, class Out>
kernel_fn lookup(const kernel_table& t) {
  return t.fn[static_cast<int>(Op)][knob_index<Knobs>][type_index<In>][type_index<W>][type_index<Out>];
}

#if defined(NORMKIT_ISA_TU_AVX2) || defined(NORMKIT_ISA_TU_AVX512) || defined(NORMKIT_ISA_TU_NEON)
// Defined by this per-ISA translation unit (cmake/normkit_isa.cpp): its kernel table.
const kernel_table& isa_table();
#endif

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

#if defined(NORMKIT_RUNTIME_DISPATCH)
// The per-ISA translation units of the runtime-dispatch component (cmake/normkit_isa.cpp, added
// by normkit_enable_dispatch()), each in its own ABI namespace (detail/abi.hpp).
namespace NORMKIT_DISPATCH_AVX2_NAMESPACE {
namespace detail {
const NORMKIT_TABLE_NAMESPACE::kernel_table& isa_table();
}
}  // namespace NORMKIT_DISPATCH_AVX2_NAMESPACE
namespace NORMKIT_DISPATCH_AVX512_NAMESPACE {
namespace detail {
const NORMKIT_TABLE_NAMESPACE::kernel_table& isa_table();
}
}  // namespace NORMKIT_DISPATCH_AVX512_NAMESPACE
namespace NORMKIT_DISPATCH_NEON_NAMESPACE {
namespace detail {
const NORMKIT_TABLE_NAMESPACE::kernel_table& isa_table();
}
}  // namespace NORMKIT_DISPATCH_NEON_NAMESPACE
#endif

}  // namespace normkit
