// Defines one payload value in an XNNPACK subgraph: fp32, per-tensor quantized (qint8,
// quint8, qint32) and per-channel quantized (qcint8, qcint32); constants found in the
// payload's constant data or the program's named data, bounds-checked.
#include <cstring>
#include <new>

#include "backends/xnnpack/runtime/delegate.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace xnnpack {

using kiln_xnnpack::XNNDatatype;

size_t element_size(XNNDatatype datatype) {
  switch (datatype) {
    case XNNDatatype::xnn_datatype_fp32:
    case XNNDatatype::xnn_datatype_qint32:
    case XNNDatatype::xnn_datatype_qcint32: return 4;
    case XNNDatatype::xnn_datatype_qint8:
    case XNNDatatype::xnn_datatype_quint8:
    case XNNDatatype::xnn_datatype_qcint8: return 1;
    default: return 0;
  }
}

const kiln_xnnpack::XNNTensorValue& tensor(const Delegate& delegate, uint32_t id) {
  return *tensor_of(*delegate.graph->xvalues()->Get(delegate.value_position[id]));
}

const kiln_xnnpack::XNNTensorValue* tensor_of(const kiln_xnnpack::XValue& value) {
  if (const auto* plain = value.xvalue_union_as_XNNTensorValue()) return plain;
  if (const auto* quantized = value.xvalue_union_as_XNNQuantizedTensorValue()) {
    return quantized->tensor_value();
  }
  return nullptr;
}

namespace {

/// The bytes of constant `index` (XNNGraph.constant_data), at least `nbytes` of them.
Result<const uint8_t*> constant(const ValueSource& source, uint32_t index, size_t nbytes,
                                uint32_t value_id) {
  const auto* table = source.delegate->graph->constant_data();
  if (table == nullptr || index >= table->size()) {
    KILN_LOG(Error, "XNNPACK value %u: constant %u; the payload has %u", value_id, index,
             table != nullptr ? table->size() : 0u);
    return Error::DelegatePayloadBadIo;
  }
  const kiln_xnnpack::ConstantDataOffset* entry = table->Get(index);
  Span<const uint8_t> bytes;
  if (entry->named_key() != nullptr && entry->named_key()->size() > 0) {
    if (source.named_data == nullptr) {
      KILN_LOG(Error, "XNNPACK value %u: constant '%s' is named data, and none is available",
               value_id, entry->named_key()->c_str());
      return Error::NotFound;
    }
    KILN_TRY_ASSIGN(bytes, source.named_data->get(entry->named_key()->c_str(),
                                                  entry->named_key()->size()));
  } else {
    const uint64_t offset = entry->offset();
    const uint64_t size = entry->size();
    const size_t total = source.constant_data.size();
    if (offset > total || size > total - offset) {
      KILN_LOG(Error, "XNNPACK value %u: constant %u at [%llu, +%llu) lies outside the %zu-byte "
               "constant data", value_id, index, static_cast<unsigned long long>(offset),
               static_cast<unsigned long long>(size), total);
      return Error::DelegatePayloadBadSize;
    }
    bytes = Span<const uint8_t>(source.constant_data.data() + offset, static_cast<size_t>(size));
  }
  if (bytes.size() < nbytes) {
    KILN_LOG(Error, "XNNPACK value %u: constant %u has %zu bytes; its shape needs %zu", value_id,
             index, bytes.size(), nbytes);
    return Error::DelegatePayloadBadSize;
  }
  return bytes.data();
}

/// The per-channel scales of a value (in the table or in a constant), copied to memory
/// the delegate owns: XNNPACK keeps the pointer.
Result<const float*> channel_scales(const ValueSource& source, const kiln_xnnpack::PerChannelQuant& q,
                                    size_t channels, uint32_t value_id) {
  std::unique_ptr<float[]>& slot = source.delegate->scales[value_id];
  slot.reset(new (std::nothrow) float[channels > 0 ? channels : 1]);
  if (!slot) return Error::MemoryAllocationFailed;
  if (q.scale() != nullptr && q.scale()->size() > 0) {
    if (q.scale()->size() != channels) {
      KILN_LOG(Error, "XNNPACK value %u: %u scales for %zu channels", value_id, q.scale()->size(),
               channels);
      return Error::DelegatePayloadBadIo;
    }
    for (size_t i = 0; i < channels; ++i) slot[i] = q.scale()->Get(static_cast<flatbuffers::uoffset_t>(i));
    return slot.get();
  }
  if (q.num_scales() != channels) {
    KILN_LOG(Error, "XNNPACK value %u: %u scales for %zu channels", value_id, q.num_scales(), channels);
    return Error::DelegatePayloadBadIo;
  }
  KILN_TRY_ASSIGN(const uint8_t* bytes,
                  constant(source, q.scale_buffer_idx(), channels * sizeof(float), value_id));
  std::memcpy(slot.get(), bytes, channels * sizeof(float));
  return slot.get();
}

}  // namespace

Error define_value(xnn_subgraph_t subgraph, const ValueSource& source, uint32_t id,
                   uint32_t external_id, uint32_t flags, uint32_t* xnn_id) {
  const kiln_xnnpack::XValue* value = source.delegate->graph->xvalues()->Get(source.delegate->value_position[id]);
  const kiln_xnnpack::XNNTensorValue* tensor = tensor_of(*value);
  const XNNDatatype datatype = tensor->datatype();
  const size_t num_dims = tensor->dims() != nullptr ? tensor->dims()->size() : 0;
  size_t dims[kMaxDims];
  for (size_t i = 0; i < num_dims; ++i) dims[i] = tensor->dims()->Get(static_cast<flatbuffers::uoffset_t>(i));
  const void* data = nullptr;
  if (tensor->constant_buffer_idx() != 0) {
    KILN_TRY_ASSIGN(data, constant(source, tensor->constant_buffer_idx(),
                                   source.delegate->value_nbytes[id], id));
    source.delegate->value_constant[id] = data;
  }
  const auto xnn_type = static_cast<xnn_datatype>(datatype);
  xnn_status status = xnn_status_success;
  const auto* quantized = value->xvalue_union_as_XNNQuantizedTensorValue();
  if (quantized == nullptr) {
    status = xnn_define_tensor_value(subgraph, xnn_type, num_dims, dims, data, external_id, flags, xnn_id);
  } else if (const auto* q = quantized->quant_params_as_PerTensorQuant()) {
    status = xnn_define_quantized_tensor_value(subgraph, xnn_type, q->zero_point(), q->scale(),
                                               num_dims, dims, data, external_id, flags, xnn_id);
  } else if (const auto* q = quantized->quant_params_as_PerChannelQuant()) {
    const int32_t axis = q->channel_dim();
    if (axis < 0 || static_cast<size_t>(axis) >= num_dims) {
      KILN_LOG(Error, "XNNPACK value %u: channel dim %d of a %zu-d tensor", id, axis, num_dims);
      return Error::DelegatePayloadBadIo;
    }
    KILN_TRY_ASSIGN(const float* scales, channel_scales(source, *q, dims[axis], id));
    status = xnn_define_channelwise_quantized_tensor_value(subgraph, xnn_type, scales, num_dims,
                                                           static_cast<size_t>(axis), dims, data,
                                                           external_id, flags, xnn_id);
  } else {
    KILN_LOG(Error, "XNNPACK value %u: quantization %s is not available in this XNNPACK version",
             id, kiln_xnnpack::EnumNameQuantParams(quantized->quant_params_type()));
    return Error::NotSupported;
  }
  if (status != xnn_status_success) {
    KILN_LOG(Error, "XNNPACK rejected value %u (%s, %zu dims): status %d", id,
             kiln_xnnpack::EnumNameXNNDatatype(datatype), num_dims, static_cast<int>(status));
    return Error::DelegateInvalidCompatibility;
  }
  return Error::Ok;
}

}  // namespace xnnpack
}  // namespace kiln
