#include "core/ops/conv.h"

#include <array>
#include <string>

#include "core/autograd/backward_record.h"
#include "core/common/exceptions.h"
#include "core/ops/internal/op_utils.h"
#include "core/ops/reduce.h"

namespace onemodel::ops {
namespace {

// Conv2d's checks (transposed: ConvTranspose2d's, whose weights are (C, K / groups, KH, KW)).
void CheckShapes(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
                 bool transposed = false) {
  const char* op = transposed ? "ConvTranspose2d: " : "Conv2d: ";  // no allocation unless thrown
  auto fail = [&](const std::string& what) { throw TensorShapeException(op + what); };
  const char* w_form = transposed ? "(C, K / groups, KH, KW)" : "(K, C / groups, KH, KW)";
  if (x.rank() != 4) fail("input x must be (N, C, H, W), got " + x.Describe());
  if (w.rank() != 4) fail(std::string("weights w must be ") + w_form + ", got " + w.Describe());
  if (p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 || p.dilation_w < 1) {
    fail("strides and dilations must be >= 1, got strides " + std::to_string(p.stride_h) + ", " +
         std::to_string(p.stride_w) + " and dilations " + std::to_string(p.dilation_h) + ", " +
         std::to_string(p.dilation_w));
  }
  if (p.pad_top < 0 || p.pad_left < 0 || p.pad_bottom < 0 || p.pad_right < 0) {
    fail("pads (top, left, bottom, right) must be >= 0");
  }
  if (p.keep_layout != 0 && p.keep_layout != 1) {
    fail("keep_layout must be 0 (NCHW output) or 1 (an NHWC input's layout), got " +
         std::to_string(p.keep_layout));
  }
  const int64_t c = x.shape()[1];
  const int64_t k = transposed ? w.shape()[1] * p.groups : w.shape()[0];
  if (c == 0) {
    fail("input x " + x.shape().ToString() +
         " has 0 channels (C = 0), so there is nothing to convolve; give it at least one "
         "channel (shape (N, C >= 1, H, W))");
  }
  if (p.groups < 1 || c % p.groups != 0 || k % p.groups != 0) {
    fail("groups " + std::to_string(p.groups) + " must be >= 1 and divide the " +
         std::to_string(c) + " input channels and the " + std::to_string(k) + " output channels");
  }
  if (transposed && (w.shape()[0] != c || w.shape()[2] < 1 || w.shape()[3] < 1)) {
    fail("weights " + w.shape().ToString() + " must be (C = " + std::to_string(c) +
         ", K / groups, KH >= 1, KW >= 1) for input " + x.shape().ToString());
  }
  if (!transposed && (w.shape()[1] != c / p.groups || w.shape()[2] < 1 || w.shape()[3] < 1)) {
    fail("weights " + w.shape().ToString() + " must be (K, C / groups = " +
         std::to_string(c / p.groups) + ", KH >= 1, KW >= 1) for input " + x.shape().ToString());
  }
  if (bias && (bias->rank() != 1 || bias->shape()[0] != k)) {
    fail("bias must be (K) = (" + std::to_string(k) + "), got " + bias->Describe());
  }
}

Conv2dParams ParamsOf(const BackwardRecord& r) {
  const std::vector<int64_t>& v = r.ints();  // kh, kw, then the params in declaration order
  auto at = [&](size_t i) { return static_cast<int32_t>(v[i]); };
  return {at(2), at(3), at(4), at(5), at(6), at(7), at(8), at(9), at(10)};
}

// The record's Ints as Conv2d and ConvTranspose2d keep them (the latter appends its output
// paddings): KH, KW, then the params in declaration order.
std::vector<int64_t> IntsOf(int32_t kh, int32_t kw, const Conv2dParams& p) {
  return {kh,           kw,          p.stride_h,   p.stride_w,   p.pad_top, p.pad_left,
          p.pad_bottom, p.pad_right, p.dilation_h, p.dilation_w, p.groups};
}

// Whether an output follows x's layout: keep_layout asks for it and x is NHWC.
bool KeepsNhwc(const Tensor& x, const Conv2dParams& p) {
  return p.keep_layout != 0 && x.layout() == Layout::kNhwc;
}

// A new FLOAT (N, C, H, W) tensor from the context: dense NHWC when `nhwc`, else contiguous.
Tensor NewImage(const Shape& nchw, bool nhwc, const OpContext& ctx) {
  if (!nhwc) return internal::NewFloat(nchw, ctx);
  return internal::NewFloat(Shape{nchw[0], nchw[2], nchw[3], nchw[1]}, ctx).Permute({0, 3, 1, 2});
}

// The params of a backward pass: the record's, with keep_layout set when both the output
// gradient and the saved input are NHWC (the input gradient is then NHWC too).
Conv2dParams BackwardParams(const BackwardRecord& r, const Tensor& g) {
  Conv2dParams p = ParamsOf(r);
  p.keep_layout = r.Saved(0).layout() == Layout::kNhwc && g.layout() == Layout::kNhwc;
  return p;
}

// d/dbias of an (N, K, OH, OW) output: the sum of g over N, OH and OW.
Tensor BiasGradient(const Tensor& g, const OpContext& ctx) {
  const std::array<int, 3> axes{0, 2, 3};
  return Sum(g, axes, false, ctx);
}

// Scratch for the context's kernels from the run's allocator (a session's arena), rented only
// when the kernels need any, and returned when it goes out of scope.
class Scratch {
 public:
  Scratch(const Shape& x, const Shape& w, const Conv2dParams& p, const OpContext& ctx) {
    const int64_t floats = ctx.kernels.Conv2dScratchFloats(x, w, p);
    if (floats > 0) t_ = Tensor::Empty(Shape{floats}, DType::kFloat, ctx.allocator);
  }
  ~Scratch() {
    if (!t_.is_null()) t_.Dispose();
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::span<float> floats() { return t_.is_null() ? std::span<float>() : t_.MutableData<float>(); }

 private:
  Tensor t_;
};

// The weights as the kernels read them: w itself when plain; weights in the BlockedWeights
// family unblocked into a contiguous tensor from the run's allocator (a session's arena),
// returned when the Temporary goes out of scope. The kernels see the same values either way,
// so pre-blocked weights give bit-identical results.
internal::Temporary KernelWeights(const Tensor& w, const OpContext& ctx) {
  return internal::Temporary(w.block_size() ? w.ToLayout(Layout::kNchw, ctx.allocator) : w, w);
}

// With an output gradient of no elements (N = 0 or K = 0), the gradients without the kernels
// (oneDNN refuses empty shapes): zeros of the input's and the weights' shapes, and the bias's
// sum over nothing. Returns false when g has elements.
bool EmptyGradient(const BackwardRecord& r, const Tensor& g, const Shape& ws, const Conv2dParams& p,
                   const OpContext& ctx, std::span<Tensor> grads) {
  if (g.shape().ElementCount() > 0) return false;
  if (r.inputs()[0].node) {
    grads[0] = NewImage(r.InputShape(0), p.keep_layout != 0, ctx);
    grads[0].Fill(0.0f);
  }
  if (r.inputs()[1].node) {
    grads[1] = internal::NewFloat(ws, ctx);
    grads[1].Fill(0.0f);
  }
  if (r.inputs().size() > 2 && r.inputs()[2].node) grads[2] = BiasGradient(g, ctx);
  return true;
}

// d/dx and d/dw by the kernels, d/dbias = the sum of g over N, OH and OW.
void Conv2dBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                    std::span<Tensor> grads) {
  const Conv2dParams p = BackwardParams(r, g);
  const Shape& xs = r.InputShape(0);
  const Shape& ws = r.InputShape(1);
  if (EmptyGradient(r, g, ws, p, ctx, grads)) return;
  if (r.inputs()[0].node || r.inputs()[1].node) {
    Scratch scratch(xs, ws, p, ctx);
    if (r.inputs()[0].node) {
      grads[0] = NewImage(xs, p.keep_layout != 0, ctx);
      ctx.kernels.Conv2dBackwardInput(g, *KernelWeights(r.Saved(1), ctx), p, grads[0],
                                      scratch.floats());
    }
    if (r.inputs()[1].node) {
      grads[1] = internal::NewFloat(ws, ctx);
      ctx.kernels.Conv2dBackwardWeight(g, r.Saved(0), p, grads[1], scratch.floats());
    }
  }
  if (r.inputs().size() > 2 && r.inputs()[2].node) grads[2] = BiasGradient(g, ctx);
}

// ConvTranspose2d's backward by Conv2d's kernels with the roles turned: y = the input
// gradient of a convolution of y's shape, so dx = that convolution of g, and dw = its weight
// gradient with x as the output gradient and g as the input.
void ConvTranspose2dBackward(const BackwardRecord& r, const Tensor& g, const OpContext& ctx,
                             std::span<Tensor> grads) {
  const Conv2dParams p = BackwardParams(r, g);
  const Shape& xs = r.InputShape(0);
  const Shape& ws = r.InputShape(1);
  if (EmptyGradient(r, g, ws, p, ctx, grads)) return;
  if (r.inputs()[0].node || r.inputs()[1].node) {
    Scratch scratch(g.shape(), ws, p, ctx);
    if (r.inputs()[0].node) {
      grads[0] = NewImage(xs, p.keep_layout != 0, ctx);
      ctx.kernels.Conv2d(g, *KernelWeights(r.Saved(1), ctx), nullptr, p, grads[0],
                         scratch.floats());
    }
    if (r.inputs()[1].node) {
      grads[1] = internal::NewFloat(ws, ctx);
      ctx.kernels.Conv2dBackwardWeight(r.Saved(0), g, p, grads[1], scratch.floats());
    }
  }
  if (r.inputs().size() > 2 && r.inputs()[2].node) grads[2] = BiasGradient(g, ctx);
}

// (H - 1) * stride - pads + dilation * (kernel - 1) + output_padding + 1.
int64_t TransposedExtent(int64_t size, int64_t kernel, int32_t stride, int32_t pad_begin,
                         int32_t pad_end, int32_t dilation, int32_t output_padding) {
  return (size - 1) * stride - pad_begin - pad_end + int64_t{dilation} * (kernel - 1) +
         output_padding + 1;
}

}  // namespace

Tensor Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dParams& p,
              const OpContext& ctx) {
  internal::CheckFloat("Conv2d", "x", x);
  internal::CheckFloat("Conv2d", "w", w, /*blocked_weights=*/true);
  if (bias) internal::CheckFloat("Conv2d", "bias", *bias);
  CheckShapes(x, w, bias, p);
  const int32_t kh = w.shape()[2], kw = w.shape()[3];
  const int64_t oh =
      ConvOutputExtent(x.shape()[2], kh, p.stride_h, p.pad_top, p.pad_bottom, p.dilation_h);
  const int64_t ow =
      ConvOutputExtent(x.shape()[3], kw, p.stride_w, p.pad_left, p.pad_right, p.dilation_w);
  if (oh < 1 || ow < 1) {
    throw TensorShapeException("Conv2d: input " + x.shape().ToString() +
                               " with its pads is too small for the dilated kernel (output " +
                               "would be " + std::to_string(oh) + " x " + std::to_string(ow) + ")");
  }
  Tensor out = NewImage(Shape{x.shape()[0], w.shape()[0], oh, ow}, KeepsNhwc(x, p), ctx);
  if (out.shape().ElementCount() > 0) {  // N = 0 or K = 0: nothing to compute (oneDNN refuses)
    Scratch scratch(x.shape(), w.shape(), p, ctx);
    ctx.kernels.Conv2d(x, *KernelWeights(w, ctx), bias, p, out, scratch.floats());
  }
  const bool record = bias ? ShouldRecord({&x, &w, bias}) : ShouldRecord({&x, &w});
  if (!record) return out;
  auto r = bias ? internal::NewRecord(OpKind::kConv2d, &Conv2dBackward, {&x, &w, bias})
                : internal::NewRecord(OpKind::kConv2d, &Conv2dBackward, {&x, &w});
  r->Save(0, x);
  r->Save(1, w);
  r->SetInts(IntsOf(kh, kw, p));
  return out.WithAutogradNode(std::move(r));
}

Tensor ConvTranspose2d(const Tensor& x, const Tensor& w, const Tensor* bias,
                       const ConvTranspose2dParams& tp, const OpContext& ctx) {
  internal::CheckFloat("ConvTranspose2d", "x", x);
  internal::CheckFloat("ConvTranspose2d", "w", w, /*blocked_weights=*/true);
  if (bias) internal::CheckFloat("ConvTranspose2d", "bias", *bias);
  const Conv2dParams& p = tp.conv;
  CheckShapes(x, w, bias, p, /*transposed=*/true);
  auto bad_padding = [](int32_t op, int32_t stride, int32_t dilation) {
    return op < 0 || (op >= stride && op >= dilation);
  };
  if (bad_padding(tp.output_padding_h, p.stride_h, p.dilation_h) ||
      bad_padding(tp.output_padding_w, p.stride_w, p.dilation_w)) {
    throw TensorShapeException(
        "ConvTranspose2d: output_padding (" + std::to_string(tp.output_padding_h) + ", " +
        std::to_string(tp.output_padding_w) +
        ") must be >= 0 and smaller than the stride or the dilation of its dimension; use pads "
        "or a larger stride to shape the output");
  }
  const int32_t kh = w.shape()[2], kw = w.shape()[3];
  const int64_t oh = TransposedExtent(x.shape()[2], kh, p.stride_h, p.pad_top, p.pad_bottom,
                                      p.dilation_h, tp.output_padding_h);
  const int64_t ow = TransposedExtent(x.shape()[3], kw, p.stride_w, p.pad_left, p.pad_right,
                                      p.dilation_w, tp.output_padding_w);
  if (oh < 1 || ow < 1) {
    throw TensorShapeException("ConvTranspose2d: pads remove the whole output of input " +
                               x.shape().ToString() + " (it would be " + std::to_string(oh) +
                               " x " + std::to_string(ow) + "); use smaller pads");
  }
  const int64_t k = w.shape()[1] * p.groups;
  Tensor out = NewImage(Shape{x.shape()[0], k, oh, ow}, KeepsNhwc(x, tp.conv), ctx);
  if (out.shape().ElementCount() > 0) {  // N = 0 or K = 0: nothing to compute (oneDNN refuses)
    Scratch scratch(out.shape(), w.shape(), p, ctx);
    ctx.kernels.Conv2dBackwardInput(x, *KernelWeights(w, ctx), p, out, scratch.floats());
  }
  if (bias) {
    const Tensor b = bias->Unsqueeze(1).Unsqueeze(2).Expand(out.shape());
    ctx.kernels.Binary(BinaryOp::kAdd, out, b, out);
  }
  const bool record = bias ? ShouldRecord({&x, &w, bias}) : ShouldRecord({&x, &w});
  if (!record) return out;
  auto r =
      bias ? internal::NewRecord(OpKind::kConvTranspose2d, &ConvTranspose2dBackward, {&x, &w, bias})
           : internal::NewRecord(OpKind::kConvTranspose2d, &ConvTranspose2dBackward, {&x, &w});
  r->Save(0, x);
  r->Save(1, w);
  std::vector<int64_t> ints = IntsOf(kh, kw, p);
  ints.push_back(tp.output_padding_h);
  ints.push_back(tp.output_padding_w);
  r->SetInts(std::move(ints));
  return out.WithAutogradNode(std::move(r));
}

}  // namespace onemodel::ops
