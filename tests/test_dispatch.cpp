// Runtime ISA choice: best supported ISA by default, NORMKIT_ISA and set_isa cap it, an
// unavailable request falls back to the best ISA below it, and nothing ever runs an instruction
// the CPU lacks (ctest also runs the corpus under qemu -cpu Nehalem / Haswell).
#include "support.hpp"

#include <cstdlib>  // std::getenv
#include <cstring>  // std::strcmp

namespace {

using normkit::isa;

// What the CPU offers, asked independently of normkit's cpuid code.
[[maybe_unused]] bool cpu_has(isa i) {
  switch (i) {
    case isa::scalar:
      return true;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    case isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512vl") && cpu_has(isa::avx2);
#elif defined(__x86_64__)
    case isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#elif defined(__aarch64__)
    case isa::neon:
      return true;
#endif
    default:
      return false;
  }
}

// The expected choice for a cap, from the rules in dispatch.hpp.
isa expected_for(isa cap) {
#if defined(__aarch64__)
  return cap == isa::neon ? isa::neon : isa::scalar;
#else
  if (cap == isa::neon || cap == isa::scalar)
    return isa::scalar;
  if (cap == isa::avx512 && cpu_has(isa::avx512))
    return isa::avx512;
  return cpu_has(isa::avx2) ? isa::avx2 : isa::scalar;
#endif
}

TEST(Dispatch, DefaultOrEnvironmentChoice) {
  const char* env = std::getenv("NORMKIT_ISA");
  isa want = expected_for(isa::avx512);
#if defined(__aarch64__)
  want = expected_for(isa::neon);
#endif
  for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::neon})
    if (env && std::strcmp(env, normkit::to_string(i)) == 0)
      want = expected_for(i);
  std::printf("NORMKIT_ISA=%s -> active %s\n", env ? env : "(unset)",
              normkit::to_string(normkit::active_isa()));
  EXPECT_EQ(normkit::to_string(normkit::active_isa()), std::string(normkit::to_string(want)));
}

TEST(Dispatch, SetIsaCapsAndFallsBack) {
  const isa before = normkit::active_isa();
  for (isa cap : {isa::scalar, isa::avx2, isa::avx512, isa::neon}) {
    const normkit::status s = normkit::set_isa(cap);
    EXPECT_EQ(normkit::active_isa(), expected_for(cap)) << normkit::to_string(cap);
    EXPECT_EQ(s, expected_for(cap) == cap ? normkit::status::ok : normkit::status::unsupported_isa)
        << normkit::to_string(cap);
    EXPECT_EQ(normkit::isa_available(cap), expected_for(cap) == cap) << normkit::to_string(cap);
  }
  (void)normkit::set_isa(static_cast<isa>(42));  // not an ISA: capped to the best there is
  EXPECT_NE(normkit::active_isa(), static_cast<isa>(42));
  (void)normkit::set_isa(before);
  EXPECT_EQ(normkit::active_isa(), before);
}

TEST(Dispatch, ScalarAlwaysAvailable) {
  EXPECT_TRUE(normkit::isa_available(isa::scalar));
  EXPECT_STREQ(normkit::to_string(isa::avx512), "avx512");
  EXPECT_STREQ(normkit::to_string(normkit::status::unsupported_isa), "unsupported_isa");
}

// Switching ISA between calls changes speed only: same bits from every path on one buffer.
TEST(Dispatch, SwitchingBetweenCallsKeepsBits) {
  normkit_test::rng r(7);
  auto x = normkit_test::normal_vec<normkit::bf16>(r, 4 * 777);
  auto g = normkit_test::uniform_vec<normkit::bf16>(r, 777, 0.5f, 1.5f);
  std::vector<normkit::bf16> want(x.size()), got(x.size());
  ASSERT_EQ(normkit::reference::rms_norm<normkit::llama>(x.data(), g.data(), want.data(), 4, 777, 1e-6f),
            normkit::status::ok);
  const isa before = normkit::active_isa();
  for (isa cap : {isa::avx512, isa::scalar, isa::avx2, isa::neon}) {
    (void)normkit::set_isa(cap);
    ASSERT_EQ(normkit::rms_norm<normkit::llama>(x.data(), g.data(), got.data(), 4, 777, 1e-6f),
              normkit::status::ok);
    EXPECT_SAME_BITS(got, want, normkit::to_string(normkit::active_isa()));
  }
  (void)normkit::set_isa(before);
}

}  // namespace
