// SPDX-License-Identifier: MIT
// normkit: fills the kernel table (table.hpp) for one arch from the op list. Included only by the
// per-ISA translation units (cmake/normkit_isa.cpp) and tests; needs the arch's -m flags.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same
#include <utility>      // std::index_sequence

#include "../core/abi.hpp"
#include "../ops/list_simd.hpp"
#include "selection.hpp"
#include "table.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class Arch, class Op, class Knobs, class... Ts>
void erased_rows(const void* args) {
  simd_rows<Op>::template rows<Arch, Knobs, Ts...>(
      *static_cast<const typename Op::template args<Ts...>*>(args));
}

// The types of combination C of an op's slots (the inverse of combination_index).
template <class Slots, std::size_t C>
struct combination_types;
template <std::size_t C>
struct combination_types<type_list<>, C> {
  using type = type_list<>;
};
template <class L, class... Ls, std::size_t C>
struct combination_types<type_list<L, Ls...>, C> {
  static constexpr std::size_t below = combinations<type_list<Ls...>>::value;
  template <class Rest>
  struct prepend;
  template <class... T>
  struct prepend<type_list<T...>> {
    using type = type_list<type_at_t<C / below, L>, T...>;
  };
  using type = typename prepend<typename combination_types<type_list<Ls...>, C % below>::type>::type;
};

// Entry E of one op: only canonical knob sets that the build selected are instantiated; the
// entry points canonicalize before the lookup.
template <class Arch, class Op, class Knobs, class Types>
struct entry_for;
template <class Arch, class Op, class Knobs, class... Ts>
struct entry_for<Arch, Op, Knobs, type_list<Ts...>> {
  static constexpr kernel_fn get() {
    if constexpr (std::is_same<typename Op::template canonical<Knobs, Ts...>, Knobs>::value &&
                  selected<Op, Knobs, Ts...>())
      return &erased_rows<Arch, Op, Knobs, Ts...>;
    else
      return nullptr;
  }
};

template <class Arch, class Op, std::size_t E>
constexpr kernel_fn op_entry() {
  constexpr std::size_t n = combinations<typename Op::slots>::value;
  using Knobs = typename Op::knobs::template at<E / n>;
  return entry_for<Arch, Op, Knobs, typename combination_types<typename Op::slots, E % n>::type>::get();
}

template <class Arch, class Op, std::size_t... E>
void fill_op(kernel_fn* out, std::index_sequence<E...>) {
  // A braced list, not a comma fold: clang nests a fold once per term and stops at 256.
  const kernel_fn entries[] = {op_entry<Arch, Op, E>()...};
  for (std::size_t i = 0; i < sizeof...(E); ++i)
    out[i] = entries[i];
}

template <class Arch, class... Ops>
kernel_table make_table(type_list<Ops...>) {
  kernel_table t{};
  (fill_op<Arch, Ops>(t.fn + op_offset<Ops, ops>::value, std::make_index_sequence<op_entries<Ops>>{}), ...);
  return t;
}

template <class Arch>
const kernel_table& kernel_table_for() {
  static const kernel_table t = make_table<Arch>(ops{});
  return t;
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
