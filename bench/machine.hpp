// SPDX-License-Identifier: MIT
// normkit's benchmarks: the machine facts both binaries need to decide where a case's buffers
// live (the last-level cache, and how many buffer sets keep a case streaming from DRAM).
#pragma once

#include <cstddef>  // std::size_t

namespace normkit_bench {

// The last-level cache in bytes: sysfs first (sysconf can report the sum over all CCXs in a VM:
// it says 256 MiB where sysfs says 32 MiB on this project's EPYC), then sysconf, then 32 MiB.
// NORMKIT_BENCH_LLC_MIB overrides it. Read once.
std::size_t llc_bytes();

// Whether a case whose buffers take set_bytes streams from DRAM: labelled so (`dram`), or one set
// exceeds half the LLC.
bool dram_resident(bool dram, std::size_t set_bytes);

// Buffer sets in rotation: one for a cache case, else enough to cover max(2x the LLC, 1 GiB): a
// cyclic walk over more than the cache misses on every line under LRU-like replacement, and the
// 1 GiB floor covers a cache smaller than reported (a VM's cpuid and sysfs may describe the host).
std::size_t rotation_sets(bool dram, std::size_t set_bytes);

}  // namespace normkit_bench
