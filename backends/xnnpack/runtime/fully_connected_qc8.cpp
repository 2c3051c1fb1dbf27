// Fully connected with per-channel int8 weights (what ExecuTorch's quantizer makes of
// nn.Linear) on an XNNPACK version whose fully connected takes per-tensor weights only:
// input [..., K] viewed as NHWC [M, 1, 1, K], a 1x1 convolution with the same [O, K]
// weights viewed as [O, 1, 1, K], the result [M, 1, 1, O] viewed as the output [..., O].
// The weights, scales, bias and requantization are the same, so are the results.
#include "backends/xnnpack/runtime/delegate.h"

namespace kiln {
namespace xnnpack {
namespace {

/// Defines an internal per-tensor quantized value shaped like `like` but with dims `dims`.
xnn_status define_view(xnn_subgraph_t g, const Delegate& d, uint32_t like, const size_t* dims,
                       uint32_t* id_out) {
  const auto* value = d.graph->xvalues()->Get(d.value_position[like]);
  const auto* q = value->xvalue_union_as_XNNQuantizedTensorValue();
  const auto* per_tensor = q != nullptr ? q->quant_params_as_PerTensorQuant() : nullptr;
  if (per_tensor == nullptr) return xnn_status_invalid_parameter;
  return xnn_define_quantized_tensor_value(g, static_cast<xnn_datatype>(tensor(d, like).datatype()),
                                           per_tensor->zero_point(), per_tensor->scale(), 4, dims,
                                           nullptr, XNN_INVALID_VALUE_ID, 0, id_out);
}

}  // namespace

xnn_status define_fully_connected_qc8(xnn_subgraph_t g, const Delegate& d,
                                      const kiln_xnnpack::XNNFullyConnected& node, float output_min,
                                      float output_max, const uint32_t* ids) {
  const auto& filter = tensor(d, node.filter_id());
  const auto& input = tensor(d, node.input1_id());
  if (node.flags() != 0 || filter.dims() == nullptr || filter.dims()->size() != 2 ||
      input.dims() == nullptr || input.dims()->size() == 0 ||
      d.value_constant[node.filter_id()] == nullptr || !d.scales[node.filter_id()]) {
    return xnn_status_invalid_parameter;
  }
  const size_t out_channels = filter.dims()->Get(0);
  const size_t in_channels = filter.dims()->Get(1);
  const size_t rows = in_channels != 0 ? d.value_nbytes[node.input1_id()] / in_channels : 0;
  if (rows * in_channels != d.value_nbytes[node.input1_id()]) return xnn_status_invalid_parameter;
  const size_t in_dims[4] = {rows, 1, 1, in_channels};
  const size_t filter_dims[4] = {out_channels, 1, 1, in_channels};
  const size_t out_dims[4] = {rows, 1, 1, out_channels};
  uint32_t in4 = XNN_INVALID_VALUE_ID;
  uint32_t filter4 = XNN_INVALID_VALUE_ID;
  uint32_t out4 = XNN_INVALID_VALUE_ID;
  xnn_status status = define_view(g, d, node.input1_id(), in_dims, &in4);
  if (status == xnn_status_success) status = define_view(g, d, node.output_id(), out_dims, &out4);
  if (status == xnn_status_success) {
    status = xnn_define_channelwise_quantized_tensor_value(
        g, xnn_datatype_qcint8, d.scales[node.filter_id()].get(), 4, 0, filter_dims,
        d.value_constant[node.filter_id()], XNN_INVALID_VALUE_ID, 0, &filter4);
  }
  if (status == xnn_status_success) {
    status = xnn_define_static_reshape(g, 4, in_dims, ids[node.input1_id()], in4, 0);
  }
  if (status == xnn_status_success) {
    const uint32_t bias = node.bias_id() == kNoValue ? XNN_INVALID_VALUE_ID : ids[node.bias_id()];
    status = xnn_define_convolution_2d(g, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, in_channels, out_channels,
                                       output_min, output_max, in4, filter4, bias, out4, 0);
  }
  if (status == xnn_status_success) {
    size_t shape[kMaxDims];
    const auto& output = tensor(d, node.output_id());
    const size_t rank = output.dims() != nullptr ? output.dims()->size() : 0;
    for (size_t i = 0; i < rank; ++i) shape[i] = output.dims()->Get(static_cast<flatbuffers::uoffset_t>(i));
    status = xnn_define_static_reshape(g, rank, shape, out4, ids[node.output_id()], 0);
  }
  return status;
}

}  // namespace xnnpack
}  // namespace kiln
