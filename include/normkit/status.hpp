// normkit: status codes returned by every entry point (no exceptions needed).
#pragma once

#include "detail/abi.hpp"

namespace normkit {

// Every public entry point returns one of these; nothing on a bad argument is undefined.
enum class [[nodiscard]] status{
    ok = 0,
    invalid_argument,  // null pointer with non-zero sizes, stride < cols, bad eps, misaligned
                       // pointer, outputs overlapping inputs, size overflow
    unsupported_isa,   // an ISA that is not compiled into this binary (set_isa only)
};

inline namespace NORMKIT_ABI_NAMESPACE {  // every function: detail/abi.hpp
constexpr const char* to_string(status s) noexcept {
  switch (s) {
    case status::ok:
      return "ok";
    case status::invalid_argument:
      return "invalid_argument";
    case status::unsupported_isa:
      return "unsupported_isa";
  }
  return "unknown status";
}
}  // namespace NORMKIT_ABI_NAMESPACE

}  // namespace normkit
