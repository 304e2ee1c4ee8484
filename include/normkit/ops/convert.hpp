// SPDX-License-Identifier: MIT
// normkit: the convert op -- bulk conversion between storage types with the bits of
// core/storage.hpp (round to nearest even, subnormals kept, NaN quieted with its payload kept;
// NaNs are not canonicalized). The SIMD rows are in convert_simd.hpp.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/validate.hpp"

namespace normkit {

// The argument bundle (its namespace: ops/rms_norm.hpp).
namespace NORMKIT_TABLE_NAMESPACE {
template <class Src, class Dst>
struct convert_args {
  const Src* src;
  Dst* dst;
  std::size_t n;
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

struct convert_op {
  static constexpr const char* name = "convert";
  using slots = type_list<input_types, input_types>;  // Src, Dst
  using knobs = no_knobs;

  template <class Src, class Dst>
  using args = NORMKIT_TABLE_NAMESPACE::convert_args<Src, Dst>;

  template <class Knobs, class Src, class Dst>
  using canonical = Knobs;
  template <class Knobs, class Src, class Dst>
  using narrows = type_list<Dst>;

  // The buffer checks of one row of n elements; dst may be src exactly.
  template <class Src, class Dst>
  static status validate(const args<Src, Dst>& a) {
    if (empty(a))
      return status::ok;
    const impl::operand in[] = {impl::operand_of(a.src, 1, a.n, a.n)};
    const impl::operand out[] = {impl::operand_of(a.dst, 1, a.n, a.n)};
    return impl::check_operands(in, out, {0});
  }
  template <class A>
  static bool empty(const A& a) {
    return a.n == 0;
  }

  // Thread-pool tasks split the elements (core/op.hpp): each is converted on its own.
  template <class A>
  static std::size_t row_count(const A& a) {
    return a.n;
  }
  template <class Src, class Dst>
  static std::size_t row_bytes(const args<Src, Dst>&) {
    return sizeof(Src) + sizeof(Dst);
  }
  template <class Src, class Dst>
  static args<Src, Dst> slice(const args<Src, Dst>& a, std::size_t i0, std::size_t n) {
    return {a.src + i0, a.dst + i0, n};
  }

  template <class Policy, class Src, class Dst>
  static void reference(const args<Src, Dst>& a) {
    for (std::size_t i = 0; i < a.n; ++i)
      a.dst[i] = from_float<Dst>(to_float(a.src[i]));
  }
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
