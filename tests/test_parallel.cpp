// SPDX-License-Identifier: MIT
// Thread-pool entry points (rms_norm/layer_norm/convert taking a parallel_for first) and the
// streaming-store threshold. Rows are independent (docs/contract.md: a row's bits do not depend on
// its position in the batch), so a call split into any number of tasks, run in any order on any
// threads, must give the single-threaded reference's bits; streaming stores change speed only.
// Every split below is compared byte for byte with normkit::reference on the same inputs, on
// every ISA (skipped visibly where missing); the executors include a reversed and a shuffled
// serial one and real threads that start in a different floating-point environment.
#include "support.hpp"

#include <normkit/core/tuning.hpp>  // streams, stream_threshold_for_cache, parallel_*_bytes

#include <algorithm>  // std::reverse, std::shuffle
#include <atomic>     // std::atomic
#include <cfenv>      // std::fesetround, std::fegetround, std::feclearexcept, std::fetestexcept
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint64_t
#include <cstdio>     // std::printf
#include <cstdlib>    // std::getenv
#include <numeric>    // std::iota
#include <random>     // std::mt19937
#include <string>     // std::string
#include <thread>     // std::thread
#include <vector>     // std::vector

namespace {

using namespace normkit_test;
using normkit::isa;
using normkit::status;

// ---- Executors: parallel_for(n_tasks, task) in the shapes a pool may take.
enum class order { forward, reversed, shuffled, threads2, threads3 };
const order all_orders[] = {order::forward, order::reversed, order::shuffled, order::threads2,
                            order::threads3};

const char* name_of(order o) {
  switch (o) {
    case order::forward:
      return "forward";
    case order::reversed:
      return "reversed";
    case order::shuffled:
      return "shuffled";
    case order::threads2:
      return "2 threads";
    case order::threads3:
      return "3 threads";
  }
  return "?";
}

// Records how many tasks it was asked for and runs each once. The threads set round-to-nearest
// first, as threads a pool created before the caller changed its rounding mode would have.
struct executor {
  order how;
  std::size_t asked = 0;  // n_tasks of the last call
  int calls = 0;

  template <class F>
  void operator()(std::size_t n, F&& task) {
    asked = n;
    ++calls;
    std::vector<std::size_t> ids(n);
    std::iota(ids.begin(), ids.end(), std::size_t{0});
    if (how == order::reversed)
      std::reverse(ids.begin(), ids.end());
    if (how == order::shuffled)
      std::shuffle(ids.begin(), ids.end(), std::mt19937(static_cast<unsigned>(n)));
    if (how == order::forward || how == order::reversed || how == order::shuffled) {
      for (std::size_t i : ids)
        task(i);
      return;
    }
    const std::size_t n_threads = how == order::threads2 ? 2 : 3;
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < n_threads; ++t)
      pool.emplace_back([&] {
        std::fesetround(FE_TONEAREST);
        for (std::size_t k; (k = next.fetch_add(1)) < n;)
          task(ids[k]);
      });
    for (std::thread& t : pool)
      t.join();
  }
};

// ---- One problem per op: inputs with special values, the reference's output bits.
constexpr std::size_t rows = 37, cols = 300;

template <class T>
std::vector<T> mixed_rows(std::uint64_t seed) {
  rng r(seed);
  std::vector<T> v = normal_vec<T>(r, rows * cols, 3.0f, 0.5f);
  const std::vector<T> raw = raw_bits_vec<T>(r, cols);
  for (std::size_t i = 0; i < cols; ++i)  // row 5: NaN, Inf, subnormals, huge values
    v[5 * cols + i] = raw[i];
  for (std::size_t i = 0; i < cols; ++i)  // row 11: overflows the sum of squares
    v[11 * cols + i] = as<T>(i % 2 ? 1e30f : -2e30f);
  return v;
}

template <class T>
std::string label(const char* op, order o, std::size_t per_task) {
  return std::string(op) + "<" + type_name<T>() + ">, " + name_of(o) + ", " + std::to_string(per_task) +
         " rows per task, ISA " + normkit::to_string(normkit::active_isa());
}

// Every rows-per-task count from 1 to all rows (1, 2, 3, 5, 8, 13, 21, 34, 37) on every
// executor, through run_split (the split of the thread-pool entry points, with its size forced),
// with streaming stores on and off.
template <class Policy, class In, class W, class Out>
void check_rms_splits(const char* what) {
  using op = normkit::detail::rms_norm_op;
  const std::vector<In> x = mixed_rows<In>(11);
  rng r(12);
  const std::vector<W> gamma = normal_vec<W>(r, cols);
  std::vector<Out> want(rows * cols);
  ASSERT_EQ(normkit::reference::rms_norm<Policy>(x.data(), gamma.data(), want.data(), rows, cols, 1e-6f),
            status::ok);
  for (std::size_t per : {1u, 2u, 3u, 5u, 8u, 13u, 21u, 34u, 37u})
    for (order o : all_orders)
      for (bool stream : {false, true}) {
        std::vector<Out> y(rows * cols, as<Out>(-7.0f));
        op::args<In, W, Out> a{x.data(), gamma.data(), y.data(), rows, cols, 1e-6f, cols, cols};
        a.stream = stream;
        executor e{o};
        normkit::impl::run_split<op, Policy, In, W, Out>(e, a, per);
        EXPECT_EQ(e.asked, (rows + per - 1) / per);
        ASSERT_SAME_BITS(y, want, label<In>(what, o, per) + (stream ? ", streamed" : ""));
      }
}

template <class Policy, class In, class W, class Out>
void check_layer_norm_splits(const char* what) {
  using op = normkit::detail::layer_norm_op;
  const std::vector<In> x = mixed_rows<In>(21);
  rng r(22);
  const std::vector<W> gamma = normal_vec<W>(r, cols), beta = normal_vec<W>(r, cols);
  std::vector<Out> want(rows * cols);
  ASSERT_EQ(normkit::reference::layer_norm<Policy>(x.data(), gamma.data(), beta.data(), want.data(), rows,
                                                   cols, 1e-5f),
            status::ok);
  for (std::size_t per : {1u, 3u, 8u, 21u, 37u})
    for (order o : all_orders) {
      std::vector<Out> y(rows * cols, as<Out>(-7.0f));
      const op::args<In, W, Out> a{x.data(), gamma.data(), beta.data(), y.data(), rows,
                                   cols,     1e-5f,        cols,        cols};
      executor e{o};
      normkit::impl::run_split<op, Policy, In, W, Out>(e, a, per);
      ASSERT_SAME_BITS(y, want, label<In>(what, o, per));
    }
}

template <class Src, class Dst>
void check_convert_splits() {
  using op = normkit::detail::convert_op;
  const std::size_t n = rows * cols;
  const std::vector<Src> x = mixed_rows<Src>(31);
  std::vector<Dst> want(n);
  for (std::size_t i = 0; i < n; ++i)  // the conversion's definition (core/storage.hpp)
    want[i] = normkit::from_float<Dst>(normkit::to_float(x[i]));
  for (std::size_t per : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1000}, n})
    for (order o : all_orders) {
      std::vector<Dst> y(n, as<Dst>(-7.0f));
      executor e{o};
      normkit::impl::run_split<op, normkit::round_once, Src, Dst>(
          e, op::args<Src, Dst>{x.data(), y.data(), n}, per);
      ASSERT_SAME_BITS(y, want, label<Src>("convert", o, per));
    }
}

class Parallel : public ::testing::TestWithParam<isa> {};

TEST_P(Parallel, AnySplitInAnyOrderGivesTheReferenceBits) {
  NORMKIT_USE_ISA(GetParam());
  check_rms_splits<normkit::llama, bf16, bf16, bf16>("rms_norm<llama>");
  check_rms_splits<normkit::gemma, float, float, float>("rms_norm<gemma>");
  check_rms_splits<normkit::llama, fp16, fp16, fp16>("rms_norm<llama>");
  check_layer_norm_splits<normkit::pytorch, bf16, float, bf16>("layer_norm<pytorch>");
  check_layer_norm_splits<normkit::pytorch, float, float, float>("layer_norm<pytorch>");
  check_convert_splits<float, bf16>();
  check_convert_splits<bf16, fp16>();
}

// The public overloads: a call with work for several tasks asks the pool for them and gives the
// reference's bits, with or without gamma/beta, strided; one too small asks nothing.
TEST_P(Parallel, PublicOverloadsSplitLargeCallsAndKeepSmallOnesOnTheCaller) {
  NORMKIT_USE_ISA(GetParam());
  const std::size_t big_rows = 160, big_cols = 2048, stride = big_cols + 16;  // 2.5 MiB of x and y
  static_assert(160 * 2048 * 8 >= 2 * normkit::detail::parallel_min_task_bytes, "must split");
  rng r(41);
  const std::vector<float> x = normal_vec<float>(r, big_rows * stride), g = normal_vec<float>(r, big_cols);
  std::vector<float> want(big_rows * stride, 0.0f), y(big_rows * stride, 0.0f);
  for (order o : all_orders) {
    executor e{o};
    ASSERT_EQ(
        normkit::reference::rms_norm<normkit::llama>(x.data(), static_cast<const float*>(nullptr),
                                                     want.data(), big_rows, big_cols, 1e-6f, stride, stride),
        status::ok);
    ASSERT_EQ(normkit::rms_norm<normkit::llama>(e, x.data(), nullptr, y.data(), big_rows, big_cols, 1e-6f,
                                                stride, stride),
              status::ok);
    EXPECT_GE(e.asked, 2u) << name_of(o);
    EXPECT_SAME_BITS(y, want, std::string("rms_norm, no gain, ") + name_of(o));

    ASSERT_EQ(normkit::reference::layer_norm<normkit::pytorch>(
                  x.data(), g.data(), static_cast<const float*>(nullptr), want.data(), big_rows, big_cols,
                  1e-5f, stride, stride),
              status::ok);
    ASSERT_EQ(normkit::layer_norm<normkit::pytorch>(e, x.data(), g.data(), nullptr, y.data(), big_rows,
                                                    big_cols, 1e-5f, stride, stride),
              status::ok);
    EXPECT_SAME_BITS(y, want, std::string("layer_norm, no bias, ") + name_of(o));

    std::vector<bf16> want16(x.size()), y16(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      want16[i] = normkit::from_float<bf16>(x[i]);
    ASSERT_EQ(normkit::convert(e, x.data(), y16.data(), x.size()), status::ok);
    EXPECT_GE(e.asked, 2u) << name_of(o);
    EXPECT_SAME_BITS(y16, want16, std::string("convert, ") + name_of(o));
  }
  // 16 x 2048 floats in and out: 256 KiB, under two minimal tasks.
  executor e{order::threads2};
  ASSERT_EQ(normkit::rms_norm<normkit::llama>(e, x.data(), g.data(), y.data(), 16, big_cols, 1e-6f),
            status::ok);
  EXPECT_EQ(e.calls, 0) << "a small call must not be handed to the pool";
  ASSERT_EQ(
      normkit::reference::rms_norm<normkit::llama>(x.data(), g.data(), want.data(), 16, big_cols, 1e-6f),
      status::ok);
  EXPECT_TRUE(same_bits(y.data(), want.data(), 16 * big_cols, "rms_norm, small call"));
  // A bad argument is reported before any task runs.
  EXPECT_EQ(normkit::rms_norm<normkit::llama>(e, x.data(), g.data(), y.data(), big_rows, big_cols, -1.0f),
            status::invalid_eps);
  EXPECT_EQ(e.calls, 0);
}

// contract (FP environment): the bits are the caller's environment's. Tasks on threads that
// round to nearest must still compute in the caller's rounding mode, and the flags they raise
// must reach the caller (eps = 0 on an all-zero row: divide-by-zero and invalid,
// docs/fp-environment.md).
TEST_P(Parallel, TasksRunInTheCallersFloatingPointEnvironment) {
  NORMKIT_USE_ISA(GetParam());
  using op = normkit::detail::rms_norm_op;
  const std::vector<float> x = mixed_rows<float>(51);
  std::vector<float> zeros(rows * cols, 0.0f);
  rng r(52);
  const std::vector<float> g = normal_vec<float>(r, cols);
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    std::vector<bf16> want(rows * cols), y(rows * cols);
    const int saved = std::fegetround();
    std::fesetround(mode);
    const status ref =
        normkit::reference::rms_norm<normkit::llama>(x.data(), g.data(), want.data(), rows, cols, 1e-6f);
    executor e{order::threads2};
    normkit::impl::run_split<op, normkit::llama, float, float, bf16>(
        e, op::args<float, float, bf16>{x.data(), g.data(), y.data(), rows, cols, 1e-6f, cols, cols}, 4);
    std::fesetround(saved);
    ASSERT_EQ(ref, status::ok);
    EXPECT_SAME_BITS(y, want, std::string("rounding mode ") + std::to_string(mode));
  }
  std::vector<float> y(rows * cols);
  std::feclearexcept(FE_ALL_EXCEPT);
  executor e{order::threads3};
  normkit::impl::run_split<op, normkit::llama, float, float, float>(
      e, op::args<float, float, float>{zeros.data(), g.data(), y.data(), rows, cols, 0.0f, cols, cols}, 5);
  const int raised = std::fetestexcept(FE_DIVBYZERO | FE_INVALID);
  std::feclearexcept(FE_ALL_EXCEPT);
  EXPECT_EQ(raised, FE_DIVBYZERO | FE_INVALID) << "flags raised by the tasks must reach the calling thread";
}

INSTANTIATE_TEST_SUITE_P(Isa, Parallel, ::testing::ValuesIn(all_isas()), isa_param_name);

// ---- How calls are cut (dispatch/run.hpp, split_rows), against sizes worked out by hand.
TEST(ParallelSplit, TasksOfAboutAMegabyteNoneForSmallCalls) {
  using normkit::impl::split_rows;
  // 4096 x 4096 f32: 32 KiB of x and y per row, 128 MiB: 128 tasks of 32 rows.
  EXPECT_EQ(split_rows(4096, 32768).tasks, 128u);
  EXPECT_EQ(split_rows(4096, 32768).rows, 32u);
  // 64 x 4096 f32: 2 MiB, two tasks of 32 rows.
  EXPECT_EQ(split_rows(64, 32768).tasks, 2u);
  // 15 rows of 32 KiB (480 KiB): under two 256 KiB tasks, the caller's.
  EXPECT_EQ(split_rows(15, 32768).tasks, 1u);
  EXPECT_EQ(split_rows(1, std::size_t(1) << 30).tasks, 1u);  // one row cannot be split
  // 3 rows of 1 MiB: three tasks of one row.
  EXPECT_EQ(split_rows(3, std::size_t(1) << 20).tasks, 3u);
  // convert of 1M floats to bf16 (6 bytes each, 6 MiB): 6 tasks, rounded to whole 64-element lines:
  // 174763 -> 174784 elements, so the last task is shorter.
  EXPECT_EQ(split_rows(std::size_t(1) << 20, 6).rows, 174784u);
  EXPECT_EQ(split_rows(std::size_t(1) << 20, 6).tasks, 6u);
}

// Ops whose rows are not independent must not get a silent split: no slice, no entry point.
struct cross_row_op : normkit::detail::norm_op {  // e.g. an amax over the whole output
  template <class In, class W, class Out>
  using args = normkit::detail::rms_norm_op::args<In, W, Out>;
};
static_assert(!normkit::detail::has_slice<cross_row_op, cross_row_op::args<float, float, float>>::value,
              "an op without slice() has no thread-pool split (inherited from norm_op or not)");
static_assert(normkit::detail::has_slice<normkit::detail::rms_norm_op,
                                         normkit::detail::rms_norm_op::args<float, float, float>>::value &&
                  normkit::detail::has_slice<normkit::detail::convert_op,
                                             normkit::detail::convert_op::args<float, bf16>>::value,
              "rms_norm and convert split");

// ---- The streaming-store decision (core/tuning.hpp, dispatch/streaming.hpp).
TEST(StreamingThreshold, DecisionFromTheCacheCappedOrTheFallback) {
  using normkit::detail::stream_threshold_for_cache;
  using normkit::detail::streams;
  EXPECT_EQ(stream_threshold_for_cache(std::size_t(32) << 20), std::size_t(8) << 20);  // a 32 MiB L3
  EXPECT_EQ(stream_threshold_for_cache(std::size_t(96) << 20), std::size_t(24) << 20);
  EXPECT_EQ(stream_threshold_for_cache(std::size_t(480) << 20), std::size_t(32) << 20);  // the cap
  EXPECT_EQ(stream_threshold_for_cache(0), std::size_t(8) << 20);                        // no cache reported
  EXPECT_TRUE(streams(std::size_t(8) << 20, std::size_t(8) << 20));
  EXPECT_FALSE(streams((std::size_t(8) << 20) - 1, std::size_t(8) << 20));
  EXPECT_TRUE(streams(1, 0));
  EXPECT_FALSE(streams(0, 0)) << "nothing to stream (in place)";
  EXPECT_FALSE(streams(std::size_t(1) << 40, ~std::size_t(0)));
}

TEST(StreamingThreshold, ByteCountsParse) {
  using normkit::impl::parse_byte_count;
  std::size_t v = 99;
  EXPECT_TRUE(parse_byte_count("0", v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parse_byte_count("12345", v));
  EXPECT_EQ(v, 12345u);
  EXPECT_TRUE(parse_byte_count("64k", v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(parse_byte_count("3M", v));
  EXPECT_EQ(v, 3145728u);
  EXPECT_TRUE(parse_byte_count("2g", v));
  EXPECT_EQ(v, std::size_t(2) << 30);
  for (const char* bad : {"", "-1", " 8", "8 ", "8MB", "8T", "M", "0x10", "99999999999999999999999"}) {
    v = 7;
    EXPECT_FALSE(parse_byte_count(bad, v)) << '"' << bad << '"';
    EXPECT_EQ(v, 7u) << '"' << bad << '"';
  }
  EXPECT_FALSE(parse_byte_count(nullptr, v));
}

// The process's threshold: NORMKIT_STREAM_MIN_BYTES when ctest sets it (NORMKIT_TEST_EXPECT_STREAM
// holds the bytes it means, written out by hand, or "cache" for a value that must be ignored),
// else a quarter of the reported cache; the setter replaces it.
TEST(StreamingThreshold, EnvironmentCacheAndSetter) {
  const char* expect = std::getenv("NORMKIT_TEST_EXPECT_STREAM");
  const std::size_t from_cache =
      normkit::detail::stream_threshold_for_cache(normkit::impl::last_level_cache_bytes());
  if (expect != nullptr && std::string(expect) != "cache") {
    EXPECT_EQ(std::to_string(normkit::stream_min_bytes()), std::string(expect));
  } else if (expect != nullptr || std::getenv("NORMKIT_STREAM_MIN_BYTES") == nullptr) {
    EXPECT_EQ(normkit::stream_min_bytes(), from_cache);
  }
  std::printf("last-level cache %zu bytes, stream_min_bytes %zu\n", normkit::impl::last_level_cache_bytes(),
              normkit::stream_min_bytes());
  const std::size_t saved = normkit::stream_min_bytes();
  normkit::set_stream_min_bytes(4096);
  EXPECT_EQ(normkit::stream_min_bytes(), 4096u);
  normkit::set_stream_min_bytes(saved);
  EXPECT_EQ(normkit::stream_min_bytes(), saved);
}

// The decision is the whole call's: a call over the threshold streams in every task (and one
// under it in none), with the same bits either way; the public overloads set the flag before
// splitting (with_stream_decision).
TEST(StreamingThreshold, WholeCallDecisionReachesTheTasks) {
  using op = normkit::detail::rms_norm_op;
  const std::size_t saved = normkit::stream_min_bytes();
  std::vector<float> xs(64 * 4096), ys(64 * 4096);  // real rows: slice() advances the pointers
  op::args<float, float, float> a{xs.data(), nullptr, ys.data(), 64, 4096, 1e-6f, 4096, 4096};
  normkit::set_stream_min_bytes(std::size_t(1) << 20);  // the call writes 1 MiB
  const auto d = normkit::impl::with_stream_decision<op>(a);
  EXPECT_TRUE(d.stream);
  EXPECT_TRUE(op::slice(d, 60, 4).stream) << "a 64 KiB slice of a streamed call streams too";
  normkit::set_stream_min_bytes((std::size_t(1) << 20) + 1);
  EXPECT_FALSE(normkit::impl::with_stream_decision<op>(a).stream);
  // In place (y == x) never streams, whatever the threshold: every line written was just read.
  std::vector<float> buf(64 * 4096);
  op::args<float, float, float> in_place{buf.data(), nullptr, buf.data(), 64, 4096, 1e-6f, 4096, 4096};
  normkit::set_stream_min_bytes(0);
  EXPECT_FALSE(normkit::impl::with_stream_decision<op>(in_place).stream);
  in_place.y = buf.data() + 1;  // not in place (an overlap the checks refuse; the decision only)
  EXPECT_TRUE(normkit::impl::with_stream_decision<op>(in_place).stream);
  normkit::set_stream_min_bytes(saved);
}

}  // namespace
