// SPDX-License-Identifier: MIT
// normkit: how a composite op runs (core/op.hpp; ops/add_norm.hpp is one): its rows in chunks
// small enough that what one stage writes is still in L1/L2 when the next reads it, each stage a
// kernel op dispatched like a call of its own, and a per-thread fp32 scratch between stages.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdlib>      // std::realloc, std::free
#include <type_traits>  // std::false_type, std::true_type, std::void_t, std::remove_reference_t
#include <utility>      // std::declval

#include "../core/abi.hpp"
#include "../core/op.hpp"
#include "../core/status.hpp"
#include "../core/tuning.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace impl {
using namespace ::normkit::detail;

// A per-thread fp32 buffer of at least n floats: grown, never shrunk, freed at thread exit; null
// when it cannot grow (no exception: the library builds with -fno-exceptions too).
inline float* scratch_f32(std::size_t n) {
  struct buffer {
    float* p = nullptr;
    std::size_t n = 0;
    ~buffer() { std::free(p); }
  };
  static thread_local buffer b;
  if (n > b.n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(float))
      return nullptr;
    void* const q = std::realloc(b.p, n * sizeof(float));
    if (!q)
      return nullptr;
    b.p = static_cast<float*>(q);
    b.n = n;
  }
  return b.p;
}

// Rows per chunk: as many as fit compose_chunk_bytes of intermediate data, at least one.
inline std::size_t chunk_rows(std::size_t rows, std::size_t row_bytes) {
  const std::size_t k = row_bytes ? compose_chunk_bytes / row_bytes : rows;
  return k == 0 ? 1 : (k < rows ? k : rows);
}

// Whether a composite can run a whole call as one kernel (Op::run_direct, core/op.hpp).
template <class Op, class Policy, class Stage, class A, class = void>
struct has_run_direct : std::false_type {};
template <class Op, class Policy, class Stage, class A>
struct has_run_direct<
    Op, Policy, Stage, A,
    std::void_t<decltype(Op::template run_direct<Policy>(std::declval<const A&>(), std::declval<Stage&>()))>>
    : std::true_type {};

// Runs a validated, non-empty composite call; stage(op, policy, args) runs one kernel op. First
// the op's run_direct, when it has one and the build has its kernel; else the scratch is taken
// before any stage runs, so out_of_memory leaves every output untouched; then the op's begin
// (core/op.hpp), then the chunks.
template <class Op, class Policy, class Stage, class... Ts>
status run_composite(const typename Op::template args<Ts...>& a, Stage&& stage) {
  using A = typename Op::template args<Ts...>;
  if constexpr (has_run_direct<Op, Policy, std::remove_reference_t<Stage>, A>::value)
    if (Op::template run_direct<Policy>(a, stage))
      return status::ok;
  const std::size_t n = chunk_rows(a.rows, Op::row_bytes(a));
  float* scratch = nullptr;
  if (const std::size_t floats = Op::template scratch_floats<Policy>(a, n))
    if (!(scratch = scratch_f32(floats)))
      return status::out_of_memory;
  composite_begin<Op>(a);
  for (std::size_t r0 = 0; r0 < a.rows; r0 += n)
    Op::template run_rows<Policy>(a, r0, n < a.rows - r0 ? n : a.rows - r0, scratch, stage);
  return status::ok;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
