// Replays a fuzz target's corpus as an ordinary test, in every preset and with any compiler:
// runs LLVMFuzzerTestOneInput on each file given and on each file under each directory given,
// in sorted order. A crash, a sanitizer report, a broken property (FuzzCheck) or an escaping
// exception fails the test; so does finding no input at all.
//
//   tensor_proto_replay tests/fuzz/corpus/tensor_proto
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// `path` itself when it is a file, else the regular files below it, sorted.
std::vector<fs::path> InputsUnder(const fs::path& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(path)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The whole content of `file`; throws when it cannot be read.
std::string ReadFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR_OR_FILE...\n";
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::vector<fs::path> found = InputsUnder(argv[i]);
    inputs.insert(inputs.end(), found.begin(), found.end());
  }
  if (inputs.empty()) {
    std::cerr << "no inputs found\n";
    return 1;
  }
  for (const fs::path& file : inputs) {
    std::cout << file.string() << std::endl;  // flushed, so a crash's output names its input
    try {
      const std::string bytes = ReadFile(file);
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::cerr << file.string() << ": exception escaped: " << e.what() << "\n";
      return 1;
    }
  }
  std::cout << "replayed " << inputs.size() << " inputs\n";
  return 0;
}
