// Parity: every ISA path returns the reference's bits (DESIGN.md, promise 2).
#include "support.hpp"

namespace {

using namespace normkit_test;
using normkit::isa;

class Parity : public ::testing::TestWithParam<isa> {};

template <class Policy, class In, class W, class Out>
void check_rms(isa i, std::size_t rows, std::size_t cols, rng& r) {
  auto x = normal_vec<In>(r, rows * cols);
  auto g = uniform_vec<W>(r, cols, 0.5f, 1.5f);
  std::vector<Out> want(rows * cols), got(rows * cols);
  ASSERT_EQ(normkit::reference::rms_norm<Policy>(x.data(), g.data(), want.data(), rows, cols, 1e-6f),
            normkit::status::ok);
  ASSERT_EQ(normkit::rms_norm<Policy>(x.data(), g.data(), got.data(), rows, cols, 1e-6f), normkit::status::ok);
  EXPECT_SAME_BITS(got, want, std::string(normkit::to_string(i)) + " rms cols=" + std::to_string(cols));
}

TEST_P(Parity, RmsNormSmoke) {
  NORMKIT_USE_ISA(GetParam());
  rng r(1);
  for (std::size_t cols : {1u, 7u, 64u, 65u, 128u, 300u, 4097u}) {
    check_rms<normkit::llama, bf16, bf16, bf16>(GetParam(), 3, cols, r);
    check_rms<normkit::gemma, float, float, float>(GetParam(), 3, cols, r);
    check_rms<normkit::t5, fp16, bf16, float>(GetParam(), 3, cols, r);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, Parity, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
