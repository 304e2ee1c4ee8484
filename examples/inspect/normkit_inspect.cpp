// SPDX-License-Identifier: MIT
// normkit-inspect: which rounding convention produced this output?
//
//   normkit-inspect rms|layer --x X.npy [--gamma G.npy] [--beta B.npy] [--ref Y.npy] [--eps E]
//                   [--rows 0,5] [--preset NAME] [--json]
//
// Feeds the same, already rounded inputs and gains to every normkit preset and prints, per
// selected row, the statistics of the contract (sum of squares, mean, mean square or variance,
// inverse RMS in decimal and hex) and the first outputs of each preset; given the output a
// framework dumped (--ref, whose dtype is the output dtype), it says which preset reproduces it
// bit for bit (exact %, max ulp, first differing element) -- the fidelity question -- apart from
// each preset's distance to the fp64 oracle, the error question. The last line starts with
// `verdict:`. Exit status: 0 when a report was printed (whatever the verdict), 2 on a bad argument
// or file: one line on stderr, nothing on stdout.
#include <normkit/normkit.hpp>

#include <cmath>    // std::fma, std::sqrt, std::isfinite, std::ilogb, std::ldexp, std::fabs
#include <cstdint>  // std::uint16_t, std::uint32_t, std::uint64_t
#include <cstdio>   // std::printf, std::fprintf, std::snprintf
#include <cstdlib>  // std::strtod, std::strtoull
#include <cstring>  // std::memcpy, std::strcmp
#include <limits>   // std::numeric_limits
#include <string>   // std::string
#include <vector>   // std::vector

#include "npy.hpp"

namespace {

// ---- Storage types: bits, names, ulps. ------------------------------------------------------

template <class T>
struct traits;
template <>
struct traits<float> {
  static constexpr int width = 32, mantissa = 23, min_exp = -126;
  static std::uint32_t bits(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
  }
  static float from_bits(std::uint32_t u) {
    float v;
    std::memcpy(&v, &u, sizeof v);
    return v;
  }
};
template <>
struct traits<normkit::bf16> {
  static constexpr int width = 16, mantissa = 7, min_exp = -126;
  static std::uint32_t bits(normkit::bf16 v) { return v.bits; }
  static normkit::bf16 from_bits(std::uint32_t u) {
    return normkit::bf16::from_bits(static_cast<std::uint16_t>(u));
  }
};
template <>
struct traits<normkit::fp16> {
  static constexpr int width = 16, mantissa = 10, min_exp = -14;
  static std::uint32_t bits(normkit::fp16 v) { return v.bits; }
  static normkit::fp16 from_bits(std::uint32_t u) {
    return normkit::fp16::from_bits(static_cast<std::uint16_t>(u));
  }
};

template <class T>
float widen(T v) {
  return static_cast<float>(v);
}

// Distance in units in the last place of T between two values given by their bits: the
// sign-magnitude encodings mapped to a line of integers (+0 and -0 both at 0). A NaN against a
// number is "infinitely" far; two NaNs count as equal (normkit writes canonical NaNs, a framework
// may not).
constexpr std::uint64_t nan_mismatch = std::numeric_limits<std::uint64_t>::max();
template <class T>
std::uint64_t ulp_distance(std::uint32_t a, std::uint32_t b) {
  const bool na = widen(traits<T>::from_bits(a)) != widen(traits<T>::from_bits(a));
  const bool nb = widen(traits<T>::from_bits(b)) != widen(traits<T>::from_bits(b));
  if (na || nb)
    return na && nb ? 0 : nan_mismatch;
  const std::uint32_t sign = 1u << (traits<T>::width - 1);
  auto key = [&](std::uint32_t u) {
    const std::int64_t mag = static_cast<std::int64_t>(u & (sign - 1u));
    return (u & sign) ? -mag : mag;
  };
  const std::int64_t d = key(a) - key(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

// The error of y against the fp64 oracle value o, in ulps of T at o.
template <class T>
double oracle_ulps(float y, double o) {
  if (!std::isfinite(o) || !std::isfinite(y))
    return (std::isnan(o) && std::isnan(y)) || (o == static_cast<double>(y))
               ? 0.0
               : std::numeric_limits<double>::infinity();
  int e = o == 0.0 ? traits<T>::min_exp : std::ilogb(o);
  if (e < traits<T>::min_exp)
    e = traits<T>::min_exp;
  return std::fabs(static_cast<double>(y) - o) / std::ldexp(1.0, e - traits<T>::mantissa);
}

template <class T>
std::vector<T> elements(const npy::array& a) {
  std::vector<T> v(a.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = traits<T>::from_bits(a.bits(i));
  return v;
}

std::string hex(std::uint32_t bits, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, width == 32 ? "0x%08x" : "0x%04x", static_cast<unsigned>(bits));
  return buf;
}

std::string dec(double v, int digits = 9) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// A share as "xx.xx", never rounded up to 100.00 unless every element agrees.
std::string percent(std::size_t part, std::size_t whole) {
  double p = whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 100.0;
  if (part != whole && p > 99.99)
    p = 99.99;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", p);
  return buf;
}

std::string ulps(std::uint64_t u) {
  return u == nan_mismatch ? std::string("nan") : std::to_string(u);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  return std::isfinite(v) ? dec(v, 17) : std::string("null");  // the hex fields keep the bits
}

// ---- The statistics of the contract (docs/contract.md), in fp32, for the printout. ------------

// contract: K = 64 partial sums, term i into partial i mod 64 (an fma where the term is a square),
// then fold halves w = 32, 16, ..., 1.
struct canonical_sum {
  float p[64] = {};
  std::size_t n = 0;
  void add(float v) {
    p[n % 64] = p[n % 64] + v;
    ++n;
  }
  void add_square(float v) {
    p[n % 64] = std::fma(v, v, p[n % 64]);
    ++n;
  }
  float fold() {
    for (std::size_t w = 32; w >= 1; w /= 2)
      for (std::size_t k = 0; k < w; ++k)
        p[k] = p[k] + p[k + w];
    return p[0];
  }
};

struct row_stats {
  float sum = 0, mean = 0, spread = 0, inv = 0, root = 0;  // spread: mean square or variance
  float shift = 0, m = 0;  // LayerNorm: the final K and m, so c_i = (f(x_i) - K) - m
  bool non_finite = false, overflow = false, refined = false;
  bool kernel_differs = false;  // the kernels' n_i is not row value * inv (see run_all)
  std::size_t kernel_col = 0;
};

template <class In>
row_stats rms_stats(const In* x, std::size_t cols, float eps) {
  row_stats s;
  canonical_sum c;
  for (std::size_t i = 0; i < cols; ++i) {
    const float v = widen(x[i]);
    s.non_finite = s.non_finite || !std::isfinite(v);
    c.add_square(v);  // contract: s = csum(f(x_i)^2)
  }
  s.sum = c.fold();
  s.spread = s.sum / static_cast<float>(cols);  // contract: ms = s / float(d)
  s.root = std::sqrt(s.spread + eps);           // contract: sqrt(ms + eps) (the divide knob)
  s.inv = 1.0f / s.root;                        // contract: inv = 1 / sqrt(ms + eps)
  s.overflow = !s.non_finite && std::isinf(s.sum);
  return s;
}

template <class In>
row_stats layer_stats(const In* x, std::size_t cols, float eps) {
  row_stats s;
  const float d = static_cast<float>(cols);
  float shift = widen(x[0]);  // contract: K = f(x_0)
  float m = 0, var = 0;
  auto moments = [&] {
    canonical_sum a, b;
    for (std::size_t i = 0; i < cols; ++i)
      a.add(widen(x[i]) - shift);  // contract: d_i = f(x_i) - K
    m = a.fold() / d;              // contract: m = csum(d_i) / float(d)
    for (std::size_t i = 0; i < cols; ++i) {
      const float di = widen(x[i]) - shift;
      b.add_square(di - m);  // contract: var = csum(c_i^2) / float(d)
    }
    s.sum = b.fold();
    var = s.sum / d;
  };
  for (std::size_t i = 0; i < cols; ++i)
    s.non_finite = s.non_finite || !std::isfinite(widen(x[i]));
  moments();
  s.overflow = !s.non_finite && std::isinf(s.sum);
  if (!s.non_finite && !s.overflow && m * m > 16.0f * var) {  // contract: one refinement of K
    shift = shift + m;
    s.refined = true;
    moments();
  }
  s.shift = shift;
  s.m = m;
  s.mean = shift + m;  // contract: mean = K + m
  s.spread = var;
  s.root = std::sqrt(var + eps);
  s.inv = 1.0f / s.root;
  return s;
}

// ---- Presets. -----------------------------------------------------------------------------------

enum class op_kind { rms, layer };

template <class P>
struct preset_tag {
  using type = P;
};

// In preference order: when several presets give the same bits on the data, the verdict names the
// first. Multiplying presets come before dividing ones (x * inv and x / sqrt(ms + eps) round alike
// for most 16-bit outputs, and multiplying is the common convention), pytorch before olmo2 (equal
// knobs), llama before t5 (equal whenever x and gamma share a dtype); pytorch first for LayerNorm.
template <class F>
void for_each_preset(op_kind op, F&& f) {
  if (op == op_kind::rms) {
    f(preset_tag<normkit::llama>{}, "llama");
    f(preset_tag<normkit::gemma>{}, "gemma");
    f(preset_tag<normkit::pytorch>{}, "pytorch");
    f(preset_tag<normkit::olmo2>{}, "olmo2");
    f(preset_tag<normkit::t5>{}, "t5");
    f(preset_tag<normkit::gemma3n>{}, "gemma3n");
    f(preset_tag<normkit::onnx>{}, "onnx");
    f(preset_tag<normkit::onnxruntime>{}, "onnxruntime");
  } else {
    f(preset_tag<normkit::pytorch>{}, "pytorch");
    f(preset_tag<normkit::llama>{}, "llama");
    f(preset_tag<normkit::gemma>{}, "gemma");
    f(preset_tag<normkit::olmo2>{}, "olmo2");
    f(preset_tag<normkit::t5>{}, "t5");
    f(preset_tag<normkit::gemma3n>{}, "gemma3n");
    f(preset_tag<normkit::onnxruntime>{}, "onnxruntime");
    // onnx: the LayerNormalization spec rounds once more before adding B; layer_norm<onnx> does
    // not compile (policy.hpp), so it is not offered here.
  }
}

const char* const rms_names[] = {"llama", "gemma",   "gemma3n", "olmo2",
                                 "t5",    "pytorch", "onnx",    "onnxruntime"};

// ---- Options and the report. ----------------------------------------------------------------

struct options {
  op_kind op = op_kind::rms;
  std::string x, gamma, beta, ref, preset;
  float eps = 0;
  bool eps_given = false, json = false;
  std::vector<std::size_t> rows;
};

struct value {
  std::uint32_t bits = 0;
  float v = 0;
};

struct preset_result {
  std::string name;
  bool divides = false;                         // normalize::divide: uses sqrt(ms + eps) instead of inv
  std::vector<std::vector<value>> first;        // per selected row
  double oracle_max_ulps = 0;                   // over the selected rows
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a of every output's bits
  std::size_t exact = 0, exact_rows = 0;        // outputs, and whole rows, equal to the reference
  std::uint64_t max_ulp = 0;
  bool differs = false;
  std::size_t diff_row = 0, diff_col = 0;
  value mine, theirs;
};

struct report {
  std::string op, isa, out_dtype;
  int out_width = 32;
  float eps = 0;
  std::size_t rows = 0, cols = 0, shown = 0;
  std::vector<std::pair<std::string, const npy::array*>> inputs;
  std::vector<std::pair<std::size_t, row_stats>> stats;
  std::vector<std::vector<value>> ref_first;
  std::vector<preset_result> presets;
  bool has_ref = false;
  std::string verdict;
};

struct failure {
  std::string message;
};

template <class Out, class In, class W>
void run_all(const options& o, const std::vector<In>& x, const std::vector<W>& gamma,
             const std::vector<W>& beta, const npy::array* ref_file, report& r) {
  const std::size_t rows = r.rows, cols = r.cols;
  const W* g = o.gamma.empty() ? nullptr : gamma.data();
  const W* b = o.beta.empty() ? nullptr : beta.data();
  std::vector<Out> ref;
  if (ref_file)
    ref = elements<Out>(*ref_file);
  r.shown = cols < 8 ? cols : 8;
  std::vector<float> check(cols);
  for (std::size_t row : o.rows) {
    const In* xr = x.data() + row * cols;
    row_stats st = o.op == op_kind::rms ? rms_stats(xr, cols, o.eps) : layer_stats(xr, cols, o.eps);
    // The statistics shown are recomputed here from the contract; the kernels must agree. With no
    // gain, one rounding and fp32 output, the kernel's y_i is n_i = (row value) * inv, one multiply.
    const normkit::status cs =
        o.op == op_kind::rms
            ? normkit::rms_norm<normkit::round_once>(xr, nullptr, check.data(), 1, cols, o.eps)
            : normkit::layer_norm<normkit::round_once>(xr, nullptr, nullptr, check.data(), 1, cols, o.eps);
    if (cs != normkit::status::ok)
      throw failure{std::string("normkit refused the inputs: ") + normkit::to_string(cs)};
    for (std::size_t i = 0; i < cols && !st.non_finite && !st.overflow && !st.kernel_differs; ++i) {
      const float v = o.op == op_kind::rms ? widen(xr[i]) : (widen(xr[i]) - st.shift) - st.m;
      if (traits<float>::bits(v * st.inv) != traits<float>::bits(check[i])) {
        st.kernel_differs = true;
        st.kernel_col = i;
      }
    }
    r.stats.emplace_back(row, st);
    if (ref_file) {
      std::vector<value> f;
      for (std::size_t i = 0; i < r.shown; ++i)
        f.push_back({traits<Out>::bits(ref[row * cols + i]), widen(ref[row * cols + i])});
      r.ref_first.push_back(f);
    }
  }
  std::vector<Out> y(rows * cols);
  std::vector<double> exact_row(cols);
  for_each_preset(o.op, [&](auto tag, const char* name) {
    using P = typename decltype(tag)::type;
    if (!o.preset.empty() && o.preset != name)
      return;
    preset_result p;
    p.name = name;
    p.divides = P::norm == normkit::normalize::divide;
    normkit::status s = normkit::status::ok;
    if (o.op == op_kind::rms)
      s = normkit::rms_norm<P>(x.data(), g, y.data(), rows, cols, o.eps);
    else if constexpr (P::layer_norm_exact)  // layer_norm<onnx> does not compile (policy.hpp)
      s = normkit::layer_norm<P>(x.data(), g, b, y.data(), rows, cols, o.eps);
    if (s != normkit::status::ok)
      throw failure{std::string("normkit refused the inputs: ") + normkit::to_string(s)};
    for (std::size_t i = 0; i < rows * cols; ++i)
      for (int k = 0; k < traits<Out>::width; k += 8) {
        p.hash ^= (traits<Out>::bits(y[i]) >> k) & 0xffu;
        p.hash *= 1099511628211ull;
      }
    for (std::size_t row : o.rows) {
      std::vector<value> f;
      for (std::size_t i = 0; i < r.shown; ++i)
        f.push_back({traits<Out>::bits(y[row * cols + i]), widen(y[row * cols + i])});
      p.first.push_back(f);
      if (o.op == op_kind::rms)
        normkit::oracle::rms_norm_row<P>(x.data() + row * cols, g, exact_row.data(), cols, o.eps);
      else if constexpr (P::layer_norm_exact)
        normkit::oracle::layer_norm_row<P>(x.data() + row * cols, g, b, exact_row.data(), cols, o.eps);
      for (std::size_t i = 0; i < cols; ++i) {
        const double e = oracle_ulps<Out>(widen(y[row * cols + i]), exact_row[i]);
        if (e > p.oracle_max_ulps)
          p.oracle_max_ulps = e;
      }
    }
    if (ref_file) {
      std::size_t row_misses = 0;
      for (std::size_t i = 0; i < rows * cols; ++i) {
        if (i % cols == 0)
          row_misses = 0;
        const std::uint32_t a = traits<Out>::bits(y[i]), c = traits<Out>::bits(ref[i]);
        const std::uint64_t d = ulp_distance<Out>(a, c);
        if (a == c || d == 0) {
          ++p.exact;
          if (i % cols == cols - 1 && row_misses == 0)
            ++p.exact_rows;
          continue;
        }
        ++row_misses;
        if (d > p.max_ulp)
          p.max_ulp = d;
        if (!p.differs) {
          p.differs = true;
          p.diff_row = i / cols;
          p.diff_col = i % cols;
          p.mine = {a, widen(y[i])};
          p.theirs = {c, widen(ref[i])};
        }
      }
    }
    r.presets.push_back(p);
  });
}

// The verdict. A preset matches when it reproduces >= 99 % of the reference bit for bit and is
// never more than 1 ulp away (a framework's reduction order may move a few roundings of a 16-bit
// output by one ulp; a different convention moves ~25 % of them, or far more for a gain offset).
// fp32 outputs show every ulp of the statistics: a framework summing in another order gets an
// inverse RMS an ulp or two away in some rows, and every output of those rows moves by a few ulps.
// So a preset that alone reproduces most rows bit for bit (and is never more than 8 ulps away)
// also matches, "on R of N rows"; a different convention reproduces no long row exactly.
void decide(report& r) {
  if (!r.has_ref) {
    r.verdict = "no reference output given (--ref); nothing to compare";
    return;
  }
  const std::size_t total = r.rows * r.cols;
  const preset_result* best = nullptr;
  for (const preset_result& p : r.presets) {
    if (!best || p.exact > best->exact || (p.exact == best->exact && p.max_ulp < best->max_ulp))
      best = &p;
  }
  const bool match =
      static_cast<double>(best->exact) >= 0.99 * static_cast<double>(total) && best->max_ulp <= 1;
  const preset_result* rows_best = nullptr;  // the most rows reproduced bit for bit
  for (const preset_result& p : r.presets)
    if (!rows_best || p.exact_rows > rows_best->exact_rows)
      rows_best = &p;
  bool row_match = !match && rows_best->exact_rows * 2 > r.rows && rows_best->max_ulp <= 8;
  for (const preset_result& p : r.presets)  // alone: no preset with other bits does as well
    if (&p != rows_best && p.hash != rows_best->hash && p.exact_rows >= rows_best->exact_rows)
      row_match = false;
  if (row_match)
    best = rows_best;
  std::string same;
  for (const preset_result& p : r.presets)
    if (&p != best && p.hash == best->hash && p.exact == best->exact)
      same += (same.empty() ? "" : ", ") + p.name;
  const std::string figures = percent(best->exact, total) + " % exact, max " + ulps(best->max_ulp) + " ulp";
  if (match)
    r.verdict = "matches " + best->name + " (" + figures + ")";
  else if (row_match)
    r.verdict = "matches " + best->name + " on " + std::to_string(best->exact_rows) + " of " +
                std::to_string(r.rows) + " rows bit for bit (" + figures +
                "; the other rows' statistics differ, as another summation order makes them)";
  else
    r.verdict = "matches no preset; nearest " + best->name + " (" + figures + "), first divergence at row " +
                std::to_string(best->diff_row) + " col " + std::to_string(best->diff_col);
  if (!same.empty())
    r.verdict += "; same bits here: " + same;
}

void print_text(const report& r) {
  std::printf("normkit-inspect: %s_norm, %zu rows x %zu cols, eps %s (%s), output %s, isa %s\n", r.op.c_str(),
              r.rows, r.cols, dec(r.eps).c_str(), hex(traits<float>::bits(r.eps), 32).c_str(),
              r.out_dtype.c_str(), r.isa.c_str());
  for (const auto& in : r.inputs)
    std::printf("  %-6s %s %s  %s\n", in.first.c_str(), in.second->shape_string().c_str(),
                npy::to_string(in.second->type), in.second->descr.c_str());
  for (std::size_t k = 0; k < r.stats.size(); ++k) {
    const row_stats& s = r.stats[k].second;
    std::printf("\nrow %zu\n", r.stats[k].first);
    const bool ln = r.op == "layer";
    if (ln)
      std::printf("  %-27s %-16s %s\n", "mean (K + m)", dec(s.mean).c_str(),
                  hex(traits<float>::bits(s.mean), 32).c_str());
    std::printf("  %-27s %-16s %s\n", ln ? "sum of squares (c_i^2)" : "sum of squares", dec(s.sum).c_str(),
                hex(traits<float>::bits(s.sum), 32).c_str());
    std::printf("  %-27s %-16s %s\n", ln ? "variance" : "mean square", dec(s.spread).c_str(),
                hex(traits<float>::bits(s.spread), 32).c_str());
    std::printf("  %-27s %-16s %s\n", "inverse rms 1/sqrt(. + eps)", dec(s.inv).c_str(),
                hex(traits<float>::bits(s.inv), 32).c_str());
    std::printf("  %-27s %-16s %s   (the divide presets)\n", "sqrt(. + eps)", dec(s.root).c_str(),
                hex(traits<float>::bits(s.root), 32).c_str());
    if (s.non_finite)
      std::printf("  the row holds NaN or Inf: every output of it is NaN (contract)\n");
    if (s.overflow)
      std::printf("  the sum of squares overflows: the kernels recompute the row on x * 2^-e (contract)\n");
    if (s.kernel_differs)
      std::printf("  warning: the kernels' statistics differ from these (first at col %zu); please report\n",
                  s.kernel_col);
    if (s.refined)
      std::printf("  x_0 lies > 4 sigma from the mean: the shift was refined once (contract)\n");
    std::printf("  %-12s", "output");
    for (std::size_t i = 0; i < r.shown; ++i)
      std::printf(" %12s", ("y[" + std::to_string(i) + "]").c_str());
    std::printf("\n");
    auto line = [&](const std::string& name, const std::vector<value>& v) {
      std::printf("  %-12s", name.c_str());
      for (const value& e : v)
        std::printf(" %12s", dec(e.v, 7).c_str());
      std::printf("\n");
    };
    if (r.has_ref)
      line("ref", r.ref_first[k]);
    for (const preset_result& p : r.presets)
      line(p.name, p.first[k]);
  }
  const std::size_t total = r.rows * r.cols;
  std::printf("\n%s over %zu outputs (%s):\n", r.has_ref ? "comparison with ref" : "presets", total,
              r.out_dtype.c_str());
  std::printf("  %-12s %9s %10s %8s %12s   %s\n", "preset", "exact %", "exact rows", "max ulp", "oracle ulp",
              r.has_ref ? "first difference: row col, normkit vs ref" : "");
  for (const preset_result& p : r.presets) {
    std::string diff = "-";
    if (p.differs)
      diff = "row " + std::to_string(p.diff_row) + " col " + std::to_string(p.diff_col) + ", " +
             hex(p.mine.bits, r.out_width) + " (" + dec(p.mine.v) + ") vs " +
             hex(p.theirs.bits, r.out_width) + " (" + dec(p.theirs.v) + ")";
    std::printf(
        "  %-12s %9s %10s %8s %12s   %s\n", p.name.c_str(), r.has_ref ? percent(p.exact, total).c_str() : "-",
        r.has_ref ? std::to_string(p.exact_rows).c_str() : "-", r.has_ref ? ulps(p.max_ulp).c_str() : "-",
        dec(p.oracle_max_ulps, 3).c_str(), r.has_ref ? diff.c_str() : "");
  }
  std::printf("  (oracle ulp: the largest distance to the fp64 oracle on the shown rows, in ulps of %s)\n",
              r.out_dtype.c_str());
  std::printf("verdict: %s\n", r.verdict.c_str());
}

void print_json(const report& r) {
  auto val = [&](const value& v) {
    return "{\"hex\": " + json_string(hex(v.bits, r.out_width)) + ", \"value\": " + json_number(v.v) + "}";
  };
  auto f32 = [&](float v) {
    return "{\"hex\": " + json_string(hex(traits<float>::bits(v), 32)) + ", \"value\": " + json_number(v) +
           "}";
  };
  std::string s = "{\n  \"op\": " + json_string(r.op) + ",\n  \"eps\": " + f32(r.eps) +
                  ",\n  \"rows\": " + std::to_string(r.rows) + ",\n  \"cols\": " + std::to_string(r.cols) +
                  ",\n  \"output_dtype\": " + json_string(r.out_dtype) +
                  ",\n  \"isa\": " + json_string(r.isa) + ",\n  \"inputs\": {";
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    const npy::array& a = *r.inputs[i].second;
    std::string shape = "[";
    for (std::size_t d = 0; d < a.shape.size(); ++d)
      shape += (d ? ", " : "") + std::to_string(a.shape[d]);
    s += std::string(i ? ", " : "") + json_string(r.inputs[i].first) +
         ": {\"dtype\": " + json_string(npy::to_string(a.type)) + ", \"descr\": " + json_string(a.descr) +
         ", \"shape\": " + shape + "]}";
  }
  s += "},\n  \"row_reports\": [";
  for (std::size_t k = 0; k < r.stats.size(); ++k) {
    const row_stats& st = r.stats[k].second;
    s += std::string(k ? "," : "") + "\n    {\"row\": " + std::to_string(r.stats[k].first);
    if (r.op == "layer")
      s += ", \"mean\": " + f32(st.mean) + ", \"variance\": " + f32(st.spread);
    else
      s += ", \"mean_square\": " + f32(st.spread);
    s += ", \"sum_of_squares\": " + f32(st.sum) + ", \"inv_rms\": " + f32(st.inv) +
         ", \"sqrt_plus_eps\": " + f32(st.root) + ", \"non_finite\": " + (st.non_finite ? "true" : "false") +
         ", \"overflow\": " + (st.overflow ? "true" : "false") +
         ", \"kernel_statistics_differ\": " + (st.kernel_differs ? "true" : "false") +
         ",\n     \"first_outputs\": {";
    bool first = true;
    auto list = [&](const std::string& name, const std::vector<value>& v) {
      s += std::string(first ? "" : ", ") + json_string(name) + ": [";
      for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + val(v[i]);
      s += "]";
      first = false;
    };
    if (r.has_ref)
      list("ref", r.ref_first[k]);
    for (const preset_result& p : r.presets)
      list(p.name, p.first[k]);
    s += "}}";
  }
  s += "\n  ],\n  \"presets\": [";
  const std::size_t total = r.rows * r.cols;
  for (std::size_t i = 0; i < r.presets.size(); ++i) {
    const preset_result& p = r.presets[i];
    s += std::string(i ? "," : "") + "\n    {\"name\": " + json_string(p.name) +
         ", \"oracle_max_ulp\": " + json_number(p.oracle_max_ulps);
    if (r.has_ref) {
      s += ", \"exact\": " + std::to_string(p.exact) + ", \"exact_rows\": " + std::to_string(p.exact_rows) +
           ", \"total\": " + std::to_string(total) + ", \"exact_percent\": " + percent(p.exact, total) +
           ", \"max_ulp\": " + (p.max_ulp == nan_mismatch ? std::string("null") : std::to_string(p.max_ulp)) +
           ", \"first_difference\": ";
      if (p.differs)
        s += "{\"row\": " + std::to_string(p.diff_row) + ", \"col\": " + std::to_string(p.diff_col) +
             ", \"normkit\": " + val(p.mine) + ", \"ref\": " + val(p.theirs) + "}";
      else
        s += "null";
    }
    s += "}";
  }
  s += "\n  ],\n  \"verdict\": " + json_string(r.verdict) + "\n}\n";
  std::fputs(s.c_str(), stdout);
}

// ---- Arguments. ---------------------------------------------------------------------------------

const char usage[] =
    "usage: normkit-inspect rms|layer --x X.npy [--gamma G.npy] [--beta B.npy] [--ref Y.npy]\n"
    "                       [--eps E] [--rows 0,5] [--preset NAME] [--json]\n"
    "  X: rows x cols (more leading dimensions are flattened into rows), fp32 '<f4', fp16 '<f2'\n"
    "  or bf16 ('<u2' bits or ml_dtypes bfloat16); G, B: cols values, one dtype; Y: the output a\n"
    "  framework produced for X, same shape (its dtype is the output dtype). eps: default 1e-6\n"
    "  (rms) or 1e-5 (layer). rows: indices or ranges a-b to print (default 0). preset: one of\n"
    "  llama gemma gemma3n olmo2 t5 pytorch onnx onnxruntime (default: all).\n";

std::vector<std::size_t> parse_rows(const std::string& s) {
  std::vector<std::size_t> rows;
  std::size_t i = 0;
  auto number = [&]() {
    if (i >= s.size() || s[i] < '0' || s[i] > '9')
      throw failure{"--rows: expected a list of row indices such as 0,5 or 0-3, got '" + s + "'"};
    std::size_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (v > 1000000000000ull)
        throw failure{"--rows: index too large in '" + s + "'"};
      v = v * 10 + static_cast<std::size_t>(s[i++] - '0');
    }
    return v;
  };
  while (true) {
    const std::size_t a = number();
    std::size_t b = a;
    if (i < s.size() && s[i] == '-') {
      ++i;
      b = number();
      if (b < a || b - a > 100000)
        throw failure{"--rows: bad range in '" + s + "'"};
    }
    for (std::size_t v = a; v <= b; ++v)
      rows.push_back(v);
    if (i == s.size())
      break;
    if (s[i++] != ',')
      throw failure{"--rows: expected a list of row indices such as 0,5 or 0-3, got '" + s + "'"};
  }
  return rows;
}

options parse(int argc, char** argv) {
  options o;
  if (argc < 2)
    throw failure{"missing the operation (rms or layer); see --help"};
  const std::string op = argv[1];
  if (op == "rms")
    o.op = op_kind::rms;
  else if (op == "layer")
    o.op = op_kind::layer;
  else
    throw failure{"the first argument must be rms or layer, got '" + op + "'; see --help"};
  std::string rows = "0";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      o.json = true;
      continue;
    }
    if (i + 1 >= argc)
      throw failure{"option " + a + " needs a value (or is unknown); see --help"};
    const std::string v = argv[++i];
    if (a == "--x")
      o.x = v;
    else if (a == "--gamma")
      o.gamma = v;
    else if (a == "--beta")
      o.beta = v;
    else if (a == "--ref")
      o.ref = v;
    else if (a == "--rows")
      rows = v;
    else if (a == "--preset")
      o.preset = v;
    else if (a == "--eps") {
      char* end = nullptr;
      const double e = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0')
        throw failure{"--eps: not a number: '" + v + "'"};
      o.eps = static_cast<float>(e);
      if (!std::isfinite(o.eps) || o.eps < 0.0f)
        throw failure{"--eps: eps must be finite and >= 0 (as a float), got '" + v + "'"};
      o.eps_given = true;
    } else
      throw failure{"unknown option '" + a + "'; see --help"};
  }
  if (o.x.empty())
    throw failure{"--x X.npy is required"};
  if (!o.beta.empty() && o.op == op_kind::rms)
    throw failure{"--beta is for layer only (RMSNorm has no bias)"};
  if (!o.eps_given)
    o.eps = o.op == op_kind::rms ? 1e-6f : 1e-5f;
  if (!o.preset.empty()) {
    bool known = false;
    for (const char* n : rms_names)
      known = known || o.preset == n;
    if (o.op == op_kind::layer && o.preset == "onnx")
      throw failure{
          "--preset onnx: the ONNX LayerNormalization convention (a third rounding before adding B) is "
          "not reproduced by normkit's layer_norm"};
    if (!known)
      throw failure{"--preset: unknown preset '" + o.preset +
                    "'; one of llama gemma gemma3n olmo2 t5 pytorch onnx onnxruntime"};
  }
  o.rows = parse_rows(rows);
  return o;
}

npy::array load(const std::string& what, const std::string& path) {
  npy::array a;
  std::string error;
  if (!npy::read(path, a, error))
    throw failure{path + " (" + what + "): " + error};
  return a;
}

template <class F>
void with_type(npy::dtype t, F&& f) {
  switch (t) {
    case npy::dtype::f32:
      return f(float{});
    case npy::dtype::f16:
      return f(normkit::fp16{});
    case npy::dtype::bf16:
      return f(normkit::bf16{});
  }
}

int run(int argc, char** argv) {
  const options o = parse(argc, argv);
  const npy::array x = load("--x", o.x);
  npy::array gamma, beta, ref;
  if (x.shape.empty() || x.size() == 0)
    throw failure{o.x + " (--x): x must have at least one dimension and one element, its shape is " +
                  x.shape_string()};
  report r;
  r.cols = x.shape.back();
  r.rows = x.size() / r.cols;
  r.inputs.emplace_back("x", &x);
  auto check_vector = [&](const std::string& what, const std::string& path, npy::array& a) {
    a = load(what, path);
    if (a.size() != r.cols || a.shape.empty() || a.shape.back() != r.cols)
      throw failure{path + " (" + what + "): shape mismatch: " + a.shape_string() + " does not hold the " +
                    std::to_string(r.cols) + " columns of x " + x.shape_string()};
  };
  if (!o.gamma.empty()) {
    check_vector("--gamma", o.gamma, gamma);
    r.inputs.emplace_back("gamma", &gamma);
  }
  if (!o.beta.empty()) {
    check_vector("--beta", o.beta, beta);
    if (!o.gamma.empty() && beta.type != gamma.type)
      throw failure{o.beta + " (--beta): gamma and beta must have the same dtype (normkit's W), got " +
                    npy::to_string(gamma.type) + " and " + npy::to_string(beta.type)};
    r.inputs.emplace_back("beta", &beta);
  }
  if (!o.ref.empty()) {
    ref = load("--ref", o.ref);
    if (ref.shape != x.shape && !(ref.size() == x.size() && !ref.shape.empty() && ref.shape.back() == r.cols))
      throw failure{o.ref + " (--ref): shape mismatch: the reference " + ref.shape_string() +
                    " is not x's shape " + x.shape_string()};
    r.inputs.emplace_back("ref", &ref);
    r.has_ref = true;
  }
  for (std::size_t row : o.rows)
    if (row >= r.rows)
      throw failure{"--rows: row " + std::to_string(row) + " does not exist (x has " +
                    std::to_string(r.rows) + " rows)"};

  r.op = o.op == op_kind::rms ? "rms" : "layer";
  r.eps = o.eps;
  r.isa = normkit::to_string(normkit::active_isa());
  const npy::dtype out_type = r.has_ref ? ref.type : x.type;
  r.out_dtype = npy::to_string(out_type);
  r.out_width = out_type == npy::dtype::f32 ? 32 : 16;
  const npy::dtype w_type = !o.gamma.empty() ? gamma.type : !o.beta.empty() ? beta.type : x.type;
  with_type(x.type, [&](auto in_v) {
    using In = decltype(in_v);
    const std::vector<In> xs = elements<In>(x);
    with_type(w_type, [&](auto w_v) {
      using W = decltype(w_v);
      const std::vector<W> gs = o.gamma.empty() ? std::vector<W>() : elements<W>(gamma);
      const std::vector<W> bs = o.beta.empty() ? std::vector<W>() : elements<W>(beta);
      with_type(out_type, [&](auto out_v) {
        using Out = decltype(out_v);
        run_all<Out>(o, xs, gs, bs, r.has_ref ? &ref : nullptr, r);
      });
    });
  });
  decide(r);
  if (o.json)
    print_json(r);
  else
    print_text(r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0)
      return std::fputs(usage, stdout), 0;
  try {
    return run(argc, argv);
  } catch (const failure& f) {
    std::fprintf(stderr, "normkit-inspect: error: %s\n", f.message.c_str());
  } catch (const std::exception& e) {  // e.g. std::bad_alloc on a huge but well-formed input
    std::fprintf(stderr, "normkit-inspect: error: %s\n", e.what());
  }
  return 2;
}
