#include "backends/arm/runtime/io_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using kiln::Error;
using kiln::ScalarType;
using kiln::ethos_u::BoundaryCopy;
using kiln::ethos_u::choose_boundary_copy;
using kiln::ethos_u::PayloadIo;

PayloadIo io_of(std::vector<int32_t> shape, int32_t element_size) {
  PayloadIo io{};
  for (size_t d = 0; d < 6; ++d) io.shape[d] = 1;
  for (size_t d = 0; d < shape.size(); ++d) io.shape[6 - shape.size() + d] = shape[d];
  io.element_size = element_size;
  io.region = 1;
  return io;
}

/// A tensor with owned storage; `dim_order` empty means contiguous.
template <typename T>
struct OwnedTensor {
  OwnedTensor(ScalarType type, std::vector<int32_t> sizes_in, std::vector<uint8_t> order = {})
      : sizes(std::move(sizes_in)), dim_order(std::move(order)), strides(sizes.size()) {
    if (dim_order.empty()) {
      for (size_t d = 0; d < sizes.size(); ++d) dim_order.push_back(static_cast<uint8_t>(d));
    }
    size_t n = 1;
    for (int32_t s : sizes) n *= static_cast<size_t>(s);
    data.resize(n);
    tensor = kiln::Tensor(type, static_cast<int32_t>(sizes.size()), sizes.data(), dim_order.data(),
                          strides.data(), data.data());
  }
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  std::vector<int32_t> strides;
  std::vector<T> data;
  kiln::Tensor tensor{ScalarType::Char, 0, nullptr, nullptr, nullptr, nullptr};
};

TEST(IoLayout, PlainCopyWhenShapesMatch) {
  // ExecuTorch's payloads: the io shape is the program's NCHW shape, padded to 6 dims.
  OwnedTensor<int8_t> t(ScalarType::Char, {1, 3, 16, 16});
  EXPECT_EQ(*choose_boundary_copy(t.tensor, io_of({1, 3, 16, 16}, 1), false, "input", 0),
            BoundaryCopy::Direct);
  OwnedTensor<int8_t> flat(ScalarType::Char, {1, 10});
  EXPECT_EQ(*choose_boundary_copy(flat.tensor, io_of({10}, 1), false, "output", 0), BoundaryCopy::Direct);
  // Ambiguous shapes (C == H == W) keep the plain copy, unless the program says NHWC.
  OwnedTensor<int8_t> cube(ScalarType::Char, {1, 4, 4, 4});
  EXPECT_EQ(*choose_boundary_copy(cube.tensor, io_of({1, 4, 4, 4}, 1), false, "input", 0),
            BoundaryCopy::Direct);
  EXPECT_EQ(*choose_boundary_copy(cube.tensor, io_of({1, 4, 4, 4}, 1), true, "input", 0),
            BoundaryCopy::ProgramNchwNpuNhwc);
  // The hint does not change unambiguous shapes.
  EXPECT_EQ(*choose_boundary_copy(t.tensor, io_of({1, 3, 16, 16}, 1), true, "input", 0),
            BoundaryCopy::Direct);
  EXPECT_EQ(*choose_boundary_copy(flat.tensor, io_of({10}, 1), true, "output", 0),
            BoundaryCopy::Direct);
}

TEST(IoLayout, PermutesWhenTheNpuBufferIsNhwc) {
  OwnedTensor<int8_t> t(ScalarType::Char, {2, 3, 4, 5});
  EXPECT_EQ(*choose_boundary_copy(t.tensor, io_of({2, 4, 5, 3}, 1), false, "input", 0),
            BoundaryCopy::ProgramNchwNpuNhwc);
  // Channels-last tensors are NHWC in memory already.
  OwnedTensor<int8_t> cl(ScalarType::Char, {2, 3, 4, 5}, {0, 2, 3, 1});
  EXPECT_EQ(*choose_boundary_copy(cl.tensor, io_of({2, 4, 5, 3}, 1), false, "input", 0),
            BoundaryCopy::Direct);
  EXPECT_EQ(*choose_boundary_copy(cl.tensor, io_of({2, 3, 4, 5}, 1), false, "input", 0),
            BoundaryCopy::ProgramNhwcNpuNchw);
}

/// A payload io with all six dims given (Vela's padded shape, 1s anywhere).
PayloadIo io_6d(std::vector<int32_t> shape, int32_t element_size) {
  PayloadIo io = io_of({}, element_size);
  for (size_t d = 0; d < 6; ++d) io.shape[d] = shape[d];
  return io;
}

TEST(IoLayout, UnitDimsAnywhereInTheNpuShapeAreIgnored) {
  // The transformer's attention subgraphs: Vela pads [1, 16, 64] to (1, 1, 1, 16, 1, 64).
  OwnedTensor<int8_t> seq(ScalarType::Char, {1, 16, 64});
  EXPECT_EQ(*choose_boundary_copy(seq.tensor, io_6d({1, 1, 1, 16, 1, 64}, 1), false, "input", 1),
            BoundaryCopy::Direct);
  EXPECT_EQ(*choose_boundary_copy(seq.tensor, io_6d({1, 16, 1, 1, 64, 1}, 1), true, "output", 0),
            BoundaryCopy::Direct);
  // Size-1 dims inside the program tensor are dropped too.
  OwnedTensor<int8_t> inner(ScalarType::Char, {4, 1, 6});
  EXPECT_EQ(*choose_boundary_copy(inner.tensor, io_of({4, 6}, 1), false, "input", 0),
            BoundaryCopy::Direct);
  // A 4-D NCHW tensor against an NHWC buffer with an interior 1: still a permute.
  OwnedTensor<int8_t> img(ScalarType::Char, {1, 3, 4, 5});
  EXPECT_EQ(*choose_boundary_copy(img.tensor, io_6d({1, 4, 1, 5, 1, 3}, 1), false, "input", 0),
            BoundaryCopy::ProgramNchwNpuNhwc);
  // Same element count, but the real dims are in another order: still a mismatch.
  EXPECT_EQ(choose_boundary_copy(seq.tensor, io_6d({1, 1, 1, 64, 1, 16}, 1), false, "input", 1)
                .error(),
            Error::DelegatePayloadIoMismatch);
  EXPECT_EQ(choose_boundary_copy(seq.tensor, io_6d({1, 1, 8, 2, 1, 64}, 1), false, "input", 1)
                .error(),
            Error::DelegatePayloadIoMismatch);  // 16 split into 8 x 2
  EXPECT_EQ(choose_boundary_copy(seq.tensor, io_6d({1, 1, 1, 16, 1, 32}, 1), false, "input", 1)
                .error(),
            Error::DelegatePayloadIoMismatch);  // fewer elements
}

TEST(IoLayout, MismatchesAreNamed) {
  OwnedTensor<int8_t> t(ScalarType::Char, {1, 3, 4, 5});
  EXPECT_EQ(choose_boundary_copy(t.tensor, io_of({1, 3, 4, 5}, 2), false, "input", 0).error(),
            Error::DelegatePayloadIoMismatch);  // int8 tensor, int16 NPU buffer
  EXPECT_EQ(choose_boundary_copy(t.tensor, io_of({1, 3, 4, 6}, 1), false, "input", 0).error(),
            Error::DelegatePayloadIoMismatch);  // element counts differ
  EXPECT_EQ(choose_boundary_copy(t.tensor, io_of({1, 5, 4, 3}, 1), false, "input", 0).error(),
            Error::DelegatePayloadIoMismatch);  // same count, no layout maps it
  OwnedTensor<float> f(ScalarType::Float, {1, 3, 4, 5});
  EXPECT_EQ(choose_boundary_copy(f.tensor, io_of({1, 3, 4, 5}, 4), false, "input", 0).error(),
            Error::DelegatePayloadIoMismatch);  // the NPU has no float buffers
  OwnedTensor<int8_t> odd(ScalarType::Char, {1, 3, 4, 5}, {0, 3, 1, 2});
  EXPECT_EQ(choose_boundary_copy(odd.tensor, io_of({1, 4, 5, 3}, 1), false, "input", 0).error(),
            Error::DelegatePayloadIoMismatch);  // neither contiguous nor channels last
  OwnedTensor<int16_t> s(ScalarType::Short, {6});
  EXPECT_EQ(*choose_boundary_copy(s.tensor, io_of({6}, 2), false, "input", 0), BoundaryCopy::Direct);
  OwnedTensor<int32_t> i(ScalarType::Int, {6});
  EXPECT_EQ(*choose_boundary_copy(i.tensor, io_of({6}, 4), false, "input", 0), BoundaryCopy::Direct);
}

// The reference walks the NHWC buffer through explicit strides of the NCHW tensor.
template <typename T>
void check_round_trip(ScalarType type) {
  const int32_t n = 2, c = 3, h = 4, w = 5;
  OwnedTensor<T> in(type, {n, c, h, w});
  for (size_t k = 0; k < in.data.size(); ++k) in.data[k] = static_cast<T>(k * 7 + 1);
  std::vector<T> npu(in.data.size());
  kiln::ethos_u::copy_to_npu(in.tensor, BoundaryCopy::ProgramNchwNpuNhwc,
                             reinterpret_cast<uint8_t*>(npu.data()));
  size_t pos = 0;
  for (int32_t in_n = 0; in_n < n; ++in_n)
    for (int32_t y = 0; y < h; ++y)
      for (int32_t x = 0; x < w; ++x)
        for (int32_t ch = 0; ch < c; ++ch, ++pos) {
          const size_t nchw_index = static_cast<size_t>(in_n * c * h * w + ch * h * w + y * w + x);
          ASSERT_EQ(npu[pos], in.data[nchw_index]) << "n" << in_n << " y" << y << " x" << x << " c" << ch;
        }
  OwnedTensor<T> out(type, {n, c, h, w});
  kiln::ethos_u::copy_from_npu(reinterpret_cast<const uint8_t*>(npu.data()),
                               BoundaryCopy::ProgramNchwNpuNhwc, out.tensor);
  EXPECT_EQ(out.data, in.data);
  // A channels-last tensor into an NCHW buffer is the inverse mapping.
  OwnedTensor<T> cl(type, {n, c, h, w}, {0, 2, 3, 1});
  std::copy(npu.begin(), npu.end(), cl.data.begin());  // NHWC memory, same storage
  std::vector<T> nchw(in.data.size());
  kiln::ethos_u::copy_to_npu(cl.tensor, BoundaryCopy::ProgramNhwcNpuNchw,
                             reinterpret_cast<uint8_t*>(nchw.data()));
  EXPECT_EQ(nchw, in.data);
}

TEST(IoLayout, PermutesEveryElementSize) {
  check_round_trip<int8_t>(ScalarType::Char);
  check_round_trip<int16_t>(ScalarType::Short);
  check_round_trip<int32_t>(ScalarType::Int);
}

}  // namespace
