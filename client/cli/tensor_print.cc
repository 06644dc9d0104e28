#include "client/cli/tensor_print.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace onemodel::cli {
namespace {

using P = onnx::TensorProto;

// IEEE half-precision bits as a float.
float HalfToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return (h & 0x8000) ? -magnitude : magnitude;
}

template <typename T>
T Load(const std::string& bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// Element `i` as text: integers exactly, floats with up to 8 significant digits and a point
// ("1.", "0.5", "1e+10", "nan"), booleans as True/False.
std::string Element(const client::TensorData& d, int64_t i) {
  char text[48];
  auto integer = [&](long long v) {
    std::snprintf(text, sizeof text, "%lld", v);
    return std::string(text);
  };
  auto real = [&](double v) {
    if (std::isnan(v)) return std::string("nan");
    if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
    std::snprintf(text, sizeof text, "%.8g", v);
    std::string s = text;
    if (s.find_first_of(".e") == std::string::npos) s += ".";
    return s;
  };
  switch (d.data_type) {
    case P::FLOAT:
      return real(Load<float>(d.bytes, i));
    case P::DOUBLE:
      return real(Load<double>(d.bytes, i));
    case P::FLOAT16:
      return real(HalfToFloat(Load<uint16_t>(d.bytes, i)));
    case P::BFLOAT16: {
      const uint32_t bits = uint32_t{Load<uint16_t>(d.bytes, i)} << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return real(f);
    }
    case P::INT8:
      return integer(Load<int8_t>(d.bytes, i));
    case P::UINT8:
      return integer(Load<uint8_t>(d.bytes, i));
    case P::INT16:
      return integer(Load<int16_t>(d.bytes, i));
    case P::UINT16:
      return integer(Load<uint16_t>(d.bytes, i));
    case P::INT32:
      return integer(Load<int32_t>(d.bytes, i));
    case P::UINT32:
      return integer(Load<uint32_t>(d.bytes, i));
    case P::INT64:
      return integer(Load<int64_t>(d.bytes, i));
    case P::UINT64: {
      std::snprintf(text, sizeof text, "%llu",
                    static_cast<unsigned long long>(Load<uint64_t>(d.bytes, i)));
      return text;
    }
    case P::BOOL:
      return Load<uint8_t>(d.bytes, i) ? "True" : "False";
    default:
      break;
  }
  throw client::Error(grpc::StatusCode::INVALID_ARGUMENT,
                      "cannot print elements of type " + client::DataTypeName(d.data_type));
}

// The indices of dimension `extent` that are shown: all, or the edge items when summarizing.
std::vector<int64_t> Shown(int64_t extent, bool summarize) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < extent; ++i) {
    if (summarize && extent > 2 * kPrintEdgeItems && i == kPrintEdgeItems) {
      out.push_back(-1);  // "..."
      i = extent - kPrintEdgeItems - 1;
      continue;
    }
    out.push_back(i);
  }
  return out;
}

struct Printer {
  const client::TensorData& data;
  bool summarize;
  std::vector<int64_t> strides;  // row-major, in elements
  // Widest integer part (up to the point) and fraction (from the point) of the shown
  // elements: entries are padded to both, so points line up as in NumPy.
  size_t integer_width = 0;
  size_t fraction_width = 0;

  static size_t Point(const std::string& e) { return std::min(e.find('.'), e.size()); }
  void Measure(const std::string& e) {
    integer_width = std::max(integer_width, Point(e));
    fraction_width = std::max(fraction_width, e.size() - Point(e));
  }

  // Calls `f(flat index)` for every shown element (to measure their widths).
  template <typename F>
  void ForEach(size_t dim, int64_t base, F&& f) const {
    if (dim == data.dims.size()) return f(base);
    for (int64_t i : Shown(data.dims[dim], summarize)) {
      if (i >= 0) ForEach(dim + 1, base + i * strides[dim], f);
    }
  }

  // Dimension `dim` onwards from flat index `base`, indented by `dim` after a line break.
  void Print(size_t dim, int64_t base, std::string& out) const {
    if (dim == data.dims.size()) {
      const std::string e = Element(data, base);
      out += std::string(integer_width - Point(e), ' ') + e +
             std::string(fraction_width - (e.size() - Point(e)), ' ');
      return;
    }
    out += '[';
    const std::vector<int64_t> shown = Shown(data.dims[dim], summarize);
    const bool last = dim + 1 == data.dims.size();
    for (size_t k = 0; k < shown.size(); ++k) {
      if (k > 0) {
        // NumPy: a space between numbers, a line (blank lines for higher dims) between rows.
        out +=
            last ? " " : std::string(data.dims.size() - dim - 1, '\n') + std::string(dim + 1, ' ');
      }
      if (shown[k] < 0) {
        out += "...";
        continue;
      }
      Print(dim + 1, base + shown[k] * strides[dim], out);
    }
    out += ']';
  }
};

}  // namespace

std::string FormatTensor(const client::TensorData& data) {
  const int64_t count = client::NumElements(data.dims);
  if (count == 0) return "[]";
  Printer printer{data, count > kPrintThreshold, std::vector<int64_t>(data.dims.size(), 1)};
  for (size_t d = data.dims.size(); d-- > 1;) {
    printer.strides[d - 1] = printer.strides[d] * data.dims[d];
  }
  printer.ForEach(0, 0, [&](int64_t i) { printer.Measure(Element(data, i)); });
  std::string out;
  printer.Print(0, 0, out);
  return out;
}

}  // namespace onemodel::cli
