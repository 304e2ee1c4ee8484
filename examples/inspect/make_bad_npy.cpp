// SPDX-License-Identifier: MIT
// Writes the malformed (and a few well-formed) .npy files that the normkit-inspect tests feed it,
// into the directory given as the only argument -- generated at test time rather than committed.
#include <cstdint>  // std::uint32_t
#include <cstdio>   // std::FILE, std::fopen, std::fwrite
#include <cstring>  // std::memcpy
#include <string>   // std::string

namespace {

std::string dir;

bool write(const std::string& name, const std::string& bytes) {
  std::FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
  if (!f)
    return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

// A .npy file: magic, version, little-endian header length, the dict padded with spaces and a
// newline to a multiple of 64 bytes (as numpy writes it), then `data_bytes` bytes of data.
std::string npy(const std::string& dict, std::size_t data_bytes, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const std::size_t n = header.size();
  s += static_cast<char>(n & 0xff);
  s += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    s += static_cast<char>((n >> 16) & 0xff);
    s += static_cast<char>((n >> 24) & 0xff);
  }
  s += header;
  // Data: float32 values 1, 2, 3, ... (little-endian), cut or padded to data_bytes.
  std::string data;
  for (std::uint32_t i = 0; data.size() < data_bytes; ++i) {
    const float v = static_cast<float>(i % 7) + 1.0f;
    unsigned char b[4];
    std::uint32_t u = 0;
    static_assert(sizeof u == sizeof v, "float is 32 bits");
    std::memcpy(&u, &v, sizeof u);
    for (int k = 0; k < 4; ++k)
      b[k] = static_cast<unsigned char>(u >> (8 * k));
    data.append(reinterpret_cast<const char*>(b), 4);
  }
  data.resize(data_bytes);
  return s + data;
}

std::string dict(const std::string& descr, const std::string& shape, const char* order = "False") {
  return "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shape + ", }";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2)
    return std::fprintf(stderr, "usage: make_bad_npy <directory>\n"), 2;
  dir = argv[1];
  const bool ok =
      // well-formed
      write("x_4x8.npy", npy(dict("'<f4'", "(4, 8)"), 128)) &&
      write("x_4x8_v2.npy", npy(dict("'<f4'", "(4, 8)"), 128, 2)) &&
      write("gamma_8.npy", npy(dict("'<f4'", "(8,)"), 32)) &&
      write("gamma_7.npy", npy(dict("'<f4'", "(7,)"), 28)) &&
      write("ref_4x9.npy", npy(dict("'<f4'", "(4, 9)"), 144)) &&
      write("x_0x8.npy", npy(dict("'<f4'", "(0, 8)"), 0)) &&
      // malformed
      write("bad_magic.npy", "PK\x03\x04 this is a zip file, not an npy file\n") && write("empty.npy", "") &&
      write("bad_version.npy", "\x93NUMPY\x09" + npy(dict("'<f4'", "(4, 8)"), 128).substr(7)) &&
      write("truncated_header.npy", npy(dict("'<f4'", "(4, 8)"), 0).substr(0, 40)) &&
      write("truncated_data.npy", npy(dict("'<f4'", "(4, 8)"), 100)) &&
      write("trailing_data.npy", npy(dict("'<f4'", "(4, 8)"), 132)) &&
      write("huge_shape.npy", npy(dict("'<f4'", "(1099511627776, 1099511627776)"), 16)) &&
      write("large_shape.npy", npy(dict("'<f4'", "(1048576, 1048576)"), 16)) &&
      write("dtype_f8.npy", npy(dict("'<f8'", "(4, 8)"), 256)) &&
      write("dtype_i4.npy", npy(dict("'<i4'", "(4, 8)"), 128)) &&
      write("dtype_big_endian.npy", npy(dict("'>f4'", "(4, 8)"), 128)) &&
      write("dtype_structured.npy", npy(dict("[('a', '<f4')]", "(4, 8)"), 128)) &&
      write("fortran_order.npy", npy(dict("'<f4'", "(4, 8)", "True"), 128)) &&
      write("bad_dict.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, x), }", 128)) &&
      write("no_dict.npy", npy("descr <f4", 128));
  if (!ok)
    return std::fprintf(stderr, "make_bad_npy: cannot write into %s\n", argv[1]), 1;
  std::printf("wrote the test .npy files into %s\n", argv[1]);
  return 0;
}
