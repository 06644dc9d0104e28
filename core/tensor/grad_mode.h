// GradMode: whether operations on this thread record for backward (spec 8).
//
// Recording is on by default. NoGrad turns it off for a scope; work handed to the thread pool
// runs kernels only, so it never records on its own.
//
//   {
//     NoGrad no_grad;           // in-place SGD updates are not recorded
//     ops::Sub(w, lr_g, ctx);
//   }
#pragma once

namespace onemodel {

class GradMode {
 public:
  // True when operations on this thread record for backward.
  static bool IsEnabled();
  static void SetEnabled(bool enabled);
};

// Turns recording off on this thread until the scope ends (then restores what it was).
class NoGrad {
 public:
  NoGrad() : previous_(GradMode::IsEnabled()) { GradMode::SetEnabled(false); }
  ~NoGrad() { GradMode::SetEnabled(previous_); }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

}  // namespace onemodel
