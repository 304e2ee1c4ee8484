// SPDX-License-Identifier: MIT
// normkit: which kernels the per-ISA translation units instantiate. A build may state the ops,
// storage types and policies its binaries call (CMake: NORMKIT_DISPATCH_OPS / _TYPES /
// _POLICIES, which define the macros below for the per-ISA objects; README, "Build cost");
// every other slot of the table stays null and such a call runs the scalar reference -- the
// same bits, slower. Unset or `all`: everything.
//   NORMKIT_SELECT_OPS       op names (ops/list.hpp), e.g. rms_norm,convert
//   NORMKIT_SELECT_TYPES     storage type names (core/storage.hpp), e.g. bf16,f32; every type
//                            slot of a kernel must be selected
//   NORMKIT_SELECT_POLICIES  policy names (core/policy.hpp), e.g. llama,gemma; a kernel is kept
//                            when a selected policy runs it
#pragma once

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same, std::false_type, std::true_type, std::void_t

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../core/policy.hpp"
#include "../core/storage.hpp"
#include "../core/type_list.hpp"
#include "../ops/list.hpp"

#define NORMKIT_SELECTION_STRING_(...) #__VA_ARGS__
#define NORMKIT_SELECTION_STRING(...) NORMKIT_SELECTION_STRING_(__VA_ARGS__)

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

#if defined(NORMKIT_SELECT_OPS)
constexpr const char* selected_ops = NORMKIT_SELECTION_STRING(NORMKIT_SELECT_OPS);
#else
constexpr const char* selected_ops = "all";
#endif
#if defined(NORMKIT_SELECT_TYPES)
constexpr const char* selected_types = NORMKIT_SELECTION_STRING(NORMKIT_SELECT_TYPES);
#else
constexpr const char* selected_types = "all";
#endif
#if defined(NORMKIT_SELECT_POLICIES)
constexpr const char* selected_policies = NORMKIT_SELECTION_STRING(NORMKIT_SELECT_POLICIES);
#else
constexpr const char* selected_policies = "all";
#endif

constexpr bool is_separator(char c) {
  return c == ',' || c == ' ' || c == ';';
}
// Whether the list item starting at `item` is `word`.
constexpr bool item_is(const char* item, const char* word) {
  std::size_t k = 0;
  for (; word[k] != '\0'; ++k)
    if (item[k] != word[k])
      return false;
  return item[k] == '\0' || is_separator(item[k]);
}
// Calls visit(item) on each item of a comma- (or space-, semicolon-) separated list until it
// returns false; returns whether every call returned true.
template <class F>
constexpr bool every_item(const char* list, F visit) {
  for (const char* p = list; *p != '\0';) {
    while (*p != '\0' && is_separator(*p))
      ++p;
    if (*p == '\0')
      break;
    if (!visit(p))
      return false;
    while (*p != '\0' && !is_separator(*p))
      ++p;
  }
  return true;
}

// Whether `name` is an item of `list`, or the list holds "all".
constexpr bool list_has(const char* list, const char* name) {
  return !every_item(list, [&](const char* item) { return !item_is(item, "all") && !item_is(item, name); });
}

// Whether an item names one of the types T / of the things T (by T::name) / of the types in some
// op's slots.
template <class... T>
constexpr bool names_storage(const char* item, type_list<T...>) {
  return (item_is(item, storage_traits<T>::name) || ...);
}
template <class... T>
constexpr bool names_one_of(const char* item, type_list<T...>) {
  return (item_is(item, T::name) || ...);
}
template <class... Slot>
constexpr bool names_slot_type(const char* item, type_list<Slot...>) {
  return (names_storage(item, Slot{}) || ...);
}
template <class... Op>
constexpr bool names_op_type(const char* item, type_list<Op...>) {
  return (names_slot_type(item, typename Op::slots{}) || ...);
}

// Every item is "all" or a name the build knows: a misspelt selection would otherwise select
// nothing and leave every call on the scalar reference without a word.
static_assert(every_item(selected_ops,
                         [](const char* i) { return item_is(i, "all") || names_one_of(i, ops{}); }),
              "NORMKIT_SELECT_OPS (CMake: NORMKIT_DISPATCH_OPS) names an op that is not in ops/list.hpp");
static_assert(every_item(selected_types,
                         [](const char* i) { return item_is(i, "all") || names_op_type(i, ops{}); }),
              "NORMKIT_SELECT_TYPES (CMake: NORMKIT_DISPATCH_TYPES) names a type that no op of ops/list.hpp "
              "takes (f32, bf16, f16, e4m3, e5m2, i8)");
static_assert(
    every_item(selected_policies,
               [](const char* i) { return item_is(i, "all") || names_one_of(i, named_policies{}); }),
    "NORMKIT_SELECT_POLICIES (CMake: NORMKIT_DISPATCH_POLICIES) names a policy that is not a preset of "
    "core/policy.hpp");

template <class Op, class Knobs, class... Ts, class... P>
constexpr bool run_by_selected_policy(type_list<P...>) {
  return ((list_has(selected_policies, P::name) &&
           std::is_same<typename Op::template canonical<knobs_of<P>, Ts...>, Knobs>::value) ||
          ...);
}

// Whether a kernel's bf16 stores can use AVX512-BF16 (simd/io.hpp, simd/chunk.hpp): it stores
// bf16 (the first type of its narrows, core/op.hpp), and, for the norms, not from interleaved
// chunks (core/op.hpp), whose integer narrowing is a shift and an or and which the instruction,
// its subnormal guard and a shuffle did not make faster there (the backward's interleaved rows
// gain from it; docs/performance.md).
template <class Op, class Narrows, class... Ts>
constexpr bool hw_bf16_kernel() {
  if constexpr (Narrows::size == 0)
    return false;
  else if constexpr (!std::is_same<type_at_t<0, Narrows>, bf16>::value)
    return false;
  else if constexpr (std::is_same<typename Op::knobs, norm_knobs>::value)
    return !interleaved_layout<Ts...>;
  else
    return true;
}

// Whether a kernel gains from AVX512-FP16 (simd/rows.hpp, write_row): RMSNorm with fp16 input
// whose epilogue is one fp16 product (core/epilogue.hpp, fp16_product_epilogue).
template <class Op, class Knobs, class... Ts>
constexpr bool hw_fp16_kernel() {
  if constexpr (sizeof...(Ts) != 3 || !std::is_same<typename Op::knobs, norm_knobs>::value) {
    return false;
  } else {
    using In = type_at_t<0, type_list<Ts...>>;
    using W = type_at_t<1, type_list<Ts...>>;
    using Out = type_at_t<2, type_list<Ts...>>;
    return item_is(Op::name, "rms_norm") && std::is_same<In, fp16>::value &&
           fp16_product_epilogue<Knobs, mid_of<Knobs, In, W>, W, Out>;
  }
}

// Whether an op compiles only some of its kernels (Op::has_kernel<Ts...>, ops/norm_static_quant.hpp):
// then only those types, and only under knob sets that a named preset runs, whatever the selection.
template <class Op, class Types, class = void>
struct restricts_kernels : std::false_type {};
template <class Op, class... Ts>
struct restricts_kernels<Op, type_list<Ts...>, std::void_t<decltype(Op::template has_kernel<Ts...>)>>
    : std::true_type {};

template <class Op, class Knobs, class... Ts>
constexpr bool restricted_out() {
  if constexpr (restricts_kernels<Op, type_list<Ts...>>::value) {
    if constexpr (!Op::template has_kernel<Ts...>)
      return true;
    else
      return !run_by_selected_policy<Op, Knobs, Ts...>(named_policies{});
  } else {
    return false;
  }
}

template <class Op, class Knobs, class... Ts>
constexpr bool selected() {
  if (restricted_out<Op, Knobs, Ts...>())
    return false;
#if defined(NORMKIT_HW_FP16) && defined(NORMKIT_ISA_TU)
  // The avx512fp16 objects hold the kernels that gain from its fp16 products; the dispatcher takes
  // the rest from avx512bf16 (dispatch/run.hpp).
  if (!hw_fp16_kernel<Op, Knobs, Ts...>())
    return false;
#elif defined(NORMKIT_HW_BF16) && defined(NORMKIT_ISA_TU)
  // The avx512bf16 objects differ from avx512's only in their bf16 stores (simd/io.hpp): they hold
  // the kernels that gain from them, and the dispatcher takes the rest from avx512 (dispatch/run.hpp).
  if (!hw_bf16_kernel<Op, typename Op::template narrows<Knobs, Ts...>, Ts...>())
    return false;
#endif
  if (!list_has(selected_ops, Op::name) || !(list_has(selected_types, storage_traits<Ts>::name) && ...))
    return false;
  if constexpr (std::is_same<typename Op::knobs, norm_knobs>::value)  // "all": every knob set, named or not
    return list_has(selected_policies, "all") || run_by_selected_policy<Op, Knobs, Ts...>(named_policies{});
  else
    return true;
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
