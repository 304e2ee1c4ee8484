// SPDX-License-Identifier: MIT
// normkit: the life of a call after the public entry point -- validation, then the path that runs
// it: the runtime table (runtime mode), the static arch (static mode), or the scalar reference.
// Knobs are canonicalized first so that equal-bits policies share one kernel.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <atomic>       // std::atomic
#include <cfenv>        // std::fegetround, FE_TONEAREST, std::fe{get,set}env, std::fe{test,raise}except
#include <cstddef>      // std::size_t, std::nullptr_t
#include <type_traits>  // std::is_same, std::conditional_t, std::enable_if_t, std::remove_const_t

#include "../core/abi.hpp"
#include "../core/isa.hpp"
#include "../core/math.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/tuning.hpp"
#include "../core/type_list.hpp"
#include "../ops/list.hpp"
#include "compose.hpp"
#include "preference.hpp"
#include "state.hpp"
#include "streaming.hpp"
#include "table.hpp"

#if defined(NORMKIT_STATIC_ISA)
#include "../ops/list_simd.hpp"
#include "../simd/arch.hpp"
#endif

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
// Per-configuration internals (ABI-tagged by the inline namespace, see core/abi.hpp).
namespace impl {
using namespace ::normkit::detail;

#if defined(NORMKIT_RUNTIME_DISPATCH)
// Each runnable ISA's table with its empty slots taken from the ISA below it in its family, and so
// on down: an ISA's objects may hold only the kernels it improves (avx512bf16, core/isa_table.hpp);
// a slot that no ISA fills runs the reference. Built once, from runnable ISAs only (an ISA's
// isa_table() runs that ISA's code), in table order, which is ascending within a family. Plus the
// automatic choice's table where this CPU prefers a narrower ISA's kernels (preference.hpp).
struct dispatch_tables {
  kernel_table t[isa_value_count];
  bool have[isa_value_count] = {};
  kernel_table automatic;
  bool have_automatic = false;

  dispatch_tables() {
    int below[family_count];  // per family (core/isa.hpp): the last runnable ISA seen
    for (int& b : below)
      b = -1;
#define NORMKIT_ISA_MERGE(name, value, family, arch, cap, flags)    \
  if constexpr (::normkit::detail::defined_family_##family)         \
    if (runnable(isa::name))                                        \
      merge(value, below[::normkit::detail::family_index_##family], \
            ::normkit::NORMKIT_DISPATCH_NAMESPACE_OF(name)::detail::isa_table());
    NORMKIT_ISA_TABLE(NORMKIT_ISA_MERGE)
#undef NORMKIT_ISA_MERGE
    const isa chosen = best_up_to(isa_env().ceiling), narrower = narrower_isa(chosen, cpu());
    if (isa_env().automatic && narrower != chosen && have[static_cast<int>(chosen)] &&
        have[static_cast<int>(narrower)]) {
      automatic = t[static_cast<int>(chosen)];
      prefer_kernels_using<narrower_type>(ops{}, automatic, t[static_cast<int>(narrower)]);
      have_automatic = true;
    }
  }
  void merge(int value, int& below, const kernel_table& own) {
    t[value] = below >= 0 ? t[below] : kernel_table{};
    for (std::size_t k = 0; k < sizeof own.fn / sizeof own.fn[0]; ++k)
      if (own.fn[k])
        t[value].fn[k] = own.fn[k];
    have[value] = true;
    below = value;
  }
};

inline const dispatch_tables& tables() {
  static const dispatch_tables t;
  return t;
}

inline const kernel_table* active_table() {
  const dispatch_tables& d = tables();
  const int state = isa_state().load(std::memory_order_relaxed), i = state & ~automatic_bit;
  if ((state & automatic_bit) && d.have_automatic)
    return &d.automatic;
  return i > 0 && i < isa_value_count && d.have[i] ? &d.t[i] : nullptr;
}
#endif

// contract (FP environment): the bits are defined in the default environment, yet every path
// gives the reference's bits in every rounding mode. NEON's fp16 narrowing (fcvtn) rounds in
// FPCR's mode where the reference rounds to nearest even (core/storage.hpp; x86 passes vcvtps2ph
// an explicit RNE immediate), so a NEON call that narrows to fp16 runs the reference when the
// rounding mode is not to-nearest: one fegetround per call, on AArch64 and only for such calls.
template <class Narrows>
bool fp16_narrowing_needs_reference() {
#if defined(__aarch64__)
  if constexpr (contains<fp16, Narrows>::value)
    return std::fegetround() != FE_TONEAREST;
#endif
  return false;
}

// The SIMD kernel a call of Op with these types runs, if any: the active table's slot (runtime
// mode; null when the slot is empty or the call must run the reference), or whether static mode's
// arch runs it. run (below) and a composite choosing between its stages (has_kernel) both ask here.
#if defined(NORMKIT_RUNTIME_DISPATCH)
template <class Op, class Policy, class... Ts>
kernel_fn kernel_of() {
  using Knobs = typename Op::template canonical<knobs_of<Policy>, Ts...>;
  const kernel_table* t = active_table();
  if (!t || fp16_narrowing_needs_reference<typename Op::template narrows<Knobs, Ts...>>())
    return nullptr;
  return lookup<Op, Knobs, Ts...>(*t);
}
#endif

template <class Op, class Policy, class... Ts>
bool has_kernel() {
#if defined(NORMKIT_RUNTIME_DISPATCH)
  return kernel_of<Op, Policy, Ts...>() != nullptr;
#elif defined(NORMKIT_STATIC_ISA)
  using Knobs = typename Op::template canonical<knobs_of<Policy>, Ts...>;
  return active_isa() != isa::scalar &&
         !fp16_narrowing_needs_reference<typename Op::template narrows<Knobs, Ts...>>();
#else
  return false;
#endif
}

// Runs a validated, non-empty call.
template <class Op, class Policy, class... Ts>
NORMKIT_ALWAYS_INLINE void run(const typename Op::template args<Ts...>& a) {
#if defined(NORMKIT_RUNTIME_DISPATCH)
  if (const kernel_fn fn = kernel_of<Op, Policy, Ts...>())
    return fn(&a);
#elif defined(NORMKIT_STATIC_ISA)
  if (has_kernel<Op, Policy, Ts...>())
    return simd_rows<Op>::template rows<static_arch, typename Op::template canonical<knobs_of<Policy>, Ts...>,
                                        Ts...>(a);
#endif
  Op::template reference<Policy, Ts...>(a);
}

// One stage of a composite op: a kernel op on its bundle, dispatched like a call of its own, with
// the streaming decision of the whole composite call (its chunks are small, the call may not be).
struct run_stage {
  bool stream;
  template <class Op, class Policy, template <class...> class Args, class... Ts>
  void operator()(Op, Policy, const Args<Ts...>& a) const {
    Args<Ts...> d = a;
    if constexpr (has_stream_flag<Args<Ts...>>::value)
      d.stream = d.stream || stream;
    run<Op, Policy, Ts...>(d);
  }
  // For a stage that writes an output of the composite but not its output_bytes: whether these
  // bytes stream.
  bool streams(std::size_t bytes) const { return detail::streams(bytes, stream_min_bytes()); }
  template <class Op, class Policy, template <class...> class Args, class... Ts>
  bool has_kernel(Op, Policy, const Args<Ts...>&) const {
    return impl::has_kernel<Op, Policy, Ts...>();
  }
};
// The call's streaming decision, made once on the whole call (core/op.hpp, `stream`): a
// thread-pool task streams exactly when the whole call would.
template <class Op, class A>
void decide_stream(A& a) {
  if constexpr (has_stream_flag<A>::value)
    a.stream = streams(Op::output_bytes(a), stream_min_bytes());
}
template <class Op, class A>
A with_stream_decision(const A& a) {
  A d = a;
  decide_stream<Op>(d);
  return d;
}

// A public entry point: the op's checks, then the run. The bundle comes by value and takes the
// streaming decision in place (no second copy), and run and check_operands are inlined (no frames
// of their own): fewer instructions and fewer stack lines per call, which decode calls pay for
// (docs/performance.md, "Per-call cost").
template <class Op, class Policy, class... Ts>
status call(typename Op::template args<Ts...> a) {
  const status st = Op::validate(a);
  if (st != status::ok)
    return st;
  if constexpr (is_composite<Op>::value) {
    if (Op::empty(a))
      composite_begin<Op>(a);  // an empty call still starts its outputs across rows (core/op.hpp)
    else
      return run_composite<Op, Policy, run_stage, Ts...>(
          a, run_stage{streams(Op::output_bytes(a), stream_min_bytes())});
  } else if (!Op::empty(a)) {
    decide_stream<Op>(a);
    run<Op, Policy, Ts...>(a);
  }
  return status::ok;
}

// How a thread-pool call is cut: `tasks` tasks of `rows` rows each (the last one may be shorter).
struct task_split {
  std::size_t tasks, rows;
};

// Tasks of about parallel_task_bytes of traffic (core/tuning.hpp), at least two when there is
// work for two tasks of parallel_min_task_bytes, else one (the calling thread runs the call). Rows
// narrower than a cache line go in multiples of 64, so neighbouring tasks write whole lines of
// contiguous output.
inline task_split split_rows(std::size_t rows, std::size_t row_bytes) {
  const std::size_t bytes = rows * row_bytes;  // <= the validated extents of x and y
  if (rows < 2 || bytes < 2 * parallel_min_task_bytes)
    return {1, rows};
  const std::size_t wanted = max_of<std::size_t>(2, (bytes + parallel_task_bytes - 1) / parallel_task_bytes);
  std::size_t per = (rows + min_of(wanted, rows) - 1) / min_of(wanted, rows);
  if (row_bytes < cache_line)
    per = (per + cache_line - 1) / cache_line * cache_line;
  return {(rows + per - 1) / per, per};
}

// The thread-pool entry points need the op's slice (core/op.hpp); without one they do not compile.
template <class Op, class A>
constexpr void require_slice() {
  static_assert(has_slice<Op, A>::value,
                "normkit: this op has no slice(args, r0, n) (core/op.hpp): its rows are not independent "
                "(an output across rows, such as an amax or a dgamma) or it has not said how to split them, "
                "so it has no thread-pool entry point");
}

// Runs a validated call (its streaming decided) as slices of rows_per_task rows (core/op.hpp,
// slice), task i on rows [i * rows_per_task, ...), through the caller's parallel_for. Rows are
// independent, so any task count and order give the same bits. Each task runs in the calling
// thread's floating-point environment (rounding mode, FTZ/DAZ, trap masks: the contract's bits
// are those of the caller's environment, docs/fp-environment.md), and the exception flags the
// tasks raise are raised on the calling thread when parallel_for returns.
template <class Op, class Policy, class... Ts, class ParallelFor>
void run_split(ParallelFor& parallel_for, const typename Op::template args<Ts...>& a,
               std::size_t rows_per_task) {
  require_slice<Op, typename Op::template args<Ts...>>();
  const std::size_t rows = Op::row_count(a);
  const std::size_t n_tasks = (rows + rows_per_task - 1) / rows_per_task;
  std::fenv_t caller;
  std::fegetenv(&caller);
  std::atomic<int> raised{0};
  parallel_for(n_tasks, [&](std::size_t t) {
    if (t >= n_tasks)
      return;
    const std::size_t r0 = t * rows_per_task;
    std::fenv_t own;
    std::fegetenv(&own);
    std::fesetenv(&caller);
    run<Op, Policy, Ts...>(Op::slice(a, r0, min_of(rows_per_task, rows - r0)));
    raised.fetch_or(std::fetestexcept(FE_ALL_EXCEPT), std::memory_order_relaxed);
    std::fesetenv(&own);
  });
  if (const int missing = raised.load(std::memory_order_relaxed) & ~std::fetestexcept(FE_ALL_EXCEPT))
    std::feraiseexcept(missing);
}

// A thread-pool entry point: the op's checks and the streaming decision on the whole call, then
// its rows split into tasks (split_rows) run through parallel_for(n_tasks, task), which must call
// task(i) once for every i < n_tasks, on any threads in any order, and return when all are done.
// A call too small for two tasks runs on the calling thread without calling parallel_for.
template <class Op, class Policy, class... Ts, class ParallelFor>
status call_parallel(ParallelFor& parallel_for, const typename Op::template args<Ts...>& a) {
  require_slice<Op, typename Op::template args<Ts...>>();
  const status st = Op::validate(a);
  if (st != status::ok || Op::empty(a))
    return st;
  const typename Op::template args<Ts...> d = with_stream_decision<Op>(a);
  const task_split split = split_rows(Op::row_count(d), Op::row_bytes(d));
  if (split.tasks < 2)
    run<Op, Policy, Ts...>(d);
  else
    run_split<Op, Policy, Ts...>(parallel_for, d, split.rows);
  return status::ok;
}

// The reference entry points (normkit::reference): the same checks, the scalar path always.
template <class Op, class Policy, class... Ts>
status call_reference(const typename Op::template args<Ts...>& a) {
  const status st = Op::validate(a);
  if (st != status::ok)
    return st;
  if constexpr (is_composite<Op>::value) {
    if (Op::empty(a))
      composite_begin<Op>(a);
    else
      return Op::template reference<Policy, Ts...>(a);
  } else if (!Op::empty(a)) {
    Op::template reference<Policy, Ts...>(a);
  }
  return status::ok;
}

// The thread-pool overloads take gamma and beta as typed pointers or nullptr, as the serial ones
// do: the weight type W is the first typed one's, else In. No parallel_for is a pointer, which
// keeps these overloads apart from the serial ones.
template <class P>
struct pointee {
  using type = void;
};
template <class T>
struct pointee<T*> {
  using type = std::remove_const_t<T>;
};
template <class In, class G, class B = std::nullptr_t>
using weight_of = std::conditional_t<
    !std::is_same<G, std::nullptr_t>::value, typename pointee<G>::type,
    std::conditional_t<!std::is_same<B, std::nullptr_t>::value, typename pointee<B>::type, In>>;
template <class F>
using if_parallel_for = std::enable_if_t<!std::is_pointer<std::decay_t<F>>::value, int>;

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
