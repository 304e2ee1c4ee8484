// SPDX-License-Identifier: MIT
// normkit: performance thresholds. They choose between loops that give the same bits, never
// between results; tests size their cases from them so that every loop runs.
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uintptr_t

#include "abi.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// Streaming (non-temporal) stores pay for outputs that cannot stay in the cache and cost when
// the data is hot (docs/performance.md#streaming-stores). A call streams when its output has at
// least the threshold's bytes: a quarter of the last-level cache the CPU reports (core/cpu.hpp),
// leaving room for the input and for what the caller keeps cached (on a 32 MiB L3, the 8 MiB
// measured best there), at most stream_min_bytes_cap, and the fallback when the CPU reports no
// cache. NORMKIT_STREAM_MIN_BYTES or set_stream_min_bytes overrides it (dispatch/streaming.hpp).
constexpr std::size_t stream_min_bytes_fallback = std::size_t(8) << 20;

// A VM reports its host's whole L3, shared by every core and tenant: the Intel VM says 480 MiB,
// yet a one-core copy there falls to DRAM speed once its working set passes 32-64 MiB, and
// 4096x4096 calls (32-64 MiB of output) from DRAM ran 1.6x faster streamed (docs/performance.md).
constexpr std::size_t stream_min_bytes_cap = std::size_t(32) << 20;

constexpr std::size_t stream_threshold_for_cache(std::size_t llc_bytes) {
  return llc_bytes == 0                         ? stream_min_bytes_fallback
         : llc_bytes / 4 < stream_min_bytes_cap ? llc_bytes / 4
                                                : stream_min_bytes_cap;
}

// The decision, made once per call on the whole call's output (never per thread-pool task: a
// task's share is smaller than the call's). No bytes to stream (an in-place call, core/op.hpp)
// never streams, even with a threshold of 0.
constexpr bool streams(std::size_t output_bytes, std::size_t threshold) {
  return output_bytes != 0 && output_bytes >= threshold;
}

// The cache line: streamed output starts at one, and the next row is prefetched one at a time.
constexpr std::size_t cache_line = 64;

// Elements of elem_bytes from p up to the next line boundary (0 when p is on one): the head a row
// writes in partial chunks before its whole lines.
inline std::size_t elements_to_line(const void* p, std::size_t elem_bytes) {
  return (cache_line - reinterpret_cast<std::uintptr_t>(p) % cache_line) % cache_line / elem_bytes;
}

// An output row that starts inside a cache line splits every whole-chunk store across two lines,
// which costs when the stores miss L1. So a call with at least peel_min_bytes of output, in rows
// of at least peel_min_row_bytes, writes each row in partial chunks up to its first line boundary
// (simd/rows.hpp, write_row); streamed rows always do. On short rows, and on calls that stay in
// L1, the partial head (and the partial tail it brings) cost more than the splits. Intel VM, fp32
// RMSNorm, x and y 16 bytes past a line, ns per row without / with the head: 1 x 4096 630 / 500,
// 2048 x 8 560 / 320, 1024 x 64 285 / 185, 512 x 256 135 / 115; but 16384 x 128 42 / 72,
// 1 x 1024 146 / 161, 1 x 512 91 / 114 (docs/performance.md).
constexpr std::size_t peel_min_bytes = 16384, peel_min_row_bytes = 2048;
constexpr bool peels(std::size_t output_bytes, std::size_t row_bytes) {
  return output_bytes >= peel_min_bytes && row_bytes >= peel_min_row_bytes;
}

// Unstreamed rows of at most this many output bytes put the next row's output lines into L1 while
// they are written (simd/rows.hpp, norm_rows): 16 lines, about the L1's outstanding misses; longer
// rows are streams the hardware prefetcher follows. At 2048 x 128 f32, 57 % of the output loop's
// samples sat on the row's last store before (docs/performance.md, "Little per-row overhead").
constexpr std::size_t prefetch_out_max_row_bytes = 1024;

// Chunks of chunk_bytes that fill one cache line (1 for a chunk of a line or more): a loop that
// streams several rows stores this many of one row's chunks before the next row's, so that no
// write-combining line waits half full (simd/backward_rows.hpp).
constexpr std::size_t chunks_per_line(std::size_t chunk_bytes) {
  return chunk_bytes < cache_line ? cache_line / chunk_bytes : 1;
}

// Rows per group of the backward's output pass where the kernel has a choice (AVX-512, inputs not
// far: simd/backward_rows.hpp): four where the L1 data cache has at least 12 ways, else two. A
// group reads 2G input rows, usually a multiple of 4 KiB apart, so their lines share one L1 set:
// on an 8-way L1 (AMD EPYC, AVX2) four rows ran 16 % slower than two, while on the 12-way 48 KiB
// L1 of the Intel Xeon VM four ran 7-13 % faster in cache, a group's partials being read and
// written half as often (docs/performance.md). A CPU that reports no L1 gets two.
constexpr std::size_t grad_group_rows_for(unsigned l1_data_ways) {
  return l1_data_ways >= 12 ? 4 : 2;
}

// Whether a normalizing call (simd/rows.hpp, norm_rows) whose output is not streamed prefetches
// the next row during each output pass (streamed calls always do; a sink says whether it wants
// to: prefetches_far_rows): when its input is beyond L2 and its rows are long. Measured on the
// Xeon VM (AVX-512), bf16 -> int8 at 4096 x 4096: 8.0 -> 5.1 ms (the next row's statistics no
// longer wait on DRAM); at 16384 x 128 the prefetches were wasted load slots (5-15 % slower).
constexpr std::size_t prefetch_min_bytes = std::size_t(4) << 20, prefetch_min_row_bytes = 4096;
constexpr bool prefetches(std::size_t input_bytes, std::size_t row_bytes) {
  return input_bytes >= prefetch_min_bytes && row_bytes >= prefetch_min_row_bytes;
}

// norm_rows takes the statistics of up to one vector width of rows at a time, as many as fit
// in this many input bytes (at least one): their output passes read them again from L1.
constexpr std::size_t group_max_bytes = 8192;

// A composite op (ops/add_norm.hpp) runs its stages over chunks of rows holding about this many
// bytes of intermediate data (the stored residual, the fp32 sums): the next stage reads them from
// L1/L2, not memory (docs/performance.md).
constexpr std::size_t compose_chunk_bytes = 32768;
// Thread-pool calls (dispatch/run.hpp, call_parallel): tasks of about parallel_task_bytes of
// input plus output (half an L2 of this project's VMs, and enough tasks for a pool to balance),
// and no task below parallel_min_task_bytes: a call with less than two such tasks' work runs on
// the calling thread without asking the pool (a hand-off costs microseconds; 256 KiB is about
// 10 us of one core's work).
constexpr std::size_t parallel_task_bytes = std::size_t(1) << 20;
constexpr std::size_t parallel_min_task_bytes = std::size_t(256) << 10;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
