#include "client/cli/npy.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

namespace onemodel::cli {
namespace {

using client::Error;
using client::TensorData;
using P = onnx::TensorProto;

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr uint32_t kMaxHeaderBytes = 1 << 20;  // NumPy's own headers stay far below this

// A NumPy type code without its byte-order character, and the ONNX type it holds.
struct NpyType {
  std::string_view code;
  int32_t data_type;
};
constexpr std::array<NpyType, 12> kTypes = {{{"f2", P::FLOAT16},
                                             {"f4", P::FLOAT},
                                             {"f8", P::DOUBLE},
                                             {"i1", P::INT8},
                                             {"i2", P::INT16},
                                             {"i4", P::INT32},
                                             {"i8", P::INT64},
                                             {"u1", P::UINT8},
                                             {"u2", P::UINT16},
                                             {"u4", P::UINT32},
                                             {"u8", P::UINT64},
                                             {"b1", P::BOOL}}};

Error Invalid(const std::string& name, const std::string& message) {
  return Error(grpc::StatusCode::INVALID_ARGUMENT, "'" + name + "': " + message);
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The Python dict literal of an .npy header: {'descr': ..., 'fortran_order': ..., 'shape': ...}.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  NpyHeader Parse() {
    NpyHeader header;
    std::set<std::string> seen;
    Expect('{');
    while (!Consume('}')) {
      const std::string key = String();
      Expect(':');
      if (!seen.insert(key).second) throw Fail("the header gives '" + key + "' twice");
      if (key == "descr") {
        header.descr = String();
      } else if (key == "fortran_order") {
        header.fortran_order = Bool();
      } else if (key == "shape") {
        header.shape = Shape();
      } else {
        throw Fail("unexpected header key '" + key + "'");
      }
      if (!Consume(',')) {
        Expect('}');
        break;
      }
    }
    if (seen.size() != 3) throw Fail("the header needs descr, fortran_order and shape");
    return header;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Consume(c)) throw Fail(std::string("expected '") + c + "' in the header");
  }
  std::string String() {
    SkipSpace();
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '\'' && quote != '"') throw Fail("expected a string in the header");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) throw Fail("unterminated string in the header");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }
  bool Bool() {
    SkipSpace();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_).starts_with(word)) {
        pos_ += std::string_view(word).size();
        return value;
      }
    }
    throw Fail("fortran_order must be True or False");
  }
  std::vector<int64_t> Shape() {
    std::vector<int64_t> shape;
    Expect('(');
    while (!Consume(')')) {
      SkipSpace();
      int64_t extent = 0;
      const size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (__builtin_mul_overflow(extent, 10, &extent) ||
            __builtin_add_overflow(extent, text_[pos_] - '0', &extent)) {
          throw Fail("a shape extent overflows");
        }
        ++pos_;
      }
      if (pos_ == start) throw Fail("the shape must be a tuple of integers");
      shape.push_back(extent);
      if (!Consume(',')) {
        Expect(')');
        break;
      }
    }
    return shape;
  }
  Error Fail(const std::string& message) const { return Invalid(name_, message); }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

// Reads exactly `n` bytes into `out`; false when the stream ends first.
bool ReadBytes(std::istream& in, char* out, size_t n) {
  in.read(out, static_cast<std::streamsize>(n));
  return static_cast<size_t>(in.gcount()) == n;
}

int32_t DataTypeOfDescr(const std::string& descr, const std::string& name) {
  const char order = descr.empty() ? '\0' : descr[0];
  const std::string_view code = std::string_view(descr).substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    throw Invalid(name, "unsupported NumPy type '" + descr + "'");
  }
  for (const NpyType& type : kTypes) {
    if (type.code != code) continue;
    if (order == '>' && client::ElementBytes(type.data_type) > 1) {
      throw Invalid(name, "big-endian data ('" + descr + "') is not supported; convert it with " +
                              "a.astype('<" + std::string(code) + "')");
    }
    return type.data_type;
  }
  throw Invalid(name, "unsupported NumPy type '" + descr + "'");
}

std::string ShapeTuple(const std::vector<int64_t>& dims) {
  std::string tuple = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    tuple += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  }
  return tuple + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

TensorData ReadNpy(std::istream& in, const std::string& name) {
  std::array<char, 8> preamble;
  if (!ReadBytes(in, preamble.data(), preamble.size()) ||
      std::string_view(preamble.data(), kMagic.size()) != kMagic) {
    throw Invalid(name, "not an .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<uint8_t>(preamble[6]);
  if (major < 1 || major > 3) {
    throw Invalid(name, ".npy format version " + std::to_string(major) + " is not supported");
  }
  std::array<uint8_t, 4> length_bytes = {};
  const size_t length_size = major == 1 ? 2 : 4;
  if (!ReadBytes(in, reinterpret_cast<char*>(length_bytes.data()), length_size)) {
    throw Invalid(name, "truncated .npy header");
  }
  const uint32_t header_length = length_bytes[0] | length_bytes[1] << 8 | length_bytes[2] << 16 |
                                 uint32_t{length_bytes[3]} << 24;
  if (header_length > kMaxHeaderBytes) {
    throw Invalid(name, "the .npy header claims " + std::to_string(header_length) + " bytes");
  }
  std::string text(header_length, '\0');
  if (!ReadBytes(in, text.data(), text.size())) throw Invalid(name, "truncated .npy header");

  const NpyHeader header = HeaderParser(text, name).Parse();
  if (header.fortran_order) {
    throw Invalid(name, "Fortran-order arrays are not supported; save np.ascontiguousarray(a)");
  }
  TensorData data{DataTypeOfDescr(header.descr, name), header.shape, {}};
  int64_t count = 0;
  try {
    count = client::NumElements(data.dims);
  } catch (const Error& e) {
    throw Invalid(name, std::string("the header's shape: ") + e.what());
  }
  const int64_t element_bytes = client::ElementBytes(data.data_type);
  if (count > client::kMaxTensorBytes / element_bytes) {
    throw Invalid(name, "the header's shape holds " + std::to_string(count) +
                            " elements, more than the " + std::to_string(client::kMaxTensorBytes) +
                            " bytes one tensor may hold");
  }
  const int64_t size = count * element_bytes;
  data.bytes.resize(size);
  if (!ReadBytes(in, data.bytes.data(), data.bytes.size())) {
    throw Invalid(name, "truncated data: the header announces " + std::to_string(size) +
                            " bytes, the file holds " + std::to_string(in.gcount()));
  }
  return data;
}

void WriteNpy(std::ostream& out, const TensorData& data) {
  data.Validate();
  const auto type = std::find_if(kTypes.begin(), kTypes.end(),
                                 [&](const NpyType& t) { return t.data_type == data.data_type; });
  if (type == kTypes.end()) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                client::DataTypeName(data.data_type) +
                    " has no NumPy type; write the tensor as .pb instead");
  }
  const char order = client::ElementBytes(data.data_type) == 1 ? '|' : '<';
  std::string header = "{'descr': '" + std::string(1, order) + std::string(type->code) +
                       "', 'fortran_order': False, 'shape': " + ShapeTuple(data.dims) + ", }";
  const bool v1 = header.size() + 64 <= 0xFFFF;  // the padded length fits 16 bits
  const size_t prefix = kMagic.size() + 2 + (v1 ? 2 : 4);
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';

  const auto length = static_cast<uint32_t>(header.size());
  const std::array<char, 6> fields = {
      static_cast<char>(v1 ? 1 : 2),          0,
      static_cast<char>(length & 0xFF),       static_cast<char>(length >> 8 & 0xFF),
      static_cast<char>(length >> 16 & 0xFF), static_cast<char>(length >> 24 & 0xFF)};
  out.write(kMagic.data(), kMagic.size());
  out.write(fields.data(), v1 ? 4 : 6);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(data.bytes.data(), static_cast<std::streamsize>(data.bytes.size()));
}

}  // namespace onemodel::cli
