// SPDX-License-Identifier: MIT
// normkit on Eigen: a row-major bf16 activation matrix normalized in place of a copy, a block of a
// wider matrix (its outer stride is the row stride), and what a shape mismatch returns.
#include <normkit/eigen.hpp>  // optional header: needs Eigen 3.4; includes the normkit API it uses

#include <cstdio>  // std::printf

using bf16_rows = Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

int main() {
  // Two tokens of a 4096-wide hidden state; a row of +-3 has RMS 3, so y = +-1 times the gain.
  bf16_rows x(2, 4096), y(2, 4096);
  for (Eigen::Index c = 0; c < x.cols(); ++c) {
    x(0, c) = Eigen::bfloat16(c % 2 ? -3.0f : 3.0f);
    x(1, c) = Eigen::bfloat16(0.001f * static_cast<float>(c % 17));
  }
  Eigen::Matrix<Eigen::bfloat16, Eigen::Dynamic, 1> gamma(4096);
  gamma.setConstant(Eigen::bfloat16(1.5f));

  normkit::status s = normkit::rms_norm<normkit::llama>(x, gamma, y, 1e-6f);
  std::printf("rms_norm<llama>(2 x 4096 bf16): %s\n", normkit::to_string(s));
  std::printf("y(0, 0..3) = %g %g %g %g\n", static_cast<double>(static_cast<float>(y(0, 0))),
              static_cast<double>(static_cast<float>(y(0, 1))),
              static_cast<double>(static_cast<float>(y(0, 2))),
              static_cast<double>(static_cast<float>(y(0, 3))));

  // A 64-column slice (a head of a QK-norm, say) of the same rows, written into the same slice of y:
  // no copy, the kernels step over rows with the matrix's outer stride (4096).
  s = normkit::rms_norm<normkit::llama>(x.middleCols(128, 64), gamma.head(64), y.middleCols(128, 64), 1e-6f);
  std::printf("rms_norm<llama>(block 2 x 64, outer stride %ld): %s\n",
              static_cast<long>(x.middleCols(128, 64).outerStride()), normkit::to_string(s));
  std::printf("y(0, 128..129) = %g %g\n", static_cast<double>(static_cast<float>(y(0, 128))),
              static_cast<double>(static_cast<float>(y(0, 129))));

  // A gain of the wrong length is refused before anything is written.
  s = normkit::rms_norm<normkit::llama>(x, gamma.head(100), y, 1e-6f);
  std::printf("gamma of 100 values for 4096 columns: %s\n", normkit::to_string(s));
  return s == normkit::status::shape_mismatch ? 0 : 1;
}
