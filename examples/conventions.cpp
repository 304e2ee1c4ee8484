// SPDX-License-Identifier: MIT
// Round once or round twice? How often the two bf16 conventions disagree, and by how much.
//
// The experiment of "Where to round" (normalized values ~ N(0,1), gains ~ U(0.9, 1.1) stored in
// bf16, two million outputs), run through normkit's kernels instead of a NumPy cast:
//   round once : y = bf16(n * g)                 normkit::round_once (PyTorch, OLMo2)
//   round twice: y = bf16(f(bf16(n)) * g)        normkit::llama (bf16 activations), or the t5
//                                                 convention (intermediate in the gain's type)
// Expect about a quarter of the outputs to differ, each by one bf16 ulp, so the largest relative
// difference is one ulp at the bottom of a binade: 2^-7 = 0.78125 %.
#include <normkit/normkit.hpp>

#include <cmath>    // std::fabs, std::fma
#include <cstdint>  // std::uint16_t
#include <cstdio>   // std::printf
#include <random>   // std::mt19937_64, std::normal_distribution
#include <vector>   // std::vector

namespace {

using normkit::bf16;

// Distance in bf16 ulps (sign-magnitude bits on one integer line).
long ulp_distance(bf16 a, bf16 b) {
  auto key = [](bf16 v) {
    return (v.bits & 0x8000u) ? -static_cast<long>(v.bits & 0x7fffu) : static_cast<long>(v.bits);
  };
  const long d = key(a) - key(b);
  return d < 0 ? -d : d;
}

int compare(const char* what, const std::vector<bf16>& once, const std::vector<bf16>& twice) {
  std::size_t differ = 0, one_ulp = 0;
  long max_ulp = 0;
  double max_rel = 0.0;
  for (std::size_t i = 0; i < once.size(); ++i) {
    if (once[i].bits == twice[i].bits)
      continue;
    ++differ;
    const long u = ulp_distance(once[i], twice[i]);
    one_ulp += u == 1;
    max_ulp = u > max_ulp ? u : max_ulp;
    const double a = static_cast<float>(once[i]), b = static_cast<float>(twice[i]);
    if (a != 0.0 && std::fabs(a - b) / std::fabs(a) > max_rel)
      max_rel = std::fabs(a - b) / std::fabs(a);  // relative to the round-once result, as the article
  }
  std::printf(
      "%s: %zu of %zu outputs differ (%.2f %%), %zu of them by 1 ulp, max %ld ulp, "
      "largest relative difference %.5f %%\n",
      what, differ, once.size(), 100.0 * static_cast<double>(differ) / static_cast<double>(once.size()),
      one_ulp, max_ulp, 100.0 * max_rel);
  return 0;
}

}  // namespace

int main() {
  const std::size_t rows = 512, cols = 4096;  // 2,097,152 outputs
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(rows * cols);
  for (float& v : x)
    v = normal(rng);
  std::vector<bf16> x_bf16(x.size()), gamma(cols), once(x.size()), twice(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    x_bf16[i] = bf16(x[i]);
  // U(0.9, 1.1) from 24 random bits with one fma, so every platform draws the same gains
  // (std::uniform_real_distribution computes in long double, which differs between x86 and Arm).
  for (bf16& g : gamma)
    g = bf16(std::fma(0.2f, static_cast<float>(rng() >> 40) * 0x1p-24f, 0.9f));  // the stored gain: bf16
  const float eps = 1e-6f;

  // fp32 activations, as in the article: n = x * inv is an fp32 value; round twice rounds it to
  // bf16 (the gain's type: the t5 convention) before the product.
  normkit::status s =
      normkit::rms_norm<normkit::round_once>(x.data(), gamma.data(), once.data(), rows, cols, eps);
  if (s == normkit::status::ok)
    s = normkit::rms_norm<normkit::t5>(x.data(), gamma.data(), twice.data(), rows, cols, eps);
  if (s != normkit::status::ok)
    return std::fprintf(stderr, "normkit: %s\n", normkit::to_string(s)), 1;
  compare("fp32 activations, round_once vs t5 (twice)", once, twice);

  // bf16 activations, as a bf16 model runs: round twice is Llama's `weight * hidden.to(input_dtype)`.
  s = normkit::rms_norm<normkit::round_once>(x_bf16.data(), gamma.data(), once.data(), rows, cols, eps);
  if (s == normkit::status::ok)
    s = normkit::rms_norm<normkit::llama>(x_bf16.data(), gamma.data(), twice.data(), rows, cols, eps);
  if (s != normkit::status::ok)
    return std::fprintf(stderr, "normkit: %s\n", normkit::to_string(s)), 1;
  compare("bf16 activations, round_once vs llama (twice)", once, twice);
  return 0;
}
