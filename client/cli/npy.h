// Reading and writing NumPy .npy files (format versions 1, 2 and 3) as TensorData.
//
// Little-endian and byte-order-free element types of the server are supported ('<f4', '<f8',
// '<f2', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '|b1'), in C order only; a
// Fortran-order or big-endian file is refused with a message saying how to convert it.
// BFLOAT16 has no NumPy type: write it as .pb instead.
//
//   std::ifstream in("x.npy", std::ios::binary);
//   TensorData x = ReadNpy(in, "x.npy");
//   std::ofstream out("y.npy", std::ios::binary);
//   WriteNpy(out, x);
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "client/lib/tensor_data.h"

namespace onemodel::cli {

// The tensor stored in `in`; Error(INVALID_ARGUMENT) naming `name` when it is not a usable
// .npy stream.
client::TensorData ReadNpy(std::istream& in, const std::string& name);
// Writes `data` to `out` as .npy (version 1, or 2 when the header needs it).
void WriteNpy(std::ostream& out, const client::TensorData& data);

}  // namespace onemodel::cli
