// Packaging check: the consumer compiles, links the runtime-dispatch objects, and gets the
// reference's bits from the dispatched path.
#include <normkit/normkit.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  const std::size_t rows = 3, cols = 1000;
  std::vector<normkit::bf16> x(rows * cols), g(cols), y(rows * cols), want(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = normkit::bf16(static_cast<float>(i % 17) - 8.0f);
  for (std::size_t i = 0; i < cols; ++i)
    g[i] = normkit::bf16(1.0f + static_cast<float>(i % 5) / 8.0f);
  if (normkit::rms_norm<normkit::llama>(x.data(), g.data(), y.data(), rows, cols, 1e-6f) !=
      normkit::status::ok)
    return 1;
  if (normkit::reference::rms_norm<normkit::llama>(x.data(), g.data(), want.data(), rows, cols, 1e-6f) !=
      normkit::status::ok)
    return 1;
  if (std::memcmp(y.data(), want.data(), y.size() * sizeof(normkit::bf16)) != 0)
    return 2;
  std::printf("consumer ok (%s)\n", normkit::to_string(normkit::active_isa()));
  return 0;
}
