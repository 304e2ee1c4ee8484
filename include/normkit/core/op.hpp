// SPDX-License-Identifier: MIT
// normkit: what an op description provides (ops/<op>.hpp), and the knob spaces ops choose from.
//
// An op is a struct with
//   name          its name (build selection, test and bench rows)
//   slots         type_list of one storage-type list per type parameter, e.g. In, W, Out
//   knobs         the knob space its kernels are instantiated over: norm_knobs or no_knobs
//   args<Ts...>   its argument bundle, one struct passed by pointer through the runtime table
//   canonical<Knobs, Ts...>   the knob set that runs (equal-bits policies share a kernel)
//   narrows<Knobs, Ts...>     the storage types the call rounds fp32 values to, the type it
//                             stores first (if any)
//   validate(args)            the status of a call, touching nothing
//   empty(args)               a valid call with nothing to do
//   reference<Policy>(args)   the scalar reference over the whole call: THE bits
// and a SIMD half, simd_rows<Op> (ops/<op>_simd.hpp), whose rows<Arch, Knobs, Ts...>(args)
// must return the reference's bits. A composite op (composite = true) has no SIMD half and no
// table entries: instead of rows it gives row_bytes(args), scratch_floats<Policy>(args, chunk_rows)
// and run_rows<Policy>(args, r0, n, scratch, run), the stages of a chunk of rows, each a kernel op
// run through `run` (which also answers run.has_kernel(op, policy, stage_args): whether that stage
// would run a SIMD kernel); its reference may return a status (status::out_of_memory for its scratch;
// composite_reference below runs the stages on the references). A composite with an output
// across rows (the quantized norms' amax, ops/norm_quant.hpp) also gives begin(args), which
// initializes it once per valid call: for an empty call, else after the scratch is obtained and
// before any stage (composite_begin). A composite that can run some calls as one kernel op gives
// run_direct<Policy>(args, run): true when it ran the whole call so (begin included), false to run
// the stages (dispatch/compose.hpp; ops/norm_quant.hpp). The op list (ops/list.hpp) makes the runtime table,
// the static path, the build's selection and the tests pick it up (docs/architecture.md).
//
// Thread-pool entry points (dispatch/run.hpp, call_parallel) split a call into tasks of rows and
// need three more members:
//   row_count(args), row_bytes(args)   the rows a call can be split into, and the bytes one row
//                                      reads and writes (to size the tasks)
//   slice(args, r0, n)        the bundle of rows [r0, r0 + n) of a validated call: the same call
//                             restricted to those rows, every pointer advanced to row r0
// An op provides slice only when its rows are independent: every output element depends on its
// own row and on the row-invariant operands, so any split in any order gives the same bits. An op
// with an output across rows (an amax, a dgamma) has no slice, and its thread-pool entry point
// refuses to compile (has_slice, static_assert) until it says how it splits. slice is never
// inherited from norm_op: an op with more row operands (a residual) would get a wrong one.
//
// An argument bundle with a member `bool stream` (default false) has its output stored with
// streaming stores when true; the dispatcher sets it once for the whole call from
// output_bytes(args) (dispatch/streaming.hpp), before any split.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdlib>      // std::malloc, std::free
#include <type_traits>  // std::conditional_t, std::bool_constant, std::false_type, std::true_type, std::void_t
#include <utility>      // std::declval

#include "abi.hpp"
#include "policy.hpp"
#include "status.hpp"
#include "storage.hpp"
#include "type_list.hpp"

namespace normkit {
inline namespace NORMKIT_ABI_NAMESPACE {
namespace detail {

// The knob sets of the norms (core/policy.hpp): twelve, indexed by knob_index.
struct norm_knobs {
  static constexpr std::size_t size = n_knob_sets;
  template <std::size_t K>
  using at = knobs_at<K>;
  template <class Knobs>
  static constexpr std::size_t index = knob_index<Knobs>;
};

// Ops without a rounding policy (convert): one slot.
struct no_knobs {
  static constexpr std::size_t size = 1;
  template <std::size_t K>
  using at = knobs_at<0>;
  template <class Knobs>
  static constexpr std::size_t index = 0;
};

// Whether an argument bundle has head views (rms_norm_args, layer_norm_args: `heads` rows per row).
template <class A, class = void>
struct has_heads : std::false_type {};
template <class A>
struct has_heads<A, std::void_t<decltype(std::declval<const A&>().heads)>> : std::true_type {};

// The chunk layout of a norm kernel (simd/chunk.hpp): interleaved when In, W and Out are all bf16
// (interleaved_inputs: what the reads need; a sink that is not a bf16 store may still take it,
// ops/norm_static_quant_simd.hpp).
template <class In, class W>
constexpr bool interleaved_inputs = std::conjunction_v<std::is_same<In, bf16>, std::is_same<W, bf16>>;
template <class In, class W, class Out>
constexpr bool interleaved_layout = interleaved_inputs<In, W>&& std::is_same<Out, bf16>::value;

// What the normalizing ops (rms_norm, layer_norm) share: In, W and Out slots over the input
// types, the twelve knob sets, equal-bits knob sets folded (canonical_knobs), the roundings a call
// makes (Out, and Mid when rounding twice), and "nothing to do" when a size is 0.
struct norm_op {
  using slots = type_list<input_types, input_types, input_types>;  // In, W, Out
  using knobs = norm_knobs;
  template <class Knobs, class In, class W, class Out>
  using canonical = canonical_knobs<Knobs, In, W>;
  template <class Knobs, class In, class W, class Out>
  using narrows = std::conditional_t<Knobs::round == rounding::twice, type_list<Out, mid_of<Knobs, In, W>>,
                                     type_list<Out>>;
  template <class A>
  static bool empty(const A& a) {
    return a.rows == 0 || a.cols == 0;
  }
  // Rows for thread-pool tasks; the bytes of x and y per row (a token's heads, for head views); the
  // bytes of y.
  template <class A>
  static std::size_t row_count(const A& a) {
    return a.rows;
  }
  template <class A>
  static std::size_t row_bytes(const A& a) {
    return heads_of(a) * a.cols * (sizeof(*a.x) + sizeof(*a.y));
  }
  // The bytes that decide streaming (dispatch/streaming.hpp): y's, or none when y is x. Streaming
  // stores only save the read-for-ownership of lines not in cache, and an in-place call has just
  // read every line it writes: on the Intel VM an in-place 131072 x 128 bf16 call ran 12.1 ms
  // streamed and 8.0 ms with plain stores (docs/performance.md, "Streaming stores").
  template <class A>
  static std::size_t output_bytes(const A& a) {
    if (a.y != nullptr && static_cast<const void*>(a.y) == static_cast<const void*>(a.x))
      return 0;
    return a.rows * heads_of(a) * a.cols * sizeof(*a.y);
  }

 private:
  template <class A>
  static std::size_t heads_of(const A& a) {
    if constexpr (has_heads<A>::value)
      return a.heads;
    else
      return 1;
  }
};

// Op::reference on a bundle, its type parameters deduced.
template <class Op, class Policy, template <class...> class Args, class... Ts>
void reference_of(const Args<Ts...>& a) {
  Op::template reference<Policy, Ts...>(a);
}

// Whether an op is composite: a sequence of other ops' kernels over row chunks (ops/add_norm.hpp),
// run by dispatch/run.hpp with no table entries of its own.
template <class Op, class = void>
struct is_composite : std::false_type {};
template <class Op>
struct is_composite<Op, std::void_t<decltype(Op::composite)>> : std::bool_constant<Op::composite> {};

// A composite's once-per-call start (its begin(args), when it has one; see the header comment).
template <class Op, class A, class = void>
struct has_begin : std::false_type {};
template <class Op, class A>
struct has_begin<Op, A, std::void_t<decltype(Op::begin(std::declval<const A&>()))>> : std::true_type {};
template <class Op, class A>
void composite_begin(const A& a) {
  if constexpr (has_begin<Op, A>::value)
    Op::begin(a);
}

// The stage runner of a composite's reference: each stage's reference, and never a kernel.
struct reference_stage {
  template <class Op, class Policy, class A>
  void operator()(Op, Policy, const A& a) const {
    reference_of<Op, Policy>(a);
  }
  template <class Op, class Policy, class A>
  bool has_kernel(Op, Policy, const A&) const {
    return false;
  }
  bool streams(std::size_t) const { return false; }
};

// A composite op's reference: its stages on the component references, one row at a time, with a
// scratch of one row taken first (out_of_memory, nothing written, when it cannot be), then begin.
template <class Op, class Policy, class A>
status composite_reference(const A& a) {
  float* scratch = nullptr;
  if (const std::size_t floats = Op::template scratch_floats<Policy>(a, 1))
    if (!(scratch = static_cast<float*>(std::malloc(floats * sizeof(float)))))
      return status::out_of_memory;
  composite_begin<Op>(a);
  reference_stage run;
  for (std::size_t r = 0; r < a.rows; ++r)
    Op::template run_rows<Policy>(a, r, 1, scratch, run);
  std::free(scratch);
  return status::ok;
}
// Whether Op can split a call of bundle A into row tasks (core/op.hpp, slice).
template <class Op, class A, class = void>
struct has_slice : std::false_type {};
template <class Op, class A>
struct has_slice<Op, A,
                 std::void_t<decltype(Op::slice(std::declval<const A&>(), std::size_t{}, std::size_t{}))>>
    : std::true_type {};

// Whether bundle A carries the streaming decision (core/op.hpp, `bool stream`).
template <class A, class = void>
struct has_stream_flag : std::false_type {};
template <class A>
struct has_stream_flag<A, std::void_t<decltype(std::declval<A&>().stream = true)>> : std::true_type {};

// SIMD half of an op, specialized by ops/<op>_simd.hpp.
template <class Op>
struct simd_rows;

}  // namespace detail
}  // namespace NORMKIT_ABI_NAMESPACE
}  // namespace normkit
