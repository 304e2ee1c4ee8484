// SPDX-License-Identifier: MIT
// normkit: the life of a call after the public entry point -- validation, then the path that runs
// it: the runtime table (runtime mode), the static arch (static mode), or the scalar reference.
// Knobs are canonicalized first so that equal-bits policies share one kernel.
#pragma once

#include "../core/fp_precise_begin.hpp"  // clang: IEEE semantics for this header

#include <cfenv>        // std::fegetround, FE_TONEAREST
#include <type_traits>  // std::is_same

#include "../core/abi.hpp"
#include "../core/isa.hpp"
#include "../core/policy.hpp"
#include "../core/status.hpp"
#include "../core/storage.hpp"
#include "../core/type_list.hpp"
#include "../ops/list.hpp"
#include "compose.hpp"
#include "state.hpp"
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
inline const kernel_table* active_table() {
  const isa i = active_isa();
#define NORMKIT_ISA_ACTIVE_TABLE(name, value, family, arch, cap, flags) \
  if constexpr (::normkit::detail::defined_family_##family)             \
    if (i == isa::name)                                                 \
      return &::normkit::NORMKIT_DISPATCH_NAMESPACE_OF(name)::detail::isa_table();
  NORMKIT_ISA_TABLE(NORMKIT_ISA_ACTIVE_TABLE)
#undef NORMKIT_ISA_ACTIVE_TABLE
  return nullptr;
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

// Runs a validated, non-empty call.
template <class Op, class Policy, class... Ts>
void run(const typename Op::template args<Ts...>& a) {
#if defined(NORMKIT_RUNTIME_DISPATCH) || defined(NORMKIT_STATIC_ISA)
  using Knobs = typename Op::template canonical<knobs_of<Policy>, Ts...>;
  using Narrows = typename Op::template narrows<Knobs, Ts...>;
#endif
#if defined(NORMKIT_RUNTIME_DISPATCH)
  if (const kernel_table* t = active_table(); t && !fp16_narrowing_needs_reference<Narrows>())
    if (const kernel_fn fn = lookup<Op, Knobs, Ts...>(*t))
      return fn(&a);
#elif defined(NORMKIT_STATIC_ISA)
  if (active_isa() != isa::scalar && !fp16_narrowing_needs_reference<Narrows>())
    return simd_rows<Op>::template rows<static_arch, Knobs, Ts...>(a);
#endif
  Op::template reference<Policy, Ts...>(a);
}

// One stage of a composite op: a kernel op on its bundle, dispatched like a call of its own.
struct run_stage {
  template <class Op, class Policy, template <class...> class Args, class... Ts>
  void operator()(Op, Policy, const Args<Ts...>& a) const {
    run<Op, Policy, Ts...>(a);
  }
};

// A public entry point: the op's checks, then the run.
template <class Op, class Policy, class... Ts>
status call(const typename Op::template args<Ts...>& a) {
  const status st = Op::validate(a);
  if (st != status::ok || Op::empty(a))
    return st;
  if constexpr (is_composite<Op>::value)
    return run_composite<Op, Policy, run_stage, Ts...>(a, run_stage{});
  else
    run<Op, Policy, Ts...>(a);
  return status::ok;
}

// The reference entry points (normkit::reference): the same checks, the scalar path always.
template <class Op, class Policy, class... Ts>
status call_reference(const typename Op::template args<Ts...>& a) {
  const status st = Op::validate(a);
  if (st != status::ok || Op::empty(a))
    return st;
  if constexpr (is_composite<Op>::value)
    return Op::template reference<Policy, Ts...>(a);
  else
    Op::template reference<Policy, Ts...>(a);
  return status::ok;
}

}  // namespace impl
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit

#include "../core/fp_precise_end.hpp"
