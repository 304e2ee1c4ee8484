// SPDX-License-Identifier: MIT
// normkit: the storage types float, bf16 and fp16, their exact conversions and
// the storage-type trait (defined in core/storage.hpp).
#pragma once

#include "core/storage.hpp"
