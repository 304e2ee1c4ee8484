// SPDX-License-Identifier: MIT
// normkit: closes the region opened by fp_precise_begin.hpp (see there).
#if defined(__clang__)
#pragma float_control(pop)
#endif
