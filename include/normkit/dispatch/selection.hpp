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
#include <type_traits>  // std::is_same

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

// Whether every item of `list` is "all" or one of `names`: a misspelt selection would otherwise
// select nothing and leave every call on the scalar reference without a word.
template <std::size_t N>
constexpr bool list_known(const char* list, const char* const (&names)[N]) {
  return every_item(list, [&](const char* item) {
    bool known = item_is(item, "all");
    for (std::size_t n = 0; n < N; ++n)
      known = known || item_is(item, names[n]);
    return known;
  });
}
template <class... T>
constexpr bool names_known(const char* list, type_list<T...>) {
  constexpr const char* names[] = {T::name...};
  return list_known(list, names);
}
template <class... T>
constexpr bool type_names_known(const char* list, type_list<T...>) {
  constexpr const char* names[] = {storage_traits<T>::name...};
  return list_known(list, names);
}
static_assert(names_known(selected_ops, ops{}),
              "NORMKIT_SELECT_OPS (CMake: NORMKIT_DISPATCH_OPS) names an op that is not in ops/list.hpp");
static_assert(
    type_names_known(selected_types, storage_types{}),
    "NORMKIT_SELECT_TYPES (CMake: NORMKIT_DISPATCH_TYPES) names a type that is not f32, bf16 or f16");
static_assert(
    names_known(selected_policies, named_policies{}),
    "NORMKIT_SELECT_POLICIES (CMake: NORMKIT_DISPATCH_POLICIES) names a policy that is not a preset of "
    "core/policy.hpp");

template <class Op, class Knobs, class... Ts, class... P>
constexpr bool run_by_selected_policy(type_list<P...>) {
  return ((list_has(selected_policies, P::name) &&
           std::is_same<typename Op::template canonical<knobs_of<P>, Ts...>, Knobs>::value) ||
          ...);
}

template <class Op, class Knobs, class... Ts>
constexpr bool selected() {
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
