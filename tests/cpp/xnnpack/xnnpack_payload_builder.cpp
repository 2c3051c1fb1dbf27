#include "tests/cpp/xnnpack/xnnpack_payload_builder.h"

#include <cstring>

namespace kiln_test {

using namespace kiln_xnnpack;

void XnnGraphBuilder::value(const XnnValue& v) {
  auto dims = fbb_.CreateVector(v.dims);
  auto tensor = CreateXNNTensorValue(fbb_, v.type, static_cast<uint32_t>(v.dims.size()), dims, v.constant,
                                     0xFFFFFFFFu, 0, v.id);
  values_.push_back(CreateXValue(fbb_, ValueUnion::XNNTensorValue, tensor.Union()));
}

void XnnGraphBuilder::binary(NodeUnion kind, uint32_t a, uint32_t b, uint32_t out) {
  auto body = Create_XNNNode2x1(fbb_, a, b, out, 0);
  nodes_.push_back(CreateXNode(fbb_, kind, body.Union()));
}

void XnnGraphBuilder::transpose(uint32_t in, uint32_t out, std::vector<uint32_t> perm) {
  auto p = fbb_.CreateVector(perm);
  auto body = CreateXNNStaticTranspose(fbb_, static_cast<uint32_t>(perm.size()), p, in, out, 0);
  nodes_.push_back(CreateXNode(fbb_, NodeUnion::XNNStaticTranspose, body.Union()));
}

void XnnGraphBuilder::conv(uint32_t in, uint32_t filter, uint32_t bias, uint32_t out, uint32_t kernel,
                           uint32_t in_ch, uint32_t out_ch) {
  auto body = Create_XNNNodeConv(fbb_, 0, 0, 0, 0, kernel, kernel, 1, 1, 1, 1, in_ch, out_ch, 1, 0, 0,
                                 in, filter, bias, out, 0);
  nodes_.push_back(CreateXNode(fbb_, NodeUnion::XNNConv2d, body.Union()));
}

void XnnGraphBuilder::concatenate(uint32_t a, uint32_t b, uint32_t out) {
  auto body = Create_XNNCat(fbb_, 0, a, b, 0, 0, out, 0, 0);
  nodes_.push_back(CreateXNode(fbb_, NodeUnion::XNNConcatenate2, body.Union()));
}

void XnnGraphBuilder::max_pool(uint32_t in, uint32_t out, uint32_t size) {
  auto body = Create_XNNPooling2D(fbb_, 0, 0, 0, 0, size, size, size, size, 1, 1, in, out, 0);
  nodes_.push_back(CreateXNode(fbb_, NodeUnion::XNNMaxPooling2d, body.Union()));
}

std::vector<uint8_t> XnnGraphBuilder::payload(const std::vector<uint32_t>& inputs,
                                              const std::vector<uint32_t>& outputs,
                                              const std::vector<uint8_t>& constant_data) {
  std::vector<flatbuffers::Offset<ConstantDataOffset>> table{CreateConstantDataOffset(fbb_, 0, 0)};
  for (const XnnConstant& c : constants_) {
    table.push_back(CreateConstantDataOffset(fbb_, c.named_key.empty() ? c.offset : ~uint64_t{0}, c.size,
                                             c.named_key.empty() ? 0 : fbb_.CreateString(c.named_key)));
  }
  auto graph = CreateXNNGraph(fbb_, fbb_.CreateString("0"), fbb_.CreateVector(nodes_), fbb_.CreateVector(values_),
                              static_cast<uint32_t>(inputs.size() + outputs.size()), fbb_.CreateVector(inputs),
                              fbb_.CreateVector(outputs), fbb_.CreateVector(table));
  FinishXNNGraphBuffer(fbb_, graph);
  const uint32_t header = 30;
  const uint32_t fb_offset = 32;  // the flatbuffer stays 4-aligned
  const uint32_t fb_size = fbb_.GetSize();
  const uint32_t data_offset = (fb_offset + fb_size + 15) / 16 * 16;
  std::vector<uint8_t> out(data_offset + constant_data.size(), 0);
  std::memcpy(out.data() + 4, "XH00", 4);
  auto put = [&](size_t at, uint64_t value, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) out[at + i] = static_cast<uint8_t>(value >> (8 * i));
  };
  put(8, header, 2);
  put(10, fb_offset, 4);
  put(14, fb_size, 4);
  put(18, data_offset, 4);
  put(22, constant_data.size(), 8);
  std::memcpy(out.data() + fb_offset, fbb_.GetBufferPointer(), fb_size);
  if (!constant_data.empty()) std::memcpy(out.data() + data_offset, constant_data.data(), constant_data.size());
  return out;
}

std::vector<uint8_t> add_constant_payload() {
  XnnGraphBuilder b;
  b.value({0, {2, 3}});
  b.value({1, {2, 3}, 1});
  b.value({2, {2, 3}});
  b.binary(NodeUnion::XNNAdd, 0, 1, 2);
  b.constant({0, 24, ""});
  std::vector<uint8_t> data(24);
  const float ones[6] = {1, 2, 3, 4, 5, 6};
  std::memcpy(data.data(), ones, sizeof(ones));
  return b.payload({0}, {2}, data);
}

std::vector<uint8_t> transpose_add_payload() {
  XnnGraphBuilder b;
  b.value({0, {2, 3, 4}});
  b.value({1, {4, 2, 3}});
  b.value({2, {4, 2, 3}});
  b.transpose(0, 1, {2, 0, 1});
  b.binary(NodeUnion::XNNAdd, 1, 1, 2);
  return b.payload({0}, {2}, {});
}

std::vector<uint8_t> conv_pool_payload() {
  XnnGraphBuilder b;
  b.value({0, {1, 4, 4, 2}});
  b.value({1, {3, 1, 1, 2}, 1});
  b.value({2, {3}, 2});
  b.value({3, {1, 4, 4, 3}});
  b.value({4, {1, 2, 2, 3}});
  b.conv(0, 1, 2, 3, 1, 2, 3);
  b.max_pool(3, 4, 2);
  b.constant({0, 24, ""});
  b.constant({32, 12, ""});
  std::vector<uint8_t> data(48);
  const float filter[6] = {1, -1, 0.5f, 0.5f, 2, 0};
  const float bias[3] = {0.25f, 0, -1};
  std::memcpy(data.data(), filter, sizeof(filter));
  std::memcpy(data.data() + 32, bias, sizeof(bias));
  return b.payload({0}, {4}, data);
}

std::vector<std::vector<uint8_t>> example_payloads() {
  return {add_constant_payload(), transpose_add_payload(), conv_pool_payload()};
}

}  // namespace kiln_test
