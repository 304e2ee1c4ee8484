// SPDX-License-Identifier: MIT
// normkit: the status codes every entry point returns (defined in core/status.hpp).
#pragma once

#include "core/status.hpp"
