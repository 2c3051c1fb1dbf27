#include "backends/arm/runtime/io_layout.h"

#include <cstdio>
#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

/// A shape without its size-1 dims. Dropping them never changes a dense array's byte
/// order, and Vela pads io shapes to 6 dims with 1s that need not lead: a [1, 16, 64]
/// tensor can be (1, 1, 1, 16, 1, 64) in the payload. Two shapes whose remaining dims
/// agree in order describe the same bytes.
struct Dims {
  int64_t size[kTensorMaxDim] = {};
  size_t rank = 0;
};

template <typename T>
Dims drop_unit_dims(const T* sizes, size_t rank) {
  Dims out;
  for (size_t d = 0; d < rank && out.rank < kTensorMaxDim; ++d) {
    if (sizes[d] != 1) out.size[out.rank++] = sizes[d];
  }
  return out;
}

bool same(const Dims& a, const Dims& b) {
  if (a.rank != b.rank) return false;
  for (size_t d = 0; d < a.rank; ++d) {
    if (a.size[d] != b.size[d]) return false;
  }
  return true;
}

bool element_size_matches(ScalarType type, int32_t element_size) {
  switch (type) {
    case ScalarType::Char:
    case ScalarType::Byte:
    case ScalarType::Bool:
      return element_size == 1;
    case ScalarType::Short:
      return element_size == 2;
    case ScalarType::Int:
      return element_size == 4;
    default:
      return false;
  }
}

/// Dim order 0,1,2,3 (contiguous) or 0,2,3,1 (channels last); else neither.
enum class MemoryOrder { Contiguous, ChannelsLast, Other };

MemoryOrder memory_order(const Tensor& tensor) {
  const Span<const DimOrderType> order = tensor.dim_order();
  bool contiguous = true;
  for (size_t d = 0; d < order.size(); ++d) contiguous = contiguous && order[d] == d;
  if (contiguous) return MemoryOrder::Contiguous;
  if (order.size() == 4 && order[0] == 0 && order[1] == 2 && order[2] == 3 && order[3] == 1) {
    return MemoryOrder::ChannelsLast;
  }
  return MemoryOrder::Other;
}

/// dst[n][h][w][c] = src[n][c][h][w] (or the reverse when `to_nchw`).
template <typename T>
void permute(const T* src, T* dst, int64_t n_size, int64_t c_size, int64_t h_size,
             int64_t w_size, bool to_nchw) {
  for (int64_t n = 0; n < n_size; ++n) {
    for (int64_t c = 0; c < c_size; ++c) {
      for (int64_t h = 0; h < h_size; ++h) {
        for (int64_t w = 0; w < w_size; ++w) {
          const int64_t nchw = ((n * c_size + c) * h_size + h) * w_size + w;
          const int64_t nhwc = ((n * h_size + h) * w_size + w) * c_size + c;
          if (to_nchw) {
            dst[nchw] = src[nhwc];
          } else {
            dst[nhwc] = src[nchw];
          }
        }
      }
    }
  }
}

void permute_bytes(const void* src, void* dst, const Tensor& tensor, bool to_nchw) {
  // Logical sizes are NCHW whatever the memory order.
  const int64_t n = tensor.size(0), c = tensor.size(1), h = tensor.size(2), w = tensor.size(3);
  switch (tensor.element_size()) {
    case 1:
      permute(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), n, c, h, w, to_nchw);
      break;
    case 2:
      permute(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), n, c, h, w, to_nchw);
      break;
    default:
      permute(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), n, c, h, w, to_nchw);
      break;
  }
}

}  // namespace

Result<BoundaryCopy> choose_boundary_copy(const Tensor& tensor, const PayloadIo& io,
                                          bool npu_is_nhwc, const char* what, size_t index) {
  if (!element_size_matches(tensor.scalar_type(), io.element_size)) {
    KILN_LOG(Error, "ethos-u %s %zu: tensor dtype %s, NPU element size %d bytes", what, index,
             scalar_type_name(tensor.scalar_type()), static_cast<int>(io.element_size));
    return Error::DelegatePayloadIoMismatch;
  }
  if (tensor.numel() != io.numel()) {
    KILN_LOG(Error, "ethos-u %s %zu: tensor has %zu elements, NPU buffer [%d, %d, %d, %d, %d, %d] "
             "%llu", what, index, tensor.numel(), io.shape[0], io.shape[1], io.shape[2],
             io.shape[3], io.shape[4], io.shape[5], static_cast<unsigned long long>(io.numel()));
    return Error::DelegatePayloadIoMismatch;
  }
  const Dims npu = drop_unit_dims(io.shape, kPayloadIoDims);
  const Dims logical = drop_unit_dims(tensor.sizes().data(), tensor.sizes().size());
  Dims nhwc;
  const bool four_d = tensor.dim() == 4;
  if (four_d) {
    const int32_t s[4] = {tensor.size(0), tensor.size(2), tensor.size(3), tensor.size(1)};
    nhwc = drop_unit_dims(s, 4);
  }
  const MemoryOrder order = memory_order(tensor);
  if (order == MemoryOrder::Contiguous) {
    if (tensor.numel() == 0) return BoundaryCopy::Direct;
    if (npu_is_nhwc && four_d && same(nhwc, npu)) return BoundaryCopy::ProgramNchwNpuNhwc;
    if (same(logical, npu)) return BoundaryCopy::Direct;
    if (four_d && same(nhwc, npu)) return BoundaryCopy::ProgramNchwNpuNhwc;
  } else if (order == MemoryOrder::ChannelsLast) {
    if (same(nhwc, npu) || tensor.numel() == 0) return BoundaryCopy::Direct;
    if (same(logical, npu)) return BoundaryCopy::ProgramNhwcNpuNchw;
  }
  // The tensor's sizes as text ("[1, 16, 64]"), so the log shows both shapes.
  char sizes[kTensorMaxDim * 13 + 4] = "[";
  size_t used = 1;
  for (size_t d = 0; d < tensor.sizes().size() && used < sizeof(sizes); ++d) {
    const int n = std::snprintf(sizes + used, sizeof(sizes) - used, d == 0 ? "%d" : ", %d",
                                static_cast<int>(tensor.size(d)));
    if (n > 0) used += static_cast<size_t>(n);
  }
  if (used + 1 < sizeof(sizes)) {
    sizes[used] = ']';
    sizes[used + 1] = '\0';
  }
  KILN_LOG(Error, "ethos-u %s %zu: no layout maps the tensor %s (%s memory order) onto the "
           "NPU buffer [%d, %d, %d, %d, %d, %d]", what, index, sizes,
           order == MemoryOrder::Contiguous ? "contiguous"
           : order == MemoryOrder::ChannelsLast ? "channels-last" : "another",
           io.shape[0], io.shape[1], io.shape[2], io.shape[3], io.shape[4], io.shape[5]);
  return Error::DelegatePayloadIoMismatch;
}

void copy_to_npu(const Tensor& tensor, BoundaryCopy copy, uint8_t* npu) {
  switch (copy) {
    case BoundaryCopy::Direct:
      if (tensor.nbytes() > 0) std::memcpy(npu, tensor.const_data_ptr(), tensor.nbytes());
      return;
    case BoundaryCopy::ProgramNchwNpuNhwc:
      permute_bytes(tensor.const_data_ptr(), npu, tensor, /*to_nchw=*/false);
      return;
    case BoundaryCopy::ProgramNhwcNpuNchw:
      permute_bytes(tensor.const_data_ptr(), npu, tensor, /*to_nchw=*/true);
      return;
  }
}

void copy_from_npu(const uint8_t* npu, BoundaryCopy copy, const Tensor& tensor) {
  switch (copy) {
    case BoundaryCopy::Direct:
      if (tensor.nbytes() > 0) std::memcpy(tensor.mutable_data_ptr(), npu, tensor.nbytes());
      return;
    case BoundaryCopy::ProgramNchwNpuNhwc:
      permute_bytes(npu, tensor.mutable_data_ptr(), tensor, /*to_nchw=*/true);
      return;
    case BoundaryCopy::ProgramNhwcNpuNchw:
      permute_bytes(npu, tensor.mutable_data_ptr(), tensor, /*to_nchw=*/false);
      return;
  }
}

}  // namespace kiln::ethos_u
