// SPDX-License-Identifier: MIT
// normkit quickstart: RMSNorm a bf16 batch with Llama's rounding convention.
#include <normkit/normkit.hpp>

#include <cstdio>
#include <vector>

int main() {
  using normkit::bf16;
  const std::size_t rows = 2, cols = 4096;
  std::vector<bf16> x(rows * cols, bf16(0.5f)), gamma(cols, bf16(1.0f)), y(rows * cols);
  x[0] = bf16(3.0f);

  // Llama rounds the normalized value to bf16 before the gain; Gemma would not (normkit::gemma).
  const normkit::status s =
      normkit::rms_norm<normkit::llama>(x.data(), gamma.data(), y.data(), rows, cols, 1e-6f);
  if (s != normkit::status::ok)
    return std::fprintf(stderr, "normkit: %s\n", normkit::to_string(s)), 1;

  std::printf("y[0] = %g, y[1] = %g (ISA: %s)\n", static_cast<float>(y[0]), static_cast<float>(y[1]),
              normkit::to_string(normkit::active_isa()));
}
