// SPDX-License-Identifier: MIT
// One set of bits everywhere: a fixed corpus of inputs (integer-only generator, identical on
// every platform) run through every op, preset and storage combination; the FNV-1a hash of all
// outputs must equal the value pinned below on every ISA (scalar, AVX2, AVX-512, NEON), in
// static and runtime dispatch, and in every build of this file (g++/clang, -O0, -O3
// -march=native -ffp-contract=fast, -ffp-contract=off, aarch64 under qemu). The pinned value is
// the scalar reference's hash of the corpus: a change to it is a change of the numerical
// contract (docs/contract.md: K = 64 is fixed once golden data exists) and must be deliberate.
#include "support.hpp"

#include <cinttypes>  // PRIx64

// IEEE semantics for the corpus generator under clang's unsafe-math flags (see rng.hpp).
#if defined(__clang__)
#pragma float_control(precise, on, push)
#endif

namespace {

using namespace normkit_test;

constexpr std::uint64_t pinned_corpus_hash = 0xd746763f8c6e8b07ull;

struct shape {
  std::size_t rows, cols;
};
constexpr shape shapes[] = {{3, 1}, {2, 7}, {2, 64}, {2, 65}, {1, 300}, {2, 1000}, {1, 4097}};

// Rows that exercise every branch: ordinary, mean-shifted, overflow, non-finite, zero; the
// second ordinary shape (kind 5) starts each row with an outlier, so LayerNorm refines its shift:
// x_0 = 1e4, and x_0 = 1e25 (the squares overflow: refined after the rescale; 3e4 in fp16).
template <class T>
std::vector<T> corpus_rows(rng& r, std::size_t rows, std::size_t cols, std::size_t kind) {
  std::vector<T> v(rows * cols);
  for (std::size_t i = 0; i < v.size(); ++i) {
    float f = r.normal();
    if (kind == 5 && i % cols == 0)
      f = i == 0 ? 1e4f : std::is_same<T, fp16>::value ? 3e4f : 1e25f;
    switch (kind % 5) {
      case 1:
        f = 1000.0f + 0.01f * f;
        break;
      case 2:
        f = std::is_same<T, fp16>::value ? 6e4f * f : 3e19f * f;
        break;
      case 3:
        f = (i == v.size() / 2) ? normkit::detail::bits_float(0x7f800000u) : f;
        break;
      case 4:
        f = (i % 3 == 0) ? 0.0f : std::ldexp(f, -30);
        break;
      default:
        break;
    }
    v[i] = as<T>(f);
  }
  return v;
}

// Runs `call(x, gamma, beta, y, rows, cols)` over the corpus for one (In, W, Out) and hashes y.
template <class In, class W, class Out, class Call>
std::uint64_t hash_types(std::uint64_t h, Call call) {
  rng r(0x5eed);
  std::size_t kind = 0;
  for (const shape& s : shapes) {
    auto x = corpus_rows<In>(r, s.rows, s.cols, kind++);
    auto g = uniform_vec<W>(r, s.cols, 0.5f, 1.5f);
    auto b = uniform_vec<W>(r, s.cols, -1.0f, 1.0f);
    std::vector<Out> y(s.rows * s.cols);
    call(x.data(), g.data(), b.data(), y.data(), s.rows, s.cols);
    h = fnv1a(y.data(), y.size() * sizeof(Out), h);
  }
  return h;
}

template <class Policy, bool Reference, class In, class W, class Out>
std::uint64_t hash_policy_types(std::uint64_t h) {
  h = hash_types<In, W, Out>(
      h, [](const In* x, const W* g, const W*, Out* y, std::size_t rows, std::size_t cols) {
        const normkit::status s = Reference ? normkit::reference::rms_norm<Policy>(x, g, y, rows, cols, 1e-6f)
                                            : normkit::rms_norm<Policy>(x, g, y, rows, cols, 1e-6f);
        EXPECT_EQ(s, normkit::status::ok);
      });
  if constexpr (Policy::layer_norm_exact) {
    h = hash_types<In, W, Out>(
        h, [](const In* x, const W* g, const W* b, Out* y, std::size_t rows, std::size_t cols) {
          const normkit::status s =
              Reference ? normkit::reference::layer_norm<Policy>(x, g, b, y, rows, cols, 1e-5f)
                        : normkit::layer_norm<Policy>(x, g, b, y, rows, cols, 1e-5f);
          EXPECT_EQ(s, normkit::status::ok);
        });
  }
  return h;
}

template <class Policy, bool Reference>
std::uint64_t hash_policy(std::uint64_t h) {
  h = hash_policy_types<Policy, Reference, float, float, float>(h);
  h = hash_policy_types<Policy, Reference, bf16, bf16, bf16>(h);
  h = hash_policy_types<Policy, Reference, bf16, float, bf16>(h);
  h = hash_policy_types<Policy, Reference, fp16, fp16, fp16>(h);
  h = hash_policy_types<Policy, Reference, bf16, float, float>(h);
  h = hash_policy_types<Policy, Reference, fp16, bf16, float>(h);
  return h;
}

template <bool Reference>
std::uint64_t corpus_hash() {
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = hash_policy<normkit::llama, Reference>(h);
  h = hash_policy<normkit::gemma, Reference>(h);
  h = hash_policy<normkit::gemma3n, Reference>(h);
  h = hash_policy<normkit::olmo2, Reference>(h);
  h = hash_policy<normkit::t5, Reference>(h);
  h = hash_policy<normkit::pytorch, Reference>(h);
  h = hash_policy<normkit::onnx, Reference>(h);
  return h;
}

std::string hex(std::uint64_t h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, h);
  return buf;
}

TEST(Corpus, ReferenceHashIsPinned) {
  const std::uint64_t h = corpus_hash<true>();
  std::printf("reference corpus hash %s\n", hex(h).c_str());
  EXPECT_EQ(hex(h), hex(pinned_corpus_hash));
}

class CorpusIsa : public ::testing::TestWithParam<normkit::isa> {};

TEST_P(CorpusIsa, HashEqualsReference) {
  NORMKIT_USE_ISA(GetParam());
  const std::uint64_t h = corpus_hash<false>();
  std::printf("%s corpus hash %s\n", normkit::to_string(normkit::active_isa()), hex(h).c_str());
  EXPECT_EQ(hex(h), hex(corpus_hash<true>()));
  EXPECT_EQ(hex(h), hex(pinned_corpus_hash));
}

INSTANTIATE_TEST_SUITE_P(Isa, CorpusIsa, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace

#if defined(__clang__)
#pragma float_control(pop)
#endif
