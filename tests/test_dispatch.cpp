// SPDX-License-Identifier: MIT
// Runtime ISA choice (dispatch.hpp): best supported ISA by default; NORMKIT_ISA (any case) is a
// ceiling, and a ceiling the CPU lacks falls back to the best ISA below it; an unknown value is
// ignored and reported once; set_isa selects exactly a runnable ISA within the ceiling or changes
// nothing; nothing ever runs an instruction the CPU lacks (ctest also runs the corpus under qemu
// -cpu Nehalem / Haswell). ctest runs Dispatch.* once per NORMKIT_ISA value (dispatch_env_*).
#include "support.hpp"

#include <cstdlib>  // std::getenv
#include <fstream>  // std::ifstream
#include <string>   // std::string

namespace {

using normkit::isa;

// A flag of /proc/cpuinfo's first "flags" line (Linux), e.g. "avx512_bf16".
[[maybe_unused]] bool cpuinfo_flag(const std::string& flag) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("flags", 0) == 0)
      return (line + " ").find(" " + flag + " ") != std::string::npos;
  return false;
}

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
#if defined(__x86_64__)
    case isa::avx512bf16:
      return cpuinfo_flag("avx512_bf16") && cpu_has(isa::avx512);
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
  if (cap == isa::avx512bf16 && cpu_has(isa::avx512bf16))
    return isa::avx512bf16;
  if ((cap == isa::avx512 || cap == isa::avx512bf16) && cpu_has(isa::avx512))
    return isa::avx512;
  return cpu_has(isa::avx2) ? isa::avx2 : isa::scalar;
#endif
}

// NORMKIT_ISA as the tests read it: ASCII lower-cased, then one of the four names.
struct env_reading {
  bool set = false;    // non-empty
  bool known = false;  // one of the names
  isa ceiling = isa::avx512bf16;
};

env_reading read_env() {
  env_reading r;
#if defined(__aarch64__)
  r.ceiling = isa::neon;
#endif
  const char* env = std::getenv("NORMKIT_ISA");
  if (env == nullptr || env[0] == '\0')
    return r;
  r.set = true;
  std::string lower(env);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::avx512bf16, isa::neon})
    if (lower == normkit::to_string(i))
      r.known = true, r.ceiling = i;
  return r;
}

// Runs first in its process under ctest's dispatch_env_* entries, so the first ISA query happens
// here and the stderr report (when the value is unknown) can be counted.
TEST(Dispatch, DefaultOrEnvironmentChoice) {
  const env_reading env = read_env();
  ::testing::internal::CaptureStderr();
  const isa active = normkit::active_isa();
  const char* error = normkit::isa_environment_error();
  (void)normkit::active_isa();
  (void)normkit::set_isa(isa::scalar);  // a later query must not report again
  (void)normkit::set_isa(active);
  const std::string err = ::testing::internal::GetCapturedStderr();
  std::printf("NORMKIT_ISA=%s -> active %s\n",
              std::getenv("NORMKIT_ISA") ? std::getenv("NORMKIT_ISA") : "(unset)",
              normkit::to_string(active));
  EXPECT_EQ(normkit::to_string(active), std::string(normkit::to_string(expected_for(env.ceiling))));
  EXPECT_EQ(normkit::isa_ceiling(), env.ceiling);
  if (env.set && !env.known) {
    ASSERT_NE(error, nullptr) << "an unknown NORMKIT_ISA must be reported";
    EXPECT_NE(std::string(error).find(std::string("NORMKIT_ISA=\"") + std::getenv("NORMKIT_ISA") + "\""),
              std::string::npos)
        << error;
    std::size_t reports = 0;
    for (std::size_t at = err.find("NORMKIT_ISA="); at != std::string::npos;
         at = err.find("NORMKIT_ISA=", at + 1))
      ++reports;
    EXPECT_EQ(reports, 1u) << "stderr: " << err;
  } else {
    EXPECT_EQ(error, nullptr) << error;
    EXPECT_EQ(err.find("NORMKIT_ISA"), std::string::npos) << err;
  }
}

// set_isa(i): exactly i when i runs here and is not above the NORMKIT_ISA ceiling; otherwise
// unsupported_isa / isa_above_ceiling, and the active ISA does not move.
TEST(Dispatch, SetIsaSelectsExactlyOrChangesNothing) {
  const env_reading env = read_env();
  const isa before = normkit::active_isa();
  for (isa from : {isa::scalar, before}) {
    for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::avx512bf16, isa::neon, static_cast<isa>(42)}) {
      ASSERT_EQ(normkit::set_isa(from), normkit::status::ok) << normkit::to_string(from);
      const bool runs = i == isa::scalar || (i != static_cast<isa>(42) && expected_for(i) == i);
      const bool within = i == isa::scalar || ((i == isa::neon) == (env.ceiling == isa::neon) &&
                                               static_cast<int>(i) <= static_cast<int>(env.ceiling));
      const normkit::status want = !runs     ? normkit::status::unsupported_isa
                                   : !within ? normkit::status::isa_above_ceiling
                                             : normkit::status::ok;
      const std::string tag = std::string(normkit::to_string(i)) + " from " + normkit::to_string(from);
      EXPECT_EQ(normkit::isa_available(i), runs) << tag;
      EXPECT_EQ(normkit::set_isa(i), want) << tag;
      EXPECT_EQ(normkit::active_isa(), want == normkit::status::ok ? i : from) << tag;
    }
  }
  ASSERT_EQ(normkit::set_isa(before), normkit::status::ok);
  EXPECT_EQ(normkit::active_isa(), before);
}

// The 0.1 bug: set_isa(neon) on x86 reported unsupported_isa and still switched to scalar.
TEST(Dispatch, FailedSetIsaKeepsTheActiveIsa) {
  const isa before = normkit::active_isa();
#if defined(__aarch64__)
  const isa foreign = isa::avx2;
#else
  const isa foreign = isa::neon;
#endif
  EXPECT_EQ(normkit::set_isa(foreign), normkit::status::unsupported_isa);
  EXPECT_EQ(normkit::active_isa(), before);
}

TEST(Dispatch, ScalarAlwaysAvailable) {
  EXPECT_TRUE(normkit::isa_available(isa::scalar));
  EXPECT_STREQ(normkit::to_string(isa::avx512), "avx512");
  EXPECT_EQ(std::string(normkit::to_string(normkit::status::unsupported_isa)).rfind("unsupported_isa: ", 0),
            0u);
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
  for (isa pick : {isa::avx512bf16, isa::avx512, isa::scalar, isa::avx2, isa::neon}) {
    (void)normkit::set_isa(pick);  // an ISA that cannot be selected leaves the previous one
    ASSERT_EQ(normkit::rms_norm<normkit::llama>(x.data(), g.data(), got.data(), 4, 777, 1e-6f),
              normkit::status::ok);
    EXPECT_SAME_BITS(got, want, normkit::to_string(normkit::active_isa()));
  }
  (void)normkit::set_isa(before);
}

}  // namespace
