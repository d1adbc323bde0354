#include "nnergy/graph/constant_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>

namespace nnergy::graph {

namespace {

using Dims = std::vector<std::int64_t>;
using Value = std::optional<ConstantTensor>;

// Little-endian element i of raw tensor data (ONNX stores raw data little-endian, as x86-64 and
// arm64 are).
template <typename T>
T load(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <typename T>
void store(char* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

bool is_real_type(std::int32_t t) {
  return t == onnx::TensorProto_DataType_FLOAT || t == onnx::TensorProto_DataType_DOUBLE;
}

std::size_t byte_width(std::int32_t t) {
  switch (t) {
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_UINT64:
    case onnx::TensorProto_DataType_DOUBLE:
      return 8;
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_UINT32:
    case onnx::TensorProto_DataType_FLOAT:
      return 4;
    case onnx::TensorProto_DataType_INT16:
    case onnx::TensorProto_DataType_UINT16:
      return 2;
    default:
      return 1;  // int8, uint8, bool
  }
}

// Element count of `dims`, or nullopt when it exceeds the evaluator's limit (or is negative).
std::optional<std::size_t> checked_count(const Dims& dims) {
  std::size_t n = 1;
  for (std::int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > kMaxConstantElements / static_cast<std::size_t>(d)) return std::nullopt;
    n *= static_cast<std::size_t>(d);
  }
  if (n > kMaxConstantElements) return std::nullopt;
  return n;
}

// A zero-filled tensor of `type` and `dims`, or nullopt when it would be too large.
Value make_tensor(std::int32_t type, Dims dims) {
  const auto n = checked_count(dims);
  if (!n) return std::nullopt;
  ConstantTensor t;
  t.elem_type = type;
  t.dims = std::move(dims);
  if (is_real_type(type)) {
    t.reals.assign(*n, 0.0);
  } else {
    t.integers.assign(*n, 0);
  }
  return t;
}

void set_element(ConstantTensor& t, std::size_t i, double value) {
  if (t.is_real()) {
    t.reals[i] = value;
  } else if (t.elem_type == onnx::TensorProto_DataType_BOOL) {
    t.integers[i] = value != 0 ? 1 : 0;
  } else {
    t.integers[i] = static_cast<std::int64_t>(value);
  }
}

// Copies element `from` of `src` into element `to` of `dst` (same element family).
void copy_element(const ConstantTensor& src, std::size_t from, ConstantTensor& dst,
                  std::size_t to) {
  if (dst.is_real()) {
    dst.reals[to] = src.real_at(from);
  } else {
    dst.integers[to] = src.integer_at(from);
  }
}

std::vector<std::size_t> strides_of(const Dims& dims) {
  std::vector<std::size_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * static_cast<std::size_t>(dims[i]);
  }
  return strides;
}

std::optional<std::int64_t> normalize_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  return axis;
}

// Numpy broadcasting of several shapes.
std::optional<Dims> broadcast_dims(const std::vector<const Dims*>& shapes) {
  std::size_t rank = 0;
  for (const Dims* s : shapes) rank = std::max(rank, s->size());
  Dims out(rank, 1);
  for (const Dims* s : shapes) {
    const std::size_t offset = rank - s->size();
    for (std::size_t i = 0; i < s->size(); ++i) {
      const std::int64_t d = (*s)[i];
      std::int64_t& o = out[offset + i];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  }
  return out;
}

// Index into a tensor of `dims` broadcast to `out_dims`, for each output element.
std::vector<std::size_t> broadcast_index(const Dims& dims, const Dims& out_dims) {
  const auto n = static_cast<std::size_t>(
      std::accumulate(out_dims.begin(), out_dims.end(), std::int64_t{1}, std::multiplies<>()));
  const std::vector<std::size_t> in_strides = strides_of(dims);
  const std::size_t offset = out_dims.size() - dims.size();
  std::vector<std::size_t> index(n, 0);
  std::vector<std::int64_t> coord(out_dims.size(), 0);
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] != 1) at += static_cast<std::size_t>(coord[offset + i]) * in_strides[i];
    }
    index[k] = at;
    for (std::size_t i = out_dims.size(); i-- > 0;) {
      if (++coord[i] < out_dims[i]) break;
      coord[i] = 0;
    }
  }
  return index;
}

std::int64_t int_attr(const onnx::NodeProto& node, const std::string& name, std::int64_t fallback) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

std::optional<Dims> ints_attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return Dims(a.ints().begin(), a.ints().end());
  }
  return std::nullopt;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// ---- operators ----------------------------------------------------------------------------

enum class Arith { kAdd, kSub, kMul, kDiv, kMod, kPow, kMax, kMin };
enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };

// One arithmetic operation on doubles or on int64s (integer Div truncates, as ONNX and C++ do;
// Mod without fmod takes the divisor's sign, as ONNX's integer Mod does).
template <typename T>
T arithmetic(Arith op, T x, T y, bool fmod) {
  switch (op) {
    case Arith::kAdd:
      return x + y;
    case Arith::kSub:
      return x - y;
    case Arith::kMul:
      return x * y;
    case Arith::kDiv:
      return x / y;
    case Arith::kPow:
      return static_cast<T>(std::pow(x, y));
    case Arith::kMax:
      return std::max(x, y);
    case Arith::kMin:
      return std::min(x, y);
    case Arith::kMod:
      if constexpr (std::is_floating_point_v<T>) {
        return fmod ? std::fmod(x, y) : x - y * std::floor(x / y);
      } else {
        return fmod ? x % y : ((x % y) + y) % y;
      }
  }
  return T{};
}

// `arithmetic` on int64s, or nothing where the result is not an int64 (a file's constants can
// be anything): division by zero, overflow (INT64_MIN / -1 included), a power beyond int64.
std::optional<std::int64_t> integer_arithmetic(Arith op, std::int64_t x, std::int64_t y,
                                               bool fmod) {
  std::int64_t r = 0;
  switch (op) {
    case Arith::kAdd:
      if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
      return r;
    case Arith::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
      return r;
    case Arith::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
      return r;
    case Arith::kDiv:
    case Arith::kMod:
      if (y == 0 || (x == std::numeric_limits<std::int64_t>::min() && y == -1)) {
        return std::nullopt;
      }
      if (op == Arith::kDiv) return x / y;
      r = x % y;
      // Without fmod the result takes the divisor's sign; r + y cannot overflow here because r
      // and y then have opposite signs.
      if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    case Arith::kPow: {
      const double p = std::pow(static_cast<double>(x), static_cast<double>(y));
      if (!(p >= -0x1p63 && p < 0x1p63)) return std::nullopt;
      return static_cast<std::int64_t>(p);
    }
    case Arith::kMax:
    case Arith::kMin:
      return arithmetic(op, x, y, fmod);
  }
  return std::nullopt;
}

template <typename T>
bool comparison(Compare op, T x, T y) {
  switch (op) {
    case Compare::kEqual:
      return x == y;
    case Compare::kLess:
      return x < y;
    case Compare::kGreater:
      return x > y;
    case Compare::kLessOrEqual:
      return x <= y;
    case Compare::kGreaterOrEqual:
      return x >= y;
    case Compare::kAnd:
      return x != 0 && y != 0;
    case Compare::kOr:
      return x != 0 || y != 0;
    case Compare::kXor:
      return (x != 0) != (y != 0);
  }
  return false;
}

Value binary_arith(const ConstantTensor& a, const ConstantTensor& b, Arith op, bool fmod) {
  const auto dims = broadcast_dims({&a.dims, &b.dims});
  if (!dims) return std::nullopt;
  Value out = make_tensor(a.elem_type, *dims);
  if (!out) return std::nullopt;
  const auto ia = broadcast_index(a.dims, *dims);
  const auto ib = broadcast_index(b.dims, *dims);
  for (std::size_t k = 0; k < ia.size(); ++k) {
    if (out->is_real()) {
      out->reals[k] = arithmetic(op, a.real_at(ia[k]), b.real_at(ib[k]), fmod);
      continue;
    }
    const auto r = integer_arithmetic(op, a.integer_at(ia[k]), b.integer_at(ib[k]), fmod);
    if (!r) return std::nullopt;
    out->integers[k] = *r;
  }
  return out;
}

Value binary_compare(const ConstantTensor& a, const ConstantTensor& b, Compare op) {
  const auto dims = broadcast_dims({&a.dims, &b.dims});
  if (!dims) return std::nullopt;
  Value out = make_tensor(onnx::TensorProto_DataType_BOOL, *dims);
  if (!out) return std::nullopt;
  const auto ia = broadcast_index(a.dims, *dims);
  const auto ib = broadcast_index(b.dims, *dims);
  const bool real = a.is_real() || b.is_real();
  for (std::size_t k = 0; k < ia.size(); ++k) {
    const bool r = real ? comparison(op, a.real_at(ia[k]), b.real_at(ib[k]))
                        : comparison(op, a.integer_at(ia[k]), b.integer_at(ib[k]));
    out->integers[k] = r ? 1 : 0;
  }
  return out;
}

// The unary operators on one element (Not works on booleans and is handled apart).
const std::map<std::string, double (*)(double)>& unary_functions() {
  static const std::map<std::string, double (*)(double)> functions = {
      {"Neg", [](double v) { return -v; }},
      {"Abs", [](double v) { return std::fabs(v); }},
      {"Sqrt", [](double v) { return std::sqrt(v); }},
      {"Floor", [](double v) { return std::floor(v); }},
      {"Ceil", [](double v) { return std::ceil(v); }},
      {"Reciprocal", [](double v) { return 1.0 / v; }},
      {"Relu", [](double v) { return std::max(v, 0.0); }},
      {"Sign", [](double v) { return static_cast<double>((v > 0) - (v < 0)); }},
      {"Exp", [](double v) { return std::exp(v); }},
      {"Log", [](double v) { return std::log(v); }},
      {"Not", [](double v) { return v == 0 ? 1.0 : 0.0; }},
  };
  return functions;
}

Value unary(const ConstantTensor& x, const std::string& op) {
  const auto f = unary_functions().at(op);
  const bool real_only = op == "Sqrt" || op == "Reciprocal" || op == "Exp" || op == "Log";
  if (real_only && !x.is_real()) return std::nullopt;
  ConstantTensor out = x;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.is_real()) {
      out.reals[i] = f(x.reals[i]);
    } else if (op == "Neg" || op == "Abs") {
      // Exact in int64 (for all values but the minimum), unlike a round trip through double.
      const std::int64_t v = x.integers[i];
      if (v == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
      out.integers[i] = op == "Neg" || v < 0 ? -v : v;
    } else {
      // Through double: a result at 2^63 (from an input near INT64_MAX) is not an int64.
      const double v = f(static_cast<double>(x.integers[i]));
      if (!(v >= -0x1p63 && v < 0x1p63)) return std::nullopt;
      out.integers[i] = static_cast<std::int64_t>(v);
    }
  }
  return out;
}

Value cast(const ConstantTensor& x, std::int32_t to) {
  if (!is_supported_constant_type(to)) return std::nullopt;
  Value out = make_tensor(to, x.dims);
  if (!out) return std::nullopt;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (out->is_real()) {
      out->reals[i] = x.real_at(i);
    } else if (to == onnx::TensorProto_DataType_BOOL) {
      out->integers[i] = x.real_at(i) != 0 ? 1 : 0;
    } else if (x.is_real()) {
      const double v = x.reals[i];
      if (!std::isfinite(v) || std::fabs(v) > 9.2e18) return std::nullopt;
      out->integers[i] = static_cast<std::int64_t>(v);  // truncation toward zero
    } else {
      out->integers[i] = x.integers[i];
    }
  }
  return out;
}

Value gather(const ConstantTensor& data, const ConstantTensor& indices, std::int64_t axis_attr) {
  const auto axis = normalize_axis(axis_attr, data.dims.size());
  if (!axis) return std::nullopt;
  const auto a = static_cast<std::size_t>(*axis);
  Dims dims(data.dims.begin(), data.dims.begin() + *axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  Value out = make_tensor(data.elem_type, dims);
  if (!out) return std::nullopt;
  const std::int64_t extent = data.dims[a];
  std::size_t outer = 1;
  for (std::size_t i = 0; i < a; ++i) outer *= static_cast<std::size_t>(data.dims[i]);
  std::size_t inner = 1;
  for (std::size_t i = a + 1; i < data.dims.size(); ++i)
    inner *= static_cast<std::size_t>(data.dims[i]);
  std::size_t k = 0;
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t j = 0; j < indices.size(); ++j) {
      std::int64_t idx = indices.integer_at(j);
      if (idx < 0) idx += extent;
      if (idx < 0 || idx >= extent) return std::nullopt;
      const std::size_t base =
          (o * static_cast<std::size_t>(extent) + static_cast<std::size_t>(idx)) * inner;
      for (std::size_t in = 0; in < inner; ++in) copy_element(data, base + in, *out, k++);
    }
  }
  return out;
}

Value slice(const ConstantTensor& data, const Dims& starts, const Dims& ends,
            std::optional<Dims> axes, std::optional<Dims> steps) {
  const std::size_t rank = data.dims.size();
  if (!axes) {
    axes = Dims(starts.size());
    std::iota(axes->begin(), axes->end(), 0);
  }
  if (!steps) steps = Dims(starts.size(), 1);
  if (ends.size() != starts.size() || axes->size() != starts.size() ||
      steps->size() != starts.size()) {
    return std::nullopt;
  }
  Dims begin(rank, 0);
  Dims step(rank, 1);
  Dims dims = data.dims;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto axis = normalize_axis((*axes)[i], rank);
    if (!axis || (*steps)[i] == 0) return std::nullopt;
    const std::int64_t d = data.dims[static_cast<std::size_t>(*axis)];
    std::int64_t s = starts[i];
    std::int64_t e = ends[i];
    const std::int64_t st = (*steps)[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (st > 0) {
      s = std::clamp<std::int64_t>(s, 0, d);
      e = std::clamp<std::int64_t>(e, 0, d);
    } else {
      s = std::clamp<std::int64_t>(s, 0, d - 1);
      e = std::clamp<std::int64_t>(e, -1, d - 1);
    }
    std::int64_t n = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    const auto a = static_cast<std::size_t>(*axis);
    begin[a] = s;
    step[a] = st;
    dims[a] = std::max<std::int64_t>(n, 0);
  }
  Value out = make_tensor(data.elem_type, dims);
  if (!out) return std::nullopt;
  const auto in_strides = strides_of(data.dims);
  std::vector<std::int64_t> coord(rank, 0);
  for (std::size_t k = 0; k < out->size(); ++k) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < rank; ++i) {
      at += static_cast<std::size_t>(begin[i] + coord[i] * step[i]) * in_strides[i];
    }
    copy_element(data, at, *out, k);
    for (std::size_t i = rank; i-- > 0;) {
      if (++coord[i] < dims[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

Value concat(const std::vector<ConstantTensor>& parts, std::int64_t axis_attr) {
  if (parts.empty()) return std::nullopt;
  const auto axis = normalize_axis(axis_attr, parts[0].dims.size());
  if (!axis) return std::nullopt;
  const auto a = static_cast<std::size_t>(*axis);
  Dims dims = parts[0].dims;
  dims[a] = 0;
  for (const auto& p : parts) {
    if (p.dims.size() != dims.size()) return std::nullopt;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i != a && p.dims[i] != dims[i]) return std::nullopt;
    }
    dims[a] += p.dims[a];
  }
  Value out = make_tensor(parts[0].elem_type, dims);
  if (!out) return std::nullopt;
  std::size_t outer = 1;
  for (std::size_t i = 0; i < a; ++i) outer *= static_cast<std::size_t>(dims[i]);
  std::size_t k = 0;
  for (std::size_t o = 0; o < outer; ++o) {
    for (const auto& p : parts) {
      const std::size_t chunk = outer == 0 ? 0 : p.size() / outer;
      for (std::size_t j = 0; j < chunk; ++j) copy_element(p, o * chunk + j, *out, k++);
    }
  }
  return out;
}

Value reshape_to(const ConstantTensor& x, Dims dims) {
  ConstantTensor out = x;
  out.dims = std::move(dims);
  if (checked_count(out.dims) != x.size()) return std::nullopt;
  return out;
}

Value reshape(const ConstantTensor& x, const Dims& target, bool allow_zero) {
  Dims dims = target;
  std::int64_t known = 1;
  int infer_at = -1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allow_zero) {
      if (i >= x.dims.size()) return std::nullopt;
      dims[i] = x.dims[i];
    }
    if (dims[i] == -1) {
      if (infer_at >= 0) return std::nullopt;
      infer_at = static_cast<int>(i);
    } else {
      known *= dims[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0) return std::nullopt;
    dims[static_cast<std::size_t>(infer_at)] = static_cast<std::int64_t>(x.size()) / known;
  }
  return reshape_to(x, dims);
}

Value unsqueeze(const ConstantTensor& x, Dims axes) {
  const std::size_t rank = x.dims.size() + axes.size();
  std::set<std::int64_t> at;
  for (std::int64_t a : axes) {
    const auto n = normalize_axis(a, rank);
    if (!n) return std::nullopt;
    at.insert(*n);
  }
  Dims dims;
  std::size_t from = 0;
  for (std::size_t i = 0; i < rank; ++i) {
    dims.push_back(at.count(static_cast<std::int64_t>(i)) > 0 ? 1 : x.dims.at(from++));
  }
  return reshape_to(x, dims);
}

Value squeeze(const ConstantTensor& x, const std::optional<Dims>& axes) {
  std::set<std::int64_t> at;
  if (axes) {
    for (std::int64_t a : *axes) {
      const auto n = normalize_axis(a, x.dims.size());
      if (!n || x.dims[static_cast<std::size_t>(*n)] != 1) return std::nullopt;
      at.insert(*n);
    }
  }
  Dims dims;
  for (std::size_t i = 0; i < x.dims.size(); ++i) {
    const bool drop = axes ? at.count(static_cast<std::int64_t>(i)) > 0 : x.dims[i] == 1;
    if (!drop) dims.push_back(x.dims[i]);
  }
  return reshape_to(x, dims);
}

Value expand(const ConstantTensor& x, const Dims& shape) {
  const auto dims = broadcast_dims({&x.dims, &shape});
  if (!dims) return std::nullopt;
  Value out = make_tensor(x.elem_type, *dims);
  if (!out) return std::nullopt;
  const auto index = broadcast_index(x.dims, *dims);
  for (std::size_t k = 0; k < index.size(); ++k) copy_element(x, index[k], *out, k);
  return out;
}

Value where(const ConstantTensor& c, const ConstantTensor& x, const ConstantTensor& y) {
  const auto dims = broadcast_dims({&c.dims, &x.dims, &y.dims});
  if (!dims) return std::nullopt;
  Value out = make_tensor(x.elem_type, *dims);
  if (!out) return std::nullopt;
  const auto ic = broadcast_index(c.dims, *dims);
  const auto ix = broadcast_index(x.dims, *dims);
  const auto iy = broadcast_index(y.dims, *dims);
  for (std::size_t k = 0; k < ic.size(); ++k) {
    if (c.integer_at(ic[k]) != 0) {
      copy_element(x, ix[k], *out, k);
    } else {
      copy_element(y, iy[k], *out, k);
    }
  }
  return out;
}

Value range(const ConstantTensor& start, const ConstantTensor& limit, const ConstantTensor& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) return std::nullopt;
  const double s = start.real_at(0);
  const double d = delta.real_at(0);
  if (d == 0) return std::nullopt;
  const double n = std::max(std::ceil((limit.real_at(0) - s) / d), 0.0);
  if (n > static_cast<double>(kMaxConstantElements)) return std::nullopt;
  Value out = make_tensor(start.elem_type, {static_cast<std::int64_t>(n)});
  if (!out) return std::nullopt;
  for (std::size_t i = 0; i < out->size(); ++i) {
    if (out->is_real()) {
      out->reals[i] = s + d * static_cast<double>(i);
    } else {
      out->integers[i] = start.integer_at(0) + delta.integer_at(0) * static_cast<std::int64_t>(i);
    }
  }
  return out;
}

Value transpose(const ConstantTensor& x, std::optional<Dims> perm) {
  const std::size_t rank = x.dims.size();
  if (!perm) {
    perm = Dims(rank);
    for (std::size_t i = 0; i < rank; ++i) (*perm)[i] = static_cast<std::int64_t>(rank - 1 - i);
  }
  if (perm->size() != rank) return std::nullopt;
  Dims dims(rank);
  std::vector<std::size_t> from(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const auto p = normalize_axis((*perm)[i], rank);
    if (!p) return std::nullopt;
    from[i] = static_cast<std::size_t>(*p);
    dims[i] = x.dims[from[i]];
  }
  Value out = make_tensor(x.elem_type, dims);
  if (!out) return std::nullopt;
  const auto in_strides = strides_of(x.dims);
  std::vector<std::int64_t> coord(rank, 0);
  for (std::size_t k = 0; k < out->size(); ++k) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < rank; ++i) {
      at += static_cast<std::size_t>(coord[i]) * in_strides[from[i]];
    }
    copy_element(x, at, *out, k);
    for (std::size_t i = rank; i-- > 0;) {
      if (++coord[i] < dims[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

Value reduce(const ConstantTensor& x, const std::string& op, std::optional<Dims> axes,
             bool keep_dims, bool noop_with_empty_axes) {
  const std::size_t rank = x.dims.size();
  std::set<std::size_t> reduced;
  if (!axes || axes->empty()) {
    if (noop_with_empty_axes) return x;
    for (std::size_t i = 0; i < rank; ++i) reduced.insert(i);
  } else {
    for (std::int64_t a : *axes) {
      const auto n = normalize_axis(a, rank);
      if (!n) return std::nullopt;
      reduced.insert(static_cast<std::size_t>(*n));
    }
  }
  Dims kept_dims;  // the output shape with reduced axes as 1
  for (std::size_t i = 0; i < rank; ++i) kept_dims.push_back(reduced.count(i) ? 1 : x.dims[i]);
  Value out = make_tensor(x.elem_type, kept_dims);
  if (!out) return std::nullopt;
  std::vector<double> acc(out->size(), op == "ReduceProd" ? 1.0 : 0.0);
  std::vector<bool> seen(out->size(), false);
  const auto out_strides = strides_of(kept_dims);
  std::vector<std::int64_t> coord(rank, 0);
  std::size_t count_per_output = 1;
  for (std::size_t a : reduced) count_per_output *= static_cast<std::size_t>(x.dims[a]);
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < rank; ++i) {
      if (!reduced.count(i)) at += static_cast<std::size_t>(coord[i]) * out_strides[i];
    }
    const double v = x.real_at(k);
    if (op == "ReduceSum" || op == "ReduceMean") acc[at] += v;
    if (op == "ReduceProd") acc[at] *= v;
    if (op == "ReduceMax") acc[at] = seen[at] ? std::max(acc[at], v) : v;
    if (op == "ReduceMin") acc[at] = seen[at] ? std::min(acc[at], v) : v;
    seen[at] = true;
    for (std::size_t i = rank; i-- > 0;) {
      if (++coord[i] < x.dims[i]) break;
      coord[i] = 0;
    }
  }
  for (std::size_t k = 0; k < acc.size(); ++k) {
    const double v = op == "ReduceMean" ? acc[k] / static_cast<double>(count_per_output) : acc[k];
    set_element(*out, k, v);
  }
  if (!keep_dims) {
    Dims dims;
    for (std::size_t i = 0; i < rank; ++i) {
      if (!reduced.count(i)) dims.push_back(x.dims[i]);
    }
    out->dims = dims;
  }
  return out;
}

Value tile(const ConstantTensor& x, const Dims& repeats) {
  if (repeats.size() != x.dims.size()) return std::nullopt;
  Dims dims(x.dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) dims[i] = x.dims[i] * repeats[i];
  Value out = make_tensor(x.elem_type, dims);
  if (!out) return std::nullopt;
  const auto in_strides = strides_of(x.dims);
  std::vector<std::int64_t> coord(dims.size(), 0);
  for (std::size_t k = 0; k < out->size(); ++k) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      at += static_cast<std::size_t>(coord[i] % x.dims[i]) * in_strides[i];
    }
    copy_element(x, at, *out, k);
    for (std::size_t i = dims.size(); i-- > 0;) {
      if (++coord[i] < dims[i]) break;
      coord[i] = 0;
    }
  }
  return out;
}

Value trilu(const ConstantTensor& x, std::int64_t k, bool upper) {
  if (x.dims.size() < 2) return std::nullopt;
  ConstantTensor out = x;
  const auto rows = x.dims[x.dims.size() - 2];
  const auto cols = x.dims[x.dims.size() - 1];
  for (std::size_t e = 0; e < out.size(); ++e) {
    const auto j = static_cast<std::int64_t>(e) % cols;
    const auto i = (static_cast<std::int64_t>(e) / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) set_element(out, e, 0);
  }
  return out;
}

// Operands of an operator given either as attributes (older opsets) or as inputs (newer).
std::optional<Dims> operand_or_attr(const onnx::NodeProto& node, const EvaluationInputs& in,
                                    std::size_t input, const std::string& attr) {
  if (static_cast<int>(input) < node.input_size() && !node.input(static_cast<int>(input)).empty()) {
    const Value v = in.value(input);
    if (!v) return std::nullopt;
    return v->as_integers();
  }
  return ints_attr(node, attr);
}

bool has_input(const onnx::NodeProto& node, std::size_t i) {
  return static_cast<int>(i) < node.input_size() && !node.input(static_cast<int>(i)).empty();
}

const std::map<std::string, Arith>& arith_ops() {
  static const std::map<std::string, Arith> ops = {
      {"Add", Arith::kAdd}, {"Sub", Arith::kSub}, {"Mul", Arith::kMul},
      {"Div", Arith::kDiv}, {"Mod", Arith::kMod}, {"Pow", Arith::kPow},
      {"Max", Arith::kMax}, {"Min", Arith::kMin}, {"Sum", Arith::kAdd}};
  return ops;
}

const std::map<std::string, Compare>& compare_ops() {
  static const std::map<std::string, Compare> ops = {{"Equal", Compare::kEqual},
                                                     {"Less", Compare::kLess},
                                                     {"Greater", Compare::kGreater},
                                                     {"LessOrEqual", Compare::kLessOrEqual},
                                                     {"GreaterOrEqual", Compare::kGreaterOrEqual},
                                                     {"And", Compare::kAnd},
                                                     {"Or", Compare::kOr},
                                                     {"Xor", Compare::kXor}};
  return ops;
}

const std::set<std::string>& structural_ops() {
  static const std::set<std::string> ops = {"Constant",
                                            "Shape",
                                            "Size",
                                            "Gather",
                                            "Slice",
                                            "Concat",
                                            "Unsqueeze",
                                            "Squeeze",
                                            "Cast",
                                            "CastLike",
                                            "Range",
                                            "Expand",
                                            "ConstantOfShape",
                                            "Where",
                                            "Reshape",
                                            "Identity",
                                            "Transpose",
                                            "Flatten",
                                            "ReduceProd",
                                            "ReduceSum",
                                            "ReduceMax",
                                            "ReduceMin",
                                            "ReduceMean",
                                            "Tile",
                                            "Trilu"};
  return ops;
}

}  // namespace

bool ConstantTensor::is_real() const { return is_real_type(elem_type); }

std::size_t ConstantTensor::size() const { return is_real() ? reals.size() : integers.size(); }

double ConstantTensor::real_at(std::size_t i) const {
  return is_real() ? reals[i] : static_cast<double>(integers[i]);
}

std::int64_t ConstantTensor::integer_at(std::size_t i) const {
  return is_real() ? static_cast<std::int64_t>(reals[i]) : integers[i];
}

std::vector<std::int64_t> ConstantTensor::as_integers() const {
  std::vector<std::int64_t> out(size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = integer_at(i);
  return out;
}

bool is_supported_constant_type(std::int32_t t) {
  switch (t) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_DOUBLE:
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32:
    case onnx::TensorProto_DataType_INT16:
    case onnx::TensorProto_DataType_INT8:
    case onnx::TensorProto_DataType_UINT8:
    case onnx::TensorProto_DataType_UINT16:
    case onnx::TensorProto_DataType_UINT32:
    case onnx::TensorProto_DataType_BOOL:
      return true;
    default:
      return false;
  }
}

std::optional<ConstantTensor> read_constant(const onnx::TensorProto& proto) {
  const std::int32_t type = proto.data_type();
  if (!is_supported_constant_type(type)) return std::nullopt;
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) return std::nullopt;
  Value out = make_tensor(type, Dims(proto.dims().begin(), proto.dims().end()));
  if (!out) return std::nullopt;
  const std::size_t n = out->size();
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    const std::size_t w = byte_width(type);
    if (raw.size() != n * w) return std::nullopt;
    for (std::size_t i = 0; i < n; ++i) {
      const char* p = raw.data() + i * w;
      switch (type) {
        case onnx::TensorProto_DataType_FLOAT:
          out->reals[i] = load<float>(p);
          break;
        case onnx::TensorProto_DataType_DOUBLE:
          out->reals[i] = load<double>(p);
          break;
        case onnx::TensorProto_DataType_INT64:
          out->integers[i] = load<std::int64_t>(p);
          break;
        case onnx::TensorProto_DataType_INT32:
          out->integers[i] = load<std::int32_t>(p);
          break;
        case onnx::TensorProto_DataType_UINT32:
          out->integers[i] = load<std::uint32_t>(p);
          break;
        case onnx::TensorProto_DataType_INT16:
          out->integers[i] = load<std::int16_t>(p);
          break;
        case onnx::TensorProto_DataType_UINT16:
          out->integers[i] = load<std::uint16_t>(p);
          break;
        case onnx::TensorProto_DataType_INT8:
          out->integers[i] = load<std::int8_t>(p);
          break;
        default:
          out->integers[i] = load<std::uint8_t>(p);
          break;  // uint8, bool
      }
    }
    return out;
  }
  // Typed fields: float_data (float), double_data, int64_data, int32_data (every narrower
  // integer type and bool are stored there).
  auto fill = [&](const auto& field) -> bool {
    if (static_cast<std::size_t>(field.size()) != n) return false;
    for (std::size_t i = 0; i < n; ++i)
      set_element(*out, i, static_cast<double>(field[static_cast<int>(i)]));
    return true;
  };
  switch (type) {
    case onnx::TensorProto_DataType_FLOAT:
      return fill(proto.float_data()) ? out : std::nullopt;
    case onnx::TensorProto_DataType_DOUBLE:
      return fill(proto.double_data()) ? out : std::nullopt;
    case onnx::TensorProto_DataType_INT64:
      if (static_cast<std::size_t>(proto.int64_data_size()) != n) return std::nullopt;
      out->integers.assign(proto.int64_data().begin(), proto.int64_data().end());
      return out;
    default:
      return fill(proto.int32_data()) ? out : std::nullopt;
  }
}

std::optional<ConstantTensor> constant_node_value(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "value" && a.has_t()) return read_constant(a.t());
    ConstantTensor t;
    if (a.name() == "value_int") {
      t.integers = {a.i()};
      return t;
    }
    if (a.name() == "value_ints") {
      t.dims = {a.ints_size()};
      t.integers.assign(a.ints().begin(), a.ints().end());
      return t;
    }
    if (a.name() == "value_float") {
      t.elem_type = onnx::TensorProto_DataType_FLOAT;
      t.reals = {a.f()};
      return t;
    }
    if (a.name() == "value_floats") {
      t.elem_type = onnx::TensorProto_DataType_FLOAT;
      t.dims = {a.floats_size()};
      t.reals.assign(a.floats().begin(), a.floats().end());
      return t;
    }
  }
  return std::nullopt;
}

onnx::TensorProto to_tensor_proto(const ConstantTensor& value, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(value.elem_type);
  for (std::int64_t d : value.dims) proto.add_dims(d);
  const std::size_t w = byte_width(value.elem_type);
  std::string raw(value.size() * w, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) {
    char* p = raw.data() + i * w;
    switch (value.elem_type) {
      case onnx::TensorProto_DataType_FLOAT:
        store(p, static_cast<float>(value.reals[i]));
        break;
      case onnx::TensorProto_DataType_DOUBLE:
        store(p, value.reals[i]);
        break;
      case onnx::TensorProto_DataType_INT64:
        store(p, value.integers[i]);
        break;
      case onnx::TensorProto_DataType_INT32:
      case onnx::TensorProto_DataType_UINT32:
        store(p, static_cast<std::int32_t>(value.integers[i]));
        break;
      case onnx::TensorProto_DataType_INT16:
      case onnx::TensorProto_DataType_UINT16:
        store(p, static_cast<std::int16_t>(value.integers[i]));
        break;
      default:
        store(p, static_cast<std::int8_t>(value.integers[i]));
        break;
    }
  }
  proto.set_raw_data(raw);
  return proto;
}

std::optional<std::vector<ConstantTensor>> evaluate_split(const onnx::NodeProto& node, int opset,
                                                          const EvaluationInputs& in) {
  if (node.op_type() != "Split" || node.input_size() < 1 || node.output_size() < 1)
    return std::nullopt;
  const Value x = in.value(0);
  if (!x || x->dims.empty()) return std::nullopt;
  const auto axis = normalize_axis(int_attr(node, "axis", 0), x->dims.size());
  if (!axis) return std::nullopt;
  const std::int64_t length = x->dims[static_cast<std::size_t>(*axis)];
  Dims sizes;
  if (opset >= 13 && node.input_size() > 1 && !node.input(1).empty()) {
    const Value split = in.value(1);
    if (!split) return std::nullopt;
    sizes = split->as_integers();
  } else if (auto attr = ints_attr(node, "split")) {
    sizes = *attr;
  } else {
    const std::int64_t parts = node.output_size();
    const std::int64_t chunk = (length + parts - 1) / parts;
    for (std::int64_t at = 0; at < length; at += chunk)
      sizes.push_back(std::min(chunk, length - at));
  }
  if (static_cast<int>(sizes.size()) != node.output_size()) return std::nullopt;
  std::vector<ConstantTensor> out;
  std::int64_t start = 0;
  for (const std::int64_t size : sizes) {
    Value part = slice(*x, {start}, {start + size}, Dims{*axis}, std::nullopt);
    if (!part) return std::nullopt;
    out.push_back(std::move(*part));
    start += size;
  }
  if (start != length) return std::nullopt;
  return out;
}

bool is_evaluable_op(const std::string& op) {
  return structural_ops().count(op) > 0 || arith_ops().count(op) > 0 ||
         compare_ops().count(op) > 0 || unary_functions().count(op) > 0;
}

std::optional<ConstantTensor> evaluate_node(const onnx::NodeProto& node, int opset,
                                            const EvaluationInputs& in) {
  if (!(node.domain().empty() || node.domain() == "ai.onnx")) return std::nullopt;
  const std::string& op = node.op_type();
  if (!is_evaluable_op(op) || node.output_size() < 1) return std::nullopt;
  if (op == "Constant") return constant_node_value(node);
  if (op == "Shape" || op == "Size") {
    const auto shape = in.shape(0);
    if (!shape) return std::nullopt;
    ConstantTensor t;
    if (op == "Size") {
      t.integers = {
          std::accumulate(shape->begin(), shape->end(), std::int64_t{1}, std::multiplies<>())};
      return t;
    }
    const auto rank = static_cast<std::int64_t>(shape->size());
    std::int64_t start = int_attr(node, "start", 0);
    std::int64_t end = int_attr(node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<std::int64_t>(start, 0, rank);
    end = std::clamp<std::int64_t>(end, 0, rank);
    t.integers.assign(shape->begin() + start, shape->begin() + std::max(start, end));
    t.dims = {static_cast<std::int64_t>(t.integers.size())};
    return t;
  }

  // Every other operator needs the values of its (present) inputs.
  std::vector<ConstantTensor> args;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      args.emplace_back();  // placeholder for an omitted optional input
      continue;
    }
    Value v = in.value(static_cast<std::size_t>(i));
    if (!v) return std::nullopt;
    args.push_back(std::move(*v));
  }
  if (args.empty()) return std::nullopt;
  const ConstantTensor& x = args[0];

  if (auto it = arith_ops().find(op); it != arith_ops().end()) {
    if (args.size() < 2) return args.size() == 1 ? Value(x) : std::nullopt;
    const bool fmod = int_attr(node, "fmod", 0) != 0;
    Value acc = binary_arith(x, args[1], it->second, fmod);
    for (std::size_t i = 2; acc && i < args.size(); ++i) {
      acc = binary_arith(*acc, args[i], it->second, fmod);
    }
    return acc;
  }
  if (auto it = compare_ops().find(op); it != compare_ops().end()) {
    if (args.size() != 2) return std::nullopt;
    return binary_compare(x, args[1], it->second);
  }
  if (unary_functions().count(op) > 0) return unary(x, op);
  if (op == "Identity") return x;
  if (op == "Cast") return cast(x, static_cast<std::int32_t>(int_attr(node, "to", 0)));
  if (op == "CastLike") return args.size() == 2 ? cast(x, args[1].elem_type) : std::nullopt;
  if (op == "Gather") {
    if (args.size() != 2) return std::nullopt;
    return gather(x, args[1], int_attr(node, "axis", 0));
  }
  if (op == "Slice") {
    if (opset < 10) {
      const auto starts = ints_attr(node, "starts");
      const auto ends = ints_attr(node, "ends");
      if (!starts || !ends) return std::nullopt;
      return slice(x, *starts, *ends, ints_attr(node, "axes"), std::nullopt);
    }
    if (args.size() < 3) return std::nullopt;
    std::optional<Dims> axes;
    std::optional<Dims> steps;
    if (has_input(node, 3)) axes = args[3].as_integers();
    if (has_input(node, 4)) steps = args[4].as_integers();
    return slice(x, args[1].as_integers(), args[2].as_integers(), axes, steps);
  }
  if (op == "Concat") return concat(args, int_attr(node, "axis", 0));
  if (op == "Unsqueeze") {
    const auto axes = operand_or_attr(node, in, 1, "axes");
    if (!axes) return std::nullopt;
    return unsqueeze(x, *axes);
  }
  if (op == "Squeeze") {
    std::optional<Dims> axes;
    if (opset >= 13) {
      if (has_input(node, 1)) axes = args[1].as_integers();
    } else {
      axes = ints_attr(node, "axes");
    }
    return squeeze(x, axes);
  }
  if (op == "Range") {
    if (args.size() != 3) return std::nullopt;
    return range(x, args[1], args[2]);
  }
  if (op == "Expand") {
    if (args.size() != 2) return std::nullopt;
    return expand(x, args[1].as_integers());
  }
  if (op == "ConstantOfShape") {
    ConstantTensor fill;
    fill.elem_type = onnx::TensorProto_DataType_FLOAT;
    fill.reals = {0.0};
    if (const auto* a = find_attr(node, "value"); a != nullptr && a->has_t()) {
      const Value v = read_constant(a->t());
      if (!v || v->size() != 1) return std::nullopt;
      fill = *v;
    }
    fill.dims.clear();
    return expand(fill, x.as_integers());
  }
  if (op == "Where") {
    if (args.size() != 3) return std::nullopt;
    return where(x, args[1], args[2]);
  }
  if (op == "Reshape") {
    if (opset < 5 || args.size() != 2) return std::nullopt;
    return reshape(x, args[1].as_integers(), int_attr(node, "allowzero", 0) != 0);
  }
  if (op == "Flatten") {
    const auto axis = int_attr(node, "axis", 1);
    const auto rank = static_cast<std::int64_t>(x.dims.size());
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a > rank) return std::nullopt;
    std::int64_t outer = 1;
    for (std::int64_t i = 0; i < a; ++i) outer *= x.dims[static_cast<std::size_t>(i)];
    return reshape_to(
        x, {outer, static_cast<std::int64_t>(x.size()) / std::max<std::int64_t>(outer, 1)});
  }
  if (op == "Transpose") return transpose(x, ints_attr(node, "perm"));
  if (op.rfind("Reduce", 0) == 0) {
    // Axes are an input from opset 13 (ReduceSum) or 18 (the others), an attribute before.
    const bool axes_input = op == "ReduceSum" ? opset >= 13 : opset >= 18;
    std::optional<Dims> axes;
    if (axes_input) {
      if (has_input(node, 1)) axes = args[1].as_integers();
    } else {
      axes = ints_attr(node, "axes");
    }
    return reduce(x, op, axes, int_attr(node, "keepdims", 1) != 0,
                  int_attr(node, "noop_with_empty_axes", 0) != 0);
  }
  if (op == "Tile") {
    if (args.size() != 2) return std::nullopt;
    return tile(x, args[1].as_integers());
  }
  if (op == "Trilu") {
    const std::int64_t k = has_input(node, 1) && args[1].size() == 1 ? args[1].integer_at(0) : 0;
    return trilu(x, k, int_attr(node, "upper", 1) != 0);
  }
  return std::nullopt;
}

}  // namespace nnergy::graph
