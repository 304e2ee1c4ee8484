// SPDX-License-Identifier: MIT
// The static SIGILL repro (issue 21, item 1): a program made of a default-flags user TU and an
// AVX2 user TU, both calling normkit, linked with the AVX2 object first. Run on a CPU without
// AVX2 (qemu-x86_64 -cpu Nehalem) it must take the baseline path without executing one AVX2
// instruction, and give the right values; where the CPU has AVX2 both TUs must agree bit for bit.
// Expected values come from a double-precision computation written here, not from normkit.
#include <cmath>    // std::sqrt, std::fabs, std::isnan
#include <cstdio>   // std::printf
#include <cstring>  // std::memcmp

#include "sigill_repro.hpp"

namespace {

// The inputs: row 0 ordinary, row 1 so large that its sum of squares overflows fp32 (the
// rescaled path), row 2 with a NaN.
void make_inputs(normkit::bf16* x, normkit::bf16* g, float* xf, float* gf, float* bf) {
  for (std::size_t r = 0; r < repro_rows; ++r)
    for (std::size_t i = 0; i < repro_cols; ++i) {
      float v = static_cast<float>(static_cast<int>((i * 37 + r * 11) % 29) - 14) / 8.0f;
      if (r == 1)
        v *= 1e30f;
      if (r == 2 && i == 50)
        v = std::nanf("");
      x[r * repro_cols + i] = normkit::bf16(v);
      xf[r * repro_cols + i] = static_cast<float>(x[r * repro_cols + i]);
    }
  for (std::size_t i = 0; i < repro_cols; ++i) {
    g[i] = normkit::bf16(0.5f + static_cast<float>(i % 7) / 8.0f);
    gf[i] = static_cast<float>(g[i]);
    bf[i] = static_cast<float>(static_cast<int>(i % 5) - 2) / 4.0f;
  }
}

int check(const float* x, const float* g, const float* b, const float* y, bool layer, double tol,
          const char* what) {
  int bad = 0;
  for (std::size_t r = 0; r < repro_rows; ++r) {
    const float* xr = x + r * repro_cols;
    const float* yr = y + r * repro_cols;
    double mean = 0.0, ss = 0.0;
    if (layer) {
      for (std::size_t i = 0; i < repro_cols; ++i)
        mean += xr[i];
      mean /= static_cast<double>(repro_cols);
    }
    for (std::size_t i = 0; i < repro_cols; ++i)
      ss += (xr[i] - mean) * (xr[i] - mean);
    const double eps = layer ? 1e-5 : 1e-6;
    const double root = std::sqrt(ss / static_cast<double>(repro_cols) + eps);
    for (std::size_t i = 0; i < repro_cols; ++i) {
      if (r == 2) {  // contract: a row with a NaN gives NaN in every column
        bad += !std::isnan(yr[i]);
        continue;
      }
      const double want = (xr[i] - mean) / root * g[i] + (layer ? b[i] : 0.0);
      if (!(std::fabs(yr[i] - want) <= tol * (std::fabs(want) + 1e-3))) {
        if (bad++ < 5)
          std::printf("%s: row %zu col %zu: %.9g, expected %.9g\n", what, r, i, static_cast<double>(yr[i]),
                      want);
      }
    }
  }
  return bad;
}

}  // namespace

int main() {
  static normkit::bf16 x[repro_rows * repro_cols], g[repro_cols], y[2][repro_rows * repro_cols];
  static float xf[repro_rows * repro_cols], gf[repro_cols], bf[repro_cols], yf[2][repro_rows * repro_cols];
  make_inputs(x, g, xf, gf, bf);

  const char* isa = run_base(x, g, y[0], xf, gf, bf, yf[0]);
  if (!isa) {
    std::printf("FAILED: the default-flags TU returned an error\n");
    return 1;
  }
  float yb[repro_rows * repro_cols];
  for (std::size_t i = 0; i < repro_rows * repro_cols; ++i)
    yb[i] = static_cast<float>(y[0][i]);
  // bf16 output rounded twice (llama): within 2^-7 relative; fp32 LayerNorm within 1e-5.
  int bad = check(xf, gf, nullptr, yb, false, 1.0 / 128, "rms_norm<llama> bf16") +
            check(xf, gf, bf, yf[0], true, 1e-5, "layer_norm<pytorch> f32");
  std::printf("default-flags TU: path %s, %d wrong values\n", isa, bad);

  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    if (!run_isa(x, g, y[1], xf, gf, bf, yf[1])) {
      std::printf("FAILED: the AVX2 TU returned an error\n");
      return 1;
    }
    const bool same =
        std::memcmp(y[0], y[1], sizeof y[0]) == 0 && std::memcmp(yf[0], yf[1], sizeof yf[0]) == 0;
    std::printf("AVX2 TU: %s bits\n", same ? "same" : "DIFFERENT");
    bad += !same;
  } else {
    std::printf("AVX2 TU: not run, this CPU has no AVX2\n");
  }
  if (bad) {
    std::printf("FAILED\n");
    return 1;
  }
  std::printf("sigill repro ok\n");
  return 0;
}
