// Operation attributes written on the command line as name=value, typed by their spelling:
//   axis=1          int             scale=0.5      float (write 1.0 for a float one)
//   axes=[0,2]      ints            axes=0,2       ints (a comma makes a list)
//   scales=[1.5,2]  floats          layout=NHWC    string
// An integer spelling must fit 64 bits and a float one 32 (write 1e20, not 100000000000000000000,
// for a large float); a number outside its type's range is refused, not sent as another type.
//
//   client::NamedAttr a = ParseAttribute("kernel_shape=[2,2]");   // Ints{2, 2}
#pragma once

#include <string>

#include "client/lib/run_builder.h"

namespace onemodel::cli {

// The attribute `text` spells; Error(INVALID_ARGUMENT) without a name, '=' or a usable list.
client::NamedAttr ParseAttribute(const std::string& text);

}  // namespace onemodel::cli
