// SPDX-License-Identifier: MIT
// Runtime ISA choice (dispatch.hpp): best supported ISA by default; NORMKIT_ISA (any case) is a
// ceiling, and a ceiling the CPU lacks falls back to the best ISA below it; an unknown value is
// ignored and reported once; set_isa selects exactly a runnable ISA within the ceiling or changes
// nothing; nothing ever runs an instruction the CPU lacks (ctest also runs the corpus under qemu
// -cpu Nehalem / Haswell); the automatic choice takes the kernels a CPU prefers narrower from the
// narrower ISA (dispatch/preference.hpp), a named ISA runs its own. ctest runs Dispatch.* once per
// NORMKIT_ISA value (dispatch_env_*).
#include "support.hpp"

#include <cstdlib>  // std::getenv
#include <fstream>  // std::ifstream
#include <memory>   // std::unique_ptr
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
    case isa::avx512fp16:
      return cpuinfo_flag("avx512_fp16") && cpu_has(isa::avx512bf16);
#endif
    default:
      return false;
  }
}

// A field of /proc/cpuinfo's first processor ("vendor_id", "cpu family"), empty when absent.
[[maybe_unused]] std::string cpuinfo_field(const std::string& name) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(name, 0) == 0 && line.find(':') != std::string::npos) {
      const std::string rest = line.substr(line.find(':') + 1);
      const std::size_t start = rest.find_first_not_of(" \t");
      return start == std::string::npos ? std::string() : rest.substr(start);
    }
  return {};
}

// The expected choice for a cap, from the rules in dispatch.hpp.
isa expected_for(isa cap) {
#if defined(__aarch64__)
  return cap == isa::neon ? isa::neon : isa::scalar;
#else
  if (cap == isa::neon || cap == isa::scalar)
    return isa::scalar;
  if (cap == isa::avx512fp16 && cpu_has(isa::avx512fp16))
    return isa::avx512fp16;
  if ((cap == isa::avx512bf16 || cap == isa::avx512fp16) && cpu_has(isa::avx512bf16))
    return isa::avx512bf16;
  if ((cap == isa::avx512 || cap == isa::avx512bf16 || cap == isa::avx512fp16) && cpu_has(isa::avx512))
    return isa::avx512;
  return cpu_has(isa::avx2) ? isa::avx2 : isa::scalar;
#endif
}

// NORMKIT_ISA as the tests read it: ASCII lower-cased, then one of the four names.
struct env_reading {
  bool set = false;    // non-empty
  bool known = false;  // one of the names
  isa ceiling = isa::avx512fp16;
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
  for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::avx512bf16, isa::avx512fp16, isa::neon})
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
  const bool automatic = normkit::isa_automatic();
#if defined(NORMKIT_RUNTIME_DISPATCH)
  // Before any set_isa: the automatic table where a preference applies, else the ISA's own.
  const normkit::impl::dispatch_tables& tables = normkit::impl::tables();
  const isa narrower = normkit::impl::narrower_isa(active, normkit::impl::cpu());
  const bool preferred = automatic && narrower != active && normkit::isa_available(narrower);
  EXPECT_EQ(tables.have_automatic, preferred);
  if (active != isa::scalar) {
    EXPECT_EQ(normkit::impl::active_table(),
              preferred ? &tables.automatic : &tables.t[static_cast<int>(active)]);
  }
#endif
  (void)normkit::active_isa();
  (void)normkit::set_isa(isa::scalar);  // a later query must not report again
  (void)normkit::set_isa(active);
  const std::string err = ::testing::internal::GetCapturedStderr();
  std::printf("NORMKIT_ISA=%s -> active %s\n",
              std::getenv("NORMKIT_ISA") ? std::getenv("NORMKIT_ISA") : "(unset)",
              normkit::to_string(active));
  EXPECT_EQ(normkit::to_string(active), std::string(normkit::to_string(expected_for(env.ceiling))));
  EXPECT_EQ(automatic, !env.known) << "the choice is automatic exactly when NORMKIT_ISA names no ISA";
  EXPECT_FALSE(normkit::isa_automatic()) << "set_isa ends the automatic choice";
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
    for (isa i : {isa::scalar, isa::avx2, isa::avx512, isa::avx512bf16, isa::avx512fp16, isa::neon,
                  static_cast<isa>(42)}) {
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
  for (isa pick : {isa::avx512fp16, isa::avx512bf16, isa::avx512, isa::scalar, isa::avx2, isa::neon}) {
    (void)normkit::set_isa(pick);  // an ISA that cannot be selected leaves the previous one
    ASSERT_EQ(normkit::rms_norm<normkit::llama>(x.data(), g.data(), got.data(), 4, 777, 1e-6f),
              normkit::status::ok);
    EXPECT_SAME_BITS(got, want, normkit::to_string(normkit::active_isa()));
  }
  (void)normkit::set_isa(before);
}

// cpuid's family field and the split-AVX-512 rule (core/cpu.hpp) on leaf-1 EAX values of real
// CPUs, then the detection on this CPU against /proc/cpuinfo.
TEST(Dispatch, SplitAvx512IsAmdFamily19hWithAvx512) {
  using normkit::impl::cpu_family;
  using normkit::impl::splits_avx512;
  EXPECT_EQ(cpu_family(0x00a10f11u), 0x19u);  // EPYC 9004 (Zen 4, Genoa)
  EXPECT_EQ(cpu_family(0x00a00f11u), 0x19u);  // EPYC 7003 (Zen 3, Milan)
  EXPECT_EQ(cpu_family(0x00b00f21u), 0x1au);  // EPYC 9005 (Zen 5, Turin)
  EXPECT_EQ(cpu_family(0x000806f8u), 0x6u);   // Xeon 4th gen (Sapphire Rapids)
  EXPECT_EQ(cpu_family(0x00800f12u), 0x17u);  // EPYC 7001 (Zen 1)
  EXPECT_TRUE(splits_avx512(true, 0x19u, true));
  EXPECT_FALSE(splits_avx512(true, 0x19u, false));  // Zen 3
  EXPECT_FALSE(splits_avx512(true, 0x1au, true));   // Zen 5
  EXPECT_FALSE(splits_avx512(false, 0x6u, true));   // Intel
  EXPECT_FALSE(splits_avx512(false, 0x19u, true));
#if defined(__x86_64__) && defined(__linux__)
  const std::string vendor = cpuinfo_field("vendor_id"), family = cpuinfo_field("cpu family");
  if (vendor.empty() || family.empty())
    GTEST_SKIP() << "no vendor_id / cpu family in /proc/cpuinfo";
  const bool want = vendor == "AuthenticAMD" && std::stoul(family) == 0x19u && cpu_has(isa::avx512);
  std::printf("vendor %s, family %s, avx512 %d -> avx512_split %d\n", vendor.c_str(), family.c_str(),
              static_cast<int>(cpu_has(isa::avx512)), static_cast<int>(normkit::impl::cpu().avx512_split));
  EXPECT_EQ(normkit::impl::cpu().avx512_split, want);
#else
  EXPECT_FALSE(normkit::impl::cpu().avx512_split);
#endif
}

void kernel_a(const void*) {}
void kernel_b(const void*) {}

// The preference replaces exactly the kernels with fp16 in a type slot, and only where the
// narrower table has one. Checked through lookup (table.hpp's compile-time entry index), which
// shares no code with the preference's run-time decoding of an entry.
TEST(Dispatch, PreferenceReplacesExactlyTheFp16Kernels) {
  namespace d = normkit::detail;
  using normkit::bf16;
  using normkit::fp16;
  auto t = std::make_unique<d::kernel_table>(), from = std::make_unique<d::kernel_table>();
  for (auto& f : t->fn)
    f = &kernel_a;
  for (auto& f : from->fn)
    f = &kernel_b;
  using RK = d::rms_norm_op::knobs::template at<0>;
  from->fn[d::entry_index<d::rms_norm_op, RK, fp16, fp16, bf16>] = nullptr;  // the narrower ISA lacks it
  normkit::impl::prefer_kernels_using<fp16>(d::ops{}, *t, *from);

  const d::kernel_fn a = &kernel_a, b = &kernel_b;
  using LK = d::layer_norm_op::knobs::template at<d::layer_norm_op::knobs::size - 1>;
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, fp16, fp16, fp16>(*t)), b);
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, float, fp16, float>(*t)), b);
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, bf16, bf16, fp16>(*t)), b);
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, fp16, fp16, bf16>(*t)), a) << "no narrower kernel: its own stays";
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, bf16, bf16, bf16>(*t)), a);
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, float, float, float>(*t)), a);
  EXPECT_EQ((d::lookup<d::rms_norm_op, RK, float, bf16, bf16>(*t)), a);
  EXPECT_EQ((d::lookup<d::layer_norm_op, LK, fp16, float, bf16>(*t)), b);
  EXPECT_EQ((d::lookup<d::layer_norm_op, LK, bf16, float, float>(*t)), a);
  using BK = d::rms_norm_backward_op::knobs::template at<0>;
  EXPECT_EQ((d::lookup<d::rms_norm_backward_op, BK, fp16>(*t)), b);
  EXPECT_EQ((d::lookup<d::rms_norm_backward_op, BK, bf16>(*t)), a);
  using CK = d::convert_op::knobs::template at<0>;
  EXPECT_EQ((d::lookup<d::convert_op, CK, float, fp16>(*t)), b);
  EXPECT_EQ((d::lookup<d::convert_op, CK, bf16, float>(*t)), a);
  using QK = d::quantize_op::knobs::template at<0>;
  EXPECT_EQ((d::lookup<d::quantize_op, QK, normkit::e4m3>(*t)), a);

  // Counted: a norm's In x W x Out over {f32, bf16, fp16} has 27 - 8 combinations with an fp16
  // per knob set (one of rms_norm's lacks a narrower kernel above); the quantize op has no fp16.
  auto count = [&](auto op, d::kernel_fn f) {
    using Op = decltype(op);
    std::size_t n = 0;
    for (std::size_t e = 0; e < d::op_entries<Op>; ++e)
      n += t->fn[d::op_offset<Op, d::ops>::value + e] == f;
    return n;
  };
  EXPECT_EQ(count(d::rms_norm_op{}, b), d::rms_norm_op::knobs::size * 19 - 1);
  EXPECT_EQ(count(d::layer_norm_op{}, b), d::layer_norm_op::knobs::size * 19);
  EXPECT_EQ(count(d::quantize_op{}, a), d::op_entries<d::quantize_op>);
}

}  // namespace
