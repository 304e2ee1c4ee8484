// SPDX-License-Identifier: MIT
// Differential fuzzing of normkit::convert<Src, Dst>(src, dst, n) through the public API.
//
// One input picks Src/Dst, n in [0, 4096] (biased to vector widths +-1), placement (ends at a
// guard page, or starts right after one at an element offset), in place (Src == Dst), values
// (raw bits from the input, then random patterns) and one malformation (null pointer, partial
// overlap, in place across types, misaligned pointer, size overflow, address wrap) or none.
// Invariants (any violation aborts): the status follows the documented rules; a rejected call
// changes no byte; an accepted call writes exactly dst[0, n) with the bits of the scalar
// conversion of types.hpp (dst[i] = Dst(float(src[i]))) on every available ISA, reads nothing
// outside src[0, n), and in place gives the bits of out of place.
#include <normkit/normkit.hpp>

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t, std::uintptr_t, PTRDIFF_MAX, SIZE_MAX
#include <cstdio>   // std::fprintf
#include <vector>   // std::vector

#include "../bad_inputs.hpp"
#include "guarded.hpp"
#include "values.hpp"

namespace {

using namespace normkit_fuzz;
using normkit::isa;
using normkit::status;

enum class malform : unsigned {
  none,
  null_src,
  null_dst,
  overlap,
  in_place_other_type,
  misaligned,
  size_overflow,
  address_wrap,
  count
};

// The documented rules (convert.hpp, README status table), written out independently of
// core/validate.hpp in the bad-input catalogue (tests/bad_inputs.hpp).
status expected_status(std::uintptr_t src, std::uintptr_t dst, std::size_t n, std::size_t s_size,
                       std::size_t d_size, bool same_type) {
  namespace bad = normkit_test::bad_inputs;
  bad::call c{false, 0.0f, {}, {}, same_type};
  c.inputs.push_back({src, 1, n, n, s_size, false});
  c.output = {dst, 1, n, n, d_size, false};
  return bad::expected_status(c);
}

template <class Src, class Dst>
void run_case(FuzzedDataProvider& in) {
  constexpr std::size_t ss = sizeof(Src), ds = sizeof(Dst);
  constexpr bool same_type = std::is_same<Src, Dst>::value;
  const std::size_t n = pick_cols(in);
  const bool anchor_end = in.ConsumeIntegralInRange<int>(0, 3) != 0;
  const std::size_t lead_s = in.ConsumeIntegralInRange<std::size_t>(0, 15) * ss;
  const std::size_t lead_d = in.ConsumeIntegralInRange<std::size_t>(0, 15) * ds;
  const bool in_place = same_type && in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const unsigned m = in.ConsumeIntegralInRange<unsigned>(0, 2 * static_cast<unsigned>(malform::count));
  const malform mode = m < static_cast<unsigned>(malform::count) ? static_cast<malform>(m) : malform::none;
  const std::size_t pick = in.ConsumeIntegral<std::size_t>();
  prng g(in.ConsumeIntegral<std::uint64_t>());
  std::vector<Src> sv(n);
  fill_values(sv.data(), n,
              in.ConsumeIntegralInRange<int>(0, 3) ? value_class::raw : static_cast<value_class>(pick % 7), g,
              in);

  tensor ts(1, n, n, ss, anchor_end, lead_s);
  tensor td(1, n, n, ds, anchor_end, lead_d);
  std::uintptr_t src = reinterpret_cast<std::uintptr_t>(ts.data());
  std::uintptr_t dst = in_place ? src : reinterpret_cast<std::uintptr_t>(td.data());
  std::size_t count = n;
  switch (mode) {
    case malform::none:
      break;
    case malform::null_src:
      src = 0;
      break;
    case malform::null_dst:
      dst = 0;
      break;
    case malform::overlap:  // dst starts inside src (exactly in place only when aligned to src)
      dst = (src + (n ? pick % (n * ss) : 0)) / ds * ds;
      break;
    case malform::in_place_other_type:
      dst = src;
      break;
    case malform::misaligned:
      if (pick & 1)
        src += 1;
      else
        dst += 1;
      break;
    case malform::size_overflow:
      count = static_cast<std::size_t>(PTRDIFF_MAX) / (pick & 1 ? ss : ds) + 1 + pick % 5;
      break;
    case malform::address_wrap: {
      const bool on_src = pick & 1;
      const std::size_t elem = on_src ? ss : ds, bytes = n * elem;
      const std::uintptr_t top =
          bytes ? (std::uintptr_t{0} - bytes + (pick >> 1) % bytes) / elem * elem : UINTPTR_MAX / elem * elem;
      (on_src ? src : dst) = top;
      break;
    }
    case malform::count:
      break;
  }
  const status want = expected_status(src, dst, count, ss, ds, same_type);
  const bool writes_src = same_type && dst == src && src == reinterpret_cast<std::uintptr_t>(ts.data());
  if (want == status::ok && count > 0)
    FUZZ_CHECK(writes_src || dst == reinterpret_cast<std::uintptr_t>(td.data()),
               "harness: accepted foreign dst");

  if (verbose())
    std::fprintf(stderr, "convert<%s,%s> n=%zu in_place=%d mode=%u -> %s\n", type_name<Src>(),
                 type_name<Dst>(), count, writes_src, static_cast<unsigned>(mode), normkit::to_string(want));

  // contract (types.hpp): dst[i] = Dst(float(src[i])), the scalar conversions, on every path.
  std::vector<Dst> want_d(n);
  for (std::size_t i = 0; i < n; ++i)
    want_d[i] = normkit::from_float<Dst>(normkit::to_float(sv[i]));

  const std::vector<Dst> fill(n, from_bits<Dst>(0x5a5a5a5au));
  std::vector<Dst> got(n);
  const isa before = normkit::active_isa();
  for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::neon}) {
    if (!normkit::isa_available(i))
      continue;
    const status selected = normkit::set_isa(i);
    if (selected == status::isa_above_ceiling)  // NORMKIT_ISA caps this process below i
      continue;
    FUZZ_CHECK(selected == status::ok, "set_isa(%s)", normkit::to_string(i));
    ts.set_rows(sv.data());
    td.set_rows(fill.data());
    const auto s_snap = ts.snapshot(), d_snap = td.snapshot();
    ts.arm(), td.arm();
    const status s = normkit::convert(reinterpret_cast<const Src*>(src), reinterpret_cast<Dst*>(dst), count);
    ts.disarm(), td.disarm();
    const char* isa_name = normkit::to_string(i);
    FUZZ_CHECK(s == want, "%s convert<%s,%s> n=%zu mode=%u: status %s, want %s", isa_name, type_name<Src>(),
               type_name<Dst>(), count, static_cast<unsigned>(mode), normkit::to_string(s),
               normkit::to_string(want));
    if (s != status::ok || count == 0) {
      FUZZ_CHECK(ts.same_as(s_snap) && td.same_as(d_snap), "%s: a rejected or empty convert wrote memory",
                 isa_name);
      continue;
    }
    const tensor& out = writes_src ? ts : td;
    FUZZ_CHECK(writes_src || ts.same_as(s_snap), "%s: src changed by an out-of-place convert", isa_name);
    const long bad = out.outside_rows_changed();
    FUZZ_CHECK(bad < 0, "%s: byte %ld of the destination span, outside [0, n), was written", isa_name, bad);
    out.get_rows(got.data());
    for (std::size_t k = 0; k < n; ++k)
      FUZZ_CHECK(bits(got[k]) == bits(want_d[k]),
                 "%s convert<%s,%s> %s n=%zu: [%zu] src 0x%08x -> 0x%08x, want 0x%08x", isa_name,
                 type_name<Src>(), type_name<Dst>(), writes_src ? "in place" : "out of place", n, k,
                 bits(sv[k]), bits(got[k]), bits(want_d[k]));
  }
  (void)normkit::set_isa(before);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const unsigned ts = in.ConsumeIntegral<std::uint8_t>(), td = in.ConsumeIntegral<std::uint8_t>();
  with_storage_type(ts, [&](auto s) {
    with_storage_type(td,
                      [&](auto d) { run_case<typename decltype(s)::type, typename decltype(d)::type>(in); });
  });
  return 0;
}
