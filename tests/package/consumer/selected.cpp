// SPDX-License-Identifier: MIT
// The build's kernel selection (dispatch/selection.hpp): this consumer builds normkit with
// NORMKIT_DISPATCH_OPS=rms_norm, _TYPES=bf16, _POLICIES=llama. Each per-ISA table then holds
// exactly one kernel (RMSNorm, round-twice, bf16 in, gain and out); every other call runs the
// scalar reference and still returns its bits.
#include <normkit/normkit.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

namespace nd = normkit::detail;

template <class Policy, class T>
static bool same_bits_as_reference_rms(std::size_t rows, std::size_t cols) {
  std::vector<T> x(rows * cols), g(cols), y(rows * cols), want(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = T(static_cast<float>(i % 23) * 0.37f - 4.0f);
  for (std::size_t i = 0; i < cols; ++i)
    g[i] = T(0.9f + static_cast<float>(i % 7) / 32.0f);
  return normkit::rms_norm<Policy>(x.data(), g.data(), y.data(), rows, cols, 1e-6f) == normkit::status::ok &&
         normkit::reference::rms_norm<Policy>(x.data(), g.data(), want.data(), rows, cols, 1e-6f) ==
             normkit::status::ok &&
         std::memcmp(y.data(), want.data(), y.size() * sizeof(T)) == 0;
}

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("consumer FAILED: %s\n", what);
      ++failures;
    }
  };
  for (normkit::isa i : {normkit::isa::avx2, normkit::isa::avx512, normkit::isa::avx512bf16,
                         normkit::isa::avx512fp16, normkit::isa::neon}) {
    if (normkit::set_isa(i) != normkit::status::ok)
      continue;
    const nd::kernel_table* t = normkit::impl::active_table();
    check(t != nullptr, "no table for a runnable ISA");
    if (t == nullptr)
      continue;
    std::size_t kernels = 0;
    for (nd::kernel_fn f : t->fn)
      kernels += f != nullptr;
    std::printf("%s: %zu kernel(s) in the table\n", normkit::to_string(i), kernels);
    check(kernels == 1, "the selection should leave exactly one kernel");
    using B = normkit::bf16;
    check(nd::lookup<nd::rms_norm_op, nd::knobs_of<normkit::llama>, B, B, B>(*t) != nullptr,
          "rms_norm<llama> bf16 is not instantiated");
    check(nd::lookup<nd::rms_norm_op, nd::knobs_of<normkit::gemma>, B, B, B>(*t) == nullptr,
          "rms_norm<gemma> was not selected but is instantiated");
    check(same_bits_as_reference_rms<normkit::llama, B>(5, 1000),
          "llama bf16: bits differ from the reference");
    check(same_bits_as_reference_rms<normkit::gemma, B>(5, 1000), "gemma bf16 (reference): bits differ");
    check(same_bits_as_reference_rms<normkit::llama, float>(5, 1000), "llama f32 (reference): bits differ");
  }
  if (failures == 0)
    std::printf("consumer ok (selected kernels)\n");
  return failures == 0 ? 0 : 1;
}
