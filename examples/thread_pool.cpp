// SPDX-License-Identifier: MIT
// normkit on the caller's threads: the thread-pool overloads take a parallel_for first,
//
//   parallel_for(std::size_t n_tasks, F&& task)  // runs task(i) for every i < n_tasks, returns
//                                                // when all are done, on any threads, any order
//
// and split the rows into tasks of about a megabyte (calls under half a megabyte run on the
// calling thread without asking). Two adapters to copy: a persistent std::thread pool in which
// the calling thread works too, and OpenMP (built when the compiler has it). Both give the bits of
// the single-threaded call, which this program checks.
#include <normkit/normkit.hpp>

#include <atomic>              // std::atomic
#include <condition_variable>  // std::condition_variable
#include <cstddef>             // std::size_t
#include <cstdio>              // std::printf
#include <cstring>             // std::memcmp
#include <memory>              // std::addressof
#include <mutex>               // std::mutex, std::unique_lock
#include <thread>              // std::thread
#include <type_traits>         // std::remove_reference_t
#include <vector>              // std::vector

// A fixed set of worker threads, started once. Each call publishes the task, wakes the workers,
// and takes tasks itself until none is left; then it waits for the workers' last tasks.
class thread_pool {
 public:
  explicit thread_pool(unsigned threads) {
    for (unsigned t = 1; t < threads; ++t)
      workers_.emplace_back([this] { work(); });
  }
  ~thread_pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_)
      t.join();
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  template <class F>
  void operator()(std::size_t n_tasks, F&& task) {
    {
      std::lock_guard<std::mutex> lock(m_);
      run_ = [](void* f, std::size_t i) { (*static_cast<std::remove_reference_t<F>*>(f))(i); };
      fn_ = const_cast<void*>(static_cast<const void*>(std::addressof(task)));
      n_ = n_tasks;
      next_ = 0;
      busy_ = workers_.size();
      ++generation_;
    }
    wake_.notify_all();
    take_tasks();
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  void take_tasks() {
    for (std::size_t i; (i = next_.fetch_add(1)) < n_;)
      run_(fn_, i);
  }
  void work() {
    unsigned long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        seen = generation_;
      }
      take_tasks();
      std::lock_guard<std::mutex> lock(m_);
      if (--busy_ == 0)
        done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  void (*run_)(void*, std::size_t) = nullptr;
  void* fn_ = nullptr;
  std::size_t n_ = 0, busy_ = 0;
  std::atomic<std::size_t> next_{0};
  unsigned long generation_ = 0;
  bool stop_ = false;
};

#if defined(_OPENMP)
// OpenMP: one parallel loop per call, dynamic so that a slow thread takes fewer tasks.
struct openmp_for {
  template <class F>
  void operator()(std::size_t n_tasks, F&& task) const {
    const long n = static_cast<long>(n_tasks);
#pragma omp parallel for schedule(dynamic)
    for (long i = 0; i < n; ++i)
      task(static_cast<std::size_t>(i));
  }
};
#endif

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
