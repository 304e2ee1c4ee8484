// SPDX-License-Identifier: MIT
// normkit: per-CPU kernel preferences of the automatic ISA choice. Every path gives the same bits,
// so which ISA's kernel runs a call changes its speed only. Where a CPU runs some kernels faster
// on a narrower ISA than on the best one it has, the automatic choice (NORMKIT_ISA unset and no
// set_isa: dispatch/state.hpp) takes those slots of the table from the narrower ISA; an ISA chosen
// by NORMKIT_ISA or set_isa runs its own kernels.
//
// The one rule so far, from a full bench run on an AMD EPYC Zen 4 (docs/performance.md): where
// AVX-512 executes as two 256-bit halves, the kernels with fp16 storage ran slower on AVX-512
// than on AVX2 in 34 of 36 cases (median 17 %), so they run on AVX2 there.
#pragma once

#include <cstddef>  // std::size_t

#include "../core/abi.hpp"
#include "../core/cpu.hpp"
#include "../core/isa.hpp"
#include "../core/storage.hpp"
#include "../core/type_list.hpp"
#include "table.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace impl {
using namespace ::normkit::detail;

// The storage type whose kernels a CPU may prefer to run narrower.
using narrower_type = fp16;

// The ISA whose kernels of narrower_type the automatic choice runs in place of `chosen`'s, or
// chosen itself.
inline isa narrower_isa(isa chosen, const cpu_caps& caps) {
  return (chosen == isa::avx512 || chosen == isa::avx512bf16 || chosen == isa::avx512fp16) &&
                 caps.avx512_split
             ? isa::avx2
             : chosen;
}

// Where T sits in each type slot of an op (npos when the slot cannot hold it), and the slots'
// sizes: one extra element keeps an op without slots a valid array.
template <class T, class Slot>
constexpr std::size_t position_in() {
  if constexpr (contains<T, Slot>::value)
    return index_of<T, Slot>::value;
  else
    return ~std::size_t(0);
}
template <class T, class Slots>
struct slot_positions;
template <class T, class... L>
struct slot_positions<T, type_list<L...>> {
  static constexpr std::size_t count = sizeof...(L);
  static constexpr std::size_t size[count + 1] = {L::size..., 1};
  static constexpr std::size_t at[count + 1] = {position_in<T, L>()..., ~std::size_t(0)};
};

// Whether entry e of an op's table (table.hpp: knobs slowest, the last type slot fastest) has T
// in one of its type slots.
template <class T, class Op>
bool entry_uses(std::size_t e) {
  using P = slot_positions<T, typename Op::slots>;
  std::size_t c = e % combinations<typename Op::slots>::value;
  for (std::size_t s = P::count; s-- > 0; c /= P::size[s])
    if (c % P::size[s] == P::at[s])
      return true;
  return false;
}

// t's entries of Op that use T, replaced by `from`'s where `from` has the kernel.
template <class T, class Op>
void prefer_op_kernels_using(kernel_table& t, const kernel_table& from) {
  for (std::size_t e = 0; e < op_entries<Op>; ++e) {
    const std::size_t k = op_offset<Op, ops>::value + e;
    if (from.fn[k] && entry_uses<T, Op>(e))
      t.fn[k] = from.fn[k];
  }
}
template <class T, class... Ops>
void prefer_kernels_using(type_list<Ops...>, kernel_table& t, const kernel_table& from) {
  (prefer_op_kernels_using<T, Ops>(t, from), ...);
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
