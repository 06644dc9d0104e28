// The fast kernels against this machine's own limits, in one run (DESIGN.md section 8).
//
// Every figure is a ratio measured in this process: a kernel's rate over a baseline's rate
// (STREAM-like bandwidth, the FP32 FMA peak, cblas_sgemm called directly, the reference
// kernel). They are sampled in turn, one sample each per repetition, the order rotating and
// reversing every repetition; the ratio printed is the median of the per-repetition ratios, so
// drift and other load on the machine cancel as far as they can. Rates beside it are medians.
// A short call is repeated to fill a sample of about 20 ms.
//
//   build/release/bench/kernels_bench [--reps=N] [--json=FILE] [--unpinned-blas]
//       [--sections=bandwidth,elementwise,matmul,maxpool,convert]
//
// Conventions:
//   GB/s    bytes read + bytes written, each once (STREAM's convention: write-allocate reads
//           are not counted, for the kernels and the baselines alike); 1 GB = 1e9 bytes.
//           Copy of 16M floats: 2 x 64 MiB per pass; triad a = b + s*c: 3 x 64 MiB.
//   GFLOPS  2*M*N*K per MatMul; peak = FMA loop on every core (machine_peaks.h).
// Elementwise kernels are divided by the STREAM loop with the same traffic pattern: Add by
// triad (two streams in, one out), Relu and the row-broadcast Add by copy (one in, one out).
//
// OpenBLAS reads OPENBLAS_CORETYPE when it loads; this environment pins it (Haswell: AVX2
// kernels) because older OpenBLAS may compute wrong results with its own choice on this CPU,
// and tests and CI keep that pin. --unpinned-blas reruns only the MatMul section in a child
// process with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed, to show what the pin costs;
// by hand: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE kernels_bench --sections=matmul
#include <cblas.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/machine_peaks.h"
#include "bench/report.h"
#include "core/convert/half.h"
#include "core/kernels/blas.h"
#include "core/kernels/fast_kernels.h"
#include "core/kernels/internal/simd_tables.h"
#include "core/kernels/reference_kernels.h"
#include "core/kernels/simd_targets.h"
#include "core/kernels/thread_pool.h"
#include "core/memory/buffer_pool.h"
#include "core/tensor/tensor.h"

extern char** environ;

namespace onemodel::bench {
namespace {

constexpr int64_t kStreamFloats = int64_t{16} << 20;  // 64 MiB per float array
constexpr double kGb = 1e9;
constexpr double kMinSampleSeconds = 0.02;  // short calls are repeated up to this

struct Options {
  int reps = 15;  // samples of each fast measurement; reference kernels get a third (>= 3)
  std::string sections = "bandwidth,elementwise,matmul,maxpool,convert";
  std::string json;
  bool unpinned_blas = false;
};

bool Wants(const Options& options, std::string_view section) {
  std::string_view list = options.sections;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == section) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// One line of the table.
struct Row {
  std::string section;
  std::string name;           // what was measured
  std::string variant;        // "fast-avx3", "reference", "cblas_sgemm", ...
  double value = 0;           // its rate (median)
  std::string unit;           // "GB/s", "GFLOPS"
  std::string baseline;       // what the rate is divided by
  double baseline_value = 0;  // its rate (median), same unit
  double ratio = 0;           // median of the per-repetition ratios (0: none)
  double goal = 0;            // the ratio wanted (0: none)
};

// samples[f][r]: the rate fns[f]() returned in repetition r. Every repetition runs each
// function once; the starting point rotates and the direction flips every repetition, so each
// function follows each of the others (or a pause) about equally often.
using Samples = std::vector<std::vector<double>>;
Samples RunInTurn(int reps, const std::vector<std::function<double()>>& fns) {
  const size_t n = fns.size();
  Samples samples(n, std::vector<double>(static_cast<size_t>(reps)));
  for (int r = 0; r < reps; ++r) {
    const size_t round = static_cast<size_t>(r);
    for (size_t k = 0; k < n; ++k) {
      const size_t position = (round / 2 + k) % n;
      const size_t f = round % 2 == 0 ? position : n - 1 - position;
      samples[f][round] = fns[f]();
    }
  }
  return samples;
}

// Calls of fn() that take about kMinSampleSeconds (at least one); fn() runs once as warm-up.
template <typename Fn>
int CallsPerSample(const Fn& fn) {
  fn();
  const double s = SecondsOf(fn);
  return std::max(1, static_cast<int>(std::ceil(kMinSampleSeconds / std::max(s, 1e-9))));
}

// `work` (bytes or flops) per call x calls / seconds.
template <typename Fn>
double Rate(double work, int calls, const Fn& fn) {
  const double s = SecondsOf([&] {
    for (int i = 0; i < calls; ++i) fn();
  });
  return work * calls / s;
}

// Deterministic uniform values in [lo, hi).
void FillUniform(std::span<float> v, float lo, float hi, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& f : v) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const float u = static_cast<float>((x * 0x2545F4914F6CDD1Dull) >> 40) * 0x1p-24f;
    f = lo + (hi - lo) * u;
  }
}

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// State shared by the sections.
struct Bench {
  Options options;
  ThreadPool& threads = ThreadPool::Shared();
  ThreadPool one_thread{1};
  BufferPool pool;
  FastKernels fast{BestTarget(), ThreadPool::Shared()};
  ReferenceKernels reference;
  // Three 16M-float arrays: STREAM operands, elementwise inputs and output.
  Tensor a, b, c;
  std::vector<Row> rows;
  std::vector<std::string> notes;  // printed after the table

  int FastReps() const { return options.reps; }
  int SlowReps() const { return std::max(3, options.reps / 3); }

  // Passes of the STREAM loops per sample (about kMinSampleSeconds), set once at start.
  int stream_passes = 1;

  double CopyRate(ThreadPool& on) {
    const float* src = a.Data<float>().data();
    float* dst = c.MutableData<float>().data();
    return Rate(8.0 * kStreamFloats, stream_passes,
                [&] { StreamCopy(on, dst, src, kStreamFloats); }) /
           kGb;
  }
  double TriadRate() {
    const float* pb = a.Data<float>().data();
    const float* pc = b.Data<float>().data();
    float* pa = c.MutableData<float>().data();
    return Rate(12.0 * kStreamFloats, stream_passes,
                [&] { StreamTriad(threads, pa, pb, pc, 3.0f, kStreamFloats); }) /
           kGb;
  }
  std::string CopyName() const { return "copy, " + std::to_string(threads.threads()) + " thr"; }
  std::string TriadName() const { return "triad, " + std::to_string(threads.threads()) + " thr"; }
};

// ---- 1. Bandwidth -----------------------------------------------------------------------

void MeasureBandwidth(Bench& bench) {
  const Samples s =
      RunInTurn(bench.FastReps(), {
                                      [&] { return bench.CopyRate(bench.threads); },
                                      [&] { return bench.TriadRate(); },
                                      [&] { return bench.CopyRate(bench.one_thread); },
                                  });
  const std::string all = std::to_string(bench.threads.threads()) + " thr";
  bench.rows.push_back(
      {"bandwidth", "copy 16M floats (2 x 64 MiB/pass)", all, Median(s[0]), "GB/s", "", 0, 0, 0});
  bench.rows.push_back({"bandwidth", "triad 16M floats (3 x 64 MiB/pass)", all, Median(s[1]),
                        "GB/s", bench.CopyName(), Median(s[0]), MedianRatio(s[1], s[0]), 0});
  bench.rows.push_back({"bandwidth", "copy 16M floats (2 x 64 MiB/pass)", "1 thr", Median(s[2]),
                        "GB/s", bench.CopyName(), Median(s[0]), MedianRatio(s[2], s[0]), 0});
}

// ---- 2. Elementwise ---------------------------------------------------------------------

void MeasureElementwise(Bench& bench) {
  constexpr int64_t kSide = 4096;
  Tensor a2 = *bench.a.TryReshape({kSide, kSide});
  Tensor c2 = *bench.c.TryReshape({kSide, kSide});
  Tensor row = Tensor::Empty(Shape{kSide}, DType::kFloat, bench.pool);
  FillUniform(row.MutableData<float>(), -1.0f, 1.0f, 7);
  const Tensor row_expanded = row.Expand(Shape{kSide, kSide});

  struct Case {
    std::string name;
    double bytes;
    bool triad;  // baseline: triad (else copy)
    std::function<void(const TensorKernels&)> run;
  };
  const double n = static_cast<double>(kStreamFloats);
  const std::vector<Case> cases = {
      {"Add 16M contiguous", 12.0 * n, true,
       [&](const TensorKernels& k) { k.Binary(BinaryOp::kAdd, bench.a, bench.b, bench.c); }},
      {"Relu 16M contiguous", 8.0 * n, false,
       [&](const TensorKernels& k) { k.Unary(UnaryOp::kRelu, bench.a, bench.c); }},
      {"Add [4096,4096] + [4096] row-bcast", 8.0 * n + 4.0 * kSide, false,
       [&](const TensorKernels& k) { k.Binary(BinaryOp::kAdd, a2, row_expanded, c2); }},
  };
  for (const Case& cs : cases) {
    const auto baseline = [&] {
      return cs.triad ? bench.TriadRate() : bench.CopyRate(bench.threads);
    };
    const std::string baseline_name = cs.triad ? bench.TriadName() : bench.CopyName();
    for (const TensorKernels* k : {static_cast<const TensorKernels*>(&bench.fast),
                                   static_cast<const TensorKernels*>(&bench.reference)}) {
      const bool is_fast = k == &bench.fast;
      const int calls = CallsPerSample([&] { cs.run(*k); });
      const Samples s =
          RunInTurn(is_fast ? bench.FastReps() : bench.SlowReps(),
                    {[&] { return Rate(cs.bytes, calls, [&] { cs.run(*k); }) / kGb; }, baseline});
      bench.rows.push_back({"elementwise", cs.name, std::string(k->name()), Median(s[0]), "GB/s",
                            baseline_name, Median(s[1]), MedianRatio(s[0], s[1]),
                            is_fast ? 0.85 : 0.0});
    }
  }
}

// ---- 3. MatMul --------------------------------------------------------------------------

void MeasureMatMul(Bench& bench) {
  const int all = bench.threads.threads();
  const std::string all_name = std::to_string(all) + " thr";
  std::vector<FmaIsa> isas;
  for (FmaIsa isa : {FmaIsa::kAvx512, FmaIsa::kAvx2}) {
    if (FmaIsaSupported(isa)) isas.push_back(isa);
  }
  if (isas.empty()) {
    std::printf("matmul: this CPU has neither AVX-512 nor AVX2+FMA; no peak to compare with\n");
    return;
  }
  std::vector<int64_t> iterations;
  for (FmaIsa isa : isas) iterations.push_back(CalibrateFmaLoop(isa, kMinSampleSeconds));
  // The peak of isas[i] on `threads` threads, GFLOPS of wall time; *busy (if given) gets the
  // GFLOPS per CPU-second of the threads, the rate while they actually ran.
  const auto peak = [&](size_t i, int threads, std::vector<double>* busy = nullptr) {
    const double flops =
        FmaFlopsPerIteration(isas[i]) * static_cast<double>(iterations[i]) * threads;
    WaitUntilProcessIdle();  // OpenBLAS's workers spin after each sgemm (machine_peaks.h)
    const FmaTiming timing = TimeFmaLoop(isas[i], threads, iterations[i]);
    if (busy) busy->push_back(flops / timing.cpu_seconds / kGb);
    return flops / timing.wall_seconds / kGb;
  };

  // The peak itself, per ISA: does a second thread add FMA throughput? Per CPU-second, a
  // thread's rate halves when two threads share one core's FMA units.
  {
    std::vector<std::function<double()>> fns;
    std::vector<std::vector<double>> busy(2 * isas.size());
    for (size_t i = 0; i < isas.size(); ++i) {
      fns.push_back([&, i] { return peak(i, 1, &busy[2 * i]); });
      fns.push_back([&, i] { return peak(i, all, &busy[2 * i + 1]); });
    }
    const Samples s = RunInTurn(bench.FastReps(), fns);
    for (size_t i = 0; i < isas.size(); ++i) {
      const std::string name = "FMA peak " + std::string(FmaIsaName(isas[i]));
      const std::string per_cpu = "FMA " + std::string(FmaIsaName(isas[i])) + " per CPU-second";
      const std::vector<double>&one = s[2 * i], &many = s[2 * i + 1];
      const std::vector<double>&busy_one = busy[2 * i], &busy_many = busy[2 * i + 1];
      bench.rows.push_back({"peak", name, "1 thr", Median(one), "GFLOPS", "", 0, 0, 0});
      bench.rows.push_back({"peak", name, all_name, Median(many), "GFLOPS", name + ", 1 thr",
                            Median(one), MedianRatio(many, one), 0});
      bench.rows.push_back({"peak", per_cpu, "1 thr", Median(busy_one), "GFLOPS", "", 0, 0, 0});
      bench.rows.push_back({"peak", per_cpu, all_name + " (each)", Median(busy_many), "GFLOPS",
                            per_cpu + ", 1 thr", Median(busy_one), MedianRatio(busy_many, busy_one),
                            0});
      // CPU-seconds / wall-seconds: near `all` when the threads really ran side by side, so
      // the per-CPU-second ratio above says whether they share FMA units.
      bench.rows.push_back({"peak",
                            "FMA " + std::string(FmaIsaName(isas[i])) + " threads on CPU at once",
                            all_name, MedianRatio(many, busy_many), "thr", "", 0, 0, 0});
      const double at_once = MedianRatio(many, busy_many);
      if (at_once < 0.9 * all) {
        char note[200];
        std::snprintf(note, sizeof note,
                      "%s peak: on average only %.2f of its %d threads were running: other "
                      "load shares the cores, so rates are low and ratios noisy",
                      std::string(FmaIsaName(isas[i])).c_str(), at_once, all);
        bench.notes.push_back(note);
      }
    }
    if (isas.size() == 2) {
      bench.rows.push_back({"peak", "FMA peak avx2", all_name, Median(s[3]), "GFLOPS",
                            "FMA peak avx512, " + all_name, Median(s[1]), MedianRatio(s[3], s[1]),
                            0});
    }
  }

  const std::string peak_name = "FMA peak " + std::string(FmaIsaName(isas[0])) + ", " + all_name;
  for (int64_t n : {256, 512, 1024}) {
    Tensor ma = Tensor::Empty(Shape{n, n}, DType::kFloat, bench.pool);
    Tensor mb = Tensor::Empty(Shape{n, n}, DType::kFloat, bench.pool);
    Tensor mo = Tensor::Empty(Shape{n, n}, DType::kFloat, bench.pool);
    FillUniform(ma.MutableData<float>(), -1.0f, 1.0f, 11);
    FillUniform(mb.MutableData<float>(), -1.0f, 1.0f, 12);
    const float* pa = ma.Data<float>().data();
    const float* pb = mb.Data<float>().data();
    float* po = mo.MutableData<float>().data();
    const int dim = static_cast<int>(n);
    const double flops =
        2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const auto seam = [&] { bench.fast.MatMul(ma, mb, mo); };
    const auto direct = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, dim, dim, dim, 1.0f, pa, dim, pb, dim,
                  0.0f, po, dim);
    };
    const int calls = CallsPerSample(seam);
    CallsPerSample(direct);  // warm-up
    // busy[r] x all: the peak had every thread had a core to itself in repetition r.
    std::vector<double> busy;
    std::vector<std::function<double()>> fns = {
        [&] { return Rate(flops, calls, seam) / kGb; },
        [&] { return Rate(flops, calls, direct) / kGb; },
        [&] { return peak(0, all, &busy); },
    };
    if (isas.size() == 2) fns.push_back([&] { return peak(1, all); });
    const Samples s = RunInTurn(bench.FastReps(), fns);
    const std::string name = "MatMul " + std::to_string(n) + "^3";
    const std::string fast_name(bench.fast.name());
    bench.rows.push_back({"matmul", name, fast_name, Median(s[0]), "GFLOPS", peak_name,
                          Median(s[2]), MedianRatio(s[0], s[2]), n == 1024 ? 0.80 : 0.0});
    // Under other load the wall-clock peak drops with the MatMul and flatters the ratio above;
    // this one divides by the per-CPU-second peak x threads, which load does not lower.
    for (double& b : busy) b *= all;
    bench.rows.push_back({"matmul", name, fast_name, Median(s[0]), "GFLOPS",
                          peak_name + " unloaded", Median(busy), MedianRatio(s[0], busy),
                          n == 1024 ? 0.80 : 0.0});
    if (isas.size() == 2) {
      bench.rows.push_back({"matmul", name, fast_name, Median(s[0]), "GFLOPS",
                            "FMA peak avx2, " + all_name, Median(s[3]), MedianRatio(s[0], s[3]),
                            0});
    }
    bench.rows.push_back({"matmul", name, fast_name, Median(s[0]), "GFLOPS", "cblas_sgemm direct",
                          Median(s[1]), MedianRatio(s[0], s[1]), 0});
    bench.rows.push_back({"matmul", name, "cblas_sgemm", Median(s[1]), "GFLOPS", peak_name,
                          Median(s[2]), MedianRatio(s[1], s[2]), 0});
  }
  WaitUntilProcessIdle();
}

// ---- 4. MaxPool2d -----------------------------------------------------------------------

// True when the two tensors' buffers hold the same bytes.
bool SameBits(const Tensor& x, const Tensor& y) {
  const auto bx = x.Storage<float>(), by = y.Storage<float>();
  return bx.size() == by.size() && std::memcmp(bx.data(), by.data(), bx.size_bytes()) == 0;
}
bool SameIndexBits(const Tensor& x, const Tensor& y) {
  const auto bx = x.Storage<int32_t>(), by = y.Storage<int32_t>();
  return bx.size() == by.size() && std::memcmp(bx.data(), by.data(), bx.size_bytes()) == 0;
}

void MeasureMaxPool(Bench& bench) {
  constexpr int64_t kN = 8, kC = 64, kH = 112, kW = 112, kOh = 56, kOw = 56;
  const MaxPool2dParams params{3, 3, 2, 2, 1, 1};
  Tensor x = Tensor::Empty(Shape{kN, kC, kH, kW}, DType::kFloat, bench.pool);
  FillUniform(x.MutableData<float>(), -1.0f, 1.0f, 21);
  const Tensor x_nhwc = x.ToLayout(Layout::kNhwc, bench.pool);
  // An output of logical shape (N, C, OH, OW) in `layout`.
  const auto output = [&](Layout layout, DType dtype) {
    if (layout == Layout::kNchw) return Tensor::Empty(Shape{kN, kC, kOh, kOw}, dtype, bench.pool);
    return Tensor::Empty(Shape{kN, kOh, kOw, kC}, dtype, bench.pool).Permute({0, 3, 1, 2});
  };
  const double in_bytes = 4.0 * kN * kC * kH * kW, out_bytes = 4.0 * kN * kC * kOh * kOw;

  for (Layout layout : {Layout::kNchw, Layout::kNhwc}) {
    const Tensor& in = layout == Layout::kNchw ? x : x_nhwc;
    for (bool with_indices : {false, true}) {
      Tensor out_fast = output(layout, DType::kFloat), out_ref = output(layout, DType::kFloat);
      Tensor idx_fast = output(layout, DType::kInt32), idx_ref = output(layout, DType::kInt32);
      const auto fast = [&] {
        bench.fast.MaxPool2d(in, params, out_fast, with_indices ? &idx_fast : nullptr);
      };
      const auto ref = [&] {
        bench.reference.MaxPool2d(in, params, out_ref, with_indices ? &idx_ref : nullptr);
      };
      const int fast_calls = CallsPerSample(fast);
      const int ref_calls = CallsPerSample(ref);
      const bool same =
          SameBits(out_fast, out_ref) && (!with_indices || SameIndexBits(idx_fast, idx_ref));
      const double bytes = in_bytes + out_bytes * (with_indices ? 2 : 1);
      const Samples s =
          RunInTurn(bench.SlowReps(), {[&] { return Rate(bytes, fast_calls, fast) / kGb; },
                                       [&] { return Rate(bytes, ref_calls, ref) / kGb; },
                                       [&] { return bench.CopyRate(bench.threads); }});
      const std::string name = std::string("MaxPool 3x3/2 ") + std::string(LayoutName(layout)) +
                               (with_indices ? " +indices" : "") +
                               (same ? "" : " [MISMATCH vs reference]");
      const std::string fast_name(bench.fast.name());
      bench.rows.push_back({"maxpool", name, fast_name, Median(s[0]), "GB/s", "reference",
                            Median(s[1]), MedianRatio(s[0], s[1]), 0});
      bench.rows.push_back({"maxpool", name, fast_name, Median(s[0]), "GB/s", bench.CopyName(),
                            Median(s[2]), MedianRatio(s[0], s[2]), 0});
      bench.rows.push_back({"maxpool", name, "reference", Median(s[1]), "GB/s", bench.CopyName(),
                            Median(s[2]), MedianRatio(s[1], s[2]), 0});
    }
  }
}

// ---- 5. Conversions ---------------------------------------------------------------------
//
// The fast conversion rows of the best SIMD target (core/kernels/simd_convert.cc), and for
// context the scalar bit code of core/convert/half.h. Each case converts values [begin, end);
// it is split over the shared pool like the elementwise kernels and divided by copy
// bandwidth, sampled in turn.

struct ConvertCase {
  std::string name;        // "float->half"
  std::string variant;     // "scalar convert (half.h)"
  double bytes_per_value;  // read + written: 6 for 16-bit <-> float
  std::function<void(int64_t begin, int64_t end)> run;
};

std::vector<ConvertCase> ConversionCases(const float* floats, uint16_t* halves, uint16_t* bf16s,
                                         float* floats_out) {
  const std::string scalar = "scalar convert (half.h)";
  const std::string fast = "fast-" + std::string(SimdTargetName(BestTarget()));
  const internal::ConvertSimd& simd = internal::ConvertSimdFor(BestTarget());
  return {
      {"float->half 16M", fast, 6.0,
       [=, &simd](int64_t b, int64_t e) { simd.float_to_half(e - b, floats + b, halves + b); }},
      {"half->float 16M", fast, 6.0,
       [=, &simd](int64_t b, int64_t e) { simd.half_to_float(e - b, halves + b, floats_out + b); }},
      {"float->bf16 16M", fast, 6.0,
       [=, &simd](int64_t b, int64_t e) { simd.float_to_bfloat16(e - b, floats + b, bf16s + b); }},
      {"bf16->float 16M", fast, 6.0,
       [=, &simd](int64_t b, int64_t e) {
         simd.bfloat16_to_float(e - b, bf16s + b, floats_out + b);
       }},
      {"float->half 16M", scalar, 6.0,
       [=](int64_t begin, int64_t end) {
         for (int64_t i = begin; i < end; ++i) halves[i] = FloatToHalfBits(floats[i]);
       }},
      {"half->float 16M", scalar, 6.0,
       [=](int64_t begin, int64_t end) {
         for (int64_t i = begin; i < end; ++i) floats_out[i] = HalfBitsToFloat(halves[i]);
       }},
  };
}

void MeasureConversions(Bench& bench) {
  // Inputs in [-4, 4): normal halves almost everywhere (the subnormal branch is rare).
  FillUniform(bench.a.MutableData<float>(), -4.0f, 4.0f, 31);
  std::vector<uint16_t> halves(static_cast<size_t>(kStreamFloats));
  std::vector<uint16_t> bf16s(static_cast<size_t>(kStreamFloats));
  // Cases run in order, so each 16-bit -> float case reads what the case before wrote.
  for (const ConvertCase& cs : ConversionCases(bench.a.Data<float>().data(), halves.data(),
                                               bf16s.data(), bench.b.MutableData<float>().data())) {
    const auto run = [&] { ParallelSplit(bench.threads, kStreamFloats, cs.run); };
    const int calls = CallsPerSample(run);
    const double bytes = cs.bytes_per_value * static_cast<double>(kStreamFloats);
    const Samples s = RunInTurn(bench.FastReps(), {[&] { return Rate(bytes, calls, run) / kGb; },
                                                   [&] { return bench.CopyRate(bench.threads); }});
    bench.rows.push_back({"convert", cs.name, cs.variant, Median(s[0]), "GB/s", bench.CopyName(),
                          Median(s[1]), MedianRatio(s[0], s[1]), 0});
  }
  FillUniform(bench.a.MutableData<float>(), -1.0f, 1.0f, 1);
}

// ---- Output -----------------------------------------------------------------------------

void PrintRows(const std::vector<Row>& rows) {
  std::string section;
  for (const Row& r : rows) {
    if (r.section != section) {
      section = r.section;
      std::printf("\n[%s]\n%-36s %-24s %10s %-6s  %-33s %10s  %7s  %s\n", section.c_str(),
                  "measurement", "variant", "rate", "unit", "baseline", "base rate", "ratio",
                  "goal");
    }
    std::printf("%-36s %-24s %10.2f %-6s  %-33s ", r.name.c_str(), r.variant.c_str(), r.value,
                r.unit.c_str(), r.baseline.c_str());
    if (r.baseline.empty()) {
      std::printf("%10s  %7s\n", "", "");
      continue;
    }
    std::printf("%10.2f  %7.3f", r.baseline_value, r.ratio);
    if (r.goal > 0) {
      std::printf("  >= %.2f %s", r.goal, r.ratio >= r.goal ? "ok" : "MISS");
    }
    std::printf("\n");
  }
}

bool WriteJson(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& info,
               const std::vector<Row>& rows) {
  Json report = {{"machine", Object(info)}, {"rows", Json::array()}};
  for (const Row& r : rows) {
    report["rows"].push_back({{"section", r.section},
                              {"name", r.name},
                              {"variant", r.variant},
                              {"value", r.value},
                              {"unit", r.unit},
                              {"baseline", r.baseline},
                              {"baseline_value", r.baseline_value},
                              {"ratio", r.ratio},
                              {"goal", r.goal}});
  }
  return WriteJsonFile(path, report);
}

// Reruns this program's MatMul section with OpenBLAS's core type and L2 size unpinned.
int RunUnpinnedChild(const Options& options) {
  std::vector<std::string> args = {"kernels_bench", "--sections=matmul",
                                   "--reps=" + std::to_string(options.reps)};
  if (!options.json.empty()) {
    std::string path = options.json;
    const size_t dot = path.rfind(".json");
    path.insert(dot == std::string::npos ? path.size() : dot, "-unpinned");
    args.push_back("--json=" + path);
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("OPENBLAS_CORETYPE=") || v.starts_with("OPENBLAS_L2_SIZE=")) continue;
    envp.push_back(*e);
  }
  envp.push_back(nullptr);
  std::printf(
      "\n==== rerun: MatMul with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (child process; "
      "tests and CI keep the pin) ====\n");
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int Main(int argc, char** argv) {
  Bench bench;
  Options& options = bench.options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--reps=")) {
      options.reps = std::max(1, std::atoi(argv[i] + 7));
    } else if (arg.starts_with("--sections=")) {
      options.sections = std::string(arg.substr(11));
    } else if (arg.starts_with("--json=")) {
      options.json = std::string(arg.substr(7));
    } else if (arg == "--unpinned-blas") {
      options.unpinned_blas = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--reps=N] [--json=FILE] [--unpinned-blas] "
                   "[--sections=bandwidth,elementwise,matmul,maxpool,convert]\n",
                   argv[0]);
      return 2;
    }
  }

  const std::string load_before = ReadLine("/proc/loadavg", "");
  const std::vector<std::pair<std::string, std::string>> info = {
      {"cpu", ReadLine("/proc/cpuinfo", "model name")},
      {"threads", std::to_string(bench.threads.threads())},
      {"fast_kernels", std::string(bench.fast.name())},
      {"blas", BlasDescription()},
      {"blas_threads", std::to_string(openblas_get_num_threads())},
      {"OPENBLAS_CORETYPE", EnvOr("OPENBLAS_CORETYPE", "(unset)")},
      {"OPENBLAS_L2_SIZE", EnvOr("OPENBLAS_L2_SIZE", "(unset)")},
      {"loadavg_at_start", load_before},
      {"reps", std::to_string(options.reps)},
  };
  for (const auto& [key, value] : info) std::printf("%-18s %s\n", key.c_str(), value.c_str());
  std::printf(
      "Rates are medians; ratio = median over repetitions of (rate / baseline rate sampled in "
      "turn).\nGB/s = (bytes read + bytes written) / s, 1e9 bytes; GFLOPS = 2*N^3 / s.\n");
  std::fflush(stdout);

  const auto started = std::chrono::steady_clock::now();
  bench.a = Tensor::Empty(Shape{kStreamFloats}, DType::kFloat, bench.pool);
  bench.b = Tensor::Empty(Shape{kStreamFloats}, DType::kFloat, bench.pool);
  bench.c = Tensor::Empty(Shape{kStreamFloats}, DType::kFloat, bench.pool, /*zero=*/true);
  FillUniform(bench.a.MutableData<float>(), -1.0f, 1.0f, 1);
  FillUniform(bench.b.MutableData<float>(), -1.0f, 1.0f, 2);
  // Warm-up (every page touched), then the passes per bandwidth sample.
  bench.stream_passes = CallsPerSample([&] { bench.CopyRate(bench.threads); });

  if (Wants(options, "bandwidth")) MeasureBandwidth(bench);
  if (Wants(options, "elementwise")) MeasureElementwise(bench);
  if (Wants(options, "matmul")) MeasureMatMul(bench);
  if (Wants(options, "maxpool")) MeasureMaxPool(bench);
  if (Wants(options, "convert")) MeasureConversions(bench);

  PrintRows(bench.rows);
  for (const std::string& note : bench.notes) std::printf("NOTE %s\n", note.c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("\n%.1f s; loadavg at start: %s; at end: %s\n", seconds, load_before.c_str(),
              ReadLine("/proc/loadavg", "").c_str());
  if (!options.json.empty()) {
    if (!WriteJson(options.json, info, bench.rows)) {
      std::fprintf(stderr, "cannot write %s\n", options.json.c_str());
      return 1;
    }
    std::printf("wrote %s\n", options.json.c_str());
  }
  std::fflush(stdout);
  if (options.unpinned_blas) return RunUnpinnedChild(options);
  return 0;
}

}  // namespace
}  // namespace onemodel::bench

int main(int argc, char** argv) { return onemodel::bench::Main(argc, argv); }
