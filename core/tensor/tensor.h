// Tensor: a small value over a buffer (spec 1, 4, 5, 6, 7).
//
// A Tensor holds a buffer pointer, the buffer generation it was made in, an element type, a
// logical shape, strides (in elements, signed) and an offset. Copies are handles to the same
// buffer; every view makes a new value over the same buffer and copies nothing. Every access
// to the data compares generations and throws StaleTensorException once the buffer was
// returned (Dispose) or its arena reset. Writes through the Mutable accessors, Set, Fill and
// CopyFrom bump the buffer's version counter.
//
//   BufferPool pool;
//   Tensor x = Tensor::Empty(Shape{2, 3}, DType::kFloat, pool);
//   x.Fill(1.0f);
//   Tensor t = x.Transpose(0, 1);           // shares x's buffer
//   float v = t.At<float>({2, 1});
//   x.Dispose();                            // t is now stale too
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/common/exceptions.h"
#include "core/dtype/dtype.h"
#include "core/memory/allocator.h"
#include "core/shape/dim_vector.h"
#include "core/shape/strides.h"
#include "core/tensor/layout.h"

namespace onemodel {

class AutogradNode;  // core/tensor/autograd_node.h

class Tensor {
 public:
  // A null handle: no buffer; every data access throws.
  Tensor() = default;

  // A new contiguous tensor from `allocator`, zero-filled if asked. Throws
  // TensorShapeException (before allocating) when count x element size exceeds the limit,
  // TensorTypeException for an unsupported dtype.
  static Tensor Empty(const Shape& shape, DType dtype, Allocator& allocator, bool zero = false);

  // A view over `buffer`; checks the view bounds of spec 3. Throws StaleTensorException when
  // the buffer is not rented.
  static Tensor FromBuffer(Buffer* buffer, DType dtype, const Shape& shape, const Strides& strides,
                           int64_t offset);

  // ---- metadata (works on stale and blocked tensors) ----
  bool is_null() const { return buffer_ == nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t ElementCount() const { return shape_.ElementCount(); }
  Buffer* buffer() const { return buffer_; }
  uint64_t generation() const { return generation_; }
  // The block size of a blocked tensor (either family); 0 for plain tensors.
  int32_t block_size() const { return block_; }
  Layout layout() const {
    if (!block_) return LayoutOf(shape_, strides_);
    return weight_blocks_ ? Layout::kBlockedWeights : Layout::kBlocked;
  }
  bool IsContiguous() const { return !block_ && onemodel::IsContiguous(shape_, strides_); }
  // True once the buffer was returned or its arena reset.
  bool IsStale() const { return buffer_ && buffer_->generation() != generation_; }
  // "FLOAT [2, 3] strides [3, 1] offset 0": for messages.
  std::string Describe() const;

  // ---- gradient tracking (spec 8; the records themselves are core/autograd's) ----
  // True for a gradient leaf and for the result of a recorded operation.
  bool requires_grad() const { return node_ != nullptr; }
  // The leaf node or BackwardRecord behind this handle (null when no gradient is tracked).
  const std::shared_ptr<AutogradNode>& autograd_node() const { return node_; }
  // A handle to the same data that is a gradient leaf. Throws TensorTypeException for
  // non-floating types and TensorLayoutException for blocked tensors.
  Tensor WithRequiresGrad() const;
  // A handle to the same data that tracks no gradient.
  Tensor Detach() const {
    Tensor t = *this;
    t.node_.reset();
    return t;
  }
  // A handle to the same data whose gradient flows into `node` (used by operations).
  Tensor WithAutogradNode(std::shared_ptr<AutogradNode> node) const {
    Tensor t = *this;
    t.node_ = std::move(node);
    return t;
  }

  // The buffer's version counter (spec 7). Throws StaleTensorException.
  uint64_t version() const {
    CheckLive();
    return buffer_->version();
  }

  // ---- data access ----
  // The elements of a contiguous tensor in row-major order (a blocked tensor: its physical
  // span of ceil(C/B)*N*H*W*B elements). Throws unless T matches dtype, for a stale tensor,
  // and for a non-contiguous one (call Contiguous() first).
  template <typename T>
  std::span<const T> Data() const {
    return {Base<T>(), static_cast<size_t>(DenseCount())};
  }
  // As Data(), writable; bumps the version once.
  template <typename T>
  std::span<T> MutableData() {
    std::span<T> s{Base<T>(), static_cast<size_t>(DenseCount())};
    buffer_->BumpVersion();
    return s;
  }
  // Data() as raw little-endian bytes, for any element type (codecs, Cast).
  std::span<const std::byte> RawData() const;
  // As RawData(), writable; bumps the version once.
  std::span<std::byte> MutableRawData();
  // The whole buffer as elements of T (index with offset() and strides()).
  template <typename T>
  std::span<const T> Storage() const {
    return {StorageBase<T>(), StorageCount()};
  }
  // As Storage(), writable; bumps the version once.
  template <typename T>
  std::span<T> MutableStorage() {
    std::span<T> s{StorageBase<T>(), StorageCount()};
    buffer_->BumpVersion();
    return s;
  }
  // One element; throws TensorShapeException for an index out of range.
  template <typename T>
  T At(std::span<const int64_t> index) const {
    return StorageBase<T>()[ElementOffset(index)];
  }
  template <typename T>
  T At(std::initializer_list<int64_t> index) const {
    return At<T>(std::span<const int64_t>(index.begin(), index.size()));
  }
  // Writes one element; bumps the version.
  template <typename T>
  void Set(std::span<const int64_t> index, T value) {
    StorageBase<T>()[ElementOffset(index)] = value;
    buffer_->BumpVersion();
  }
  template <typename T>
  void Set(std::initializer_list<int64_t> index, T value) {
    Set<T>(std::span<const int64_t>(index.begin(), index.size()), value);
  }
  // Writes `value` to every element (through any strides); bumps the version once.
  // Throws TensorShapeException if the tensor broadcasts (a stride 0 over an extent > 1).
  template <typename T>
  void Fill(T value) {
    CheckType<T>();
    FillBytes(&value);
  }
  // Copies src's elements (same shape and dtype, any strides) into this tensor; bumps the
  // version once. Overlapping source and destination are copied as if through a temporary.
  // Throws TensorException when this tensor requires gradients and recording is on.
  void CopyFrom(const Tensor& src);

  // Returns the buffer for this tensor and every copy and view of it; all become stale.
  // Throws StaleTensorException when it was already released (or its arena reset).
  void Dispose();

  // ---- views: no data moves (spec 4) ----
  // These member views track no gradient (their result has no autograd node); the
  // differentiable forms are in core/ops/views.h.
  // A view of the same elements as `shape` (one extent may be -1), or nullopt when the
  // strides cannot express it.
  std::optional<Tensor> TryReshape(std::span<const int64_t> shape) const;
  std::optional<Tensor> TryReshape(std::initializer_list<int64_t> shape) const {
    return TryReshape(std::span<const int64_t>(shape.begin(), shape.size()));
  }
  // TryReshape, or Contiguous(allocator) then a view: row-major order is the same either way.
  Tensor Reshape(std::span<const int64_t> shape, Allocator& allocator) const;
  Tensor Reshape(std::initializer_list<int64_t> shape, Allocator& allocator) const {
    return Reshape(std::span<const int64_t>(shape.begin(), shape.size()), allocator);
  }
  // Dimensions d0 and d1 swapped (negative dims count from the end).
  Tensor Transpose(int d0, int d1) const;
  // Dimension i of the result is dimension perm[i] of this tensor.
  Tensor Permute(std::span<const int> perm) const;
  Tensor Permute(std::initializer_list<int> perm) const {
    return Permute(std::span<const int>(perm.begin(), perm.size()));
  }
  // Elements start, start+step, ... before stop along `dim` (numpy semantics: negative
  // start/stop count from the end and are clamped; step may be negative, never 0).
  Tensor Slice(int dim, int64_t start, int64_t stop, int64_t step = 1) const;
  // Broadcasts to `shape` by numpy's rule with stride 0 (new leading dimensions allowed).
  Tensor Expand(const Shape& shape) const;
  // Removes every extent-1 dimension.
  Tensor Squeeze() const;
  // Removes dimension `dim`, which must have extent 1.
  Tensor Squeeze(int dim) const;
  // Inserts an extent-1 dimension at `dim` (0..rank; negative counts from the end).
  Tensor Unsqueeze(int dim) const;

  // ---- copies ----
  // This tensor when contiguous, else a row-major copy from `allocator`.
  Tensor Contiguous(Allocator& allocator) const;
  // Copies bytes [first_byte, first_byte + out.size()) of this plain tensor's values in
  // row-major order (each element's bytes as in memory: what raw_data carries) into `out`,
  // from any strides and allocating nothing, so a stream can ask for its chunks one by one. A
  // range may start or end inside an element, whose bytes are then copied in part. Throws
  // StaleTensorException for a released or null tensor, TensorLayoutException for a blocked
  // one, TensorShapeException for a range outside its ElementCount() x element size bytes.
  void CopyLogicalBytes(int64_t first_byte, std::span<std::byte> out) const;
  // The same logical (N, C, H, W) tensor in `layout` (this tensor if already there); for
  // kBlocked, `block` is the channel block size, for kBlockedWeights the output-channel
  // (dimension 0) block size. Pure data movement.
  Tensor ToLayout(Layout layout, Allocator& allocator, int32_t block = 16) const;

 public:
  // Extents and strides being assembled for a view (views.cc).
  struct ViewDims {
    DimVector<int64_t> extents;
    DimVector<int32_t> strides;
  };

 private:
  // Throws StaleTensorException (or for a null handle) unless the buffer is live.
  void CheckLive() const {
    if (!buffer_ || buffer_->generation() != generation_) ThrowNotLive();
  }
  [[noreturn]] void ThrowNotLive() const;
  template <typename T>
  void CheckType() const {
    if (DTypeOf<T>() != dtype_) ThrowTypeMismatch(DTypeOf<T>());
  }
  [[noreturn]] void ThrowTypeMismatch(DType requested) const;
  // Throws TensorLayoutException for blocked tensors: `what` names the refused operation.
  void CheckPlain(const char* what) const;
  // Throws TensorShapeException for a broadcast view (stride 0 over an extent > 1).
  void CheckWritable() const;
  template <typename T>
  T* StorageBase() const {
    CheckType<T>();
    CheckLive();
    return reinterpret_cast<T*>(buffer_->data());
  }
  size_t StorageCount() const {
    return static_cast<size_t>(buffer_->length() / ElementSize(dtype_));
  }
  template <typename T>
  T* Base() const {
    return StorageBase<T>() + offset_;
  }
  // Element count of Data(): the logical count, or the blocked physical count. Throws for a
  // non-contiguous plain tensor.
  int64_t DenseCount() const;
  int64_t ElementOffset(std::span<const int64_t> index) const;
  void FillBytes(const void* value);
  // A view with new metadata over the same buffer; checks bounds.
  Tensor WithView(const Shape& shape, const Strides& strides, int64_t offset) const;

  Buffer* buffer_ = nullptr;
  uint64_t generation_ = 0;
  DType dtype_ = DType::kFloat;
  int32_t block_ = 0;
  Shape shape_;
  Strides strides_;
  // With block_ != 0: the BlockedWeights family rather than Blocked (here, in the padding
  // before offset_, so that a Tensor stays the same size).
  bool weight_blocks_ = false;
  int64_t offset_ = 0;
  std::shared_ptr<AutogradNode> node_;
};

}  // namespace onemodel
