#include "server/rpc/status_mapping.h"

#include <exception>
#include <new>
#include <string>

#include "core/common/exceptions.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {

namespace {

// `message`, longer than kMaxStatusMessageBytes, cut as that says.
std::string Capped(std::string message) {
  const size_t size = message.size();
  size_t end = kMaxStatusMessageBytes;
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  message.resize(end);
  return message + " ... (" + std::to_string(size) + " bytes in all)";
}

// The status for the exception being handled, its message whole.
grpc::Status Uncapped() {
  using grpc::StatusCode;
  try {
    throw;
  } catch (const RpcError& e) {
    return {e.code(), e.what()};
  } catch (const StaleTensorException& e) {
    return {StatusCode::FAILED_PRECONDITION, e.what()};
  } catch (const TensorVersionException& e) {
    return {StatusCode::FAILED_PRECONDITION, e.what()};
  } catch (const GraphReleasedException& e) {
    return {StatusCode::FAILED_PRECONDITION, e.what()};
  } catch (const OutOfMemoryException& e) {
    return {StatusCode::RESOURCE_EXHAUSTED, e.what()};
  } catch (const BufferOverrunException& e) {
    return {StatusCode::INTERNAL, e.what()};
  } catch (const TensorException& e) {
    // Shape, type, layout and argument errors of the core.
    return {StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::bad_alloc&) {
    return {StatusCode::RESOURCE_EXHAUSTED, "the server ran out of memory for this request"};
  } catch (const std::exception& e) {
    return {StatusCode::INTERNAL, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {StatusCode::INTERNAL, "internal error of unknown type"};
  }
}

}  // namespace

grpc::Status CurrentExceptionStatus() {
  const grpc::Status status = Uncapped();
  if (status.error_message().size() <= kMaxStatusMessageBytes) return status;
  return {status.error_code(), Capped(status.error_message())};
}

}  // namespace onemodel::server
