// SPDX-License-Identifier: MIT
// normkit: fills a kernel_table for one arch. Included only by per-ISA translation units
// (cmake/normkit_isa.cpp) and tests; needs the arch's -m flags.
#pragma once

#include "fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t
#include <utility>  // std::index_sequence

#include "abi.hpp"
#include "kernels.hpp"
#include "table.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class Arch, op Op, class Knobs, class In, class W, class Out>
void erased_rows(const void* x, const void* gamma, const void* beta, void* y, std::size_t rows,
                 std::size_t cols, float eps, std::size_t x_stride, std::size_t y_stride) {
  norm_rows<Arch, Op, Knobs, In, W, Out>(static_cast<const In*>(x), static_cast<const W*>(gamma),
                                         static_cast<const W*>(beta), static_cast<Out*>(y), rows, cols, eps,
                                         x_stride, y_stride);
}

template <class Arch, std::size_t I>
constexpr kernel_fn table_entry() {
  constexpr std::size_t out = I % n_types, w = (I / n_types) % n_types,
                        in = (I / (n_types * n_types)) % n_types;
  constexpr std::size_t k = (I / (n_types * n_types * n_types)) % n_knobs;
  constexpr std::size_t o = I / (n_types * n_types * n_types * n_knobs);
  using In = type_at<in>;
  using W = type_at<w>;
  using Knobs = knobs_at<k>;
  // Only canonical knob sets are instantiated; the entry points canonicalize before lookup.
  if constexpr (!std::is_same<canonical_knobs<Knobs, In, W>, Knobs>::value)
    return nullptr;
  else {
    constexpr op kind = o == 0 ? op::rms_norm : op::layer_norm;
    using Out = type_at<out>;
    return &erased_rows<Arch, kind, Knobs, In, W, Out>;
  }
}

template <class Arch, class Src, class Dst>
void erased_convert(const void* src, void* dst, std::size_t n) {
  convert_n<Arch>(static_cast<const Src*>(src), static_cast<Dst*>(dst), n);
}

template <class Arch, std::size_t... J>
void fill_convert(convert_fn* conv, std::index_sequence<J...>) {
  const convert_fn entries[] = {&erased_convert<Arch, type_at<J / n_types>, type_at<J % n_types>>...};
  for (std::size_t j = 0; j < sizeof...(J); ++j)
    conv[j] = entries[j];
}

template <class Arch, std::size_t... I>
kernel_table make_table(std::index_sequence<I...>) {
  kernel_table t{};
  kernel_fn* flat = &t.fn[0][0][0][0][0];
  // A braced list, not a comma fold: clang nests a fold once per term and stops at 256.
  const kernel_fn entries[] = {table_entry<Arch, I>()...};
  for (std::size_t i = 0; i < sizeof...(I); ++i)
    flat[i] = entries[i];
  fill_convert<Arch>(&t.convert[0][0], std::make_index_sequence<n_types * n_types>{});
  return t;
}

template <class Arch>
const kernel_table& kernel_table_for() {
  static const kernel_table t =
      make_table<Arch>(std::make_index_sequence<2 * n_knobs * n_types * n_types * n_types>{});
  return t;
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "fp_precise_end.hpp"
