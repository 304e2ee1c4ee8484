// SPDX-License-Identifier: MIT
// normkit: status codes returned by every entry point (no exceptions needed).
#pragma once

#include "abi.hpp"

namespace normkit {

// Every public entry point returns one of these; nothing on a bad argument is undefined. Each
// bad-argument class has its own value, so a caller (and to_string) can say what to fix;
// is_invalid_argument() groups them.
enum class [[nodiscard]] status{
    ok = 0,
    // Never returned since 0.2.0: each cause below has its own value. Kept so that code written
    // against 0.1 still compiles, with a warning where it compares against it.
    invalid_argument [[deprecated("normkit 0.2 returns a specific status (null_pointer, invalid_stride, "
                                  "size_overflow, invalid_eps, misaligned_pointer, overlapping_output); "
                                  "test is_invalid_argument(s) instead")]] = 1,
    unsupported_isa = 2,     // set_isa: the ISA is not compiled into this binary or the CPU lacks it
    null_pointer = 3,        // x or y (src or dst) is null while rows and cols are non-zero
    invalid_stride = 4,      // a stride is smaller than cols, or a head view overlaps itself
    size_overflow = 5,       // a tensor's extent does not fit the address space (PTRDIFF_MAX)
    invalid_eps = 6,         // eps is negative, NaN or infinite
    misaligned_pointer = 7,  // a pointer is not a multiple of its element type's alignment
    overlapping_output = 8,  // y overlaps x, gamma or beta other than exactly in place
    isa_above_ceiling = 9,   // set_isa: the ISA runs here but NORMKIT_ISA caps the process below it
    shape_mismatch = 10,     // eigen.hpp: y's shape, or gamma's or beta's length, does not fit x
    invalid_scale = 11,      // quantized ops: a static scale <= 0, NaN or Inf, or a NaN / Inf scale_ub
    invalid_block = 12,      // Q8_0 ops: cols is not a multiple of the block size (32)
    out_of_memory = 13,      // a composite op could not allocate its per-thread fp32 scratch
};

inline namespace NORMKIT_ABI_NAMESPACE {  // every function: core/abi.hpp
// True for every status that reports a bad argument of a norm or convert call (what 0.1
// reported as invalid_argument).
constexpr bool is_invalid_argument(status s) noexcept {
  switch (s) {
    case status::null_pointer:
    case status::invalid_stride:
    case status::size_overflow:
    case status::invalid_eps:
    case status::misaligned_pointer:
    case status::overlapping_output:
    case status::shape_mismatch:
    case status::invalid_scale:
    case status::invalid_block:
      return true;
    default:
      return static_cast<int>(s) == 1;  // the deprecated invalid_argument
  }
}

// One sentence per status: what is wrong and what to change.
constexpr const char* to_string(status s) noexcept {
  switch (s) {
    case status::ok:
      return "ok";
    case status::unsupported_isa:
      return "unsupported_isa: the requested ISA is not compiled into this binary or this CPU lacks it "
             "(check normkit::isa_available(); runtime dispatch needs normkit::normkit or "
             "NORMKIT_RUNTIME_DISPATCH); nothing was changed";
    case status::null_pointer:
      return "null_pointer: x or y (src or dst) is null while rows and cols are non-zero; pass valid "
             "buffers or zero sizes";
    case status::invalid_stride:
      return "invalid_stride: a row stride (in elements) is smaller than cols, or a head view would overlap "
             "itself; pass a stride >= cols, head views whose heads and tokens do not share elements";
    case status::size_overflow:
      return "size_overflow: (rows - 1) * stride + cols elements do not fit the address space; "
             "check rows, cols and the strides";
    case status::invalid_eps:
      return "invalid_eps: eps is negative, NaN or infinite; pass a finite eps >= 0";
    case status::misaligned_pointer:
      return "misaligned_pointer: a pointer is not aligned to its element type (4 bytes for float, "
             "2 for bf16/fp16); pass element-aligned pointers";
    case status::overlapping_output:
      return "overlapping_output: y (dst) overlaps x, gamma or beta; use a separate output buffer, or "
             "y == x with the same type and stride for in place";
    case status::isa_above_ceiling:
      return "isa_above_ceiling: the requested ISA runs here but the environment variable NORMKIT_ISA "
             "caps this process below it; unset or raise NORMKIT_ISA; nothing was changed";
    case status::shape_mismatch:
      return "shape_mismatch: y's shape differs from x's, gamma or beta does not hold x.cols() values, or "
             "a matrix has a non-unit inner stride (normkit/eigen.hpp); pass matching shapes";
    case status::out_of_memory:
      return "out_of_memory: a composite op (fused add in fp32_sum mode, quantized norms) could not "
             "allocate its per-thread fp32 scratch (cols floats per row of a chunk); nothing was written";
    case status::invalid_scale:
      return "invalid_scale: a quantization scale is <= 0, NaN or Inf, or scale_ub is NaN or Inf; pass a "
             "finite scale > 0 (scale_ub <= 0 means no cap)";
    case status::invalid_block:
      return "invalid_block: a Q8_0 output needs cols to be a multiple of 32 (normkit::block_q8_0::size); "
             "pad the rows or quantize the tail another way";
    default:
      break;
  }
  if (static_cast<int>(s) == 1)
    return "invalid_argument: a bad argument (deprecated value; normkit 0.2 returns a specific status)";
  return "unknown status";
}
}  // namespace NORMKIT_ABI_NAMESPACE

}  // namespace normkit
