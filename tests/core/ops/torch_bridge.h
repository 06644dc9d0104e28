// The C++ side of torch_reference.py's text protocol, shared by the tests that compare with
// PyTorch (torch_test.cc, cnn_training_test.cc): tensors written as hex floats, the script run
// through Debian's /usr/bin/python3, its result lines read back.
//
//   std::ostringstream in;
//   WriteTensor(in, "tensor", x);
//   const auto lines = RunTorch(in.str());        // tokens of each output line
//   const std::vector<float> v = ParseValues(lines[0]);
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace onemodel::torch_bridge {

// v as C99 %a text (what float.fromhex reads back exactly).
std::string Hex(float v);

// `TAG RANK DIMS... VALUES...` on one line: t's logical values in row-major order.
void WriteTensor(std::ostream& out, const char* tag, const Tensor& t);

// t's logical FLOAT values in row-major order (any strides).
std::vector<float> ValuesOf(const Tensor& t);

// Runs torch_reference.py on `input` (files per test and process) and returns its output lines
// split into tokens; on failure adds a test failure saying how to install PyTorch, and
// returns nothing.
std::vector<std::vector<std::string>> RunTorch(const std::string& input);

// The values of a `values COUNT V...` or `losses COUNT V...` line.
std::vector<float> ParseValues(const std::vector<std::string>& tokens);

}  // namespace onemodel::torch_bridge
