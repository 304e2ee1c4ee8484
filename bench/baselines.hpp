// SPDX-License-Identifier: MIT
// normkit_bench: what a user would otherwise run, and the copy roof.
//
// The baselines live in their own translation units (naive.cpp, eigen.cpp) compiled with
// -O3 -march=native, the flags a user would give hand-written code; the benchmark TU keeps the
// project's flags. Each baseline follows the preset's knobs (gain offset, round-twice
// intermediate, divide) so it does the same work as normkit, but it makes no bit promise: serial
// or Eigen-ordered sums, no overflow rescue, no NaN canonicalization.
#pragma once

#include <cstddef>  // std::size_t

#include <normkit/policy.hpp>
#include <normkit/types.hpp>

namespace normkit_bench {

// The seeds' two-loop scalar code: a serial sum of squares, then y = x * inv * gamma.
template <class Policy, class In, class W, class Out>
void naive_rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols, float eps);

// The textbook two-pass LayerNorm: a mean loop, a variance loop, an output loop.
template <class Policy, class In, class W, class Out>
void naive_layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols,
                      float eps);

// The fused add written plainly: per row, residual = Res(x + residual) and the serial sum of
// squares of what the preset normalizes (the stored residual, or the fp32 sum), then the output
// loop re-reading the residual (the fp32 sum is recomputed from nothing: the naive code keeps it in
// a row buffer).
template <class Policy, class Res, class W, class Out>
void naive_add_rms_norm(const Res* x, Res* residual, const W* gamma, Out* y, std::size_t rows,
                        std::size_t cols, float eps);

// Eigen 3.4 row-wise expressions of the same formulas (Eigen::bfloat16 / Eigen::half casts).
template <class Policy, class In, class W, class Out>
void eigen_rms_norm(const In* x, const W* gamma, Out* y, std::size_t rows, std::size_t cols, float eps);

template <class Policy, class In, class W, class Out>
void eigen_layer_norm(const In* x, const W* gamma, const W* beta, Out* y, std::size_t rows, std::size_t cols,
                      float eps);

// Copy with non-temporal (streaming) stores: AVX2 when the CPU has it, SSE2 otherwise.
// Returns false (and copies nothing) where no streaming store exists (non-x86 builds).
bool stream_copy_available();
void stream_copy(void* dst, const void* src, std::size_t bytes);

// The contract's access pattern without its arithmetic: per row, read the row (sum its 32-bit
// words), then read it again while writing it to dst (streaming stores when `stream`, with the
// next row prefetched into L2 as normkit's streaming loop does; plain stores otherwise). rows rows
// of row_bytes, contiguous. Returns the sums' total so no read is dead. Needs x86-64 (AVX2 when
// the CPU has it); elsewhere stream_copy_available() is false and nothing is registered.
unsigned two_pass_rows(void* dst, const void* src, std::size_t rows, std::size_t row_bytes, bool stream);

// The presets and storage-type triples the benchmark instantiates (naive.cpp and eigen.cpp
// instantiate exactly these).
#define NORMKIT_BENCH_FOR_EACH_DTYPE(M, Policy)          \
  M(Policy, float, float, float)                         \
  M(Policy, normkit::bf16, normkit::bf16, normkit::bf16) \
  M(Policy, normkit::bf16, float, normkit::bf16)         \
  M(Policy, normkit::fp16, normkit::fp16, normkit::fp16)

#define NORMKIT_BENCH_FOR_EACH_CASE(M)            \
  NORMKIT_BENCH_FOR_EACH_DTYPE(M, normkit::llama) \
  NORMKIT_BENCH_FOR_EACH_DTYPE(M, normkit::gemma) \
  NORMKIT_BENCH_FOR_EACH_DTYPE(M, normkit::pytorch)

}  // namespace normkit_bench
