// The one boundary where failures become gRPC statuses (DESIGN.md section 4).
//
// RpcError keeps its code. Core exceptions map by kind: shape, type and layout problems are
// INVALID_ARGUMENT; stale tensors, version changes and freed graphs FAILED_PRECONDITION; memory
// limits RESOURCE_EXHAUSTED; anything else INTERNAL. The message is the exception's own (a
// std::bad_alloc or an unexpected std::exception gets a sentence around it), cut at
// kMaxStatusMessageBytes: a status travels in a trailer (gRPC clients refuse one past 8 KiB by
// default) and is logged, and a client's own input must not make either grow.
//
//   try { ... } catch (...) { return CurrentExceptionStatus(); }
#pragma once

#include <grpcpp/support/status.h>

#include <cstddef>

namespace onemodel::server {

// A longer message keeps its first bytes up to this (at a UTF-8 character's start) and says
// how long it was: "... ... (300153 bytes in all)".
inline constexpr size_t kMaxStatusMessageBytes = 4096;

// The status for the exception being handled; call only inside a catch block.
grpc::Status CurrentExceptionStatus();

}  // namespace onemodel::server
