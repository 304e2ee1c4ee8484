// SPDX-License-Identifier: MIT
// normkit: RMSNorm and LayerNorm on Eigen matrices (optional; needs Eigen 3.4, which the rest of
// normkit never includes).
//
//   Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> x(rows, cols), y(rows,
//   cols); Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, 1> gamma(cols); normkit::status s =
//   normkit::rms_norm<normkit::llama>(x, gamma, y, 1e-6f);
//
// x and y: row-major (or single-row) dense expressions with direct access to their storage -- a
// Matrix, an Eigen::Map, an Eigen::Ref or a block of one, whose outer stride becomes the row
// stride (so `m.middleRows(1, 4)` or `m.block(0, 8, rows, 64)` work in place, without a copy).
// gamma and beta: vectors of x.cols() contiguous values (or nullptr). Scalars: float,
// Eigen::bfloat16 and Eigen::half, read as float, normkit::bf16 and normkit::fp16 -- the same
// bits, without conversion or copy (the layout proof is below). The kernels, checks and bits are
// those of the pointer entry points (rms_norm.hpp, layer_norm.hpp); a non-unit inner stride or
// extents that disagree (y's shape, gamma's or beta's length against x.cols()) return
// status::shape_mismatch and touch nothing. A column-major matrix is a compile error (its rows
// are not contiguous).
#pragma once

#include <atomic>       // std::atomic_signal_fence
#include <cstddef>      // std::size_t, std::nullptr_t, offsetof
#include <cstdint>      // std::uint16_t
#include <type_traits>  // std::is_same, std::is_trivially_copyable, std::is_standard_layout

#include <Eigen/Core>

#include "layer_norm.hpp"
#include "rms_norm.hpp"
#include "status.hpp"
#include "types.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {  // every function: core/abi.hpp

// The normkit storage type that reads an Eigen scalar's bits as they are.
template <class Scalar>
struct eigen_storage {
  static_assert(sizeof(Scalar) == 0,
                "normkit: the Eigen scalar must be float, Eigen::bfloat16 or Eigen::half");
};
template <>
struct eigen_storage<float> {
  using type = float;
};
template <>
struct eigen_storage<Eigen::bfloat16> {
  using type = bf16;
};
template <>
struct eigen_storage<Eigen::half> {
  using type = fp16;
};
template <class Scalar>
using eigen_storage_t = typename eigen_storage<Scalar>::type;

// ---- Layout identity: Eigen's 16-bit scalars and normkit's are the same 2 bytes. ----
// Both are standard-layout structs whose one data member is a 16-bit unsigned integer at offset 0
// (Eigen: `unsigned short value` / `uint16_t x` in a base class; normkit: `std::uint16_t bits`),
// with the same size and alignment, trivially copyable, and both encode the value as IEEE bfloat16
// / binary16 bits (the encoding is checked at run time by tests/test_eigen.cpp).
static_assert(sizeof(Eigen::bfloat16) == sizeof(bf16) && alignof(Eigen::bfloat16) == alignof(bf16),
              "normkit: Eigen::bfloat16 and normkit::bf16 must have the same size and alignment");
static_assert(sizeof(Eigen::half) == sizeof(fp16) && alignof(Eigen::half) == alignof(fp16),
              "normkit: Eigen::half and normkit::fp16 must have the same size and alignment");
static_assert(std::is_trivially_copyable<Eigen::bfloat16>::value && std::is_trivially_copyable<bf16>::value &&
                  std::is_trivially_copyable<Eigen::half>::value && std::is_trivially_copyable<fp16>::value,
              "normkit: the 16-bit scalars must be trivially copyable");
static_assert(std::is_standard_layout<Eigen::bfloat16>::value && std::is_standard_layout<bf16>::value &&
                  std::is_standard_layout<Eigen::half>::value && std::is_standard_layout<fp16>::value,
              "normkit: the 16-bit scalars must be standard-layout");
static_assert(offsetof(bf16, bits) == 0 && offsetof(fp16, bits) == 0 &&
                  offsetof(Eigen::bfloat16_impl::__bfloat16_raw, value) == 0,
              "normkit: the bits are the first member");
static_assert(
    std::is_same<decltype(Eigen::bfloat16_impl::__bfloat16_raw::value), unsigned short>::value &&
        std::is_same<std::uint16_t, unsigned short>::value,
    "normkit: Eigen::bfloat16 stores an unsigned short, normkit::bf16 a std::uint16_t: the same type");
#if !defined(EIGEN_HAS_ARM64_FP16_SCALAR_ARITHMETIC)  // there Eigen::half stores an __fp16 (same bits)
static_assert(std::is_same<decltype(Eigen::half_impl::__half_raw::x), std::uint16_t>::value &&
                  offsetof(Eigen::half_impl::__half_raw, x) == 0,
              "normkit: Eigen::half stores a std::uint16_t first, like normkit::fp16");
#endif

namespace eigen_support {

// Why reading Eigen's storage through a normkit pointer is defined. The pointer conversion is a
// reinterpret_cast between object pointer types (defined); what matters is how the elements are
// then accessed, and every normkit path accesses a 16-bit element as the 16-bit unsigned integer
// it is. Eigen's scalar is a standard-layout object whose first member is that integer (`unsigned
// short value`, or `uint16_t x` for half), so the object and the member are pointer-
// interconvertible ([basic.compound]) and the address holds an object of type unsigned short ==
// std::uint16_t. The x86 SIMD loads and stores go through integer vector types the compilers
// declare may_alias (like char); the NEON ones through `const std::uint16_t*` (vld1_u16 /
// vst1q_u16): an access to a std::uint16_t object through its own type ([basic.lval]); the tails
// of a row go through std::memcpy (bytes, defined for any trivially copyable object); the scalar
// path reads and writes `bf16::bits`, again a std::uint16_t at offset 0. What ISO C++ leaves open
// is only that this member is named through normkit's class, not Eigen's; the one consequence a
// compiler could draw -- type-based alias analysis moving the caller's accesses through Eigen's
// type across the kernel's when both are inlined into one function (static mode; runtime
// dispatch calls the kernels out of line) -- is ruled out by a compiler fence on each side of the
// call: every access before it completes before it, none after it starts early (no instruction is
// emitted).
struct fence {
  fence() { std::atomic_signal_fence(std::memory_order_seq_cst); }
  ~fence() { std::atomic_signal_fence(std::memory_order_seq_cst); }
  fence(const fence&) = delete;
  fence& operator=(const fence&) = delete;
};

template <class Derived>
constexpr bool has_rows_in_memory() {
  return (Derived::Flags & Eigen::DirectAccessBit) != 0 &&
         ((Derived::Flags & Eigen::RowMajorBit) != 0 || Derived::RowsAtCompileTime == 1);
}

// x or y as rows x cols elements, row stride `stride`: rows in memory, elements contiguous.
struct extents {
  std::size_t rows = 0, cols = 0, stride = 0;
  bool ok = false;
};
template <class Derived>
extents extents_of(const Eigen::DenseBase<Derived>& m) {
  extents e;
  e.rows = static_cast<std::size_t>(m.rows());
  e.cols = static_cast<std::size_t>(m.cols());
  // One row: its stride never matters (a row vector reports its length, a row block its parent's).
  e.stride = e.rows <= 1 ? e.cols : static_cast<std::size_t>(m.outerStride() < 0 ? 0 : m.outerStride());
  e.ok = (e.cols <= 1 || m.innerStride() == 1) && (e.rows <= 1 || m.outerStride() >= 0);
  return e;
}

// gamma or beta: `cols` contiguous values, or nullptr.
template <class Derived>
const eigen_storage_t<typename Derived::Scalar>* vector_arg(const Eigen::DenseBase<Derived>& v,
                                                            std::size_t cols, bool& ok) {
  static_assert(Derived::IsVectorAtCompileTime && (Derived::Flags & Eigen::DirectAccessBit) != 0,
                "normkit: gamma and beta must be vectors with direct access (a Vector, Map, Ref, or a row or "
                "column block)");
  if (static_cast<std::size_t>(v.size()) != cols || (cols > 1 && v.innerStride() != 1))
    ok = false;
  return reinterpret_cast<const eigen_storage_t<typename Derived::Scalar>*>(v.derived().data());
}
inline std::nullptr_t vector_arg(std::nullptr_t, std::size_t, bool&) {
  return nullptr;
}

// Checks x and y, then calls kernel(x pointer, y pointer, rows, cols, x_stride, y_stride) between
// the two fences. `ok`: the gain and bias checks.
template <class XD, class YD, class Kernel>
status run(const Eigen::DenseBase<XD>& x, const Eigen::DenseBase<YD>& y, bool ok, Kernel kernel) {
  static_assert(
      has_rows_in_memory<XD>(),
      "normkit: x must be row-major (or one row) with direct access: an Eigen::Matrix<..., RowMajor>, "
      "a Map, a Ref or a block of one; a column-major matrix's rows are not contiguous");
  static_assert(has_rows_in_memory<YD>() && (YD::Flags & Eigen::LvalueBit) != 0,
                "normkit: y must be a writable row-major (or one-row) matrix, Map, Ref or block");
  YD& out = const_cast<YD&>(y.derived());  // Eigen's idiom for writable expression arguments
  const extents xe = extents_of(x), ye = extents_of(out);
  if (!ok || !xe.ok || !ye.ok || xe.rows != ye.rows || xe.cols != ye.cols)
    return status::shape_mismatch;
  const fence f;
  return kernel(reinterpret_cast<const eigen_storage_t<typename XD::Scalar>*>(x.derived().data()),
                reinterpret_cast<eigen_storage_t<typename YD::Scalar>*>(out.data()), xe.rows, xe.cols,
                xe.stride, ye.stride);
}

}  // namespace eigen_support

// y = rms_norm(x) row by row; gamma: a vector of x.cols() values, or nullptr (no gain). y is
// taken by const reference, as Eigen's own functions take outputs, so that temporaries such as
// `m.middleRows(1, 4)` or a Map can be passed; it is written through.
template <class Policy, class XD, class G, class YD>
[[nodiscard]] status rms_norm(const Eigen::DenseBase<XD>& x, const G& gamma, const Eigen::DenseBase<YD>& y,
                              float eps) {
  bool ok = true;
  const auto g = eigen_support::vector_arg(gamma, static_cast<std::size_t>(x.cols()), ok);
  return eigen_support::run(
      x, y, ok, [&](auto xp, auto yp, std::size_t rows, std::size_t cols, std::size_t xs, std::size_t ys) {
        return normkit::rms_norm<Policy>(xp, g, yp, rows, cols, eps, xs, ys);
      });
}

// y = layer_norm(x) row by row; gamma and beta: vectors of x.cols() values of one scalar type, or
// nullptr (gain 1 / no bias).
template <class Policy, class XD, class G, class B, class YD>
[[nodiscard]] status layer_norm(const Eigen::DenseBase<XD>& x, const G& gamma, const B& beta,
                                const Eigen::DenseBase<YD>& y, float eps) {
  bool ok = true;
  const auto g = eigen_support::vector_arg(gamma, static_cast<std::size_t>(x.cols()), ok);
  const auto b = eigen_support::vector_arg(beta, static_cast<std::size_t>(x.cols()), ok);
  return eigen_support::run(
      x, y, ok, [&](auto xp, auto yp, std::size_t rows, std::size_t cols, std::size_t xs, std::size_t ys) {
        return normkit::layer_norm<Policy>(xp, g, b, yp, rows, cols, eps, xs, ys);
      });
}

}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
