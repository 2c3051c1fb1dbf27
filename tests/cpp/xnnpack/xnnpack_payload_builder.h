// Builds XNNPACK delegate payloads (header + XNNGraph flatbuffer + constant data) with
// the flatc-generated C++ API, for the XnnpackBackend's tests and fuzz seeds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln_xnnpack_schema/xnnpack_graph_generated.h"

namespace kiln_test {

struct XnnValue {
  uint32_t id;
  std::vector<uint32_t> dims;
  uint32_t constant = 0;  // index into the constant table, 0: not a constant
  kiln_xnnpack::XNNDatatype type = kiln_xnnpack::XNNDatatype::xnn_datatype_fp32;
};

struct XnnConstant {
  uint64_t offset;
  uint64_t size;
  std::string named_key;  // non-empty: in the program's named data (offset then UINT64_MAX)
};

class XnnGraphBuilder {
 public:
  void value(const XnnValue& v);
  void binary(kiln_xnnpack::NodeUnion kind, uint32_t a, uint32_t b, uint32_t out);
  void transpose(uint32_t in, uint32_t out, std::vector<uint32_t> perm);
  void conv(uint32_t in, uint32_t filter, uint32_t bias, uint32_t out, uint32_t kernel, uint32_t in_ch,
            uint32_t out_ch);
  void concatenate(uint32_t a, uint32_t b, uint32_t out);
  void max_pool(uint32_t in, uint32_t out, uint32_t size);
  /// Constant table entry i+1 (entry 0 is the "not a constant" placeholder).
  void constant(const XnnConstant& c) { constants_.push_back(c); }
  /// The payload: 30-byte header, the flatbuffer, then `constant_data`.
  std::vector<uint8_t> payload(const std::vector<uint32_t>& inputs, const std::vector<uint32_t>& outputs,
                               const std::vector<uint8_t>& constant_data);

 private:
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<flatbuffers::Offset<kiln_xnnpack::XValue>> values_;
  std::vector<flatbuffers::Offset<kiln_xnnpack::XNode>> nodes_;
  std::vector<XnnConstant> constants_;
};

/// input [2,3] + constant [2,3] (floats 1..6, in the payload's constant data) = output.
std::vector<uint8_t> add_constant_payload();
/// NHWC input [1,4,4,2] -> 1x1 convolution to 3 channels (constant filter, bias) ->
/// 2x2 max pooling: output [1,2,2,3].
std::vector<uint8_t> conv_pool_payload();
/// The payloads above, for fuzz seeds.
std::vector<std::vector<uint8_t>> example_payloads();
/// input [2,3,4] transposed by (2,0,1) to [4,2,3], added to itself: output [4,2,3].
std::vector<uint8_t> transpose_add_payload();

}  // namespace kiln_test
