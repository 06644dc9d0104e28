// The exceptions of the tensor layer, named as in the spec.
//
// Every error the core reports derives from TensorException, so the server can map the
// whole family to gRPC status codes at one boundary. Kernels never throw; operations
// validate their inputs first.
//
//   try { Shape({100000, 100000, 0}); }
//   catch (const TensorShapeException& e) { /* e.what() names the shape */ }
#pragma once

#include <stdexcept>
#include <string>

namespace onemodel {

// Base of every tensor-layer error.
class TensorException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A shape, stride, view or size limit of spec 3 was violated (thrown before any allocation).
class TensorShapeException : public TensorException {
 public:
  using TensorException::TensorException;
};

// An element type is unsupported or does not match the requested C++ type (spec 2).
class TensorTypeException : public TensorException {
 public:
  using TensorException::TensorException;
};

// A tensor was used after its buffer was returned or its arena reset (spec 6).
class StaleTensorException : public TensorException {
 public:
  using TensorException::TensorException;
};

// A saved tensor changed between forward and backward (spec 7).
class TensorVersionException : public TensorException {
 public:
  using TensorException::TensorException;
};

// An operation that the tensor's layout does not allow (blocked tensors, spec 5).
class TensorLayoutException : public TensorException {
 public:
  using TensorException::TensorException;
};

// CHECKED builds: the canary after a buffer was overwritten (spec 6).
class BufferOverrunException : public TensorException {
 public:
  using TensorException::TensorException;
};

// The pool could not obtain memory from the system.
class OutOfMemoryException : public TensorException {
 public:
  using TensorException::TensorException;
};

// A MemoryBudget (a session's quota, the server's ceiling) would be exceeded; nothing was
// rented. The message names the limit and its value.
class MemoryLimitException : public OutOfMemoryException {
 public:
  using OutOfMemoryException::OutOfMemoryException;
};

// Backward reached a record whose saved tensors an earlier backward freed (no retain_graph).
class GraphReleasedException : public TensorException {
 public:
  using TensorException::TensorException;
};

}  // namespace onemodel
