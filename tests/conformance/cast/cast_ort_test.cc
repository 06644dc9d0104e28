// CastElements against ONNX Runtime (spec 10: where ONNX leaves out-of-range behaviour open, our
// Cast rules are provisional and checked against ONNX Runtime's output).
//
// run_ort_cast.mjs runs single-node Cast models in onnxruntime-node for all 169 pairs of the
// thirteen supported types on ordinary, boundary, out-of-range, infinite, NaN and subnormal
// inputs and prints "FROM TO INPUT_HEX OUTPUT_HEX[,OUTPUT_HEX...]". This test runs it, casts
// every input with CastElements and compares bytes. A difference is allowed only where
// ListedDifferences() (below) lists its pair and input class; the same table, row for row, is
// in docs/cast.md with what each side gives and why. Everything else must match exactly.
//
// Node and the npm package are installed by scripts/install-deps; without them this test fails.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/convert/cast.h"
#include "core/dtype/dtype.h"

#ifndef ONEMODEL_CAST_ORT_DIR
#error "ONEMODEL_CAST_ORT_DIR must name tests/conformance/cast (set by its CMakeLists.txt)"
#endif
#ifndef ONEMODEL_CAST_DOC
#error "ONEMODEL_CAST_DOC must name docs/cast.md (set by tests/conformance/cast/CMakeLists.txt)"
#endif
#ifndef ONEMODEL_NODE
#define ONEMODEL_NODE "node"
#endif

namespace onemodel {
namespace {

// One element's bytes in memory order (little-endian).
using Bytes = std::vector<uint8_t>;

constexpr std::array<DType, 13> kTypes = {
    DType::kFloat,  DType::kUint8,  DType::kInt8,    DType::kUint16,  DType::kInt16,
    DType::kInt32,  DType::kInt64,  DType::kBool,    DType::kFloat16, DType::kDouble,
    DType::kUint32, DType::kUint64, DType::kBFloat16};

std::string Name(DType t) { return std::string(OnnxName(t)); }

// ---------------------------------------------------------------------------------------------
// Input classes. Each is decided from the input bytes alone, independently of cast.cc.

uint64_t LoadBits(const Bytes& b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i-- > 0;) v = (v << 8) | b[i];
  return v;
}

// The value of a floating-point element, exactly, as a double.
double FloatingValue(DType t, const Bytes& b) {
  const uint64_t bits = LoadBits(b);
  switch (t) {
    case DType::kFloat:
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case DType::kDouble:
      return std::bit_cast<double>(bits);
    case DType::kBFloat16:
      return std::bit_cast<float>(static_cast<uint32_t>(bits << 16));
    case DType::kFloat16: {
      const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
      const int exponent = static_cast<int>((bits >> 10) & 0x1F);
      const double mantissa = static_cast<double>(bits & 0x3FF);
      if (exponent == 0x1F) {
        return mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                             : sign * std::numeric_limits<double>::infinity();
      }
      if (exponent == 0) return sign * std::ldexp(mantissa, -24);
      return sign * std::ldexp(1024 + mantissa, exponent - 25);
    }
    default:
      ADD_FAILURE() << Name(t) << " is not a floating-point type";
      return 0;
  }
}

bool IsNaN(DType t, const Bytes& b) {
  return IsFloatingPoint(t) && std::isnan(FloatingValue(t, b));
}

// A NaN whose quiet bit (the top mantissa bit) is clear.
bool IsSignalingNaN(DType t, const Bytes& b) {
  if (!IsNaN(t, b)) return false;
  const int mantissa_bits = t == DType::kFloat     ? 23
                            : t == DType::kDouble  ? 52
                            : t == DType::kFloat16 ? 10
                                                   : 7;
  return ((LoadBits(b) >> (mantissa_bits - 1)) & 1) == 0;
}

// +-infinity, or a finite value whose truncation toward zero lies outside integer type to.
bool IsOutOfRange(DType from, DType to, const Bytes& b) {
  if (!IsFloatingPoint(from) || !IsInteger(to)) return false;
  const double x = FloatingValue(from, b);
  if (std::isnan(x)) return false;
  const int bits = 8 * ElementSize(to);
  const bool is_signed =
      to == DType::kInt8 || to == DType::kInt16 || to == DType::kInt32 || to == DType::kInt64;
  const double low = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;  // exact in double
  const double high_exclusive = std::ldexp(1.0, is_signed ? bits - 1 : bits);
  const double t = std::trunc(x);  // +-infinity stays infinite
  return t < low || t >= high_exclusive;
}

// Magnitude m rounded to `bits` significant bits, to nearest, ties to even.
uint64_t RoundToSignificantBits(uint64_t m, int bits) {
  const int width = std::bit_width(m);
  if (width <= bits) return m;
  const int shift = width - bits;
  const uint64_t kept = m >> shift;
  const uint64_t rest = m & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  const uint64_t up = rest > half || (rest == half && (kept & 1) != 0) ? 1 : 0;
  // A carry can make the result 2^width; for width 64 that wraps to 0, which still compares
  // right: it is 2^64 for every rounding of such an m.
  return (kept + up) << shift;
}

// A 32- or 64-bit integer for which rounding first to float32 (24 bits) and then to bfloat16
// (8 bits) differs from rounding once to bfloat16.
bool RoundsDifferentlyThroughFloat(DType from, const Bytes& b) {
  if (from != DType::kInt32 && from != DType::kUint32 && from != DType::kInt64 &&
      from != DType::kUint64) {
    return false;
  }
  uint64_t v = LoadBits(b);
  const bool is_signed = from == DType::kInt32 || from == DType::kInt64;
  if (is_signed && (v >> (8 * b.size() - 1)) != 0) {
    v = (b.size() == 4 ? uint64_t{0xFFFFFFFF} & (0 - v) : 0 - v);  // magnitude of a negative
  }
  return RoundToSignificantBits(RoundToSignificantBits(v, 24), 8) != RoundToSignificantBits(v, 8);
}

// A BOOL element byte other than 0 and 1.
bool IsNonCanonicalBool(DType from, const Bytes& b) { return from == DType::kBool && b[0] > 1; }

enum class InputClass {
  kOutOfRange,
  kNaN,
  kSignalingNaN,
  kDoubleRoundingToBFloat16,
  kNonCanonicalBool,
};

// The class's name in the "Inputs" column of docs/cast.md.
std::string_view ClassName(InputClass c) {
  switch (c) {
    case InputClass::kOutOfRange:
      return "+-inf, or trunc(x) out of range";
    case InputClass::kNaN:
      return "NaN";
    case InputClass::kSignalingNaN:
      return "signalling NaN";
    case InputClass::kDoubleRoundingToBFloat16:
      return "rounding via float32 first changes the result";
    case InputClass::kNonCanonicalBool:
      return "byte other than 0 and 1";
  }
  return "?";
}

bool InClass(InputClass c, DType from, DType to, const Bytes& input) {
  switch (c) {
    case InputClass::kOutOfRange:
      return IsOutOfRange(from, to, input);
    case InputClass::kNaN:
      return IsNaN(from, input);
    case InputClass::kSignalingNaN:
      return IsSignalingNaN(from, input);
    case InputClass::kDoubleRoundingToBFloat16:
      return RoundsDifferentlyThroughFloat(from, input);
    case InputClass::kNonCanonicalBool:
      return IsNonCanonicalBool(from, input);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// The differences we accept, with what ONNX Runtime 1.30 (x86-64) gives and what we give.
// docs/cast.md has one row per entry beginning "| ID | FROM | TO | INPUTS |" (checked below).

struct ListedDifference {
  std::string_view id;
  std::vector<DType> from;
  std::vector<DType> to;
  InputClass inputs;
  std::string_view ort;   // what ONNX Runtime gives
  std::string_view ours;  // what CastElements gives
};

const std::vector<DType> kFloats = {DType::kFloat, DType::kDouble, DType::kFloat16,
                                    DType::kBFloat16};

const std::vector<ListedDifference>& ListedDifferences() {
  static const auto* const kList = new std::vector<ListedDifference>{
      {"D1",
       kFloats,
       {DType::kInt8, DType::kUint8, DType::kInt16, DType::kUint16},
       InputClass::kOutOfRange,
       "the int32 truncation (0x80000000 past int32 and for +-inf) wrapped to the target: "
       "300 -> 44 (INT8), -1 -> 255 (UINT8), 65536 -> 0, +-inf -> 0",
       "saturates to the target's min or max"},
      {"D2",
       kFloats,
       {DType::kInt32, DType::kInt64},
       InputClass::kOutOfRange,
       "the minimum (x86 'integer indefinite') for every such input, +inf included",
       "saturates to min or max (the negative side agrees)"},
      {"D3", kFloats, {DType::kInt32, DType::kInt64}, InputClass::kNaN, "the minimum", "0"},
      {"D4",
       kFloats,
       {DType::kUint32},
       InputClass::kOutOfRange,
       "scalar tail: the int64 truncation wrapped (-1 -> 4294967295, 2^32 + 256 -> 256), 0 "
       "past int64 and for +-inf; vectorized: the same from -2^31 to 2^32, 0x80000000 below, "
       "0 above",
       "saturates: 0 below, 4294967295 above"},
      {"D5",
       kFloats,
       {DType::kUint32},
       InputClass::kNaN,
       "0x80000000 (vectorized) or 0 (scalar tail)",
       "0"},
      {"D6",
       kFloats,
       {DType::kUint64},
       InputClass::kOutOfRange,
       "negative values above -2^63 wrap (-1 -> 2^64-1); -2^63 and below, -inf -> 2^63; "
       "2^64 and above, +inf -> 0",
       "saturates: 0 below, 2^64-1 above"},
      {"D7", kFloats, {DType::kUint64}, InputClass::kNaN, "2^63", "0"},
      {"D8",
       {DType::kFloat, DType::kDouble, DType::kBFloat16},
       {DType::kFloat16},
       InputClass::kNaN,
       "0x7E00 with the sign (payload dropped); FLOAT in a vectorized block keeps the payload "
       "as we do",
       "sign, quiet bit and the top nine payload bits of the float32 value (spec 10)"},
      {"D9",
       {DType::kFloat, DType::kDouble, DType::kFloat16},
       {DType::kBFloat16},
       InputClass::kNaN,
       "0x7FC0 with the sign (payload dropped)",
       "(float32 bits >> 16) | 0x40: sign and top payload bits kept (spec 10)"},
      {"D10",
       {DType::kFloat16, DType::kBFloat16},
       {DType::kFloat},
       InputClass::kSignalingNaN,
       "stays signalling (bits moved, quiet bit clear); FLOAT16 in a vectorized block is "
       "quieted as we do",
       "payload kept, quiet bit forced (spec 10)"},
      {"D11",
       {DType::kInt32, DType::kUint32, DType::kInt64, DType::kUint64},
       {DType::kBFloat16},
       InputClass::kDoubleRoundingToBFloat16,
       "rounds twice (to float32, then to bfloat16): 2^30 + 2^22 + 1 -> 0x4E80",
       "rounds once to nearest even (spec 10): 0x4E81"},
      {"D12",
       {DType::kBool},
       {DType::kFloat, DType::kUint8, DType::kInt8, DType::kUint16, DType::kInt16, DType::kInt32,
        DType::kInt64, DType::kDouble, DType::kUint32, DType::kUint64},
       InputClass::kNonCanonicalBool,
       "the byte's value (2 -> 2, 0xFF -> 255 or -1); to FLOAT only in the scalar tail",
       "1: any nonzero byte is true (spec 10: bool -> number is 0 or 1)"},
  };
  return *kList;
}

bool Contains(const std::vector<DType>& types, DType t) {
  for (DType u : types) {
    if (u == t) return true;
  }
  return false;
}

// The listed difference covering this pair and input, or nullptr.
const ListedDifference* FindListed(DType from, DType to, const Bytes& input) {
  for (const ListedDifference& d : ListedDifferences()) {
    if (Contains(d.from, from) && Contains(d.to, to) && InClass(d.inputs, from, to, input)) {
      return &d;
    }
  }
  return nullptr;
}

std::string JoinNames(const std::vector<DType>& types) {
  std::string s;
  for (DType t : types) s += (s.empty() ? "" : ", ") + Name(t);
  return s;
}

// "| D1 | FLOAT, DOUBLE, FLOAT16, BFLOAT16 | INT8, UINT8, INT16, UINT16 | +-inf, ... |"
std::string DocRowPrefix(const ListedDifference& d) {
  return "| " + std::string(d.id) + " | " + JoinNames(d.from) + " | " + JoinNames(d.to) + " | " +
         std::string(ClassName(d.inputs)) + " |";
}

// ---------------------------------------------------------------------------------------------
// Running ONNX Runtime and parsing its lines.

struct OrtLine {
  DType from;
  DType to;
  Bytes input;
  std::vector<Bytes> outputs;  // every distinct result ONNX Runtime gave (more than one when
                               // it depends on the element's position)
  std::string text;
};

struct OrtRun {
  std::string error;   // non-empty: the run failed and this says why
  std::string header;  // "# onnxruntime-node 1.30.0 opset 26 ir 13"
  std::vector<OrtLine> lines;
};

std::string Hex(const uint8_t* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s;
}
std::string Hex(const Bytes& b) { return Hex(b.data(), b.size()); }

bool ParseHex(std::string_view s, size_t size, Bytes* out) {
  if (s.size() != 2 * size) return false;
  out->clear();
  for (size_t i = 0; i < s.size(); i += 2) {
    unsigned value = 0;
    for (char c : s.substr(i, 2)) {
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<unsigned>(c - 'a' + 10);
      } else {
        return false;
      }
    }
    out->push_back(static_cast<uint8_t>(value));
  }
  return true;
}

bool ParseLine(const std::string& text, OrtLine* line) {
  static const auto* const kByName = [] {
    auto* m = new std::map<std::string, DType>;
    for (DType t : kTypes) (*m)[Name(t)] = t;
    return m;
  }();
  std::istringstream fields(text);
  std::string from, to, input, outputs, extra;
  if (!(fields >> from >> to >> input >> outputs) || (fields >> extra)) return false;
  if (!kByName->contains(from) || !kByName->contains(to)) return false;
  line->from = kByName->at(from);
  line->to = kByName->at(to);
  line->text = text;
  if (!ParseHex(input, ElementSize(line->from), &line->input)) return false;
  std::istringstream list(outputs);
  for (std::string one; std::getline(list, one, ',');) {
    Bytes b;
    if (!ParseHex(one, ElementSize(line->to), &b)) return false;
    line->outputs.push_back(std::move(b));
  }
  return !line->outputs.empty();
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

OrtRun RunOrtOnce() {
  OrtRun run;
  const std::filesystem::path dir = ONEMODEL_CAST_ORT_DIR;
  const char* node_env = std::getenv("ONEMODEL_NODE");
  const std::string node = node_env != nullptr && *node_env != '\0' ? node_env : ONEMODEL_NODE;
  const std::string fix =
      "; run scripts/install-deps (it installs Node.js and calls "
      "scripts/install-npm-deps, which runs npm ci in " +
      dir.string() + ")";
  if (!std::filesystem::exists(dir / "node_modules/onnxruntime-node/package.json")) {
    run.error = "onnxruntime-node is not installed (no " +
                (dir / "node_modules/onnxruntime-node").string() + ")" + fix;
    return run;
  }
  const std::string command =
      "cd " + ShellQuote(dir.string()) + " && " + ShellQuote(node) + " run_ort_cast.mjs";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    run.error = "cannot start '" + command + "': " + std::strerror(errno);
    return run;
  }
  std::string out;
  std::array<char, 1 << 16> buffer;
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.error = "'" + command + "' failed with exit status " + std::to_string(code) +
                (code == 127 ? " (" + node + " not found: Node.js is missing)" : "") +
                " (its stderr is above)" + fix;
    return run;
  }
  std::istringstream lines(out);
  for (std::string text; std::getline(lines, text);) {
    if (text.empty()) continue;
    if (text[0] == '#') {
      if (run.header.empty()) run.header = text;
      continue;
    }
    OrtLine line;
    if (!ParseLine(text, &line)) {
      run.error = "run_ort_cast.mjs printed a malformed line: '" + text + "'";
      return run;
    }
    run.lines.push_back(std::move(line));
  }
  if (run.lines.empty()) run.error = "run_ort_cast.mjs printed no results";
  return run;
}

// Runs node once per test program.
const OrtRun& Ort() {
  static const OrtRun* const kRun = new OrtRun(RunOrtOnce());
  return *kRun;
}

// Success when node ran and printed results; else the reason and how to fix it.
::testing::AssertionResult OrtRan() {
  if (Ort().error.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << Ort().error;
}

// Our result for one input, through the public entry point.
Bytes Ours(const OrtLine& line) {
  alignas(8) std::array<uint8_t, 8> src{};
  alignas(8) std::array<uint8_t, 8> dst{};
  std::memcpy(src.data(), line.input.data(), line.input.size());
  CastElements(line.from, src.data(), line.to, dst.data(), 1);
  return Bytes(dst.begin(), dst.begin() + ElementSize(line.to));
}

// A value for messages: "FLOAT 0x7fc00000 (nan)", "INT32 -2147483648".
std::string Describe(DType t, const Bytes& b) {
  const uint64_t bits = LoadBits(b);
  std::ostringstream s;
  s << Name(t) << " ";
  if (IsFloatingPoint(t)) {
    s << "0x" << Hex(std::vector<uint8_t>(b.rbegin(), b.rend())) << " (" << FloatingValue(t, b)
      << ")";
  } else if (t == DType::kBool || t == DType::kUint8 || t == DType::kUint16 ||
             t == DType::kUint32 || t == DType::kUint64) {
    s << bits;
  } else {
    const int shift = 64 - 8 * static_cast<int>(b.size());
    s << (static_cast<int64_t>(bits << shift) >> shift);
  }
  return s.str();
}

// ---------------------------------------------------------------------------------------------

TEST(CastOrtTest, RunsForEveryPair) {
  ASSERT_TRUE(OrtRan());
  std::cout << Ort().header << "\n";
  std::set<std::pair<DType, DType>> pairs;
  std::map<DType, std::set<Bytes>> inputs;
  for (const OrtLine& line : Ort().lines) {
    pairs.insert({line.from, line.to});
    inputs[line.from].insert(line.input);
  }
  for (DType from : kTypes) {
    for (DType to : kTypes) {
      EXPECT_TRUE(pairs.contains({from, to})) << Name(from) << " -> " << Name(to) << " missing";
    }
  }
  size_t distinct_inputs = 0;
  for (const auto& [type, set] : inputs) distinct_inputs += set.size();
  EXPECT_EQ(Ort().lines.size(), distinct_inputs * kTypes.size())
      << "every input of a source type should be cast to all 13 types";
  std::cout << pairs.size() << " pairs, " << distinct_inputs << " inputs, " << Ort().lines.size()
            << " casts\n";
}

TEST(CastOrtTest, MatchesOnnxRuntimeExceptListedDifferences) {
  ASSERT_TRUE(OrtRan());
  std::map<std::string_view, int> listed;
  std::map<std::string_view, std::string> example;
  int matches = 0;
  int position_dependent = 0;
  for (const OrtLine& line : Ort().lines) {
    const Bytes ours = Ours(line);
    if (line.outputs.size() > 1) ++position_dependent;
    if (line.outputs.size() == 1 && line.outputs[0] == ours) {
      ++matches;
      continue;
    }
    if (const ListedDifference* d = FindListed(line.from, line.to, line.input)) {
      if (listed[d->id]++ == 0) example[d->id] = line.text + " (ours " + Hex(ours) + ")";
      continue;
    }
    std::string ort;
    for (const Bytes& o : line.outputs) ort += (ort.empty() ? "" : " or ") + Describe(line.to, o);
    ADD_FAILURE() << "unlisted difference: " << Describe(line.from, line.input) << " -> "
                  << Name(line.to) << ": ONNX Runtime gives " << ort << ", we give "
                  << Describe(line.to, ours) << "\n  line: " << line.text;
  }
  int differences = 0;
  for (const auto& [id, n] : listed) differences += n;
  std::cout << matches << " casts match exactly, " << differences << " differ as listed ("
            << position_dependent << " of them depend on the element's position in ONNX "
            << "Runtime):\n";
  for (const ListedDifference& d : ListedDifferences()) {
    std::cout << "  " << d.id << " " << listed[d.id] << "x " << JoinNames(d.from) << " -> "
              << JoinNames(d.to) << ", " << ClassName(d.inputs) << ". ONNX Runtime: " << d.ort
              << ". Ours: " << d.ours << ". For example " << example[d.id] << "\n";
  }
}

// Keeps the table honest: an entry that no input needs any more must go (on x86-64, where the
// table was measured; other CPUs convert out-of-range values differently).
TEST(CastOrtTest, EveryListedDifferenceOccurs) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the table was measured on x86-64";
#endif
  ASSERT_TRUE(OrtRan());
  std::map<std::string_view, int> seen;
  for (const OrtLine& line : Ort().lines) {
    const Bytes ours = Ours(line);
    if (line.outputs.size() == 1 && line.outputs[0] == ours) continue;
    if (const ListedDifference* d = FindListed(line.from, line.to, line.input)) ++seen[d->id];
  }
  for (const ListedDifference& d : ListedDifferences()) {
    EXPECT_GT(seen[d.id], 0) << d.id << " (" << DocRowPrefix(d)
                             << ") no longer differs from ONNX Runtime: remove it here and "
                                "from docs/cast.md";
  }
}

TEST(CastOrtTest, TableMatchesDocs) {
  std::ifstream doc(ONEMODEL_CAST_DOC);
  ASSERT_TRUE(doc) << "cannot read " << ONEMODEL_CAST_DOC;
  std::vector<std::string> rows;
  for (std::string text; std::getline(doc, text);) {
    if (text.starts_with("| D")) rows.push_back(text);
  }
  ASSERT_EQ(rows.size(), ListedDifferences().size())
      << ONEMODEL_CAST_DOC << " must have one '| D<n> |' row per listed difference";
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string prefix = DocRowPrefix(ListedDifferences()[i]);
    EXPECT_TRUE(rows[i].starts_with(prefix)) << "docs/cast.md row " << i + 1 << " should begin\n  "
                                             << prefix << "\nbut is\n  " << rows[i];
  }
}

// The input classes themselves, on hand-picked values.
TEST(CastOrtTest, InputClasses) {
  const auto f32 = [](uint32_t bits) {
    return Bytes{static_cast<uint8_t>(bits), static_cast<uint8_t>(bits >> 8),
                 static_cast<uint8_t>(bits >> 16), static_cast<uint8_t>(bits >> 24)};
  };
  EXPECT_TRUE(IsOutOfRange(DType::kFloat, DType::kInt8, f32(0x43000000)));     // 128
  EXPECT_FALSE(IsOutOfRange(DType::kFloat, DType::kInt8, f32(0x42FF0000)));    // 127.5
  EXPECT_FALSE(IsOutOfRange(DType::kFloat, DType::kUint8, f32(0xBF000000)));   // -0.5
  EXPECT_TRUE(IsOutOfRange(DType::kFloat, DType::kUint8, f32(0xBF800000)));    // -1
  EXPECT_TRUE(IsOutOfRange(DType::kFloat, DType::kInt64, f32(0x5F000000)));    // 2^63
  EXPECT_FALSE(IsOutOfRange(DType::kFloat, DType::kInt64, f32(0xDF000000)));   // -2^63
  EXPECT_TRUE(IsOutOfRange(DType::kFloat, DType::kUint64, f32(0x7F800000)));   // inf
  EXPECT_FALSE(IsOutOfRange(DType::kFloat, DType::kUint64, f32(0x7FC00000)));  // NaN
  EXPECT_TRUE(IsSignalingNaN(DType::kFloat, f32(0x7F800001)));
  EXPECT_FALSE(IsSignalingNaN(DType::kFloat, f32(0x7FC00000)));
  EXPECT_TRUE(IsSignalingNaN(DType::kFloat16, Bytes{0x01, 0x7C}));
  EXPECT_FALSE(IsSignalingNaN(DType::kFloat16, Bytes{0x00, 0x7E}));
  EXPECT_TRUE(IsSignalingNaN(DType::kBFloat16, Bytes{0x81, 0x7F}));
  EXPECT_FALSE(IsSignalingNaN(DType::kBFloat16, Bytes{0xC0, 0x7F}));
  EXPECT_TRUE(IsNaN(DType::kFloat16, Bytes{0xFF, 0xFF}));
  EXPECT_FALSE(IsNaN(DType::kFloat16, Bytes{0x00, 0xFC}));
  // 2^30 + 2^22 + 1: float32 rounds to 2^30 + 2^22, a bfloat16 tie that goes to even.
  EXPECT_TRUE(RoundsDifferentlyThroughFloat(DType::kInt32, f32(0x40400001)));
  EXPECT_TRUE(RoundsDifferentlyThroughFloat(DType::kInt32, f32(0xBFBFFFFF)));  // negative
  EXPECT_FALSE(RoundsDifferentlyThroughFloat(DType::kInt32, f32(0x40400000)));
  EXPECT_FALSE(RoundsDifferentlyThroughFloat(DType::kInt32, f32(0x01000001)));  // 2^24 + 1
  EXPECT_EQ(RoundToSignificantBits(0x101, 8), 0x100u);                          // tie to even
  EXPECT_EQ(RoundToSignificantBits(0x103, 8), 0x104u);                          // tie to even (up)
  EXPECT_TRUE(IsNonCanonicalBool(DType::kBool, Bytes{2}));
  EXPECT_FALSE(IsNonCanonicalBool(DType::kBool, Bytes{1}));
}

}  // namespace
}  // namespace onemodel
