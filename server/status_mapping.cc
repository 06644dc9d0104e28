#include "server/status_mapping.h"

#include <exception>
#include <new>

#include "core/common/exceptions.h"
#include "server/rpc_error.h"

namespace onemodel::server {

grpc::Status CurrentExceptionStatus() {
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

}  // namespace onemodel::server
