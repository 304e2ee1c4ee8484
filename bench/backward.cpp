// SPDX-License-Identifier: MIT
// normkit_bench_backward: the backward passes at 4096 x 4096 bf16 (single thread) against the copy
// roof of the same bytes, next to the naive two-loop backward and PyTorch's formulas
// (backward_baselines.cpp), in one binary and one run.
//
//   bytes = dy + x + dx (rows x cols x 2 each) + statistics (rows x 4, LayerNorm x 2)
//           + gamma (cols x 2) + dgamma (cols x 4, LayerNorm + dbeta)
//   roof  = the faster of memcpy and a streaming copy of bytes / 2 into another buffer (so the
//           copy moves the same number of bytes: half read, half written)
//
// Every case rotates over buffer sets covering max(2x the last-level cache, 1 GiB) (machine.hpp),
// so 4096 x 4096 streams from DRAM on any machine.
//
//   build/bench/bench/normkit_bench_backward --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <normkit/normkit.hpp>

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t
#include <cstdlib>  // std::aligned_alloc, std::free
#include <cstring>  // std::memcpy
#include <new>      // std::bad_alloc
#include <vector>   // std::vector

#include "backward_baselines.hpp"
#include "baselines.hpp"  // stream_copy
#include "machine.hpp"    // rotation_sets

namespace {

using normkit::bf16;
constexpr std::size_t rows = 4096, cols = 4096;

// Buffers start on a cache line, as an engine's tensors do (PyTorch's CPU allocator: 64 bytes,
// c10/core/alignment.h, gAlignment) and as normkit_bench's do: each row of dx then begins on a
// line, where std::vector's 16-byte alignment gave every row a head of partial chunks before its
// first streamed line.
template <class T>
struct aligned64 {
  using value_type = T;
  aligned64() = default;
  template <class U>
  aligned64(const aligned64<U>&) {}
  T* allocate(std::size_t n) {
    void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
    if (!p)
      throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  bool operator==(const aligned64<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const aligned64<U>&) const {
    return false;
  }
};
template <class T>
using buffer = std::vector<T, aligned64<T>>;

// The tensors of one call. A run rotates over enough of them to stream from DRAM on any machine
// (machine.hpp: max(2x the LLC, 1 GiB)), as normkit_bench's DRAM cases do: one 96 MiB set, reused,
// ran partly from the Intel VM's 260-300 MiB L3.
struct tensors {
  buffer<bf16> dy, x, dx;
  buffer<float> rstd, mean;
};

struct data {
  std::vector<tensors> sets;
  buffer<bf16> gamma;
  buffer<float> dgamma, dbeta;
  data() : gamma(cols), dgamma(cols), dbeta(cols) {
    std::uint32_t s = 1;
    auto next = [&] {
      s = s * 1664525u + 1013904223u;
      return static_cast<float>(s >> 8) * 0x1p-24f - 0.5f;
    };
    for (auto& g : gamma)
      g = bf16(1.0f + next() * 0.2f);
    const std::size_t n = rows * cols, set_bytes = 3 * n * sizeof(bf16) + 2 * rows * sizeof(float);
    sets.resize(normkit_bench::rotation_sets(true, set_bytes));
    buffer<bf16> y(n);
    for (tensors& t : sets) {
      t.dy.resize(n), t.x.resize(n), t.dx.resize(n, bf16(0.0f)), t.rstd.resize(rows), t.mean.resize(rows);
      for (std::size_t i = 0; i < n; ++i)
        t.x[i] = bf16(next() * 4.0f), t.dy[i] = bf16(next());
      (void)normkit::layer_norm_fwd<normkit::pytorch>(t.x.data(), gamma.data(),
                                                      static_cast<const bf16*>(nullptr), y.data(),
                                                      t.mean.data(), t.rstd.data(), rows, cols, 1e-5f);
    }
  }
  static data& get() {
    static data d;
    return d;
  }
  // The next set of the rotation.
  tensors& next(std::size_t& k) {
    tensors& t = sets[k];
    k = k + 1 == sets.size() ? 0 : k + 1;
    return t;
  }
};

double bytes_of(bool layer) {
  const double stats = layer ? 2.0 : 1.0, grads = layer ? 2.0 : 1.0;
  return 3.0 * rows * cols * sizeof(bf16) + stats * rows * sizeof(float) + cols * sizeof(bf16) +
         grads * cols * sizeof(float);
}

void report(benchmark::State& st, bool layer, std::size_t sets) {
  st.counters["GB/s"] = benchmark::Counter(bytes_of(layer), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["sets"] = benchmark::Counter(static_cast<double>(sets));
}

// The roof: bytes / 2 copied into other bytes / 2, rotating over as many pairs as the kernels'
// sets (the same memory walked), allocated and touched before timing, shared by both ops' roofs.
void copy_roof(benchmark::State& st, bool layer, bool streaming) {
  const std::size_t half = static_cast<std::size_t>(bytes_of(layer) / 2);
  static std::vector<buffer<unsigned char>> a, b;
  const std::size_t sets = data::get().sets.size();
  if (a.size() != sets || a[0].size() != half) {
    a.assign(sets, buffer<unsigned char>(half, 1));
    b.assign(sets, buffer<unsigned char>(half, 2));
  }
  std::size_t k = 0;
  for (auto _ : st) {
    if (streaming)
      normkit_bench::stream_copy(b[k].data(), a[k].data(), half);
    else
      std::memcpy(b[k].data(), a[k].data(), half);
    benchmark::DoNotOptimize(b[k].data());
    k = k + 1 == sets ? 0 : k + 1;
  }
  report(st, layer, sets);
}

void BM_CopyRms(benchmark::State& st) {
  copy_roof(st, false, st.range(0) != 0);
}
void BM_CopyLayer(benchmark::State& st) {
  copy_roof(st, true, st.range(0) != 0);
}

void BM_RmsNormBackward(benchmark::State& st) {
  data& d = data::get();
  std::size_t k = 0;
  for (auto _ : st) {
    tensors& t = d.next(k);
    switch (st.range(0)) {
      case 0:
        (void)normkit::rms_norm_backward<normkit::llama>(
            t.dy.data(), t.x.data(), d.gamma.data(), t.rstd.data(), t.dx.data(), d.dgamma.data(), rows, cols);
        break;
      case 1:
        normkit_bench::naive_rms_norm_backward(t.dy.data(), t.x.data(), d.gamma.data(), t.rstd.data(),
                                               t.dx.data(), d.dgamma.data(), rows, cols);
        break;
      default:
        normkit_bench::pytorch_rms_norm_backward(t.dy.data(), t.x.data(), d.gamma.data(), t.rstd.data(),
                                                 t.dx.data(), d.dgamma.data(), rows, cols);
    }
    benchmark::DoNotOptimize(t.dx.data());
  }
  report(st, false, d.sets.size());
}

void BM_LayerNormBackward(benchmark::State& st) {
  data& d = data::get();
  std::size_t k = 0;
  for (auto _ : st) {
    tensors& t = d.next(k);
    switch (st.range(0)) {
      case 0:
        (void)normkit::layer_norm_backward<normkit::pytorch>(t.dy.data(), t.x.data(), d.gamma.data(),
                                                             t.mean.data(), t.rstd.data(), t.dx.data(),
                                                             d.dgamma.data(), d.dbeta.data(), rows, cols);
        break;
      case 1:
        normkit_bench::naive_layer_norm_backward(t.dy.data(), t.x.data(), d.gamma.data(), t.mean.data(),
                                                 t.rstd.data(), t.dx.data(), d.dgamma.data(), d.dbeta.data(),
                                                 rows, cols);
        break;
      default:
        normkit_bench::pytorch_layer_norm_backward(t.dy.data(), t.x.data(), d.gamma.data(), t.mean.data(),
                                                   t.rstd.data(), t.dx.data(), d.dgamma.data(),
                                                   d.dbeta.data(), rows, cols);
    }
    benchmark::DoNotOptimize(t.dx.data());
  }
  report(st, true, d.sets.size());
}

// range 0: normkit (dispatched), 1: naive two-loop, 2: PyTorch's formula. Copy: 0 memcpy, 1 streaming.
BENCHMARK(BM_CopyRms)->ArgName("streaming")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RmsNormBackward)->ArgName("impl")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CopyLayer)->ArgName("streaming")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LayerNormBackward)->ArgName("impl")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
