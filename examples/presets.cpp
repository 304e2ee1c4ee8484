// SPDX-License-Identifier: MIT
// One row through every preset, side by side: the same bf16 activations and fp32 gains, eight
// conventions, bf16 outputs. Presets with equal knobs give equal bits (olmo2 = pytorch =
// round_once; gemma3n = onnxruntime); llama rounds the normalized value to bf16 first; gemma
// multiplies by 1 + gamma (its checkpoints store the gain minus one); the divide presets use
// x / sqrt(ms + eps) instead of x * (1 / sqrt(ms + eps)).
#include <normkit/normkit.hpp>

#include <cmath>   // std::sin
#include <cstdio>  // std::printf
#include <vector>  // std::vector

namespace {

const std::size_t cols = 4096;

template <class Policy>
std::vector<normkit::bf16> run(const std::vector<normkit::bf16>& x, const std::vector<float>& gamma) {
  std::vector<normkit::bf16> y(cols);
  const normkit::status s = normkit::rms_norm<Policy>(x.data(), gamma.data(), y.data(), 1, cols, 1e-6f);
  if (s != normkit::status::ok)
    std::fprintf(stderr, "normkit: %s\n", normkit::to_string(s));
  return y;
}

}  // namespace

int main() {
  std::vector<normkit::bf16> x(cols);
  std::vector<float> gamma(cols);
  for (std::size_t i = 0; i < cols; ++i) {  // deterministic, varied values
    const float t = static_cast<float>(i);
    x[i] = normkit::bf16(3.0f * std::sin(0.37f * t + 1.0f) * std::sin(0.011f * t));
    gamma[i] = 1.0f + 0.1f * std::sin(0.91f * t);
  }
  const char* names[] = {"llama", "gemma", "gemma3n", "olmo2", "t5", "pytorch", "onnx", "onnxruntime"};
  const std::vector<normkit::bf16> y[] = {
      run<normkit::llama>(x, gamma), run<normkit::gemma>(x, gamma),      run<normkit::gemma3n>(x, gamma),
      run<normkit::olmo2>(x, gamma), run<normkit::t5>(x, gamma),         run<normkit::pytorch>(x, gamma),
      run<normkit::onnx>(x, gamma),  run<normkit::onnxruntime>(x, gamma)};
  const std::vector<normkit::bf16> once = run<normkit::round_once>(x, gamma);

  std::printf("%4s %10s %10s", "col", "x", "gamma");
  for (const char* n : names)
    std::printf(" %11s", n);
  std::printf("\n");
  for (std::size_t i = 0; i < 8; ++i) {
    std::printf("%4zu %10.6g %10.6g", i, static_cast<double>(static_cast<float>(x[i])),
                static_cast<double>(gamma[i]));
    for (const auto& v : y)
      std::printf(" %11.6g", static_cast<double>(static_cast<float>(v[i])));
    std::printf("\n");
  }
  std::printf("\ndifferences from round_once over the %zu outputs of the row:\n", cols);
  for (std::size_t p = 0; p < 8; ++p) {
    std::size_t differ = 0;
    int max_ulp = 0;
    for (std::size_t i = 0; i < cols; ++i) {
      const int a = y[p][i].bits & 0x8000 ? -(y[p][i].bits & 0x7fff) : y[p][i].bits;
      const int b = once[i].bits & 0x8000 ? -(once[i].bits & 0x7fff) : once[i].bits;
      const int d = a > b ? a - b : b - a;
      differ += d != 0;
      max_ulp = d > max_ulp ? d : max_ulp;
    }
    std::printf("  %-12s %4zu of %zu differ, max %d ulp\n", names[p], differ, cols, max_ulp);
  }
  return 0;
}
