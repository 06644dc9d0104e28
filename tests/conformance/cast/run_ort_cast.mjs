// Runs ONNX Cast in ONNX Runtime (npm onnxruntime-node) for every pair of the thirteen element
// types onemodel supports, on a fixed list of inputs per source type, and prints one line per
// (pair, input):
//
//   FROM TO INPUT_HEX OUTPUT_HEX[,OUTPUT_HEX...]
//
// FROM and TO are ONNX type names; the hex strings are the element's raw bytes in memory order
// (little-endian), so FLOAT 1.0 is 0000803f. Lines starting with '#' are comments; the first
// says which ONNX Runtime and opset produced the output. cast_ort_test.cc parses this.
//
//   node run_ort_cast.mjs > ort_cast.txt
//
// Each model is built here as ModelProto bytes (no onnx package): one Cast node, one input and
// one output of shape [n]. The JavaScript API has no bfloat16 tensors, so a BFLOAT16 input is
// fed as UINT16 and reinterpreted by BitCast (opset 26) before the Cast, and a BFLOAT16 output
// is reinterpreted as UINT16 by BitCast after it; BitCast keeps every bit.
//
// Every input is run three ways: all inputs of the pair in one tensor, each input repeated 67
// times in one tensor, and each input alone in a one-element tensor. ONNX Runtime's Cast runs
// vectorized loops with scalar tails (Eigen, MLAS), and for some inputs the two disagree, so
// the result depends on where the element sits in its tensor. Such a line lists every distinct
// result, sorted and separated by commas; other lines have one.
//
// Deterministic: graph optimizations off, one intra-op thread, no randomness.

import {createRequire} from 'node:module';

import {bytesField, intField, stringField} from '../../common/protobuf_wire.mjs';

const require = createRequire(import.meta.url);
let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  process.stderr.write(
      'run_ort_cast: cannot load onnxruntime-node (' + e.message.split('\n')[0] +
      '); run scripts/install-deps (it calls scripts/install-npm-deps)\n');
  process.exit(2);
}

const kOpset = 26;      // highest ai.onnx opset onnxruntime-node 1.30 accepts; BitCast needs 26
const kIrVersion = 13;  // IR version that goes with opset 26
const kRepeat = 67;     // copies per input in the repeated run: odd, so tails are exercised too

// ---------------------------------------------------------------------------------------------
// Element types: ONNX name, TensorProto.DataType code, bytes per element, JS tensor type.

const TYPES = [
  {name: 'FLOAT', code: 1, size: 4, js: 'float32'},
  {name: 'UINT8', code: 2, size: 1, js: 'uint8'},
  {name: 'INT8', code: 3, size: 1, js: 'int8'},
  {name: 'UINT16', code: 4, size: 2, js: 'uint16'},
  {name: 'INT16', code: 5, size: 2, js: 'int16'},
  {name: 'INT32', code: 6, size: 4, js: 'int32'},
  {name: 'INT64', code: 7, size: 8, js: 'int64'},
  {name: 'BOOL', code: 9, size: 1, js: 'bool'},
  {name: 'FLOAT16', code: 10, size: 2, js: 'float16'},
  {name: 'DOUBLE', code: 11, size: 8, js: 'float64'},
  {name: 'UINT32', code: 12, size: 4, js: 'uint32'},
  {name: 'UINT64', code: 13, size: 8, js: 'uint64'},
  {name: 'BFLOAT16', code: 16, size: 2, js: null},  // fed and read as UINT16 through BitCast
];
const UINT16 = TYPES.find((t) => t.name === 'UINT16');

// ---------------------------------------------------------------------------------------------
// Inputs. Each is a Uint8Array holding one element's bytes.

function bytesOfBigInt(v, size) {
  const b = new Uint8Array(size);
  let x = BigInt.asUintN(size * 8, BigInt(v));
  for (let i = 0; i < size; ++i) {
    b[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return b;
}
const f32Bits = (bits) => bytesOfBigInt(bits, 4);
const f64Bits = (bits) => bytesOfBigInt(bits, 8);
function f32(x) {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, x, true);
  return b;
}
function f64(x) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, x, true);
  return b;
}
const u16 = (bits) => bytesOfBigInt(bits, 2);

const P = (e) => 2 ** e;

// Values that are boundaries for some target type (integer ranges, 16-bit float ranges), used
// for the floating-point sources; each source rounds them to its own precision.
const kFloatBoundaries = [
  0.5, -0.5, 0.9999999, -0.9999999, 1, -1, 1.5, -1.5, 2.5, -2.5, 3.75, -3.75, 100.75, -100.75,
  127, 127.5, 128, -128, -128.5, -129, 200, -200, 255, 255.5, 256, 300, -300,
  32767, 32767.5, 32768, -32768, -32768.5, -32769, 65504, 65519, 65520, 65535, 65535.5, 65536,
  70000, -70000, 16777217, P(31) - 1, P(31) - 0.5, P(31), -P(31), -P(31) - 0.5, -P(31) - 1,
  -P(31) - 256, P(32) - 1, P(32), P(32) + 256, -P(32), P(53) + 2, P(63) - 1024, P(63),
  -P(63), -P(63) - 2048, P(64) - 2048, P(64), -P(64), 1e20, -1e20, 1e30, -1e30,
];

function floatInputs() {
  const v = [];
  for (const b of [0x00000000n, 0x80000000n]) v.push(f32Bits(b));  // +-0
  for (const x of kFloatBoundaries) v.push(f32(x));
  // Nearest float32 below 2^31, 2^32, 2^63, 2^64 and below -2^31, -2^63 (exact, no rounding).
  for (const x of [2147483520, 4294967040, 9223371487098961920, 18446742974197923840,
    -2147483904, -9223373136366403584]) {
    v.push(f32(x));
  }
  // binary16 rounding: ties, overflow, subnormals, underflow.
  for (const b of [0x3f801000n, 0x3f803000n, 0x3f801001n, 0x477fe000n, 0x477fefffn,
    0x477ff000n, 0x38800000n, 0x33800000n, 0x33000000n, 0x33000001n, 0x33c00000n, 0xb3000001n,
    0x387fc000n, 0x387fe000n]) {
    v.push(f32Bits(b));
  }
  // bfloat16 rounding: ties to even both ways, overflow to infinity.
  for (const b of [0x3f808000n, 0x3f818000n, 0x3f808001n, 0xbf818000n, 0x7f7f7fffn,
    0x7f7f8000n, 0x7f7fffffn, 0xff7fffffn, 0x00400000n]) {
    v.push(f32Bits(b));
  }
  // Subnormals.
  for (const b of [0x00000001n, 0x80000001n, 0x007fffffn, 0x807fffffn, 0x00800000n]) {
    v.push(f32Bits(b));
  }
  // Infinities and NaNs: quiet and signalling, both signs, payloads high and low.
  for (const b of [0x7f800000n, 0xff800000n, 0x7fc00000n, 0xffc00000n, 0x7fc00001n,
    0x7fc12345n, 0xffd55555n, 0x7fffffffn, 0xffffffffn, 0x7f800001n, 0xff800001n, 0x7fa00000n,
    0x7f802000n, 0x7f810000n, 0xff812345n]) {
    v.push(f32Bits(b));
  }
  return v;
}

function doubleInputs() {
  const v = [];
  for (const b of [0n, 0x8000000000000000n]) v.push(f64Bits(b));
  for (const x of kFloatBoundaries) v.push(f64(x));
  for (const x of [
    // Just inside and outside every integer range (truncation stays in range inside).
    127.9, -128.9, 255.9, -0.9, 32767.9, -32768.9, 65535.9, 2147483647.9, -2147483648.9,
    -2147483649, 4294967295.9, 4294967296, 9223372036854774784, -9223372036854775808,
    -9223372036854777856, 18446744073709549568, 18446744073709551616, 9007199254740993,
    // Beyond float32: overflow, the largest value that rounds to FLT_MAX, underflow.
    1e39, -1e39, 3.4028235677973362e38, 3.4028235677973366e38, 1e-46, -1e-46, 1e-300,
    1.7976931348623157e308, -1.7976931348623157e308,
    // Double rounding through float32 (the spec's rule): 1 + 2^-11 + 2^-40 -> binary16 1.0.
    1 + P(-11) + P(-40), 1 + P(-8) + P(-40), 65519.99999999,
  ]) {
    v.push(f64(x));
  }
  for (const b of [0x0000000000000001n, 0x8000000000000001n, 0x000fffffffffffffn,
    0x7ff0000000000000n, 0xfff0000000000000n, 0x7ff8000000000000n, 0xfff8000000000000n,
    0x7ff8000000000001n, 0x7ff8000020000000n, 0x7ffc000000000000n, 0x7fffffffffffffffn,
    0xffffffffffffffffn, 0x7ff0000000000001n, 0xfff0000000000001n, 0x7ff0000020000000n,
    0x7ff4000000000000n]) {
    v.push(f64Bits(b));
  }
  return v;
}

function float16Inputs() {
  return [
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x3800, 0xb800, 0x3bff, 0xbbff, 0x3e00, 0xbe00, 0x4100,
    0xc100, 0x4500, 0x57f0, 0x57f8, 0x5800, 0xd800, 0xd808, 0xd810, 0x5a40, 0x5bf8, 0x5bfc,
    0x5c00, 0x6c00, 0x77ff, 0x7800, 0xf800, 0xf801, 0x7bfe, 0x7bff, 0xfbff, 0x0001, 0x8001,
    0x03ff, 0x83ff, 0x0400, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7e01, 0x7fff, 0xffff, 0x7c01,
    0xfc01, 0x7d00, 0x7f00,
  ].map(u16);
}

function bfloat16Inputs() {
  return [
    0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f00, 0xbf00, 0x3f7f, 0xbf7f, 0x3fc0, 0xbfc0, 0x4020,
    0xc020, 0x42fe, 0x42ff, 0x4300, 0xc300, 0xc301, 0x4348, 0x437f, 0x4380, 0x4381, 0x46ff,
    0x4700, 0xc700, 0xc701, 0x477f, 0x4780, 0x4f00, 0xcf00, 0xcf01, 0x4f80, 0x4f81, 0x5f00,
    0xdf00, 0xdf01, 0x5f80, 0xdf80, 0x7f7f, 0xff7f, 0x3380, 0x3300, 0x3340, 0x33c0, 0x387f,
    0x3880, 0x0001, 0x8001, 0x007f, 0x0080, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7fc1, 0x7fff,
    0xffff, 0x7f81, 0xff81, 0x7fa0,
  ].map(u16);
}

// Integers: every range boundary of every integer type, and values where conversion to each
// floating-point type rounds (ties both ways, the double-rounding cases of bfloat16 and of
// unsigned 64-bit conversion). Each integer type takes those that fit it.
function integerInputs(type) {
  const bits = BigInt(type.size * 8);
  const signed = type.name.startsWith('INT');
  const min = signed ? -(1n << (bits - 1n)) : 0n;
  const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  const p = (e) => 1n << BigInt(e);
  const candidates = [0n, 1n, -1n, 2n, -2n, 100n, -100n];
  for (const e of [7, 8, 15, 16, 31, 32, 63, 64]) {
    candidates.push(p(e) - 1n, p(e), p(e) + 1n, -p(e), -p(e) - 1n, -p(e) + 1n);
  }
  candidates.push(
      // binary16: ties at 2049 and 2051, the largest finite, the first that overflows.
      2049n, 2051n, 65504n, 65519n, 65520n, -65519n, -65520n,
      // bfloat16: ties at 257 and 259, and 2^30 + 2^22 + 1 (rounds up once, down twice).
      257n, 259n, -257n, p(30) + p(22), p(30) + p(22) + 1n, p(30) + 3n * p(22),
      -(p(30) + p(22) + 1n), p(31) - p(23), p(31) - p(23) - 1n,
      // float32: ties above 2^24, and the largest values below 2^31, 2^32.
      p(24) + 1n, p(24) + 3n, -(p(24) + 1n), p(31) - 64n, p(31) - 65n, p(32) - 128n,
      p(32) - 129n, p(30) + p(6) + 1n,
      // float64: ties above 2^53.
      p(53) + 1n, p(53) + 3n, -(p(53) + 1n),
      // 64-bit values: float32 and float64 ties and sticky bits, both signs, above 2^63.
      p(62) + p(38), p(62) + p(38) + 1n, p(62) + p(9) + 1n, -(p(62) + p(38) + 1n),
      -(p(62) + p(9) + 1n), p(63) - 1024n, p(63) - 1025n, p(63) - p(39), p(63) - p(39) - 1n,
      p(63) + p(39), p(63) + p(39) + 1n, p(63) + p(10) + 1n, p(63) + 1n, p(64) - p(39) - 1n,
      p(64) - p(39), p(64) - 1024n, p(64) - 1025n, p(62) + p(54) + 1n, p(63) + p(55) + 1n,
      0x0123456789abcdefn, -0x0123456789abcdefn);
  const v = [];
  for (const c of candidates) {
    if (c >= min && c <= max) v.push(bytesOfBigInt(c, type.size));
  }
  v.push(bytesOfBigInt(min, type.size), bytesOfBigInt(max, type.size));
  return v;
}

// BOOL: 0 and 1, and two bytes that are not valid BOOL elements (any nonzero byte is true).
const boolInputs = () => [0x00, 0x01, 0x02, 0xff].map((b) => Uint8Array.of(b));

function inputsFor(type) {
  switch (type.name) {
    case 'FLOAT': return floatInputs();
    case 'DOUBLE': return doubleInputs();
    case 'FLOAT16': return float16Inputs();
    case 'BFLOAT16': return bfloat16Inputs();
    case 'BOOL': return boolInputs();
    default: return integerInputs(type);
  }
}

// Distinct inputs in first-seen order.
function distinct(list) {
  const seen = new Set();
  return list.filter((b) => {
    const h = hex(b);
    if (seen.has(h)) return false;
    seen.add(h);
    return true;
  });
}

function hex(bytes) {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

// ---------------------------------------------------------------------------------------------
// ModelProto encoding (proto3 wire format, only the fields used here).

// ValueInfoProto {name = 1, type = 2}; TypeProto {tensor_type = 1};
// TypeProto.Tensor {elem_type = 1, shape = 2}; TensorShapeProto {dim = 1}; Dimension {dim_param = 2}.
function valueInfo(name, code) {
  const shape = bytesField(1, stringField(2, 'n'));
  const tensor = [...intField(1, code), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensor))];
}

// NodeProto {input = 1, output = 2, name = 3, op_type = 4, attribute = 5};
// AttributeProto {name = 1, i = 3, type = 20 (INT = 2)}.
function node(opType, input, output, to) {
  const attribute = [...stringField(1, 'to'), ...intField(3, to), ...intField(20, 2)];
  return [...stringField(1, input), ...stringField(2, output), ...stringField(3, output),
    ...stringField(4, opType), ...bytesField(5, attribute)];
}

// Cast from -> to, with BitCast around it for BFLOAT16 as the header says.
function castModel(from, to) {
  const nodes = [];
  let x = 'x';
  const inputCode = from.js === null ? UINT16.code : from.code;
  if (from.js === null) {
    nodes.push(node('BitCast', 'x', 'x_bf16', from.code));
    x = 'x_bf16';
  }
  const y = to.js === null ? 'y_bf16' : 'y';
  nodes.push(node('Cast', x, y, to.code));
  const outputCode = to.js === null ? UINT16.code : to.code;
  if (to.js === null) nodes.push(node('BitCast', 'y_bf16', 'y', UINT16.code));
  // GraphProto {node = 1, name = 2, input = 11, output = 12}.
  const graph = [...nodes.flatMap((n) => bytesField(1, n)), ...stringField(2, 'cast'),
    ...bytesField(11, valueInfo('x', inputCode)), ...bytesField(12, valueInfo('y', outputCode))];
  // ModelProto {ir_version = 1, producer_name = 2, graph = 7, opset_import = 8};
  // OperatorSetIdProto {domain = 1, version = 2}.
  return Uint8Array.from([...intField(1, kIrVersion), ...stringField(2, 'onemodel-cast-test'),
    ...bytesField(7, graph), ...bytesField(8, [...stringField(1, ''), ...intField(2, kOpset)])]);
}

// ---------------------------------------------------------------------------------------------
// Running.

const kTypedArrays = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
  float16: Uint16Array, float64: Float64Array, uint32: Uint32Array, uint64: BigUint64Array,
};

// A tensor of type `type` (BFLOAT16 as UINT16) holding the concatenated element bytes.
function tensorOf(type, elements) {
  const jsType = type.js ?? 'uint16';
  const buffer = new ArrayBuffer(elements.length * type.size);
  const bytes = new Uint8Array(buffer);
  elements.forEach((e, i) => bytes.set(e, i * type.size));
  const data = new kTypedArrays[jsType](buffer);
  return new ort.Tensor(jsType, data, [elements.length]);
}

// The output elements' bytes, one Uint8Array per element.
function elementsOf(tensor, size) {
  const d = tensor.data;
  const bytes = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

async function main() {
  const options = {
    graphOptimizationLevel: 'disabled',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  const lines = [`# onnxruntime-node ${ort.env.versions.node} opset ${kOpset} ir ${kIrVersion}`];
  for (const from of TYPES) {
    const inputs = distinct(inputsFor(from));
    for (const to of TYPES) {
      const session = await ort.InferenceSession.create(castModel(from, to), options);
      const run = async (elements) =>
        elementsOf((await session.run({x: tensorOf(from, elements)})).y, to.size);
      const together = await run(inputs);
      const repeated = await run(inputs.flatMap((e) => Array(kRepeat).fill(e)));
      for (let i = 0; i < inputs.length; ++i) {
        const seen = new Set([hex(together[i])]);
        for (let k = 0; k < kRepeat; ++k) seen.add(hex(repeated[i * kRepeat + k]));
        seen.add(hex((await run([inputs[i]]))[0]));
        lines.push(`${from.name} ${to.name} ${hex(inputs[i])} ${[...seen].sort().join(',')}`);
      }
      await session.release();
    }
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`run_ort_cast: ${e.stack ?? e}\n`);
  process.exit(1);
});
