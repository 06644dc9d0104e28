// Single-node ONNX models as ModelProto bytes, for bench/compare/ort_runner.mjs (no onnx
// package needed): one node, float inputs and outputs of fixed shapes, INT and INTS attributes,
// and inputs that are constant weights (initializers, which ONNX Runtime may pre-pack).
//
//   const bytes = singleNodeModel('MaxPool', [[8, 64, 112, 112]], [8, 64, 56, 56],
//                                 {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]});

import {bytesField, intField, stringField} from '../../tests/common/protobuf_wire.mjs';

const kOpset = 17;
const kIrVersion = 8;
const kFloat = 1;  // TensorProto.DataType FLOAT

// ValueInfoProto of a FLOAT tensor named `name` with fixed dimensions `dims`.
function valueInfo(name, dims) {
  const shape = dims.flatMap((d) => bytesField(1, intField(1, d)));  // Dimension {dim_value = 1}
  const tensor = [...intField(1, kFloat), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensor))];
}

// AttributeProto: an INT (type 2, field i = 3) or INTS (type 7, field ints = 8).
function attribute(name, value) {
  if (Array.isArray(value)) {
    return [...stringField(1, name), ...value.flatMap((v) => intField(8, v)), ...intField(20, 7)];
  }
  return [...stringField(1, name), ...intField(3, value), ...intField(20, 2)];
}

// TensorProto {dims = 1, data_type = 2, name = 8, raw_data = 9} of FLOAT `data` (little-endian).
function initializer(name, dims, data) {
  return [...dims.flatMap((d) => intField(1, d)), ...intField(2, kFloat), ...stringField(8, name),
    ...bytesField(9, [...new Uint8Array(data.buffer, data.byteOffset, data.byteLength)])];
}

// A model of one `opType` node (named opType) with inputs x0, x1, ... of `inputDims` and output y of
// `outputDims`; `attributes` maps names to integers or integer lists; `constants` maps input
// names to Float32Arrays: those inputs are initializers, not graph inputs.
export function singleNodeModel(opType, inputDims, outputDims, attributes = {}, constants = {}) {
  const inputs = inputDims.map((_, i) => `x${i}`);
  // NodeProto {input = 1, output = 2, name = 3, op_type = 4, attribute = 5}; named after its op.
  const node = [...inputs.flatMap((n) => stringField(1, n)), ...stringField(2, 'y'),
    ...stringField(3, opType), ...stringField(4, opType),
    ...Object.entries(attributes).flatMap(([k, v]) => bytesField(5, attribute(k, v)))];
  const graph = [...bytesField(1, node), ...stringField(2, opType),
    ...inputs.flatMap((n, i) => (n in constants ? bytesField(5,
        initializer(n, inputDims[i], constants[n])) : [])),
    ...inputs.flatMap((n, i) => (n in constants ? [] : bytesField(11, valueInfo(n, inputDims[i])))),
    ...bytesField(12, valueInfo('y', outputDims))];
  return Uint8Array.from([...intField(1, kIrVersion), ...stringField(2, 'onemodel-bench'),
    ...bytesField(7, graph), ...bytesField(8, [...stringField(1, ''), ...intField(2, kOpset)])]);
}
