// Protobuf wire-format encoders for the few field kinds our hand-built ONNX models use, so the
// Node.js scripts that feed ONNX Runtime need no protobuf package. Each returns a byte array.
//
//   import {intField, stringField, bytesField} from '../../common/protobuf_wire.mjs';
//   const opset = [...stringField(1, ''), ...intField(2, 17)];   // OperatorSetIdProto
//   const model = Uint8Array.from([...intField(1, 8), ...bytesField(8, opset)]);

// The varint encoding of an integer (negative ones as their 64-bit two's complement).
export function varint(n) {
  let x = BigInt.asUintN(64, BigInt(n));
  const out = [];
  do {
    let byte = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) byte |= 0x80;
    out.push(byte);
  } while (x !== 0n);
  return out;
}

// Field `field` holding the varint `v` (int32, int64, enum).
export const intField = (field, v) => [...varint(field << 3), ...varint(v)];
// Field `field` holding the length-delimited `bytes` (bytes, a sub-message, a packed list).
export const bytesField = (field, bytes) =>
  [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
// Field `field` holding the string `s` as UTF-8.
export const stringField = (field, s) => bytesField(field, [...Buffer.from(s, 'utf8')]);
