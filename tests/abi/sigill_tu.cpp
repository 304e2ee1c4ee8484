// SPDX-License-Identifier: MIT
// One user translation unit of the static SIGILL repro (issue 21, item 1). Compiled twice:
// once with -mavx2 -mfma -mf16c (NORMKIT_REPRO_FN=run_isa), once with the default flags
// (NORMKIT_REPRO_FN=run_base); the ISA object is linked first, so any weak symbol both objects
// define resolves to the AVX2 copy, and the baseline path runs it.
#include <normkit/normkit.hpp>

#include <cstddef>  // std::size_t

#include "sigill_repro.hpp"

// Every rare path a per-ISA copy could leak through: ordinary rows, an overflow row (the
// scalar max_abs, frexp, ldexp), a NaN row (all_finite, fill_nan), LayerNorm, the conversions
// and the ISA name.
const char* NORMKIT_REPRO_FN(const normkit::bf16* x, const normkit::bf16* gamma, normkit::bf16* y,
                             const float* xf, const float* gf, const float* bf, float* yf) {
  if (normkit::rms_norm<normkit::llama>(x, gamma, y, repro_rows, repro_cols, 1e-6f) != normkit::status::ok)
    return nullptr;
  if (normkit::layer_norm<normkit::pytorch>(xf, gf, bf, yf, repro_rows, repro_cols, 1e-5f) !=
      normkit::status::ok)
    return nullptr;
  // Initialized: g++ 12 -O1 warns (maybe-uninitialized) on the const view validate() takes.
  normkit::fp16 h[repro_cols] = {};
  float back[repro_cols] = {};
  if (normkit::convert(xf, h, repro_cols) != normkit::status::ok ||
      normkit::convert(h, back, repro_cols) != normkit::status::ok)
    return nullptr;
  for (std::size_t i = 0; i < repro_cols; ++i)
    if (!(back[i] == static_cast<float>(h[i])))
      return nullptr;
  return normkit::to_string(normkit::active_isa());
}
