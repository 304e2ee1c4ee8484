// SPDX-License-Identifier: MIT
// The symbol probe (ctest isa_symbols_matrix_*): a small TU that takes the code paths whose
// symbols an object compiled with ISA flags emits, compiled per (compiler, -O level, ISA) and
// checked by check_isa_symbols.cmake. Compiling all of normkit_isa.cpp 16 times would cost
// minutes; the kernels are one template per (op, knobs, types), so a few entries cover every
// helper they call.
//   NORMKIT_ISA_TU_<ISA> defined: the per-ISA TU of the runtime-dispatch component, through
//     the same table entries and conversions normkit_isa.cpp instantiates (dispatch/table_impl.hpp).
//   otherwise: a user's static TU built with ISA flags, through the public entry points (the
//     SIMD path and the scalar reference fallback), the reference, the oracle and the names.
#if defined(NORMKIT_ISA_TU_AVX2) || defined(NORMKIT_ISA_TU_AVX512) || defined(NORMKIT_ISA_TU_NEON)
#include <normkit/dispatch/table_impl.hpp>
#include <normkit/simd/arch.hpp>

#include <cstddef>  // std::size_t

using probe_arch = normkit::detail::arch_of_t<normkit::isa::NORMKIT_ISA_TU>;

namespace nd = normkit::detail;

// What the table's entries are for a few (op, knobs, types): RMSNorm round-twice bf16 (llama),
// RMSNorm divide fp16, LayerNorm plus-one f32 and mixed types; two conversions.
void probe_entries(nd::kernel_fn* k) {
  k[0] = &nd::erased_rows<probe_arch, nd::rms_norm_op, nd::knobs_at<1>, normkit::bf16, normkit::bf16,
                          normkit::bf16>;
  k[1] = &nd::erased_rows<probe_arch, nd::rms_norm_op, nd::knobs_at<6>, normkit::fp16, normkit::fp16,
                          normkit::fp16>;
  k[2] = &nd::erased_rows<probe_arch, nd::layer_norm_op, nd::knobs_at<3>, float, float, float>;
  k[3] =
      &nd::erased_rows<probe_arch, nd::layer_norm_op, nd::knobs_at<2>, normkit::bf16, float, normkit::fp16>;
  k[4] = &nd::erased_rows<probe_arch, nd::convert_op, nd::knobs_at<0>, float, normkit::bf16>;
  k[5] = &nd::erased_rows<probe_arch, nd::convert_op, nd::knobs_at<0>, normkit::fp16, float>;
}
#else
#include <normkit/normkit.hpp>

#include <cstddef>  // std::size_t

int probe_static(const normkit::bf16* x, const normkit::bf16* g, normkit::bf16* y, const float* xf,
                 const float* gf, const float* bf, float* yf, normkit::fp16* h, double* yd, std::size_t rows,
                 std::size_t cols) {
  int bad = 0;
  bad += normkit::rms_norm<normkit::llama>(x, g, y, rows, cols, 1e-6f) != normkit::status::ok;
  bad += normkit::rms_norm<normkit::gemma3n>(xf, gf, h, rows, cols, 1e-6f) != normkit::status::ok;
  bad += normkit::layer_norm<normkit::pytorch>(xf, gf, bf, yf, rows, cols, 1e-5f) != normkit::status::ok;
  bad += normkit::layer_norm<normkit::gemma>(x, g, g, h, rows, cols, 1e-5f) != normkit::status::ok;
  bad += normkit::reference::rms_norm<normkit::t5>(x, g, y, rows, cols, 1e-6f) != normkit::status::ok;
  bad += normkit::reference::layer_norm<normkit::olmo2>(xf, gf, bf, yf, rows, cols, 1e-5f) !=
         normkit::status::ok;
  bad += normkit::convert(xf, h, cols) != normkit::status::ok;
  bad += normkit::convert(h, y, cols) != normkit::status::ok;
  normkit::oracle::rms_norm_row<normkit::llama>(x, g, yd, cols, 1e-6f);
  normkit::oracle::layer_norm_row<normkit::pytorch>(xf, gf, bf, yd, cols, 1e-5f);
  bad += normkit::set_isa(normkit::isa::scalar) != normkit::status::ok;
  bad += normkit::to_string(normkit::active_isa())[0] == '\0';
  bad += normkit::to_string(normkit::status::ok)[0] == '\0';
  bad += !normkit::isa_available(normkit::isa::scalar);
  return bad;
}
#endif
