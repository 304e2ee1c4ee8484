// SPDX-License-Identifier: MIT
// A small, strict reader of NumPy .npy files (format versions 1.0, 2.0 and 3.0) for
// normkit-inspect: little-endian fp32 ('<f4'), fp16 ('<f2') and bf16, stored either as raw bits
// ('<u2') or as ml_dtypes' bfloat16 (a 2-byte void, '<V2' / '|V2'), C order only.
//
// Everything the file says is checked before it is trusted: the magic, the version, the header
// length, the header dict (exactly 'descr', 'fortran_order', 'shape'), the shape's product
// (overflow), and the data size against the file size (truncated or trailing bytes), so a bad
// file gives one error message and never a large allocation or an out-of-bounds read.
#pragma once

#include <algorithm>  // std::equal
#include <cstddef>    // std::size_t, std::ptrdiff_t
#include <cstdint>    // std::uint16_t, std::uint32_t
#include <cstdio>     // std::FILE, std::fopen, std::fread
#include <limits>     // std::numeric_limits
#include <string>     // std::string
#include <utility>    // std::move
#include <vector>     // std::vector

namespace npy {

enum class dtype { f32, f16, bf16 };

inline const char* to_string(dtype t) {
  switch (t) {
    case dtype::f32:
      return "fp32";
    case dtype::f16:
      return "fp16";
    case dtype::bf16:
      return "bf16";
  }
  return "?";
}

inline std::size_t item_size(dtype t) {
  return t == dtype::f32 ? 4 : 2;
}

struct array {
  dtype type = dtype::f32;
  std::string descr;                // as written in the file, e.g. "<V2"
  std::vector<std::size_t> shape;   // () for a 0-d array
  std::vector<unsigned char> data;  // little-endian elements, C order

  std::size_t size() const {
    std::size_t n = 1;
    for (std::size_t d : shape)
      n *= d;  // cannot overflow: checked by read()
    return n;
  }
  // Element i as its raw bits (16 or 32 of them); the file is little-endian whatever the host.
  std::uint32_t bits(std::size_t i) const {
    const unsigned char* p = data.data() + i * item_size(type);
    std::uint32_t u = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8;
    if (type == dtype::f32)
      u |= static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
    return u;
  }
  std::string shape_string() const {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
  }
};

namespace detail {

// A cursor over the header dict, a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct dict_parser {
  const std::string& s;
  std::size_t i = 0;

  void skip_space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
  }
  bool eat(char c) {
    skip_space();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool string_literal(std::string& out) {
    skip_space();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      return false;
    const char q = s[i++];
    out.clear();
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\')
        return false;  // numpy never escapes in these keys and dtypes
      out += s[i++];
    }
    return eat(q);
  }
  bool word(const char* w) {
    skip_space();
    const std::string ws(w);
    if (s.compare(i, ws.size(), ws) != 0)
      return false;
    i += ws.size();
    return true;
  }
  bool size_value(std::size_t& out) {
    skip_space();
    if (i >= s.size() || s[i] < '0' || s[i] > '9')
      return false;
    std::size_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      const std::size_t digit = static_cast<std::size_t>(s[i] - '0');
      if (v > (std::numeric_limits<std::size_t>::max() - digit) / 10)
        return false;
      v = v * 10 + digit;
      ++i;
    }
    if (i < s.size() && s[i] == 'L')  // Python 2 longs, in old files
      ++i;
    out = v;
    return true;
  }
};

inline bool fail(std::string& error, const std::string& message) {
  error = message;
  return false;
}

}  // namespace detail

// Reads `path` into `out`; on failure returns false with a one-line reason in `error`.
inline bool read(const std::string& path, array& out, std::string& error) {
  using detail::fail;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return fail(error, "cannot open the file");
  std::vector<unsigned char> file;
  unsigned char buf[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
    file.insert(file.end(), buf, buf + got);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error)
    return fail(error, "read error");

  static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (file.size() < 8 || !std::equal(magic, magic + 6, file.begin()))
    return fail(error, "not a .npy file (wrong magic: the file must start with \\x93NUMPY)");
  const unsigned major = file[6];
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    if (file.size() < 10)
      return fail(error, "truncated .npy header");
    header_len = static_cast<std::size_t>(file[8]) | static_cast<std::size_t>(file[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12)
      return fail(error, "truncated .npy header");
    header_len = static_cast<std::size_t>(file[8]) | static_cast<std::size_t>(file[9]) << 8 |
                 static_cast<std::size_t>(file[10]) << 16 | static_cast<std::size_t>(file[11]) << 24;
    header_start = 12;
  } else {
    return fail(error, "unsupported .npy format version " + std::to_string(major) + "." +
                           std::to_string(static_cast<unsigned>(file[7])));
  }
  if (header_len > file.size() - header_start)
    return fail(error, "truncated .npy header (it declares " + std::to_string(header_len) + " bytes)");
  const std::string header(file.begin() + static_cast<std::ptrdiff_t>(header_start),
                           file.begin() + static_cast<std::ptrdiff_t>(header_start + header_len));

  // The dict: exactly the three keys numpy writes, in any order.
  detail::dict_parser p{header};
  std::string descr;
  bool fortran = false, have_descr = false, have_order = false, have_shape = false;
  std::vector<std::size_t> shape;
  if (!p.eat('{'))
    return fail(error, "malformed .npy header (no dict)");
  while (!p.eat('}')) {
    std::string key;
    if (!p.string_literal(key) || !p.eat(':'))
      return fail(error, "malformed .npy header dict");
    if (key == "descr" && !have_descr) {
      if (!p.string_literal(descr))
        return fail(error,
                    "unsupported dtype (a structured or non-string 'descr'); "
                    "supported: '<f4', '<f2', '<u2' or ml_dtypes bfloat16 ('<V2')");
      have_descr = true;
    } else if (key == "fortran_order" && !have_order) {
      if (p.word("True"))
        fortran = true;
      else if (!p.word("False"))
        return fail(error, "malformed .npy header ('fortran_order' is not True or False)");
      have_order = true;
    } else if (key == "shape" && !have_shape) {
      if (!p.eat('('))
        return fail(error, "malformed .npy header ('shape' is not a tuple)");
      while (!p.eat(')')) {
        std::size_t d = 0;
        if (!p.size_value(d))
          return fail(error, "malformed .npy header ('shape' holds a non-integer or a too large extent)");
        shape.push_back(d);
        if (!p.eat(',') && !(p.skip_space(), p.i < header.size() && header[p.i] == ')'))
          return fail(error, "malformed .npy header ('shape')");
      }
      have_shape = true;
    } else {
      return fail(error, "malformed .npy header (unexpected or repeated key '" + key + "')");
    }
    if (!p.eat(',') && !(p.skip_space(), p.i < header.size() && header[p.i] == '}'))
      return fail(error, "malformed .npy header dict");
  }
  if (!have_descr || !have_order || !have_shape)
    return fail(error, "malformed .npy header (it needs 'descr', 'fortran_order' and 'shape')");

  array a;
  a.descr = descr;
  if (descr == "<f4" || descr == "=f4")
    a.type = dtype::f32;
  else if (descr == "<f2" || descr == "=f2")
    a.type = dtype::f16;
  else if (descr == "<u2" || descr == "=u2" || descr == "<V2" || descr == "|V2")
    a.type = dtype::bf16;  // raw bf16 bits, or ml_dtypes.bfloat16 (numpy sees a 2-byte void)
  else
    return fail(error, "unsupported dtype '" + descr +
                           "'; supported: '<f4' (fp32), '<f2' (fp16), bf16 as '<u2' bits or ml_dtypes "
                           "bfloat16 ('<V2'); convert with x.astype(...) before np.save");
  if (fortran && shape.size() > 1)
    return fail(error, "Fortran-order (column-major) data is not supported; save np.ascontiguousarray(x)");
  a.shape = shape;

  std::size_t n = 1;
  for (std::size_t d : shape) {
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d)
      return fail(error, "shape " + a.shape_string() + " overflows");
    n *= d;
  }
  const std::size_t have = file.size() - header_start - header_len;
  const std::size_t item = item_size(a.type);
  if (n > have / item || n * item > have)
    return fail(error, "truncated data: shape " + a.shape_string() + " of " + to_string(a.type) + " needs " +
                           (n > std::numeric_limits<std::size_t>::max() / item ? std::string("more")
                                                                               : std::to_string(n * item)) +
                           " bytes, the file holds " + std::to_string(have));
  if (n * item != have)
    return fail(error, std::to_string(have - n * item) + " bytes after the data of shape " +
                           a.shape_string() + " (not a single .npy array?)");
  a.data.assign(file.end() - static_cast<std::ptrdiff_t>(have), file.end());
  out = std::move(a);
  return true;
}

}  // namespace npy
