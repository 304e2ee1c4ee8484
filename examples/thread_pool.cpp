// SPDX-License-Identifier: MIT
// normkit on the caller's threads: the thread-pool overloads take a parallel_for first,
//
//   parallel_for(std::size_t n_tasks, F&& task)  // runs task(i) for every i < n_tasks, returns
//                                                // when all are done, on any threads, any order
//
// and split the rows into tasks of about a megabyte (calls under half a megabyte run on the
// calling thread without asking). The adapters (thread_pool.hpp): a persistent std::thread pool
// in which the calling thread works too, and OpenMP (built when the compiler has it). Both give
// the bits of the single-threaded call, which this program checks.
#include <normkit/normkit.hpp>

#include <cstddef>  // std::size_t
#include <cstdio>   // std::printf
#include <cstring>  // std::memcmp
#include <vector>   // std::vector

#include "thread_pool.hpp"

int main() {
  const std::size_t rows = 512, cols = 4096;  // 8 MiB of bf16 in and out: 8 tasks
  std::vector<normkit::bf16> x(rows * cols), gamma(cols), y1(rows * cols), y2(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = normkit::from_float<normkit::bf16>(static_cast<float>(i % 61) * 0.25f - 7.0f);
  for (std::size_t i = 0; i < cols; ++i)
    gamma[i] = normkit::from_float<normkit::bf16>(1.0f + static_cast<float>(i % 5) * 0.125f);

  normkit::status st =
      normkit::rms_norm<normkit::llama>(x.data(), gamma.data(), y1.data(), rows, cols, 1e-6f);
  std::printf("single thread: %s\n", normkit::to_string(st));

  thread_pool pool(2);
  st = normkit::rms_norm<normkit::llama>(pool, x.data(), gamma.data(), y2.data(), rows, cols, 1e-6f);
  std::printf(
      "std::thread pool (2 threads): %s, %s\n", normkit::to_string(st),
      std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(normkit::bf16)) == 0 ? "same bits" : "DIFFERENT");

#if defined(_OPENMP)
  std::vector<normkit::bf16> y3(rows * cols);
  st = normkit::rms_norm<normkit::llama>(openmp_for{}, x.data(), gamma.data(), y3.data(), rows, cols, 1e-6f);
  std::printf(
      "OpenMP: %s, %s\n", normkit::to_string(st),
      std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(normkit::bf16)) == 0 ? "same bits" : "DIFFERENT");
#else
  std::printf("OpenMP: not built (no OpenMP in this compiler)\n");
#endif
  return 0;
}
