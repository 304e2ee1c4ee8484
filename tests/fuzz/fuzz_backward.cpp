// SPDX-License-Identifier: MIT
// Differential fuzzing of the backward ops (rms_norm_backward, layer_norm_backward) and of the
// statistics op behind rms_norm_fwd / layer_norm_fwd, through the public API.
//
// One input picks: op, T (dy, x, dx) and gamma in T or fp32, gain knob (llama: plain, gemma: 1 + gamma), rows
// 0-140, cols 0-4096 (biased to vector widths +-1), gamma present or null, value classes for x and dy (raw
// bits, ordinary, shifted, huge, tiny, constant, zeros), statistics from the forward or raw bit patterns
// (rstd <= 0, NaN, Inf: computed through), in place (dx == dy), and a split of the rows at block boundaries.
// Invariants (any violation aborts):
//   - the forward variants give the reference's y, rstd and mean bits on every available ISA;
//   - every available ISA gives the reference's dx, dgamma and dbeta bits;
//   - in place gives the bits of out of place;
//   - the partial / reduce pair over the split gives the bits of one call.
#include <normkit/normkit.hpp>

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t, std::uint32_t
#include <cstring>  // std::memcmp
#include <vector>   // std::vector

#include "guarded.hpp"
#include "values.hpp"

namespace {

using namespace normkit_fuzz;
using normkit::isa;
using normkit::status;

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class Policy, class T, class W>
void run_case(FuzzedDataProvider& in, bool layer) {
  const std::size_t rows = in.ConsumeIntegralInRange<std::size_t>(0, 140);
  std::size_t cols = pick_cols(in);
  if (rows * cols > 40000)  // keep one input fast
    cols = 40000 / rows;
  const bool with_gamma = in.ConsumeBool(), in_place = in.ConsumeBool(), raw_stats = in.ConsumeBool();
  const unsigned cx = in.ConsumeIntegral<std::uint8_t>(), cdy = in.ConsumeIntegral<std::uint8_t>();
  const float eps = in.ConsumeBool() ? 1e-5f : 0.0f;
  prng g(in.ConsumeIntegral<std::uint64_t>());
  std::vector<T> x(rows * cols), dy(rows * cols);
  std::vector<W> gamma(cols);
  fill_erased<T>(x.data(), x.size(), cx, g, in);
  fill_erased<T>(dy.data(), dy.size(), cdy, g, in);
  fill_erased<W>(gamma.data(), gamma.size(), 1, g, in);
  const W* gp = with_gamma ? gamma.data() : nullptr;
  const char* what = layer ? "layer_norm" : "rms_norm";

  // The forward variants on every ISA against the reference; their statistics feed the backward.
  std::vector<T> y_ref(rows * cols), y(rows * cols);
  std::vector<float> rstd(rows), mean(rows), rstd_got(rows), mean_got(rows);
  status s = layer ? normkit::reference::layer_norm_fwd<Policy>(x.data(), gp, static_cast<const W*>(nullptr),
                                                                y_ref.data(), mean.data(), rstd.data(), rows,
                                                                cols, eps)
                   : normkit::reference::rms_norm_fwd<Policy>(x.data(), gp, y_ref.data(), rstd.data(), rows,
                                                              cols, eps);
  FUZZ_CHECK(s == status::ok, "reference %s_fwd: %s", what, normkit::to_string(s));
  const isa before = normkit::active_isa();
  auto each_isa = [&](auto&& f) {
    for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::neon}) {
      if (!normkit::isa_available(i) || normkit::set_isa(i) != status::ok)
        continue;
      f(normkit::to_string(i));
    }
    (void)normkit::set_isa(before);
  };
  if (cols > 0)
    each_isa([&](const char* isa_name) {
      rstd_got = rstd, mean_got = mean;
      const status st =
          layer ? normkit::layer_norm_fwd<Policy>(x.data(), gp, static_cast<const W*>(nullptr), y.data(),
                                                  mean_got.data(), rstd_got.data(), rows, cols, eps)
                : normkit::rms_norm_fwd<Policy>(x.data(), gp, y.data(), rstd_got.data(), rows, cols, eps);
      FUZZ_CHECK(st == status::ok, "%s %s_fwd: %s", isa_name, what, normkit::to_string(st));
      FUZZ_CHECK(same(y, y_ref) && same(rstd_got, rstd) && same(mean_got, mean),
                 "%s %s_fwd<%s> %s/%s rows=%zu cols=%zu: y or statistics differ from the reference", isa_name,
                 what, Policy::name, type_name<T>(), type_name<W>(), rows, cols);
    });
  if (raw_stats)
    for (std::size_t r = 0; r < rows; ++r) {
      rstd[r] = f32(static_cast<std::uint32_t>(g.next()));
      mean[r] = in.ConsumeBool() ? mean[r] : f32(static_cast<std::uint32_t>(g.next()));
    }

  auto backward = [&](bool reference, const T* dyp, T* dx, float* dg, float* db) {
    if (layer)
      return reference ? normkit::reference::layer_norm_backward<Policy>(dyp, x.data(), gp, mean.data(),
                                                                         rstd.data(), dx, dg, db, rows, cols)
                       : normkit::layer_norm_backward<Policy>(dyp, x.data(), gp, mean.data(), rstd.data(), dx,
                                                              dg, db, rows, cols);
    return reference ? normkit::reference::rms_norm_backward<Policy>(dyp, x.data(), gp, rstd.data(), dx, dg,
                                                                     rows, cols)
                     : normkit::rms_norm_backward<Policy>(dyp, x.data(), gp, rstd.data(), dx, dg, rows, cols);
  };
  std::vector<T> dx_ref(rows * cols), dx(rows * cols);
  std::vector<float> dg_ref(cols), db_ref(cols), dg(cols), db(cols);
  s = backward(true, dy.data(), dx_ref.data(), dg_ref.data(), db_ref.data());
  FUZZ_CHECK(s == status::ok, "reference %s_backward: %s", what, normkit::to_string(s));

  // A split of the rows at block boundaries, for the partial / reduce pair.
  const std::size_t blocks = normkit::backward_blocks(rows);
  std::vector<std::size_t> cuts = {0};
  for (std::size_t k = 1; k < blocks; ++k)
    if (in.ConsumeBool())
      cuts.push_back(k * normkit::backward_block_rows);
  cuts.push_back(rows);
  std::vector<float> pg(blocks * cols), pb(blocks * cols);

  each_isa([&](const char* isa_name) {
    std::vector<T> dyi = dy;
    s = backward(false, in_place ? dyi.data() : dy.data(), in_place ? dyi.data() : dx.data(), dg.data(),
                 db.data());
    FUZZ_CHECK(s == status::ok, "%s %s_backward: %s", isa_name, what, normkit::to_string(s));
    FUZZ_CHECK(same(in_place ? dyi : dx, dx_ref) && same(dg, dg_ref) && (!layer || same(db, db_ref)),
               "%s %s_backward<%s> %s/%s rows=%zu cols=%zu%s: differs from the reference", isa_name, what,
               Policy::name, type_name<T>(), type_name<W>(), rows, cols, in_place ? " in place" : "");
    if (cols == 0)
      return;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const std::size_t r0 = cuts[c], n = cuts[c + 1] - r0, b0 = r0 / normkit::backward_block_rows;
      s = layer ? normkit::layer_norm_backward_partial<Policy>(
                      dy.data() + r0 * cols, x.data() + r0 * cols, gp, mean.data() + r0, rstd.data() + r0,
                      dx.data() + r0 * cols, pg.data() + b0 * cols, pb.data() + b0 * cols, n, cols)
                : normkit::rms_norm_backward_partial<Policy>(dy.data() + r0 * cols, x.data() + r0 * cols, gp,
                                                             rstd.data() + r0, dx.data() + r0 * cols,
                                                             pg.data() + b0 * cols, n, cols);
      FUZZ_CHECK(s == status::ok, "%s %s_backward_partial: %s", isa_name, what, normkit::to_string(s));
    }
    FUZZ_CHECK(normkit::backward_reduce(pg.data(), blocks, cols, dg.data()) == status::ok, "backward_reduce");
    FUZZ_CHECK(normkit::backward_reduce(pb.data(), blocks, cols, db.data()) == status::ok, "backward_reduce");
    FUZZ_CHECK(same(dx, dx_ref) && same(dg, dg_ref) && (!layer || same(db, db_ref)),
               "%s %s_backward_partial<%s> rows=%zu cols=%zu split in %zu: differs from one call", isa_name,
               what, Policy::name, rows, cols, cuts.size() - 1);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const bool layer = in.ConsumeBool(), offset = in.ConsumeBool();
  const unsigned tt = in.ConsumeIntegral<std::uint8_t>(), tw = in.ConsumeIntegral<std::uint8_t>();
  // gamma in T or in fp32: the kernels see it only as the fp32 gain row the entry point makes
  // (test_backward.cpp covers the other pairs), which keeps this harness's compile time down.
  with_storage_type(tt, [&](auto t) {
    using T = typename decltype(t)::type;
    auto run = [&](auto w) {
      using W = typename decltype(w)::type;
      if (offset)
        run_case<normkit::gemma, T, W>(in, layer);
      else
        run_case<normkit::llama, T, W>(in, layer);
    };
    if (tw % 2)
      run(tag<float>{});
    else
      run(tag<T>{});
  });
  return 0;
}
