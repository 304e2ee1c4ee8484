// SPDX-License-Identifier: MIT
// normkit: the runtime-dispatch kernel table, derived from the op list (ops/list.hpp). Each op has
// one slot per knob set x combination of its type slots, in mixed radix (knobs slowest, the last
// type slot fastest); every slot holds a type-erased row function taking the op's argument
// bundle by pointer, or null where the kernel is not instantiated (a non-canonical knob set, or
// one the build did not select: the call then runs the scalar reference, same bits). A per-ISA
// translation unit fills a table for its arch (table_impl.hpp), in its own ABI namespace; the
// dispatching TU needs no xsimd.
#pragma once

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/isa.hpp"
#include "../core/type_list.hpp"
#include "../ops/list.hpp"

namespace normkit {

// What the dispatching TU and the per-ISA TUs of one build exchange. Both sides must name the
// same types, so they live in a namespace that carries the version but no configuration; it
// holds types and constants only, no function.
namespace NORMKIT_TABLE_NAMESPACE {
using kernel_fn = void (*)(const void* args);
template <std::size_t N>
struct kernel_table_of {
  kernel_fn fn[N];
};
}  // namespace NORMKIT_TABLE_NAMESPACE

inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

using NORMKIT_TABLE_NAMESPACE::kernel_fn;

// The product of the sizes of an op's type slots.
template <class Slots>
struct combinations;
template <class... L>
struct combinations<type_list<L...>> {
  static constexpr std::size_t value = (std::size_t(1) * ... * L::size);
};

// Slots of one op, and where its slots start in the table.
template <class Op>
constexpr std::size_t op_entries = Op::knobs::size* combinations<typename Op::slots>::value;

template <class Op, class List>
struct op_offset;
template <class Op, class... Ops>
struct op_offset<Op, type_list<Ops...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same<Op, Ops>::value...};
    constexpr std::size_t sizes[] = {op_entries<Ops>...};
    std::size_t off = 0;
    for (std::size_t i = 0; i < sizeof...(Ops) && !same[i]; ++i)
      off += sizes[i];
    return off;
  }();
  static_assert(contains<Op, type_list<Ops...>>::value, "normkit: this op is not in ops/list.hpp");
};

template <class List>
struct total_entries;
template <class... Ops>
struct total_entries<type_list<Ops...>> {
  static constexpr std::size_t value = (std::size_t(0) + ... + op_entries<Ops>);
};

// The position of a type combination in an op's slots (mixed radix).
template <class Slots, class Types>
struct combination_index;
template <>
struct combination_index<type_list<>, type_list<>> {
  static constexpr std::size_t value = 0;
};
template <class L, class... Ls, class T, class... Ts>
struct combination_index<type_list<L, Ls...>, type_list<T, Ts...>> {
  static constexpr std::size_t value = index_of<T, L>::value * combinations<type_list<Ls...>>::value +
                                       combination_index<type_list<Ls...>, type_list<Ts...>>::value;
};

template <class Op, class Knobs, class... Ts>
constexpr std::size_t entry_index =
    op_offset<Op, ops>::value + Op::knobs::template index<Knobs>* combinations<typename Op::slots>::value +
    combination_index<typename Op::slots, type_list<Ts...>>::value;

using kernel_table = NORMKIT_TABLE_NAMESPACE::kernel_table_of<total_entries<ops>::value>;

template <class Op, class Knobs, class... Ts>
kernel_fn lookup(const kernel_table& t) {
  return t.fn[entry_index<Op, Knobs, Ts...>];
}

#if defined(NORMKIT_ISA_TU)
// Defined by this per-ISA translation unit (cmake/normkit_isa.cpp): its kernel table.
const kernel_table& isa_table();
#endif

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE

#if defined(NORMKIT_RUNTIME_DISPATCH)
// The per-ISA translation units of the runtime-dispatch component (cmake/normkit_isa.cpp), each
// in its own ABI namespace (core/abi.hpp), one per ISA of the table.
#define NORMKIT_ISA_TABLE_DECL(name, value, family, arch, cap, flags) \
  namespace NORMKIT_DISPATCH_NAMESPACE_OF(name) {                     \
    namespace detail {                                                \
    const NORMKIT_ABI_NAMESPACE::detail::kernel_table& isa_table();   \
    }                                                                 \
  }
NORMKIT_ISA_TABLE(NORMKIT_ISA_TABLE_DECL)
#undef NORMKIT_ISA_TABLE_DECL
#endif

}  // namespace normkit
