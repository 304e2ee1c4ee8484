// SPDX-License-Identifier: MIT
// The static SIGILL repro: the shape and the two user functions (sigill_tu.cpp, compiled twice).
#pragma once

#include <normkit/types.hpp>

#include <cstddef>  // std::size_t

constexpr std::size_t repro_rows = 3, repro_cols = 100;

const char* run_isa(const normkit::bf16* x, const normkit::bf16* gamma, normkit::bf16* y, const float* xf,
                    const float* gf, const float* bf, float* yf);
const char* run_base(const normkit::bf16* x, const normkit::bf16* gamma, normkit::bf16* y, const float* xf,
                     const float* gf, const float* bf, float* yf);
