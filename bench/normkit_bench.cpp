// SPDX-License-Identifier: MIT
// normkit_bench: bandwidth of normkit's forward kernels, each ISA path forced, next to a copy
// roof and the baselines a user would otherwise run, all in one process.
//
//   Op/preset/dtype/rows:R/cols:C/isa:P    P = scalar (the reference) | avx2 | avx512 | neon
//                                              | naive (two-loop scalar code, -O3 -march=native)
//                                              | eigen (Eigen 3.4 row-wise expression)
//   Copy/dtype/rows:R/cols:C/isa:P         P = memcpy | stream (non-temporal stores); the roof of
//                                              a case is the fastest copy of the same bytes
//   TwoPass/dtype/rows:R/cols:C/isa:P      P = stream | plain: the contract's access pattern (read
//                                              a row, read it again while writing it) without
//                                              arithmetic, what a kernel can reach on this machine
//   .../threads:2/isa:P                    2 threads through a thread pool (4096x4096): normkit's
//                                              thread-pool overloads, the copy and the two-pass
//   .../nt:on|off/isa:P                    streaming stores forced on or off (set_stream_min_bytes)
//                                              instead of the machine's threshold
//
// Bytes per call come from one function, bytes_moved(). DRAM cases -- 4096x4096, and any case
// whose buffers exceed half the last-level cache -- rotate over buffer sets covering at least
// twice the LLC and 1 GiB, so they stream from DRAM even where sysfs reports a VM host's whole L3
// (480 MiB on the Intel VM); smaller cases reuse one set and run from cache (1x4096 stays hot).
// Buffers are allocated and touched before timing; the timed loop allocates nothing.
// bench/report.py turns the JSON output into the table and plot (bench/README.md).
#include <benchmark/benchmark.h>

#include <algorithm>    // std::max, std::find
#include <atomic>       // std::atomic
#include <cmath>        // std::fabs
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstdio>       // std::fprintf
#include <cstdlib>      // std::abort, std::aligned_alloc, std::free
#include <cstring>      // std::memcpy, std::memset
#include <fstream>      // std::ifstream
#include <limits>       // std::numeric_limits
#include <memory>       // std::unique_ptr, std::make_shared
#include <string>       // std::string, std::to_string
#include <type_traits>  // std::is_same
#include <vector>       // std::vector

#include <sched.h>   // sched_getaffinity, sched_setaffinity, CPU_SET
#include <unistd.h>  // sysconf
#include <normkit/normkit.hpp>

#include "../examples/thread_pool.hpp"  // thread_pool, the parallel_for of the threads:2 cases
#include "../tests/common.hpp"          // storage-type names
#include "baselines.hpp"
#include "machine.hpp"

namespace {

using normkit::bf16;
using normkit::fp16;
using quant_mode_t = normkit::detail::quant_mode;

// ---- The byte formula: activations in and out, plus each gain vector (gamma, beta) once.
constexpr std::size_t bytes_moved(std::size_t rows, std::size_t cols, std::size_t in_size,
                                  std::size_t out_size, std::size_t w_size, std::size_t gain_vectors) {
  return rows * cols * (in_size + out_size) + gain_vectors * cols * w_size;
}

struct shape {
  std::size_t rows, cols;
  bool dram;  // labelled DRAM: rotated over enough memory to stream from it on any machine
};
// decode (hot), a small batch, a DRAM-resident prefill, QK-norm over head_dim, wide rows, and a
// 5120-wide model (Qwen/Llama-13B class) whose rows are not a power of two.
constexpr shape shapes[] = {{1, 4096, false},    {64, 4096, false},   {4096, 4096, true},
                            {16384, 128, false}, {256, 16384, false}, {32, 5120, false}};
// The streaming-store regimes (nt:on|off) are shown where they matter: DRAM, and an output of a
// few MiB that a large L3 holds (docs/performance.md#streaming-stores).
bool shows_regimes(shape s) {
  return (s.rows == 4096 && s.cols == 4096) || (s.rows == 16384 && s.cols == 128);
}
bool has_thread_cases(shape s) {
  return s.rows == 4096 && s.cols == 4096;
}
constexpr unsigned bench_threads = 2;

enum class path { scalar, avx2, avx512, avx512bf16, avx512fp16, neon, naive, eigen };

const char* path_name(path p) {
  switch (p) {
    case path::scalar:
      return "scalar";
    case path::avx2:
      return "avx2";
    case path::avx512:
      return "avx512";
    case path::avx512bf16:
      return "avx512bf16";
    case path::avx512fp16:
      return "avx512fp16";
    case path::neon:
      return "neon";
    case path::naive:
      return "naive";
    case path::eigen:
      return "eigen";
  }
  return "?";
}

bool is_isa(path p) {
  return p == path::scalar || p == path::avx2 || p == path::avx512 || p == path::avx512bf16 ||
         p == path::avx512fp16 || p == path::neon;
}

normkit::isa isa_of(path p) {
  switch (p) {
    case path::avx2:
      return normkit::isa::avx2;
    case path::avx512:
      return normkit::isa::avx512;
    case path::avx512bf16:
      return normkit::isa::avx512bf16;
    case path::avx512fp16:
      return normkit::isa::avx512fp16;
    case path::neon:
      return normkit::isa::neon;
    default:
      return normkit::isa::scalar;
  }
}

using normkit_test::type_name;  // the storage-type trait's names (tests/common.hpp)

// "bf16" when In, W and Out agree, else "bf16-f32-bf16" (In-W-Out).
template <class In, class W, class Out>
std::string dtype_name() {
  if (std::is_same<In, W>::value && std::is_same<In, Out>::value)
    return type_name<In>();
  return std::string(type_name<In>()) + "-" + type_name<W>() + "-" + type_name<Out>();
}

// ---- Machine facts (the cache: machine.hpp).

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    // x86: "model name : AMD EPYC"; Arm: "CPU part" only, so fall back below.
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::size_t b = line.find_first_not_of(" \t", colon + 1);
        return b == std::string::npos ? "unknown" : line.substr(b);
      }
    }
  }
  return "unknown";
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

// ---- Buffers: allocated and touched once per dtype and shape, reused by every path and by the
// repetitions of a case (the registration order keeps them adjacent), freed before the next.

struct free_delete {
  void operator()(unsigned char* p) const { std::free(p); }
};
using block = std::unique_ptr<unsigned char[], free_delete>;

block alloc_block(std::size_t bytes) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  auto* p = static_cast<unsigned char*>(std::aligned_alloc(64, rounded));
  if (!p) {
    std::fprintf(stderr, "normkit_bench: out of memory allocating %zu bytes\n", rounded);
    std::abort();
  }
  std::memset(p, 0, rounded);  // touch every page before timing
  return block(p);
}

// Deterministic uniform values in [lo, hi): no NaN, Inf or subnormal reaches the kernels, so every
// path runs its ordinary (not its special-value) code.
template <class T>
void fill(unsigned char* p, std::size_t n, float lo, float hi, std::uint64_t seed) {
  T* t = reinterpret_cast<T*>(p);
  std::uint64_t s = seed;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const float u = static_cast<float>(s >> 40) * (1.0f / 16777216.0f);
    t[i] = normkit::from_float<T>(lo + (hi - lo) * u);
  }
}

struct buffers {
  std::string key;
  std::size_t sets = 0;
  bool dram = false;  // labelled DRAM or one set exceeds half the LLC: the case streams from memory
  std::vector<block> x, y;
  block gamma, beta;
};

buffers& pool() {
  static buffers b;
  return b;
}

// Where a case's buffers live (machine.hpp): rotated over enough sets to stream from DRAM, or one.
bool dram_resident(shape s, std::size_t set_bytes) {
  return normkit_bench::dram_resident(s.dram, set_bytes);
}
std::size_t sets_for(shape s, std::size_t set_bytes) {
  return normkit_bench::rotation_sets(s.dram, set_bytes);
}

template <class In, class W, class Out>
const buffers& get_buffers(shape s) {
  buffers& b = pool();
  const std::string key =
      dtype_name<In, W, Out>() + "/" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  if (b.key == key)
    return b;
  b = buffers{};  // free the previous case's buffers first
  const std::size_t n = s.rows * s.cols;
  b.sets = sets_for(s, n * (sizeof(In) + sizeof(Out)));
  b.dram = dram_resident(s, n * (sizeof(In) + sizeof(Out)));
  for (std::size_t k = 0; k < b.sets; ++k) {
    b.x.push_back(alloc_block(n * sizeof(In)));
    fill<In>(b.x.back().get(), n, -2.0f, 2.0f, 1 + k);
    b.y.push_back(alloc_block(n * sizeof(Out)));
  }
  b.gamma = alloc_block(s.cols * sizeof(W));
  fill<W>(b.gamma.get(), s.cols, 0.5f, 1.5f, 101);
  b.beta = alloc_block(s.cols * sizeof(W));
  fill<W>(b.beta.get(), s.cols, -0.5f, 0.5f, 202);
  b.key = key;
  return b;
}

void set_counters(benchmark::State& st, std::size_t bytes, std::size_t rows, const buffers& b) {
  const double it = static_cast<double>(st.iterations());
  st.counters["bytes"] = benchmark::Counter(static_cast<double>(bytes));  // per call
  st.counters["B/s"] = benchmark::Counter(static_cast<double>(bytes) * it, benchmark::Counter::kIsRate,
                                          benchmark::Counter::kIs1000);
  // rows per second, inverted: seconds per row (the console prints it with its SI prefix, "ns")
  st.counters["time/row"] = benchmark::Counter(static_cast<double>(rows) * it,
                                               benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["sets"] = benchmark::Counter(static_cast<double>(b.sets));
  st.counters["dram"] = benchmark::Counter(b.dram ? 1.0 : 0.0);
}

// The threads:2 cases' pool, started once, its workers free to run on any CPU (report.py pins the
// process to one; threads inherit their creator's CPU set).
thread_pool& bench_pool() {
  static thread_pool* pool = [] {
    cpu_set_t pinned, all;
    sched_getaffinity(0, sizeof pinned, &pinned);
    CPU_ZERO(&all);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c < CPU_SETSIZE; ++c)
      CPU_SET(static_cast<int>(c), &all);
    sched_setaffinity(0, sizeof all, &all);
    auto* p = new thread_pool(bench_threads);  // never destroyed: its threads outlive every case
    sched_setaffinity(0, sizeof pinned, &pinned);
    return p;
  }();
  return *pool;
}

// A case's streaming regime: the machine's threshold, or forced for its duration.
enum class nt_mode { machine, on, off };
struct nt_scope {
  std::size_t saved = normkit::stream_min_bytes();
  explicit nt_scope(nt_mode m) {
    if (m != nt_mode::machine)
      normkit::set_stream_min_bytes(m == nt_mode::on ? 0 : std::numeric_limits<std::size_t>::max());
  }
  ~nt_scope() { normkit::set_stream_min_bytes(saved); }
  nt_scope(const nt_scope&) = delete;
  nt_scope& operator=(const nt_scope&) = delete;
};

// ---- The ops, from the library's op list (include/normkit/ops/list.hpp). Each op has an
// adapter here: its case name, the gain vectors its byte count adds, and how each path runs it.
// An op added to the list without an adapter does not compile, so no op goes unmeasured by
// accident; an op that is not a row normalization says so and why (benchmarked = false).

template <class Op>
struct bench_op {
  static_assert(
      sizeof(Op) == 0,
      "normkit_bench: this op of ops/list.hpp has no bench_op<Op> adapter (bench/normkit_bench.cpp)");
};

template <>
struct bench_op<normkit::detail::rms_norm_op> {
  static constexpr bool benchmarked = true;
  static constexpr const char* name = "RmsNorm";
  static constexpr std::size_t gain_vectors = 1;  // gamma
  template <class Policy, class In, class W, class Out>
  static bool run(path p, const In* x, const W* gamma, const W*, Out* y, shape s, float eps) {
    namespace nb = normkit_bench;
    if (p == path::naive)
      return nb::naive_rms_norm<Policy>(x, gamma, y, s.rows, s.cols, eps), true;
    if (p == path::eigen)
      return nb::eigen_rms_norm<Policy>(x, gamma, y, s.rows, s.cols, eps), true;
    return normkit::rms_norm<Policy>(x, gamma, y, s.rows, s.cols, eps) == normkit::status::ok;
  }
  template <class Policy, class In, class W, class Out>
  static bool run_threads(const In* x, const W* gamma, const W*, Out* y, shape s, float eps) {
    return normkit::rms_norm<Policy>(bench_pool(), x, gamma, y, s.rows, s.cols, eps) == normkit::status::ok;
  }
};

template <>
struct bench_op<normkit::detail::layer_norm_op> {
  static constexpr bool benchmarked = true;
  static constexpr const char* name = "LayerNorm";
  static constexpr std::size_t gain_vectors = 2;  // gamma, beta
  template <class Policy, class In, class W, class Out>
  static bool run(path p, const In* x, const W* gamma, const W* beta, Out* y, shape s, float eps) {
    namespace nb = normkit_bench;
    if (p == path::naive)
      return nb::naive_layer_norm<Policy>(x, gamma, beta, y, s.rows, s.cols, eps), true;
    if (p == path::eigen)
      return nb::eigen_layer_norm<Policy>(x, gamma, beta, y, s.rows, s.cols, eps), true;
    return normkit::layer_norm<Policy>(x, gamma, beta, y, s.rows, s.cols, eps) == normkit::status::ok;
  }
  template <class Policy, class In, class W, class Out>
  static bool run_threads(const In* x, const W* gamma, const W* beta, Out* y, shape s, float eps) {
    return normkit::layer_norm<Policy>(bench_pool(), x, gamma, beta, y, s.rows, s.cols, eps) ==
           normkit::status::ok;
  }
};

// convert is the copy roof with a rounding: the Copy rows already measure its access pattern.
template <>
struct bench_op<normkit::detail::convert_op> {
  static constexpr bool benchmarked = false;
};

// residual_add is measured where it matters: alone (the unfused baseline's add) and as the
// fused add + norm's first stage, in the fused rows below.
template <>
struct bench_op<normkit::detail::residual_add_op> {
  static constexpr bool benchmarked = false;
};

// The forward variants' statistics op (rms_norm_fwd, layer_norm_fwd) and the backward ops have
// their own benchmark, normkit_bench_backward (bench/backward.cpp): other operands, other bytes.
template <>
struct bench_op<normkit::detail::norm_stats_op> {
  static constexpr bool benchmarked = false;
};
template <>
struct bench_op<normkit::detail::rms_norm_backward_op> {
  static constexpr bool benchmarked = false;
};
template <>
struct bench_op<normkit::detail::layer_norm_backward_op> {
  static constexpr bool benchmarked = false;
};

// quantize is the second stage of the quantized norms: their rows (Quant/...) measure it.
template <>
struct bench_op<normkit::detail::quantize_op> {
  static constexpr bool benchmarked = false;
};

// The statically quantized norms run as one kernel inside rms_norm_quant / layer_norm_quant: the
// Quant/static rows (fused) measure it.
template <class Norm>
struct bench_op<normkit::detail::norm_static_quant_op<Norm>> {
  static constexpr bool benchmarked = false;
};

template <class Op, class Policy, class In, class W, class Out>
bool run_once(path p, const In* x, const W* gamma, const W* beta, Out* y, shape s, float eps) {
  return bench_op<Op>::template run<Policy>(p, x, gamma, beta, y, s, eps);
}

// An adapter with run_threads gets threads:2 cases (normkit's thread-pool overloads).
template <class Op, class = void>
struct has_thread_cases_op : std::false_type {};
template <class Op>
struct has_thread_cases_op<
    Op, std::void_t<decltype(&bench_op<Op>::template run_threads<normkit::llama, float, float, float>)>>
    : std::true_type {};

template <class Op, class Policy, class In, class W, class Out>
bool run_threaded(const In* x, const W* gamma, const W* beta, Out* y, shape s, float eps) {
  if constexpr (has_thread_cases_op<Op>::value)
    return bench_op<Op>::template run_threads<Policy>(x, gamma, beta, y, s, eps);
  else
    return false;
}

template <class T>
constexpr float ulp_at_one() {
  return 1.0f / static_cast<float>(1u << normkit_test::mantissa_bits<T>());  // exact: a power of two
}

// A baseline is only worth comparing against if it computes the same thing: its outputs must
// match normkit's within 2 ulps of Out plus 1e-3 relative (its sums run in another order; this
// catches a wrong formula, gain offset or conversion, not rounding-order differences).
template <class Op, class Policy, class In, class W, class Out>
bool baseline_agrees(path p, const buffers& b, shape s, float eps) {
  const std::size_t n = s.rows * s.cols;
  std::vector<Out> want(n), got(n);
  const auto* x = reinterpret_cast<const In*>(b.x[0].get());
  const auto* gamma = reinterpret_cast<const W*>(b.gamma.get());
  const auto* beta = reinterpret_cast<const W*>(b.beta.get());
  if (!run_once<Op, Policy>(path::scalar, x, gamma, beta, want.data(), s, eps))
    return false;  // any ISA: same bits
  run_once<Op, Policy>(p, x, gamma, beta, got.data(), s, eps);
  for (std::size_t i = 0; i < n; ++i) {
    const float e = normkit::to_float(want[i]), a = normkit::to_float(got[i]);
    const float scale = std::max(1.0f, std::fabs(e));
    if (!(std::fabs(a - e) <= (2 * ulp_at_one<Out>() + 1e-3f) * scale)) {
      std::fprintf(stderr, "normkit_bench: %s baseline differs at %zu: %g vs normkit %g\n", path_name(p), i,
                   static_cast<double>(a), static_cast<double>(e));
      return false;
    }
  }
  return true;
}

template <class Op, class Policy, class In, class W, class Out>
void bm_norm(benchmark::State& st, path p, shape s, bool& checked, unsigned threads = 1,
             nt_mode nt = nt_mode::machine) {
  const buffers& b = get_buffers<In, W, Out>(s);
  const float eps = 1e-6f;
  if (!is_isa(p) && !checked) {  // once per case, outside the timing
    if (!baseline_agrees<Op, Policy, In, W, Out>(p, b, s, eps)) {
      st.SkipWithError("baseline output differs from normkit's");
      return;
    }
    checked = true;
  }
  if (is_isa(p) && normkit::set_isa(isa_of(p)) != normkit::status::ok) {
    st.SkipWithError("ISA not available");  // not registered in the first place; kept as a guard
    return;
  }
  const auto* gamma = reinterpret_cast<const W*>(b.gamma.get());
  const auto* beta = reinterpret_cast<const W*>(b.beta.get());
  const nt_scope regime(nt);
  std::size_t k = 0;
  for (auto _ : st) {
    const auto* x = reinterpret_cast<const In*>(b.x[k].get());
    auto* y = reinterpret_cast<Out*>(b.y[k].get());
    if (!(threads > 1 ? run_threaded<Op, Policy>(x, gamma, beta, y, s, eps)
                      : run_once<Op, Policy>(p, x, gamma, beta, y, s, eps))) {
      st.SkipWithError("normkit returned an error status");
      break;
    }
    benchmark::DoNotOptimize(y);
    benchmark::ClobberMemory();
    if (++k == b.sets)
      k = 0;
  }
  set_counters(st,
               bytes_moved(s.rows, s.cols, sizeof(In), sizeof(Out), sizeof(W), bench_op<Op>::gain_vectors),
               s.rows, b);
}

// The roof: x copied to y over the same buffers (sets, sizes, alignment) as the kernels; with
// threads > 1, each thread copies its share of the rows through the same pool as normkit.
template <class In, class W, class Out>
void bm_copy(benchmark::State& st, bool stream, shape s, unsigned threads = 1) {
  static_assert(sizeof(In) == sizeof(Out), "the copy roof copies x into y");
  const buffers& b = get_buffers<In, W, Out>(s);
  std::size_t k = 0;
  for (auto _ : st) {
    unsigned char* y = b.y[k].get();
    const unsigned char* x = b.x[k].get();
    auto part = [&](std::size_t t) {
      const std::size_t r0 = s.rows * t / threads, r1 = s.rows * (t + 1) / threads;
      const std::size_t off = r0 * s.cols * sizeof(In), len = (r1 - r0) * s.cols * sizeof(In);
      if (stream)
        normkit_bench::stream_copy(y + off, x + off, len);
      else
        std::memcpy(y + off, x + off, len);
    };
    if (threads > 1)
      bench_pool()(threads, part);
    else
      part(0);
    benchmark::DoNotOptimize(b.y[k].get());
    benchmark::ClobberMemory();
    if (++k == b.sets)
      k = 0;
  }
  set_counters(st, bytes_moved(s.rows, s.cols, sizeof(In), sizeof(Out), 0, 0), s.rows, b);
}

// The two-pass pattern (bench/copy_stream.cpp): the same buffers and bytes as the copy.
template <class In, class W, class Out>
void bm_two_pass(benchmark::State& st, bool stream, shape s, unsigned threads = 1) {
  static_assert(sizeof(In) == sizeof(Out), "the two-pass pattern copies x into y");
  const buffers& b = get_buffers<In, W, Out>(s);
  const std::size_t row_bytes = s.cols * sizeof(In);
  std::size_t k = 0;
  for (auto _ : st) {
    unsigned char* y = b.y[k].get();
    const unsigned char* x = b.x[k].get();
    std::atomic<unsigned> sum{0};
    auto part = [&](std::size_t t) {
      const std::size_t r0 = s.rows * t / threads, r1 = s.rows * (t + 1) / threads;
      sum += normkit_bench::two_pass_rows(y + r0 * row_bytes, x + r0 * row_bytes, r1 - r0, row_bytes, stream);
    };
    if (threads > 1)
      bench_pool()(threads, part);
    else
      part(0);
    benchmark::DoNotOptimize(sum.load());
    benchmark::DoNotOptimize(b.y[k].get());
    benchmark::ClobberMemory();
    if (++k == b.sets)
      k = 0;
  }
  set_counters(st, bytes_moved(s.rows, s.cols, sizeof(In), sizeof(Out), 0, 0), s.rows, b);
}

// ---- Registration: dtype -> shape -> (copy roof, then op -> preset -> path), so a case's roof
// is measured right before its kernels and its buffers are built once.

std::string tail(shape s) {
  return "/rows:" + std::to_string(s.rows) + "/cols:" + std::to_string(s.cols) + "/isa:";
}
std::string tail(shape s, const std::string& extra);

std::string tail(shape s, const std::string& extra) {
  return "/rows:" + std::to_string(s.rows) + "/cols:" + std::to_string(s.cols) + extra + "/isa:";
}

// The best normkit SIMD path of this run (the last ISA path registered), or scalar.
path best_isa(const std::vector<path>& paths) {
  path best = path::scalar;
  for (path p : paths)
    if (is_isa(p))
      best = p;
  return best;
}

// The avx512fp16 path runs only where its objects hold kernels of their own: all-fp16 RMSNorm
// (core/isa_table.hpp); its other slots are avx512bf16's kernels, measured under that name.
bool fp16_path_runs = false;
template <class Op, class In, class W, class Out>
std::vector<path> paths_for(const std::vector<path>& paths) {
  std::vector<path> v = paths;
  if (fp16_path_runs && std::string(bench_op<Op>::name) == "RmsNorm" && std::is_same<In, fp16>::value &&
      std::is_same<W, fp16>::value && std::is_same<Out, fp16>::value)
    v.insert(std::find(v.begin(), v.end(), path::naive), path::avx512fp16);  // the last ISA path: best_isa
  return v;
}

template <class Op, class Policy, class In, class W, class Out>
void register_preset(const char* preset, shape s, const std::vector<path>& all_paths) {
  const std::vector<path> paths = paths_for<Op, In, W, Out>(all_paths);
  const std::string stem = std::string(bench_op<Op>::name) + "/" + preset + "/" + dtype_name<In, W, Out>();
  for (path p : paths) {
    const std::string name = stem + tail(s) + path_name(p);
    auto checked = std::make_shared<bool>(false);
    benchmark::RegisterBenchmark(name.c_str(), [p, s, checked](benchmark::State& st) {
      bm_norm<Op, Policy, In, W, Out>(st, p, s, *checked);
    });
  }
  // The extra cases, on the best SIMD path only, for the preset a user of each op picks most.
  const path p = best_isa(paths);
  const bool layer_norm = std::string(bench_op<Op>::name) == "LayerNorm";
  const bool main_preset = layer_norm ? std::is_same<Policy, normkit::pytorch>::value
                                      : std::is_same<Policy, normkit::llama>::value;
  if (!main_preset || p == path::scalar)
    return;
  if (shows_regimes(s))
    for (nt_mode m : {nt_mode::on, nt_mode::off}) {
      const std::string name = stem + tail(s, m == nt_mode::on ? "/nt:on" : "/nt:off") + path_name(p);
      benchmark::RegisterBenchmark(name.c_str(), [p, s, m](benchmark::State& st) {
        bool unused = true;
        bm_norm<Op, Policy, In, W, Out>(st, p, s, unused, 1, m);
      });
    }
  if constexpr (has_thread_cases_op<Op>::value)
    if (has_thread_cases(s)) {
      const std::string name = stem + tail(s, "/threads:" + std::to_string(bench_threads)) + path_name(p);
      benchmark::RegisterBenchmark(name.c_str(), [p, s](benchmark::State& st) {
        bool unused = true;
        bm_norm<Op, Policy, In, W, Out>(st, p, s, unused, bench_threads);
      })->UseRealTime();
    }
}

template <class Op, class In, class W, class Out>
void register_op(shape s, const std::vector<path>& paths) {
  if constexpr (bench_op<Op>::benchmarked) {
    register_preset<Op, normkit::llama, In, W, Out>("llama", s, paths);
    register_preset<Op, normkit::gemma, In, W, Out>("gemma", s, paths);
    register_preset<Op, normkit::pytorch, In, W, Out>("pytorch", s, paths);
  }
}

template <class In, class W, class Out, class... Ops>
void register_ops(shape s, const std::vector<path>& paths, normkit::detail::type_list<Ops...>) {
  (register_op<Ops, In, W, Out>(s, paths), ...);
}

template <class In, class W, class Out>
void register_dtype(const std::vector<path>& paths) {
  for (shape s : shapes) {
    const std::string copy = "Copy/" + dtype_name<In, W, Out>() + tail(s);
    benchmark::RegisterBenchmark((copy + "memcpy").c_str(),
                                 [s](benchmark::State& st) { bm_copy<In, W, Out>(st, false, s); });
    if (normkit_bench::stream_copy_available()) {
      benchmark::RegisterBenchmark((copy + "stream").c_str(),
                                   [s](benchmark::State& st) { bm_copy<In, W, Out>(st, true, s); });
      const std::string two = "TwoPass/" + dtype_name<In, W, Out>() + tail(s);
      for (bool stream : {true, false})
        benchmark::RegisterBenchmark(
            (two + (stream ? "stream" : "plain")).c_str(),
            [s, stream](benchmark::State& st) { bm_two_pass<In, W, Out>(st, stream, s); });
    }
    if (has_thread_cases(s)) {
      const std::string t = tail(s, "/threads:" + std::to_string(bench_threads));
      for (bool stream : {false, true}) {
        if (stream && !normkit_bench::stream_copy_available())
          continue;
        const char* how = stream ? "stream" : "memcpy";
        benchmark::RegisterBenchmark(
            ("Copy/" + dtype_name<In, W, Out>() + t + how).c_str(),
            [s, stream](benchmark::State& st) { bm_copy<In, W, Out>(st, stream, s, bench_threads); })
            ->UseRealTime();
        if (normkit_bench::stream_copy_available())
          benchmark::RegisterBenchmark(
              ("TwoPass/" + dtype_name<In, W, Out>() + t + (stream ? "stream" : "plain")).c_str(),
              [s, stream](benchmark::State& st) { bm_two_pass<In, W, Out>(st, stream, s, bench_threads); })
              ->UseRealTime();
      }
    }
    register_ops<In, W, Out>(s, paths, normkit::detail::ops{});
  }
}

// ---- The fused residual add (add_norm.hpp) and head-wise norms.
//
//   AddRmsNorm/preset/dtype/rows:R/cols:C/isa:P          P = an ISA (the fused call)
//                                                          | unfused (residual_add, then rms_norm)
//                                                          | naive (one scalar loop nest)
//   HeadRmsNorm/llama/bf16/tokens:T/heads:H/dim:D/isa:P   P = an ISA (one rms_norm_heads call over the
//                                                          q heads of a packed QKV buffer, in place)
//                                                          | per_token (a caller's loop: one rms_norm
//                                                            call per token over its heads)
// Bytes: x read, residual read and written, y written, the gains once; head-wise: each head read
// and written, the gains once. Compare with the plain RmsNorm rows of the same shape (same run).

constexpr std::size_t add_norm_bytes(std::size_t rows, std::size_t cols, std::size_t res_size,
                                     std::size_t out_size, std::size_t w_size) {
  return rows * cols * (3 * res_size + out_size) + cols * w_size;
}

struct fused_buffers {
  std::string key;
  std::size_t sets = 0;
  bool dram = false;
  std::vector<block> x, res, y;
  block gamma;
};

template <class Res, class W, class Out>
fused_buffers& get_fused_buffers(shape s) {
  static fused_buffers b;
  const std::string key =
      dtype_name<Res, W, Out>() + "/" + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  if (b.key == key)
    return b;
  b = fused_buffers{};
  pool() = buffers{};  // one case's buffers at a time
  const std::size_t n = s.rows * s.cols, set_bytes = n * (2 * sizeof(Res) + sizeof(Out));
  b.sets = sets_for(s, set_bytes);
  b.dram = dram_resident(s, set_bytes);
  for (std::size_t k = 0; k < b.sets; ++k) {
    b.x.push_back(alloc_block(n * sizeof(Res)));
    fill<Res>(b.x.back().get(), n, -2.0f, 2.0f, 1 + k);
    b.res.push_back(alloc_block(n * sizeof(Res)));
    fill<Res>(b.res.back().get(), n, -4.0f, 4.0f, 51 + k);
    b.y.push_back(alloc_block(n * sizeof(Out)));
  }
  b.gamma = alloc_block(s.cols * sizeof(W));
  fill<W>(b.gamma.get(), s.cols, 0.5f, 1.5f, 101);
  b.key = key;
  return b;
}

enum class fused_path { fused, unfused, naive };

template <class Policy, class Res, class W, class Out>
void bm_add_norm(benchmark::State& st, path p, fused_path how, shape s) {
  fused_buffers& b = get_fused_buffers<Res, W, Out>(s);
  if (is_isa(p) && normkit::set_isa(isa_of(p)) != normkit::status::ok) {
    st.SkipWithError("ISA not available");
    return;
  }
  const auto* gamma = reinterpret_cast<const W*>(b.gamma.get());
  std::size_t k = 0;
  for (auto _ : st) {
    const auto* x = reinterpret_cast<const Res*>(b.x[k].get());
    auto* res = reinterpret_cast<Res*>(b.res[k].get());
    auto* y = reinterpret_cast<Out*>(b.y[k].get());
    bool ok = true;
    switch (how) {
      case fused_path::fused:
        ok = normkit::add_rms_norm<Policy>(x, res, gamma, y, s.rows, s.cols, 1e-6f) == normkit::status::ok;
        break;
      case fused_path::unfused:
        ok = normkit::residual_add(x, res, s.rows, s.cols) == normkit::status::ok &&
             normkit::rms_norm<Policy>(static_cast<const Res*>(res), gamma, y, s.rows, s.cols, 1e-6f) ==
                 normkit::status::ok;
        break;
      case fused_path::naive:
        normkit_bench::naive_add_rms_norm<Policy>(x, res, gamma, y, s.rows, s.cols, 1e-6f);
        break;
    }
    if (!ok) {
      st.SkipWithError("normkit returned an error status");
      break;
    }
    benchmark::DoNotOptimize(y);
    benchmark::ClobberMemory();
    if (++k == b.sets)
      k = 0;
  }
  const buffers stats_view{b.key, b.sets, b.dram, {}, {}, {}, {}};
  set_counters(st, add_norm_bytes(s.rows, s.cols, sizeof(Res), sizeof(Out), sizeof(W)), s.rows, stats_view);
}

// Qwen3-style attention: q heads, then k and v heads of a token, packed.
struct head_shape {
  std::size_t tokens, heads, kv_heads, dim;
};

template <class T>
void bm_heads(benchmark::State& st, path p, bool per_token, head_shape h) {
  static fused_buffers b;  // x: the packed QKV buffer, in place
  const std::size_t token_stride = (h.heads + 2 * h.kv_heads) * h.dim, n = h.tokens * token_stride;
  const std::string key = "heads/" + std::to_string(n);
  if (b.key != key) {
    b = fused_buffers{};
    pool() = buffers{};
    b.sets = sets_for(shape{h.tokens, token_stride, false}, n * sizeof(T));
    b.dram = dram_resident(shape{h.tokens, token_stride, false}, n * sizeof(T));
    for (std::size_t k = 0; k < b.sets; ++k) {
      b.x.push_back(alloc_block(n * sizeof(T)));
      fill<T>(b.x.back().get(), n, -2.0f, 2.0f, 1 + k);
    }
    b.gamma = alloc_block(h.dim * sizeof(T));
    fill<T>(b.gamma.get(), h.dim, 0.5f, 1.5f, 101);
    b.key = key;
  }
  if (normkit::set_isa(isa_of(p)) != normkit::status::ok) {
    st.SkipWithError("ISA not available");
    return;
  }
  const auto* gamma = reinterpret_cast<const T*>(b.gamma.get());
  std::size_t k = 0;
  for (auto _ : st) {
    auto* qkv = reinterpret_cast<T*>(b.x[k].get());
    bool ok = true;
    if (per_token) {
      for (std::size_t t = 0; t < h.tokens && ok; ++t) {
        T* q = qkv + t * token_stride;
        ok = normkit::rms_norm<normkit::llama>(static_cast<const T*>(q), gamma, q, h.heads, h.dim, 1e-6f,
                                               h.dim, h.dim) == normkit::status::ok;
      }
    } else {
      ok = normkit::rms_norm_heads<normkit::llama>(qkv, gamma, h.tokens, h.heads, h.dim, 1e-6f, token_stride,
                                                   h.dim) == normkit::status::ok;
    }
    if (!ok) {
      st.SkipWithError("normkit returned an error status");
      break;
    }
    benchmark::DoNotOptimize(qkv);
    benchmark::ClobberMemory();
    if (++k == b.sets)
      k = 0;
  }
  const buffers stats_view{b.key, b.sets, b.dram, {}, {}, {}, {}};
  set_counters(st, h.tokens * h.heads * h.dim * 2 * sizeof(T) + h.dim * sizeof(T), h.tokens * h.heads,
               stats_view);
}

template <class Policy, class Res, class W, class Out>
void register_add_norm(const char* preset, const std::vector<path>& paths) {
  for (shape s : {shape{1, 4096, false}, shape{64, 4096, false}, shape{4096, 4096, true}}) {
    const std::string base = std::string("AddRmsNorm/") + preset + "/" + dtype_name<Res, W, Out>() + tail(s);
    for (path p : paths) {
      if (!is_isa(p) || p == path::scalar)
        continue;
      benchmark::RegisterBenchmark((base + path_name(p)).c_str(), [p, s](benchmark::State& st) {
        bm_add_norm<Policy, Res, W, Out>(st, p, fused_path::fused, s);
      });
      benchmark::RegisterBenchmark((base + path_name(p) + "/unfused").c_str(), [p, s](benchmark::State& st) {
        bm_add_norm<Policy, Res, W, Out>(st, p, fused_path::unfused, s);
      });
    }
    benchmark::RegisterBenchmark((base + "naive").c_str(), [s](benchmark::State& st) {
      bm_add_norm<Policy, Res, W, Out>(st, path::naive, fused_path::naive, s);
    });
  }
}

void register_fused(const std::vector<path>& paths) {
  register_add_norm<normkit::llama, bf16, bf16, bf16>("llama", paths);
  register_add_norm<normkit::flashinfer, bf16, bf16, bf16>("flashinfer", paths);
  register_add_norm<normkit::pytorch, float, float, float>("pytorch", paths);
  const head_shape h{4096, 32, 8, 128};
  for (path p : paths) {
    if (!is_isa(p) || p == path::scalar)
      continue;
    const std::string base =
        "HeadRmsNorm/llama/bf16/tokens:4096/heads:32/dim:128/isa:" + std::string(path_name(p));
    benchmark::RegisterBenchmark(base.c_str(),
                                 [p, h](benchmark::State& st) { bm_heads<bf16>(st, p, false, h); });
    benchmark::RegisterBenchmark((base + "/per_token").c_str(),
                                 [p, h](benchmark::State& st) { bm_heads<bf16>(st, p, true, h); });
  }
}

// ---- Quantized outputs (normkit/quant.hpp), bf16 in, llama, against two baselines in the same
// run: the plain kernel writing bf16 (the time a quantized output should stay close to), and the
// unfused pipeline -- the norm writing fp32 to memory, then the same quantize kernel as a
// separate pass over the whole tensor (bench_op<quantize_op> above: the kernels are the fused
// ones', only the fusion differs).
//   Quant/<mode>/<Q>/rows:R/cols:C/isa:P/<fused|unfused>, Quant/plain/bf16/.../isa:P/plain
// Bytes: x (2) and gamma in, plus what each element leaves as (1 byte), plus its scales (a float
// per row; Q8_0: 2 bytes per 32 elements) -- for the unfused rows too, so B/s compare as times.
enum class quant_kind { plain_bf16, static_e4m3, static_i8, dynamic_e4m3, dynamic_i8, q8_0 };

const char* quant_name(quant_kind k) {
  switch (k) {
    case quant_kind::plain_bf16:
      return "plain/bf16";
    case quant_kind::static_e4m3:
      return "static/e4m3";
    case quant_kind::static_i8:
      return "static/i8";
    case quant_kind::dynamic_e4m3:
      return "dynamic/e4m3";
    case quant_kind::dynamic_i8:
      return "dynamic/i8";
    case quant_kind::q8_0:
      break;
  }
  return "q8_0/i8";
}

std::size_t quant_bytes(quant_kind k, shape s) {
  const std::size_t n = s.rows * s.cols, in = n * sizeof(bf16) + s.cols * sizeof(bf16);
  switch (k) {
    case quant_kind::plain_bf16:
      return in + n * sizeof(bf16);
    case quant_kind::static_e4m3:
    case quant_kind::static_i8:
      return in + n;
    case quant_kind::dynamic_e4m3:
    case quant_kind::dynamic_i8:
      return in + n + s.rows * sizeof(float);
    case quant_kind::q8_0:
      break;
  }
  return in + n / normkit::block_q8_0::size * sizeof(normkit::block_q8_0);
}

template <class Q>
bool unfused_quant(const bf16* x, const bf16* g, float* v, void* out, float* scales, shape s,
                   quant_mode_t mode) {
  using qop = normkit::detail::quantize_op;
  if (normkit::rms_norm<normkit::llama>(x, g, v, s.rows, s.cols, 1e-6f) != normkit::status::ok)
    return false;
  const bool blocks = mode == quant_mode_t::q8_0;
  const qop::args<Q> a{v,
                       blocks ? nullptr : static_cast<Q*>(out),
                       blocks ? static_cast<normkit::block_q8_0*>(out) : nullptr,
                       scales,
                       nullptr,
                       s.rows,
                       s.cols,
                       s.cols,
                       blocks ? s.cols / normkit::block_q8_0::size : s.cols,
                       mode == quant_mode_t::static_scale ? 0.5f : 0.0f,
                       mode};
  // The unfused pipeline writes v to memory and reads it back: q may not alias it.
  return normkit::impl::call<qop, normkit::round_once, Q>(a) == normkit::status::ok;
}

bool run_quant(quant_kind k, bool fused, const bf16* x, const bf16* g, void* y, void* q, float* scales,
               shape s) {
  using normkit::llama;
  using normkit::status;
  const std::size_t r = s.rows, c = s.cols;
  float* v = static_cast<float*>(y);
  switch (k) {
    case quant_kind::plain_bf16:
      return normkit::rms_norm<llama>(x, g, static_cast<bf16*>(q), r, c, 1e-6f) == status::ok;
    case quant_kind::static_e4m3:
      return fused ? normkit::rms_norm_quant<llama>(x, g, static_cast<normkit::e4m3*>(q), r, c, 1e-6f, 0.5f,
                                                    nullptr) == status::ok
                   : unfused_quant<normkit::e4m3>(x, g, v, q, scales, s, quant_mode_t::static_scale);
    case quant_kind::static_i8:
      return fused ? normkit::rms_norm_quant<llama>(x, g, static_cast<std::int8_t*>(q), r, c, 1e-6f, 0.5f,
                                                    nullptr) == status::ok
                   : unfused_quant<std::int8_t>(x, g, v, q, scales, s, quant_mode_t::static_scale);
    case quant_kind::dynamic_e4m3:
      return fused ? normkit::rms_norm_dynamic_quant<llama>(x, g, static_cast<normkit::e4m3*>(q), scales, r,
                                                            c, 1e-6f, 0.0f) == status::ok
                   : unfused_quant<normkit::e4m3>(x, g, v, q, scales, s, quant_mode_t::dynamic_row);
    case quant_kind::dynamic_i8:
      return fused ? normkit::rms_norm_dynamic_quant<llama>(x, g, static_cast<std::int8_t*>(q), scales, r, c,
                                                            1e-6f, 0.0f) == status::ok
                   : unfused_quant<std::int8_t>(x, g, v, q, scales, s, quant_mode_t::dynamic_row);
    case quant_kind::q8_0:
      break;
  }
  return fused ? normkit::rms_norm_q8_0<llama>(x, g, static_cast<normkit::block_q8_0*>(q), r, c, 1e-6f) ==
                     status::ok
               : unfused_quant<std::int8_t>(x, g, v, q, scales, s, quant_mode_t::q8_0);
}

void bm_quant(benchmark::State& st, path p, quant_kind k, bool fused, shape s) {
  const buffers& b = get_buffers<bf16, bf16, float>(s);  // y: room for the unfused fp32 v
  if (normkit::set_isa(isa_of(p)) != normkit::status::ok) {
    st.SkipWithError("ISA not available");
    return;
  }
  static std::vector<block> outs;  // one 2-byte-per-element output per buffer set (bf16 or 1-byte q)
  static std::size_t out_bytes = 0;
  const std::size_t n = s.rows * s.cols;
  if (outs.size() != b.sets || out_bytes != n * sizeof(bf16)) {
    outs.clear();
    for (std::size_t i = 0; i < b.sets; ++i) {
      outs.push_back(alloc_block(n * sizeof(bf16)));
      std::memset(outs.back().get(), 0, n * sizeof(bf16));
    }
    out_bytes = n * sizeof(bf16);
  }
  std::vector<float> scales(s.rows);
  const auto* g = reinterpret_cast<const bf16*>(b.gamma.get());
  std::size_t i = 0;
  for (auto _ : st) {
    const auto* x = reinterpret_cast<const bf16*>(b.x[i].get());
    if (!run_quant(k, fused, x, g, b.y[i].get(), outs[i].get(), scales.data(), s)) {
      st.SkipWithError("normkit returned an error status");
      break;
    }
    benchmark::DoNotOptimize(outs[i].get());
    benchmark::ClobberMemory();
    if (++i == b.sets)
      i = 0;
  }
  set_counters(st, quant_bytes(k, s), s.rows, b);
}

void register_quant(const std::vector<path>& paths) {
  for (shape s : {shape{64, 4096, false}, shape{4096, 4096, true}})
    for (path p : paths) {
      if (!is_isa(p) || p == path::scalar)
        continue;
      for (quant_kind k : {quant_kind::plain_bf16, quant_kind::static_e4m3, quant_kind::static_i8,
                           quant_kind::dynamic_e4m3, quant_kind::dynamic_i8, quant_kind::q8_0})
        for (bool fused : {true, false}) {
          if (k == quant_kind::plain_bf16 && !fused)
            continue;
          const std::string name = std::string("Quant/") + quant_name(k) + tail(s) + path_name(p) + "/" +
                                   (k == quant_kind::plain_bf16 ? "plain"
                                    : fused                     ? "fused"
                                                                : "unfused");
          benchmark::RegisterBenchmark(
              name.c_str(), [p, k, fused, s](benchmark::State& st) { bm_quant(st, p, k, fused, s); });
        }
    }
}

// ---- The fused residual add + quantized norm (quant.hpp, add_rms_norm_quant / add_rms_norm_q8_0),
// bf16 in, llama, against the unfused pipeline in the same run -- add_rms_norm writing fp32 v to
// memory, then the same quantize kernel as a separate pass (as the Quant rows) -- and the plain
// fused add writing bf16 (AddRmsNorm's kernel: the time a quantized output should stay close to).
//   AddQuant/<static/e4m3|q8_0/i8|plain/bf16>/rows:R/cols:C/isa:P/<fused|unfused|plain>
// Bytes: x read, residual read and written (2 each), gamma, plus each element's 1 byte (bf16: 2)
// and the Q8_0 block scales -- for the unfused rows too, so B/s compare as times.
std::size_t add_quant_bytes(quant_kind k, shape s) {
  const std::size_t n = s.rows * s.cols, in = 3 * n * sizeof(bf16) + s.cols * sizeof(bf16);
  if (k == quant_kind::plain_bf16)
    return in + n * sizeof(bf16);
  if (k == quant_kind::q8_0)
    return in + n / normkit::block_q8_0::size * sizeof(normkit::block_q8_0);
  return in + n;
}

template <class Q>
bool add_unfused_quant(const bf16* x, bf16* res, const bf16* g, float* v, void* out, shape s,
                       quant_mode_t mode) {
  using qop = normkit::detail::quantize_op;
  if (normkit::add_rms_norm<normkit::llama>(x, res, g, v, s.rows, s.cols, 1e-6f) != normkit::status::ok)
    return false;
  const bool blocks = mode == quant_mode_t::q8_0;
  const qop::args<Q> a{v,
                       blocks ? nullptr : static_cast<Q*>(out),
                       blocks ? static_cast<normkit::block_q8_0*>(out) : nullptr,
                       nullptr,
                       nullptr,
                       s.rows,
                       s.cols,
                       s.cols,
                       blocks ? s.cols / normkit::block_q8_0::size : s.cols,
                       blocks ? 0.0f : 0.5f,
                       mode};
  return normkit::impl::call<qop, normkit::round_once, Q>(a) == normkit::status::ok;
}

void bm_add_quant(benchmark::State& st, path p, quant_kind k, bool fused, shape s) {
  fused_buffers& b = get_fused_buffers<bf16, bf16, float>(s);  // y: room for the unfused fp32 v
  if (normkit::set_isa(isa_of(p)) != normkit::status::ok) {
    st.SkipWithError("ISA not available");
    return;
  }
  static std::vector<block> outs;  // one 2-byte-per-element output per buffer set
  static std::size_t out_bytes = 0;
  const std::size_t n = s.rows * s.cols;
  if (outs.size() != b.sets || out_bytes != n * sizeof(bf16)) {
    outs.clear();
    for (std::size_t i = 0; i < b.sets; ++i) {
      outs.push_back(alloc_block(n * sizeof(bf16)));
      std::memset(outs.back().get(), 0, n * sizeof(bf16));
    }
    out_bytes = n * sizeof(bf16);
  }
  using normkit::llama;
  using normkit::status;
  const auto* g = reinterpret_cast<const bf16*>(b.gamma.get());
  std::size_t i = 0;
  for (auto _ : st) {
    const auto* x = reinterpret_cast<const bf16*>(b.x[i].get());
    auto* res = reinterpret_cast<bf16*>(b.res[i].get());
    auto* v = reinterpret_cast<float*>(b.y[i].get());
    void* q = outs[i].get();
    bool ok;
    if (k == quant_kind::plain_bf16)
      ok =
          normkit::add_rms_norm<llama>(x, res, g, static_cast<bf16*>(q), s.rows, s.cols, 1e-6f) == status::ok;
    else if (k == quant_kind::q8_0)
      ok = fused ? normkit::add_rms_norm_q8_0<llama>(x, res, g, static_cast<normkit::block_q8_0*>(q), s.rows,
                                                     s.cols, 1e-6f) == status::ok
                 : add_unfused_quant<std::int8_t>(x, res, g, v, q, s, quant_mode_t::q8_0);
    else
      ok = fused ? normkit::add_rms_norm_quant<llama>(x, res, g, static_cast<normkit::e4m3*>(q), s.rows,
                                                      s.cols, 1e-6f, 0.5f, nullptr) == status::ok
                 : add_unfused_quant<normkit::e4m3>(x, res, g, v, q, s, quant_mode_t::static_scale);
    if (!ok) {
      st.SkipWithError("normkit returned an error status");
      break;
    }
    benchmark::DoNotOptimize(q);
    benchmark::ClobberMemory();
    if (++i == b.sets)
      i = 0;
  }
  const buffers stats_view{b.key, b.sets, b.dram, {}, {}, {}, {}};
  set_counters(st, add_quant_bytes(k, s), s.rows, stats_view);
}

void register_add_quant(const std::vector<path>& paths) {
  for (shape s : {shape{64, 4096, false}, shape{4096, 4096, true}})
    for (path p : paths) {
      if (!is_isa(p) || p == path::scalar)
        continue;
      for (quant_kind k : {quant_kind::plain_bf16, quant_kind::static_e4m3, quant_kind::q8_0})
        for (bool fused : {true, false}) {
          if (k == quant_kind::plain_bf16 && !fused)
            continue;
          const std::string name = std::string("AddQuant/") + quant_name(k) + tail(s) + path_name(p) + "/" +
                                   (k == quant_kind::plain_bf16 ? "plain"
                                    : fused                     ? "fused"
                                                                : "unfused");
          benchmark::RegisterBenchmark(
              name.c_str(), [p, k, fused, s](benchmark::State& st) { bm_add_quant(st, p, k, fused, s); });
        }
    }
}
}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;

  // Each ISA path that this build and CPU can run; the others are not registered.
  std::vector<path> paths;
  std::string run, skipped;
  for (path p : {path::scalar, path::avx2, path::avx512, path::avx512bf16, path::avx512fp16, path::neon}) {
    std::string& list = normkit::isa_available(isa_of(p)) ? run : skipped;
    list += (list.empty() ? "" : " ") + std::string(path_name(p));
    if (!normkit::isa_available(isa_of(p)))
      continue;
    if (p == path::avx512fp16)
      fp16_path_runs = true;  // all-fp16 RMSNorm only (paths_for)
    else
      paths.push_back(p);
  }
  paths.push_back(path::naive);
  paths.push_back(path::eigen);
  std::fprintf(stderr, "normkit_bench: ISA paths run: %s; not registered (unavailable here): %s\n",
               run.c_str(), skipped.empty() ? "none" : skipped.c_str());

  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("llc_bytes", std::to_string(normkit_bench::llc_bytes()));
  benchmark::AddCustomContext("stream_min_bytes", std::to_string(normkit::stream_min_bytes()));
  benchmark::AddCustomContext("compiler", compiler());
  benchmark::AddCustomContext("cxx_flags", NORMKIT_BENCH_CXX_FLAGS);
  benchmark::AddCustomContext("baseline_flags", NORMKIT_BENCH_BASELINE_FLAGS);
  benchmark::AddCustomContext("normkit_version", std::to_string(NORMKIT_VERSION_MAJOR) + "." +
                                                     std::to_string(NORMKIT_VERSION_MINOR) + "." +
                                                     std::to_string(NORMKIT_VERSION_PATCH));
  benchmark::AddCustomContext("normkit_isas", run);
  benchmark::AddCustomContext("normkit_isas_skipped", skipped);

  register_dtype<float, float, float>(paths);
  register_dtype<bf16, bf16, bf16>(paths);
  register_dtype<bf16, float, bf16>(paths);
  register_dtype<fp16, fp16, fp16>(paths);
  register_fused(paths);
  register_quant(paths);
  register_add_quant(paths);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
