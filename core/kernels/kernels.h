// TensorKernels: the one place eager operations call kernels (spec 9).
//
// Inputs are float32 tensors with arbitrary strides (negative and zero included). The caller
// validates everything first, expands broadcasts to stride 0 (so all operands of Binary have
// one shape, and batched MatMul operands have equal batch dimensions), and allocates the
// outputs. Kernels never throw and never allocate when the output is given. Outputs are
// written through MutableStorage, so each call bumps the output's version once. Long kernels
// stop between blocks, leaving the output incomplete, once the thread's CancelToken
// (core/common/cancellation.h) is cancelled; the caller discards such results.
//
//   TensorKernels& k = KernelSet::Default();
//   k.Binary(BinaryOp::kAdd, a, b.Expand(a.shape()), out);
//   k.MaxPool2d(x, {.kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2,
//                   .pad_h = 1, .pad_w = 1}, y, &indices);
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/tensor/tensor.h"

namespace onemodel {

// The elementwise ops, one row each: X(Name) gives BinaryOp::kName / UnaryOp::kName, its
// name "Name" (BinaryOpName), its place in kAllBinaryOps and, wherever a table is indexed by
// the op (the SIMD rows, the ops' record kinds), its row there, all derived from this list. A
// new row fails the build until every switch over the op handles it (-Werror=switch) and
// core/autograd has an OpKind of the same name (docs/development.md, "Adding an operation").
#define ONEMODEL_FOR_EACH_BINARY_OP(X) X(Add) X(Sub) X(Mul) X(Div) X(Max) X(Min) X(Pow)
#define ONEMODEL_FOR_EACH_UNARY_OP(X) \
  X(Neg) X(Abs) X(Exp) X(Log) X(Sqrt) X(Relu) X(Sigmoid) X(Tanh) X(Gelu) X(Erf)

#define ONEMODEL_OP_ENUMERATOR(Name) k##Name,
enum class BinaryOp { ONEMODEL_FOR_EACH_BINARY_OP(ONEMODEL_OP_ENUMERATOR) };
enum class UnaryOp { ONEMODEL_FOR_EACH_UNARY_OP(ONEMODEL_OP_ENUMERATOR) };
#undef ONEMODEL_OP_ENUMERATOR

#define ONEMODEL_BINARY_OP_VALUE(Name) BinaryOp::k##Name,
#define ONEMODEL_UNARY_OP_VALUE(Name) UnaryOp::k##Name,
// Every op, in enum order (kAllBinaryOps[i] is BinaryOp(i)).
inline constexpr BinaryOp kAllBinaryOps[] = {ONEMODEL_FOR_EACH_BINARY_OP(ONEMODEL_BINARY_OP_VALUE)};
inline constexpr UnaryOp kAllUnaryOps[] = {ONEMODEL_FOR_EACH_UNARY_OP(ONEMODEL_UNARY_OP_VALUE)};
#undef ONEMODEL_BINARY_OP_VALUE
#undef ONEMODEL_UNARY_OP_VALUE

// "Add", "Sigmoid", ...: the op's row name, as Run requests and error messages spell it.
std::string_view BinaryOpName(BinaryOp op);
std::string_view UnaryOpName(UnaryOp op);

// 2-D max pooling over the last two dimensions of a logical (N, C, H, W) tensor. Window
// (oy, ox) covers rows oy*stride_h - pad_h + ky*dilation_h for ky in [0, kernel_h) (columns
// likewise); only in-bounds positions count.
struct MaxPool2dParams {
  int32_t kernel_h = 1;
  int32_t kernel_w = 1;
  int32_t stride_h = 1;
  int32_t stride_w = 1;
  int32_t pad_h = 0;  // 0 <= pad < kernel
  int32_t pad_w = 0;
  int32_t dilation_h = 1;  // >= 1
  int32_t dilation_w = 1;
  bool ceil_mode = false;  // output extent rounded up (PoolOutputExtent)
  // ReluMaxPool2d: max(0, window maximum); the index is -1 where no element is positive (the
  // scan starts from a +0 at index -1 that wins ties). NaN still wins and is indexed.
  bool relu = false;
};

// 2-D average pooling (ONNX AveragePool without dilations): the window sum, accumulated in
// float from +0 in row-major window order, divided by the divisor (count_include_pad: the
// window clipped to the padded input, ONNX and PyTorch; otherwise the in-bounds positions).
struct AvgPool2dParams {
  int32_t kernel_h = 1;
  int32_t kernel_w = 1;
  int32_t stride_h = 1;
  int32_t stride_w = 1;
  int32_t pad_h = 0;  // 0 <= pad < kernel
  int32_t pad_w = 0;
  bool ceil_mode = false;
  bool count_include_pad = false;
};

// Spec 9: floor((size + 2*pad - extent) / stride) + 1 with extent = dilation*(kernel-1) + 1,
// 0 when the window does not fit. ceil_mode rounds the division up (so a window longer than
// the padded input by less than a stride still gives one output, as ONNX's ceil((span) /
// stride + 1) and PyTorch do), then drops a last window that would start in the right padding
// (ONNX and PyTorch). Callers check it is positive.
constexpr int64_t PoolOutputExtent(int64_t size, int32_t kernel, int32_t stride, int32_t pad,
                                   int32_t dilation = 1, bool ceil_mode = false) {
  const int64_t span = size + 2 * int64_t{pad} - (int64_t{dilation} * (kernel - 1) + 1);
  if (span < (ceil_mode ? 1 - int64_t{stride} : 0)) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) --out;
  return out;
}

// 2-D convolution of a logical (N, C, H, W) input with weights (K, C / groups, KH, KW).
struct Conv2dParams {
  int32_t stride_h = 1;
  int32_t stride_w = 1;
  int32_t pad_top = 0;  // pads >= 0, asymmetric allowed (as ONNX)
  int32_t pad_left = 0;
  int32_t pad_bottom = 0;
  int32_t pad_right = 0;
  int32_t dilation_h = 1;
  int32_t dilation_w = 1;
  int32_t groups = 1;  // C and K are multiples of groups
  // 1: the output takes an NHWC input's layout (dense NHWC) instead of contiguous NCHW; the
  // kernels size their scratch for the NHWC path too. 0 or 1.
  int32_t keep_layout = 0;
};

// floor((size + pads - dilation * (kernel - 1) - 1) / stride) + 1, or 0 when the dilated
// kernel does not fit the padded input.
constexpr int64_t ConvOutputExtent(int64_t size, int32_t kernel, int32_t stride, int32_t pad_begin,
                                   int32_t pad_end, int32_t dilation) {
  const int64_t span = size + pad_begin + pad_end - int64_t{dilation} * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// The statistic groups of a normalization over contiguous FLOAT buffers: group k's elements
// sit at k * group_stride + b * block_stride + i for blocks b < blocks and i < block.
// LayerNorm and RMSNorm: one group per row (blocks = 1, block = the row's length);
// BatchNorm2d: one group per channel (blocks = N, block = H * W, block_stride = C * H * W).
struct NormGroups {
  int64_t groups = 0, blocks = 1, block = 0, group_stride = 0, block_stride = 0;
  bool affine_per_group = false;  // scale and bias: one per group, else one per i in a block
};

// One normalization forward: per group, xhat = (x - mean) * rstd with rstd = 1 / sqrt(var +
// eps) (or, without `center`, xhat = x * rstd with rstd = 1 / sqrt(mean(x^2) + eps)), and
// y = xhat * scale + bias. The statistics are the group's own (biased variance) unless `mean`
// and `var` are given (one per group). Optional outputs (null: not written): xhat (x's
// layout), rstd, and running statistics updated as torch's batch norm does: running =
// (1 - momentum) * running + momentum * batch, with the unbiased variance.
struct NormForwardArgs {
  NormGroups layout;
  bool center = true;
  float eps = 1e-5f;
  const float* x = nullptr;
  const float* scale = nullptr;  // null: 1
  const float* bias = nullptr;   // null: 0
  const float* mean = nullptr;   // given statistics (with var), else computed
  const float* var = nullptr;
  float* y = nullptr;
  float* xhat = nullptr;
  float* rstd = nullptr;
  float* running_mean = nullptr;  // both or neither
  float* running_var = nullptr;
  float momentum = 0;
};

// Its backward: with gh = g * scale, dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)) per
// group; without `center` the mean(gh) term is dropped, and with `fixed_stats` (statistics
// that were given, not computed) dx = rstd * gh.
struct NormBackwardArgs {
  NormGroups layout;
  bool center = true;
  bool fixed_stats = false;
  const float* xhat = nullptr;
  const float* rstd = nullptr;
  const float* scale = nullptr;  // null: 1
  const float* g = nullptr;
  float* dx = nullptr;
};

class TensorKernels {
 public:
  virtual ~TensorKernels() = default;

  // The variant's name, e.g. "reference", "fast-avx3", "fast-avx2", "fast-scalar".
  virtual std::string_view name() const = 0;

  // out = op(a, b) elementwise; a, b and out have one shape.
  virtual void Binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) const = 0;
  // out = op(x) elementwise; x and out have one shape.
  virtual void Unary(UnaryOp op, const Tensor& x, Tensor& out) const = 0;
  // out[..., M, N] = a[..., M, K] x b[..., K, N]; rank >= 2, batch dimensions equal.
  virtual void MatMul(const Tensor& a, const Tensor& b, Tensor& out) const = 0;
  // out (N, C, OH, OW) = window maxima of x (N, C, H, W), either layout physically. When
  // `indices` is given (int32, same shape as out) it receives each maximum's position
  // y * W + x within its input plane; otherwise no index is computed.
  virtual void MaxPool2d(const Tensor& x, const MaxPool2dParams& params, Tensor& out,
                         Tensor* indices) const = 0;
  // MaxPool2d's backward: grad_x (N, C, H, W, contiguous) = zeros, then each element of
  // grad_out (N, C, OH, OW, any strides) added at its plane position from `indices` (int32,
  // grad_out's shape, as MaxPool2d writes them; negative: skipped), output positions row by
  // row, so overlapping windows sum in one fixed order (where two NaN gradients meet, which
  // payload survives is the compiler's operand order, as in C++). Every element of grad_x
  // is written, so it need not be zeroed first.
  virtual void MaxPool2dBackward(const Tensor& grad_out, const Tensor& indices,
                                 Tensor& grad_x) const = 0;

  // Conv2d's kernels take x (N, C, H, W) and grad_out (N, K, OH, OW) with any strides, w
  // (K, C / groups, KH, KW) with any strides, and write an output whose every element they
  // set: Conv2d's out and grad_x contiguous NCHW or dense NHWC, grad_w contiguous. `scratch` holds
  // at least Conv2dScratchFloats(...) floats (the caller takes it from the run's allocator, so a
  // session's arena serves it). OH and OW are the output's (grad_out's) extents, which may be fewer
  // than ConvOutputExtent gives (ConvTranspose2d's output_padding at or above the stride); the
  // scratch size stays a bound.
  virtual int64_t Conv2dScratchFloats(const Shape& x, const Shape& w,
                                      const Conv2dParams& params) const = 0;
  // out (N, K, OH, OW) = the convolution of x with w, plus bias (K) when given.
  virtual void Conv2d(const Tensor& x, const Tensor& w, const Tensor* bias,
                      const Conv2dParams& params, Tensor& out, std::span<float> scratch) const = 0;
  // grad_x (N, C, H, W) = d(sum(grad_out * Conv2d(x, w))) / dx.
  virtual void Conv2dBackwardInput(const Tensor& grad_out, const Tensor& w,
                                   const Conv2dParams& params, Tensor& grad_x,
                                   std::span<float> scratch) const = 0;
  // grad_w (K, C / groups, KH, KW) = d(sum(grad_out * Conv2d(x, w))) / dw.
  virtual void Conv2dBackwardWeight(const Tensor& grad_out, const Tensor& x,
                                    const Conv2dParams& params, Tensor& grad_w,
                                    std::span<float> scratch) const = 0;
  // out (N, C, OH, OW) = window averages of x (N, C, H, W, any strides), as AvgPool2dParams
  // defines them, bit for bit in every variant (where two NaNs meet in a sum, which payload
  // survives is the compiler's operand order, as in C++).
  virtual void AvgPool2d(const Tensor& x, const AvgPool2dParams& params, Tensor& out) const = 0;
  // AvgPool2d's backward: grad_x (N, C, H, W, contiguous) = zeros, then g / divisor added at
  // each in-bounds position of each window, output positions row by row (a fixed order).
  virtual void AvgPool2dBackward(const Tensor& grad_out, const AvgPool2dParams& params,
                                 Tensor& grad_x) const = 0;
  // Embedding's and Gather's copy: out[o, j, :] = table[o, indices[j], :] for table (outer, V,
  // width), indices (count) INT32 or INT64 each in [-V, V) (negative: from the end; the caller
  // checks them) and out (outer, count, width), all contiguous. Bit-identical in every variant.
  virtual void GatherRows(const Tensor& table, const Tensor& indices, Tensor& out) const = 0;
  // A normalization's forward and backward (NormForwardArgs, NormBackwardArgs), the same bits
  // in every variant: each group is summed by one thread in one fixed order, in double.
  virtual void Normalize(const NormForwardArgs& args) const = 0;
  virtual void NormalizeBackward(const NormBackwardArgs& args) const = 0;
};

}  // namespace onemodel
