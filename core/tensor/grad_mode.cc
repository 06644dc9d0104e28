#include "core/tensor/grad_mode.h"

namespace onemodel {
namespace {
thread_local bool g_enabled = true;
}  // namespace

bool GradMode::IsEnabled() { return g_enabled; }
void GradMode::SetEnabled(bool enabled) { g_enabled = enabled; }

}  // namespace onemodel
