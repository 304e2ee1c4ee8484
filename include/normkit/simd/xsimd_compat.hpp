// SPDX-License-Identifier: MIT
// normkit: the xsimd API differences between the majors normkit supports (8.1 through 14), in
// one place, so that the kernels spell each operation once. Selected by XSIMD_VERSION_MAJOR.
#pragma once

#include <xsimd/xsimd.hpp>

#if !defined(XSIMD_VERSION_MAJOR) || XSIMD_VERSION_MAJOR < 8 || \
    (XSIMD_VERSION_MAJOR == 8 && XSIMD_VERSION_MINOR < 1)
#error "normkit needs xsimd 8.1 or newer"
#endif

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// The lanes of x reinterpreted as the batch type To of the same arch (no conversion). xsimd 11
// changed bitwise_cast's template argument from the target batch to its element type.
template <class To, class T, class Arch>
To bitwise_as(xsimd::batch<T, Arch> x) {
#if XSIMD_VERSION_MAJOR >= 11
  return xsimd::bitwise_cast<typename To::value_type>(x);
#else
  return xsimd::bitwise_cast<To>(x);
#endif
}

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
