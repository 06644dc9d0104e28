#include "core/common/cancellation.h"

namespace onemodel {
namespace {

thread_local const CancelToken* current_token = nullptr;

}  // namespace

const CancelToken* CurrentCancelToken() { return current_token; }

CancelScope::CancelScope(const CancelToken* token) : previous_(current_token) {
  current_token = token;
}

CancelScope::~CancelScope() { current_token = previous_; }

}  // namespace onemodel
