// SPDX-License-Identifier: MIT
// The machine facts of bench/machine.hpp.
#include "machine.hpp"

#include <algorithm>  // std::max
#include <cstdlib>    // std::getenv, std::strtoull
#include <fstream>    // std::ifstream
#include <string>     // std::string, std::to_string

#include <unistd.h>  // sysconf

namespace normkit_bench {
namespace {

// "32768K", "32M", "1G" (sysfs cache sizes).
std::size_t parse_size(const std::string& s) {
  std::size_t i = 0, v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
    v = v * 10 + static_cast<std::size_t>(s[i] - '0');
  if (i < s.size() && (s[i] == 'K' || s[i] == 'k'))
    v <<= 10;
  if (i < s.size() && s[i] == 'M')
    v <<= 20;
  if (i < s.size() && s[i] == 'G')
    v <<= 30;
  return v;
}

std::size_t read_llc_bytes() {
  if (const char* env = std::getenv("NORMKIT_BENCH_LLC_MIB"))
    if (const std::size_t mib = std::strtoull(env, nullptr, 10))
      return mib << 20;
  std::size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size"), type_file(dir + "type");
    if (!level_file || !size_file)
      break;
    int level = 0;
    std::string size, type;
    level_file >> level;
    size_file >> size;
    type_file >> type;
    if (type == "Instruction")
      continue;
    const std::size_t bytes = parse_size(size);
    if (level > best_level || (level == best_level && bytes > best))
      best = bytes, best_level = level;
  }
#if defined(_SC_LEVEL3_CACHE_SIZE)
  if (best == 0) {
    const long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0)
      best = static_cast<std::size_t>(v);
  }
#endif
  return best ? best : std::size_t{32} << 20;
}

}  // namespace

std::size_t llc_bytes() {
  static const std::size_t llc = read_llc_bytes();
  return llc;
}

bool dram_resident(bool dram, std::size_t set_bytes) {
  return dram || set_bytes > llc_bytes() / 2;
}

std::size_t rotation_sets(bool dram, std::size_t set_bytes) {
  const std::size_t cover = std::max<std::size_t>(2 * llc_bytes(), std::size_t(1) << 30);
  return dram_resident(dram, set_bytes) ? (cover + set_bytes - 1) / set_bytes : 1;
}

}  // namespace normkit_bench
