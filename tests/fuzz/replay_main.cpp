// SPDX-License-Identifier: MIT
// Corpus replay without libFuzzer (g++ builds, sanitizer builds without -fsanitize=fuzzer): runs
// LLVMFuzzerTestOneInput once on every file named on the command line or found in a directory
// named there (sorted, so runs are reproducible), then, with --random=N[:seed], on N inputs of
// pseudo-random bytes. A violated invariant aborts inside the harness, printing the file name
// first, so a failing input is easy to find and replay alone.
//
//   normkit_fuzz_norm_replay build/test/tests/fuzz/seed/corpus/fuzz_norm --random=2000
#include <algorithm>   // std::sort
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint8_t, std::uint64_t
#include <cstdio>      // std::printf, std::fprintf
#include <cstdlib>     // std::strtoull
#include <cstring>     // std::strncmp
#include <filesystem>  // std::filesystem
#include <fstream>     // std::ifstream
#include <iterator>    // std::istreambuf_iterator
#include <string>      // std::string
#include <vector>      // std::vector

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::size_t run_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay %s (%zu bytes)\n", p.string().c_str(), bytes.size());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t files = 0, randoms = 0;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg.rfind("--random=", 0) == 0) {
      char* end = nullptr;
      const std::size_t n = std::strtoull(arg.c_str() + 9, &end, 10);
      std::uint64_t s = (end && *end == ':') ? std::strtoull(end + 1, nullptr, 10) : 1;
      std::vector<std::uint8_t> buf;
      for (std::size_t i = 0; i < n; ++i) {
        auto next = [&s] {  // splitmix64
          std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
          z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
          z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
          return z ^ (z >> 31);
        };
        buf.resize(next() % 512);
        for (auto& b : buf)
          b = static_cast<std::uint8_t>(next());
        LLVMFuzzerTestOneInput(buf.data(), buf.size());
        ++randoms;
      }
      continue;
    }
    const std::filesystem::path p(arg);
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> entries;
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file())
          entries.push_back(e.path());
      std::sort(entries.begin(), entries.end());
      for (const auto& e : entries)
        files += run_file(e);
    } else if (std::filesystem::is_regular_file(p)) {
      files += run_file(p);
    } else {
      std::fprintf(stderr, "no such file or directory: %s\n", arg.c_str());
      return 2;
    }
  }
  std::printf("replayed %zu corpus inputs and %zu random inputs: all invariants held\n", files, randoms);
  return files + randoms > 0 ? 0 : 2;
}
