// Runs a batch of one-node ONNX models in ONNX Runtime (npm onnxruntime-node, installed in
// ../cast/node_modules by scripts/install-npm-deps) for test_ort_ops.py, in one process:
//
//   node run_ort_ops.mjs DIR
//
// DIR/cases.json lists the cases: {name, model, inputs: [{name, type, dims, file}], output}.
// `model` is a ModelProto file, each input's `file` its raw little-endian bytes ('bool' is one
// byte per element). For each case the output is written as raw bytes to DIR/<name>.out and
// DIR/results.json gets {name: {type, dims, file}} or {name: {error}} when ONNX Runtime refused
// the model (the test reports it; the other cases still run).
//
// Deterministic: graph optimizations off (the node runs as written), one intra-op thread.
// Exit code 2, naming scripts/install-deps, when onnxruntime-node cannot be loaded.

import {readFileSync, writeFileSync} from 'node:fs';
import {createRequire} from 'node:module';
import {join} from 'node:path';

// The install of ../cast (its package.json pins the version); there is no second node_modules.
const require = createRequire(new URL('../cast/package.json', import.meta.url));
let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  process.stderr.write(
      'run_ort_ops: cannot load onnxruntime-node from tests/conformance/cast/node_modules (' +
      e.message.split('\n')[0] +
      '); run scripts/install-deps (it calls scripts/install-npm-deps)\n');
  process.exit(2);
}

const kTypedArrays = {float32: Float32Array, bool: Uint8Array, int64: BigInt64Array,
  int32: Int32Array};

function typedArray(type, bytes) {
  const T = kTypedArrays[type];
  if (!T) throw new Error('run_ort_ops has no input type ' + type + '; add it to kTypedArrays');
  const copy = Uint8Array.from(bytes);  // aligned for T
  return new T(copy.buffer, 0, copy.byteLength / T.BYTES_PER_ELEMENT);
}

const dir = process.argv[2];
const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8'));
const options = {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1};
const results = {};
for (const c of cases) {
  try {
    const session = await ort.InferenceSession.create(readFileSync(join(dir, c.model)), options);
    const feeds = {};
    for (const i of c.inputs) {
      feeds[i.name] = new ort.Tensor(i.type, typedArray(i.type, readFileSync(join(dir, i.file))),
                                     i.dims);
    }
    const y = (await session.run(feeds))[c.output];
    const file = c.name + '.out';
    const bytes = Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength);
    writeFileSync(join(dir, file), bytes);
    results[c.name] = {type: y.type, dims: y.dims.map(Number), file};
    await session.release();
  } catch (e) {
    results[c.name] = {error: String(e.message || e).split('\n')[0]};
  }
}
writeFileSync(join(dir, 'results.json'), JSON.stringify(results));
