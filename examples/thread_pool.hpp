// SPDX-License-Identifier: MIT
// Two parallel_for adapters for normkit's thread-pool overloads (examples/thread_pool.cpp shows
// the calls; bench/normkit_bench.cpp measures with the first):
//
//   parallel_for(std::size_t n_tasks, F&& task)  // runs task(i) for every i < n_tasks, returns
//                                                // when all are done, on any threads, any order
//
// - thread_pool: a persistent std::thread pool in which the calling thread works too;
// - openmp_for: one OpenMP parallel loop per call (defined when compiled with OpenMP).
// Copy them; they are examples, not part of the library.
#pragma once

#include <atomic>              // std::atomic
#include <condition_variable>  // std::condition_variable
#include <cstddef>             // std::size_t
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
