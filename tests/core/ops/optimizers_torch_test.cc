// SgdStep and AdamWStep against torch.optim.SGD / AdamW for 100 steps of random gradients on
// random parameters, and ClipGradNorm against torch.nn.utils.clip_grad_norm_ (Debian's
// python3-torch through /usr/bin/python3 and tests/core/ops/optim_reference.py): every
// parameter after every step within 1e-5 relative.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "core/kernels/kernel_set.h"
#include "core/memory/buffer_pool.h"
#include "core/ops/optimizers.h"
#include "tests/core/ops/grad_check.h"

namespace onemodel {
namespace {

constexpr int kSteps = 100;

std::string Hex(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  return buf;
}

std::string Hexes(const Tensor& t) {
  std::string s;
  for (const float v : t.Data<float>()) s += " " + Hex(v);
  return s;
}

struct Case {
  std::string name, kind, attrs;
  // One update of params by grads (states live in the closure); clip returns the total norm.
  std::function<float(std::vector<Tensor>&, const std::vector<Tensor>&)> step;
  int steps = kSteps;
};

class OptimizersTorchTest : public ::testing::Test {
 protected:
  BufferPool pool_;
  OpContext ctx_{pool_, KernelSet::Default()};
  std::mt19937 rng_{41};
  const std::vector<Shape> shapes_{Shape{4, 5}, Shape{7}, Shape{3, 2, 2}, Shape{1}};

  std::vector<Tensor> RandomSet(float lo, float hi) {
    std::vector<Tensor> ts;
    for (const Shape& s : shapes_) ts.push_back(ops_test::Random(s, rng_, pool_, lo, hi));
    return ts;
  }
  Tensor Zeros(const Shape& s) { return Tensor::Empty(s, DType::kFloat, pool_, true); }
  std::vector<Tensor> ZerosLike() {
    std::vector<Tensor> ts;
    for (const Shape& s : shapes_) ts.push_back(Zeros(s));
    return ts;
  }

  // Runs every case here and in torch; compares every written line.
  void RunAndCompare(std::vector<Case>& cases) {
    std::ostringstream in;
    std::vector<std::string> ours;
    for (Case& c : cases) {
      std::vector<Tensor> params = RandomSet(-1, 1);
      std::vector<std::vector<Tensor>> grads;
      for (int s = 0; s < c.steps; ++s) grads.push_back(RandomSet(-2, 2));
      in << "case " << c.name << " " << c.kind << " " << c.attrs << "\n"
         << "steps " << c.steps << " params " << params.size() << "\n";
      for (const Tensor& p : params) {
        in << "shape " << p.rank();
        for (int32_t e : p.shape().extents()) in << " " << e;
        in << "\n";
      }
      for (const Tensor& p : params) in << "param" << Hexes(p) << "\n";
      for (const auto& gs : grads)
        for (const Tensor& g : gs) in << "grad" << Hexes(g) << "\n";
      ours.push_back("case " + c.name);
      float norm = 0;
      for (int s = 0; s < c.steps; ++s) {
        norm = c.step(params, grads[static_cast<size_t>(s)]);
        const std::vector<Tensor>& written = c.kind == "clip" ? grads[0] : params;
        for (const Tensor& p : written) ours.push_back("param" + Hexes(p));
      }
      if (c.kind == "clip") ours.push_back("norm " + Hex(norm));
    }
    const std::vector<std::string> theirs = RunTorch(in.str());
    ASSERT_EQ(ours.size(), theirs.size());
    for (size_t i = 0; i < ours.size(); ++i) ExpectCloseLine(ours[i], theirs[i]);
  }

  static std::vector<std::string> RunTorch(const std::string& input) {
    const std::string stem = ::testing::TempDir() + "/optim_" + std::to_string(::getpid());
    const std::string in_path = stem + "_cases.txt", out_path = stem + "_results.txt";
    std::ofstream(in_path) << input;
    const std::string cmd =
        "/usr/bin/python3 " ONEMODEL_OPTIM_SCRIPT " " + in_path + " " + out_path;
    const int rc = std::system(cmd.c_str());
    if (rc != 0) {
      ADD_FAILURE() << "`" << cmd << "` failed (exit " << rc
                    << "); PyTorch comes from Debian's python3-torch: run scripts/install-deps";
      return {};
    }
    std::vector<std::string> lines;
    std::ifstream results(out_path);
    for (std::string line; std::getline(results, line);) lines.push_back(line);
    return lines;
  }

  static void ExpectCloseLine(const std::string& ours, const std::string& theirs) {
    std::istringstream a(ours), b(theirs);
    std::string ta, tb;
    a >> ta;
    b >> tb;
    ASSERT_EQ(ta, tb) << ours << "\n" << theirs;
    if (ta == "case") {
      a >> ta;
      b >> tb;
      ASSERT_EQ(ta, tb);
      return;
    }
    int n = 0;
    while (a >> ta && b >> tb) {
      const double x = std::strtod(ta.c_str(), nullptr), y = std::strtod(tb.c_str(), nullptr);
      EXPECT_NEAR(x, y, 1e-5 * std::fmax(1.0, std::fabs(y))) << "element " << n << " of\n"
                                                             << ours << "\n"
                                                             << theirs;
      ++n;
    }
  }

  Case Sgd(std::string name, ops::SgdOptions o) {
    auto buffers = std::make_shared<std::vector<Tensor>>(o.momentum != 0 ? ZerosLike()
                                                                         : std::vector<Tensor>{});
    auto step = std::make_shared<Tensor>(Tensor::Empty(Shape{}, DType::kInt64, pool_, true));
    std::ostringstream attrs;
    attrs << "lr=" << Hex(o.lr) << " momentum=" << Hex(o.momentum)
          << " dampening=" << Hex(o.dampening) << " nesterov=" << o.nesterov
          << " weight_decay=" << Hex(o.weight_decay);
    return {std::move(name), "sgd", attrs.str(),
            [=, this](std::vector<Tensor>& p, const std::vector<Tensor>& g) {
              ops::SgdStep(p, g, *buffers, *step, o, ctx_).Dispose();
              return 0.0f;
            }};
  }
  Case AdamW(std::string name, ops::AdamWOptions o) {
    auto m = std::make_shared<std::vector<Tensor>>(ZerosLike());
    auto v = std::make_shared<std::vector<Tensor>>(ZerosLike());
    auto vmax =
        std::make_shared<std::vector<Tensor>>(o.amsgrad ? ZerosLike() : std::vector<Tensor>{});
    auto step = std::make_shared<Tensor>(Tensor::Empty(Shape{}, DType::kInt64, pool_, true));
    std::ostringstream attrs;
    attrs << "lr=" << Hex(o.lr) << " beta1=" << Hex(o.beta1) << " beta2=" << Hex(o.beta2)
          << " eps=" << Hex(o.eps) << " weight_decay=" << Hex(o.weight_decay)
          << " amsgrad=" << o.amsgrad;
    return {std::move(name), "adamw", attrs.str(),
            [=, this](std::vector<Tensor>& p, const std::vector<Tensor>& g) {
              ops::AdamWStep(p, g, *m, *v, *vmax, *step, o, ctx_).Dispose();
              return 0.0f;
            }};
  }
};

TEST_F(OptimizersTorchTest, HundredStepsMatchTorchOptim) {
  std::vector<Case> cases;
  cases.push_back(Sgd("sgd_plain", {.lr = 0.1f}));
  cases.push_back(Sgd("sgd_momentum", {.lr = 0.05f, .momentum = 0.9f}));
  cases.push_back(Sgd("sgd_dampening_decay",
                      {.lr = 0.05f, .momentum = 0.8f, .dampening = 0.3f, .weight_decay = 0.01f}));
  cases.push_back(
      Sgd("sgd_nesterov", {.lr = 0.02f, .momentum = 0.9f, .nesterov = true, .weight_decay = 0.1f}));
  cases.push_back(AdamW("adamw_default", {}));
  cases.push_back(
      AdamW("adamw_betas_decay",
            {.lr = 0.01f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-6f, .weight_decay = 0.1f}));
  cases.push_back(AdamW("adamw_amsgrad", {.lr = 0.01f, .amsgrad = true}));
  for (const float norm_type : {2.0f, 1.5f, std::numeric_limits<float>::infinity()}) {
    cases.push_back({"clip_" + Hex(norm_type), "clip",
                     "max_norm=" + Hex(1.5f) + " norm_type=" + Hex(norm_type),
                     [norm_type, this](std::vector<Tensor>&, const std::vector<Tensor>& g) {
                       return ops::ClipGradNorm(g, 1.5f, norm_type, false, ctx_).Data<float>()[0];
                     },
                     1});
  }
  RunAndCompare(cases);
}

}  // namespace
}  // namespace onemodel
