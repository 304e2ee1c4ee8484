// SPDX-License-Identifier: MIT
// normkit: compile-time lists of types, the vocabulary of the op and storage-type tables. A type
// looked up in a list it is not in is a compile error, never a silent slot.
#pragma once

#include <cstddef>      // std::size_t
#include <type_traits>  // std::is_same, std::integral_constant, std::conditional_t

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

template <class... T>
struct type_list {
  static constexpr std::size_t size = sizeof...(T);
};

// Whether T is one of the list's types.
template <class T, class List>
struct contains;
template <class T, class... U>
struct contains<T, type_list<U...>> : std::integral_constant<bool, (std::is_same<T, U>::value || ...)> {};

// The position of T in the list.
template <class T, class List>
struct index_of {
  static_assert(contains<T, List>::value, "normkit: this type is not in the list of this slot");
};
template <class T, class... U>
struct index_of<T, type_list<T, U...>> : std::integral_constant<std::size_t, 0> {};
template <class T, class H, class... U>
struct index_of<T, type_list<H, U...>>
    : std::integral_constant<std::size_t, 1 + index_of<T, type_list<U...>>::value> {};

// The I-th type of the list.
template <std::size_t I, class List>
struct type_at;
template <class H, class... T>
struct type_at<0, type_list<H, T...>> {
  using type = H;
};
template <std::size_t I, class H, class... T>
struct type_at<I, type_list<H, T...>> : type_at<I - 1, type_list<T...>> {};
template <std::size_t I, class List>
using type_at_t = typename type_at<I, List>::type;

// The types of the list for which Pred<T>::value holds, in order.
template <template <class> class Pred, class List>
struct filter;
template <template <class> class Pred>
struct filter<Pred, type_list<>> {
  using type = type_list<>;
};
template <template <class> class Pred, class H, class... T>
struct filter<Pred, type_list<H, T...>> {
  using rest = typename filter<Pred, type_list<T...>>::type;
  template <class L>
  struct prepend;
  template <class... U>
  struct prepend<type_list<U...>> {
    using type = type_list<H, U...>;
  };
  using type = std::conditional_t<Pred<H>::value, typename prepend<rest>::type, rest>;
};

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
