// The ONNX Runtime side of bench/compare: single-node models (Add, MatMul, MaxPool, Conv) in npm
// onnxruntime-node, on as many intra-op threads as the machine has (one inter-op thread,
// sequential execution, all graph optimizations). Speaks runner_protocol.py's protocol on
// stdin/stdout: "info", or "CASE MIN_SECONDS" -> {"case", "seconds", "calls", "run_seconds"}.
//
// The JavaScript binding copies every input and output between JavaScript and ONNX Runtime,
// and on this VM each copy into fresh memory also page-faults: a 16M-float Identity model
// takes about 20x the Add kernel. Preallocated outputs (run(feeds, {y})) do not avoid the
// copies (perf: memmove and page faults either way). So "seconds" is the time of the graph's
// nodes from ONNX Runtime's own profiler (the "*_kernel_time" events the executor records
// around each kernel's Compute; for MaxPool the optimizer's NCHWc reorders and pooling, all
// counted), one fresh profiled session per sample; "run_seconds" is the wall time of
// session.run, binding copies included, reported beside it.
//
//   node bench/compare/ort_runner.mjs   # onnxruntime-node from tests/conformance/cast
import {createRequire} from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import {fileURLToPath} from 'node:url';

import {singleNodeModel} from './onnx_model.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// One npm install for the repository: scripts/install-npm-deps installs it there.
const require = createRequire(path.join(here, '../../tests/conformance/cast/package.json'));
const ort = require('onnxruntime-node');

const N = 16 << 20;
const CASES = {
  add_16m: () => model('Add', [[N], [N]], [N]),
  matmul_1024: () => model('MatMul', [[1024, 1024], [1024, 1024]], [1024, 1024]),
  maxpool_nchw: () => model('MaxPool', [[8, 64, 112, 112]], [8, 64, 56, 56],
      {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}),
  // conv_cases.cc's ResNet 3x3 layer; the weight an initializer, as in an exported model.
  conv_resnet_3x3: () => model('Conv', [[8, 64, 56, 56], [64, 64, 3, 3]], [8, 64, 56, 56],
      {kernel_shape: [3, 3], pads: [1, 1, 1, 1]}, ['x1']),
};

// A case: the model's bytes, its feeds (deterministic values in [-1, 1)) and its node's name;
// the inputs named in `constants` are initializers with such values instead of feeds.
function model(opType, inputDims, outputDims, attributes, constants = []) {
  let state = 1;
  const feeds = {};
  const initializers = {};
  inputDims.forEach((dims, i) => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let k = 0; k < data.length; ++k) {
      state = (state * 1664525 + 1013904223) >>> 0;
      data[k] = (state >>> 8) * 2 ** -23 - 1;
    }
    if (constants.includes(`x${i}`)) {
      initializers[`x${i}`] = data;
    } else {
      feeds[`x${i}`] = new ort.Tensor('float32', data, dims);
    }
  });
  return {bytes: singleNodeModel(opType, inputDims, outputDims, attributes, initializers), feeds,
    node: opType};
}

const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-bench-'));

// Runs the case `calls` times after one warm-up run in a new profiled session; returns the
// mean node time and the mean session.run wall time, in seconds.
async function sample(c, calls) {
  const session = await ort.InferenceSession.create(c.bytes, {
    intraOpNumThreads: os.cpus().length, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', enableProfiling: true,
    profileFilePrefix: path.join(profileDir, 'p'),
  });
  await session.run(c.feeds);
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; ++i) await session.run(c.feeds);
  const runSeconds = Number(process.hrtime.bigint() - start) / 1e9 / calls;
  session.endProfiling();  // writes p_<timestamp>.json into profileDir (returns nothing)
  await session.release();
  const [file] = fs.readdirSync(profileDir).map((f) => path.join(profileDir, f));
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.unlinkSync(file);
  // Every node's time in the measured runs (those after the warm-up run's model_run event).
  const runs = events.filter((e) => e.name === 'model_run').map((e) => e.ts).sort((a, b) => a - b);
  const nodes = events.filter((e) => e.cat === 'Node' && e.ts >= runs[1]);
  if (runs.length !== calls + 1 || nodes.length === 0) {
    throw new Error(`profile of ${c.node}: ${runs.length} runs, ${nodes.length} node events`);
  }
  const kernelSeconds = nodes.reduce((s, e) => s + e.dur, 0) / 1e6 / calls;
  return {kernelSeconds, runSeconds};
}

async function main() {
  const ready = {};
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines) {
    const [name, minText] = line.trim().split(/\s+/);
    let reply;
    if (!name) continue;
    if (name === 'info') {
      reply = {info: {onnxruntime_node: ort.env.versions.node, threads: os.cpus().length,
        timing: 'sum of node *_kernel_time events from ONNX Runtime profiling'}};
    } else if (!(name in CASES)) {
      reply = {error: `unknown case ${name}`};
    } else {
      if (!(name in ready)) {
        const c = CASES[name]();
        const once = await sample(c, 1);
        const calls = Math.max(1, Math.ceil(Number(minText ?? 0.05) / once.kernelSeconds));
        ready[name] = {c, calls};
      }
      const {c, calls} = ready[name];
      const s = await sample(c, calls);
      reply = {case: name, seconds: s.kernelSeconds, calls, run_seconds: s.runSeconds};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
  fs.rmSync(profileDir, {recursive: true, force: true});
}

main().catch((e) => {
  process.stderr.write(`ort_runner: ${e.stack ?? e}\n`);
  process.exit(1);
});
