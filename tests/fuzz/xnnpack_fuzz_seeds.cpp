// Writes the seeds of fuzz_xnnpack_payload: the hand-built payloads of the backend's
// tests (a constant add, a transpose between runtimes, a convolution and a pooling).
//
//   xnnpack_fuzz_seeds OUTPUT_DIR
#include <cstdio>
#include <string>

#include "tests/cpp/xnnpack/xnnpack_payload_builder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: xnnpack_fuzz_seeds OUTPUT_DIR\n");
    return 2;
  }
  int index = 0;
  for (const auto& payload : kiln_test::example_payloads()) {
    const std::string path = std::string(argv[1]) + "/payload_" + std::to_string(index++) + ".bin";
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr || std::fwrite(payload.data(), 1, payload.size(), file) != payload.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
    std::fclose(file);
  }
  return 0;
}
