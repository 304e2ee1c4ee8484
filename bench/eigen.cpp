// SPDX-License-Identifier: MIT
// The Eigen baseline: the row-wise Eigen 3.4 expression a user of Eigen would write, compiled at
// -O3 -march=native. 16-bit rows are mapped as Eigen::bfloat16 / Eigen::half (layout-compatible
// with normkit::bf16 / normkit::fp16) and cast to float inside the expression.
#include <cmath>        // std::sqrt
#include <cstddef>      // std::size_t
#include <type_traits>  // std::conditional_t

#include <Eigen/Core>

#include "baselines.hpp"

namespace normkit_bench {
namespace {

template <class T>
struct eigen_type {
  using type = T;
};
template <>
struct eigen_type<normkit::bf16> {
  using type = Eigen::bfloat16;
};
template <>
struct eigen_type<normkit::fp16> {
  using type = Eigen::half;
};
template <class T>
using eigen_t = typename eigen_type<T>::type;

template <class T>
using const_row = Eigen::Map<const Eigen::Matrix<eigen_t<T>, 1, Eigen::Dynamic>>;
template <class T>
using mut_row = Eigen::Map<Eigen::Matrix<eigen_t<T>, 1, Eigen::Dynamic>>;

template <class T>
const_row<T> map_row(const T* p, std::size_t cols) {
  return const_row<T>(reinterpret_cast<const eigen_t<T>*>(p), static_cast<Eigen::Index>(cols));
}
template <class T>
mut_row<T> map_row(T* p, std::size_t cols) {
  return mut_row<T>(reinterpret_cast<eigen_t<T>*>(p), static_cast<Eigen::Index>(cols));
}

// The preset's epilogue on float row expressions n (normalized) and g (stored gain). Every
// operand is nested by value (Eigen copies expressions and Maps), so returning it is safe; nothing
// is evaluated into a temporary, so nothing allocates.
template <class Policy, class In, class W, class Out, class N, class G>
auto product(const N& n, const G& g) {
  using Mid = eigen_t<std::conditional_t<Policy::mid == normkit::mid_type::input, In, W>>;
  if constexpr (Policy::gain == normkit::gain_mode::plus_one) {
    const auto g1 = (g.array() + 1.0f).matrix();
    if constexpr (Policy::round == normkit::rounding::twice)
      return n.template cast<Mid>().template cast<float>().cwiseProduct(g1);
    else
      return n.cwiseProduct(g1);
  } else {
    if constexpr (Policy::round == normkit::rounding::twice)
      return n.template cast<Mid>().template cast<float>().cwiseProduct(g);
    else
      return n.cwiseProduct(g);
  }
}

}  // namespace

template <class Policy, class In, class W, class Out>
void eigen_rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols, float eps) {
  const auto g = map_row(gamma, cols).template cast<float>();
  for (std::size_t r = 0; r < rows; ++r) {
    const auto xf = map_row(x + r * cols, cols).template cast<float>();
    auto yr = map_row(y + r * cols, cols);
    const float root = std::sqrt(xf.squaredNorm() / static_cast<float>(cols) + eps);
    if constexpr (Policy::norm == normkit::normalize::divide)
      yr = product<Policy, In, W, Out>(xf / root, g).template cast<eigen_t<Out>>();
    else
      yr = product<Policy, In, W, Out>(xf * (1.0f / root), g).template cast<eigen_t<Out>>();
  }
}

template <class Policy, class In, class W, class Out>
void eigen_layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols,
                      float eps) {
  const auto g = map_row(gamma, cols).template cast<float>();
  const auto b = map_row(beta, cols).template cast<float>();
  for (std::size_t r = 0; r < rows; ++r) {
    const auto xf = map_row(x + r * cols, cols).template cast<float>();
    auto yr = map_row(y + r * cols, cols);
    const float mean = xf.mean();
    const auto c = (xf.array() - mean).matrix();
    const float root = std::sqrt(c.squaredNorm() / static_cast<float>(cols) + eps);
    if constexpr (Policy::norm == normkit::normalize::divide)
      yr = (product<Policy, In, W, Out>(c / root, g) + b).template cast<eigen_t<Out>>();
    else
      yr = (product<Policy, In, W, Out>(c * (1.0f / root), g) + b).template cast<eigen_t<Out>>();
  }
}

#define NORMKIT_BENCH_INSTANTIATE(Policy, In, W, Out)                                                   \
  template void eigen_rms_norm<Policy, In, W, Out>(const In*, const W*, Out*, std::size_t, std::size_t, \
                                                   float);                                              \
  template void eigen_layer_norm<Policy, In, W, Out>(const In*, const W*, const W*, Out*, std::size_t,  \
                                                     std::size_t, float);
NORMKIT_BENCH_FOR_EACH_CASE(NORMKIT_BENCH_INSTANTIATE)

}  // namespace normkit_bench
