// Defines one payload node in an XNNPACK subgraph with this XNNPACK version's API. The
// library checks shapes and datatypes here; a refusal is a named error, never a crash.
#include <cmath>
#include <limits>

#include "backends/xnnpack/runtime/delegate.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace xnnpack {

using kiln_xnnpack::NodeUnion;

namespace {

struct Clamp {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};

uint32_t id(const uint32_t* xnn_ids, uint32_t payload_id) {
  return payload_id == kNoValue ? XNN_INVALID_VALUE_ID : xnn_ids[payload_id];
}

xnn_status conv(xnn_subgraph_t g, const kiln_xnnpack::_XNNNodeConv* n, const Clamp& c,
                const uint32_t* ids) {
  return xnn_define_convolution_2d(
      g, n->padding_top(), n->padding_right(), n->padding_bottom(), n->padding_left(),
      n->kernel_height(), n->kernel_width(), n->subsampling_height(), n->subsampling_width(),
      n->dilation_height(), n->dilation_width(), n->groups(), n->group_input_channels(),
      n->group_output_channels(), c.min, c.max, id(ids, n->input1_id()), id(ids, n->filter_id()),
      id(ids, n->bias_id()), id(ids, n->output_id()), n->flags());
}

xnn_status depthwise(xnn_subgraph_t g, const kiln_xnnpack::_XNNNodeConv* n, const Clamp& c,
                     const uint32_t* ids) {
  // One input channel per group: the multiplier is the group's output channels.
  const uint32_t in_per_group = n->group_input_channels() != 0 ? n->group_input_channels() : 1;
  return xnn_define_depthwise_convolution_2d(
      g, n->padding_top(), n->padding_right(), n->padding_bottom(), n->padding_left(),
      n->kernel_height(), n->kernel_width(), n->subsampling_height(), n->subsampling_width(),
      n->dilation_height(), n->dilation_width(), n->group_output_channels() / in_per_group,
      n->groups(), c.min, c.max, id(ids, n->input1_id()), id(ids, n->filter_id()),
      id(ids, n->bias_id()), id(ids, n->output_id()), n->flags());
}

xnn_status deconv(xnn_subgraph_t g, const kiln_xnnpack::_XNNNodeConv* n, const Clamp& c,
                  const uint32_t* ids) {
  return xnn_define_deconvolution_2d(
      g, n->padding_top(), n->padding_right(), n->padding_bottom(), n->padding_left(),
      n->adjustment_height(), n->adjustment_width(), n->kernel_height(), n->kernel_width(),
      n->subsampling_height(), n->subsampling_width(), n->dilation_height(), n->dilation_width(),
      n->groups(), n->group_input_channels(), n->group_output_channels(), c.min, c.max,
      id(ids, n->input1_id()), id(ids, n->filter_id()), id(ids, n->bias_id()),
      id(ids, n->output_id()), n->flags());
}


xnn_status max_pool(xnn_subgraph_t g, const kiln_xnnpack::_XNNPooling2D* n, const Clamp& c,
                    const uint32_t* ids) {
  return xnn_define_max_pooling_2d(
      g, n->padding_top(), n->padding_right(), n->padding_bottom(), n->padding_left(),
      n->pooling_height(), n->pooling_width(), n->stride_height(), n->stride_width(),
      n->dilation_height(), n->dilation_width(), c.min, c.max, id(ids, n->input_id()),
      id(ids, n->output_id()), n->flags());
}

xnn_status avg_pool(xnn_subgraph_t g, const kiln_xnnpack::_XNNPooling2D* n, const Clamp& c,
                    const uint32_t* ids) {
  return xnn_define_average_pooling_2d(
      g, n->padding_top(), n->padding_right(), n->padding_bottom(), n->padding_left(),
      n->pooling_height(), n->pooling_width(), n->stride_height(), n->stride_width(), c.min,
      c.max, id(ids, n->input_id()), id(ids, n->output_id()), n->flags());
}

/// Copies a flatbuffer vector of dims into `out` (at most kMaxDims); false if it does not fit.
bool to_sizes(const flatbuffers::Vector<uint32_t>* v, size_t expected, size_t* out) {
  if (v == nullptr || v->size() != expected || expected > kMaxDims) return false;
  for (size_t i = 0; i < expected; ++i) out[i] = v->Get(static_cast<flatbuffers::uoffset_t>(i));
  return true;
}

xnn_status reshape(xnn_subgraph_t g, const kiln_xnnpack::XNNStaticReshape* n, const uint32_t* ids) {
  size_t shape[kMaxDims];
  if (!to_sizes(n->new_shape(), n->num_dims(), shape)) return xnn_status_invalid_parameter;
  return xnn_define_static_reshape(g, n->num_dims(), shape, id(ids, n->input_id()),
                                   id(ids, n->output_id()), n->flags());
}

xnn_status pad(xnn_subgraph_t g, const kiln_xnnpack::XNNStaticConstantPad* n, const uint32_t* ids) {
  size_t pre[kMaxDims] = {};
  size_t post[kMaxDims] = {};
  const size_t rank = n->pre_paddings() != nullptr ? n->pre_paddings()->size() : 0;
  if (!to_sizes(n->pre_paddings(), rank, pre) || !to_sizes(n->post_paddings(), rank, post)) {
    return xnn_status_invalid_parameter;
  }
  return xnn_define_static_constant_pad(g, pre, post, n->padding_value(), id(ids, n->input_id()),
                                        id(ids, n->output_id()), n->flags());
}

xnn_status define(xnn_subgraph_t g, const Delegate& d, const kiln_xnnpack::XNode& node,
                  const Clamp& c, const uint32_t* ids) {
#define KILN_UNARY(kind, fn)                                         \
  case NodeUnion::kind: {                                            \
    const auto* n = node.xnode_union_as_##kind();                    \
    return fn(g, id(ids, n->input_id()), id(ids, n->output_id()), n->flags()); \
  }
#define KILN_BINARY_CLAMPED(kind, fn)                                                          \
  case NodeUnion::kind: {                                                                      \
    const auto* n = node.xnode_union_as_##kind();                                              \
    return fn(g, c.min, c.max, id(ids, n->input1_id()), id(ids, n->input2_id()),               \
              id(ids, n->output_id()), n->flags());                                            \
  }
#define KILN_BINARY(kind, fn)                                                                  \
  case NodeUnion::kind: {                                                                      \
    const auto* n = node.xnode_union_as_##kind();                                              \
    return fn(g, id(ids, n->input1_id()), id(ids, n->input2_id()), id(ids, n->output_id()),    \
              n->flags());                                                                     \
  }
  switch (node.xnode_union_type()) {
    case NodeUnion::XNNConv2d: return conv(g, node.xnode_union_as_XNNConv2d(), c, ids);
    case NodeUnion::XNNDepthwiseConv2d: return depthwise(g, node.xnode_union_as_XNNDepthwiseConv2d(), c, ids);
    case NodeUnion::XNNConvTranspose2d: return deconv(g, node.xnode_union_as_XNNConvTranspose2d(), c, ids);
    case NodeUnion::XNNFullyConnected: {
      const auto* n = node.xnode_union_as_XNNFullyConnected();
      if (tensor(d, n->filter_id()).datatype() == kiln_xnnpack::XNNDatatype::xnn_datatype_qcint8) {
        return define_fully_connected_qc8(g, d, *n, c.min, c.max, ids);
      }
      return xnn_define_fully_connected(g, c.min, c.max, id(ids, n->input1_id()),
                                        id(ids, n->filter_id()), id(ids, n->bias_id()),
                                        id(ids, n->output_id()), n->flags());
    }
    case NodeUnion::XNNMaxPooling2d: return max_pool(g, node.xnode_union_as_XNNMaxPooling2d(), c, ids);
    case NodeUnion::XNNAvgPooling2d: return avg_pool(g, node.xnode_union_as_XNNAvgPooling2d(), c, ids);
    case NodeUnion::XNNGlobalAvgPooling2d: {
      const auto* n = node.xnode_union_as_XNNGlobalAvgPooling2d();
      return xnn_define_global_average_pooling_2d(g, c.min, c.max, id(ids, n->input_id()),
                                                  id(ids, n->output_id()), n->flags());
    }
    case NodeUnion::XNNClamp: {
      const auto* n = node.xnode_union_as_XNNClamp();
      return xnn_define_clamp(g, c.min, c.max, id(ids, n->input_id()), id(ids, n->output_id()),
                              n->flags());
    }
    case NodeUnion::XNNLeakyReLU: {
      const auto* n = node.xnode_union_as_XNNLeakyReLU();
      return xnn_define_leaky_relu(g, n->negative_slope(), id(ids, n->input_id()),
                                   id(ids, n->output_id()), n->flags());
    }
    case NodeUnion::XNNELU: {
      const auto* n = node.xnode_union_as_XNNELU();
      return xnn_define_elu(g, n->alpha(), id(ids, n->input_id()), id(ids, n->output_id()), n->flags());
    }
    case NodeUnion::XNNStaticResizeBilinear2D: {
      const auto* n = node.xnode_union_as_XNNStaticResizeBilinear2D();
      return xnn_define_static_resize_bilinear_2d(g, n->new_height(), n->new_width(),
                                                  id(ids, n->input_id()), id(ids, n->output_id()),
                                                  n->flags());
    }
    case NodeUnion::XNNStaticReshape: return reshape(g, node.xnode_union_as_XNNStaticReshape(), ids);
    case NodeUnion::XNNStaticConstantPad: return pad(g, node.xnode_union_as_XNNStaticConstantPad(), ids);
    KILN_BINARY_CLAMPED(XNNAdd, xnn_define_add2)
    KILN_BINARY_CLAMPED(XNNSubtract, xnn_define_subtract)
    KILN_BINARY_CLAMPED(XNNMultiply, xnn_define_multiply2)
    KILN_BINARY_CLAMPED(XNNDiv, xnn_define_divide)
    KILN_BINARY(XNNMinimum, xnn_define_minimum2)
    KILN_BINARY(XNNMaximum, xnn_define_maximum2)
    KILN_BINARY(XNNPReLU, xnn_define_prelu)
    KILN_UNARY(XNNConvert, xnn_define_convert)
    KILN_UNARY(XNNSoftmax, xnn_define_softmax)
    KILN_UNARY(XNNSigmoid, xnn_define_sigmoid)
    KILN_UNARY(XNNHardswish, xnn_define_hardswish)
    KILN_UNARY(XNNFloor, xnn_define_floor)
    KILN_UNARY(XNNCeiling, xnn_define_ceiling)
    KILN_UNARY(XNNSquareRoot, xnn_define_square_root)
    KILN_UNARY(XNNSquare, xnn_define_square)
    KILN_UNARY(XNNNegate, xnn_define_negate)
    KILN_UNARY(XNNAbs, xnn_define_abs)
    default: return xnn_status_unsupported_parameter;
  }
#undef KILN_UNARY
#undef KILN_BINARY
#undef KILN_BINARY_CLAMPED
}

}  // namespace

Error define_node(xnn_subgraph_t subgraph, const Delegate& delegate, const kiln_xnnpack::XNode& node,
                  size_t index, const uint32_t* xnn_ids) {
  Clamp clamp;
  if (const kiln_xnnpack::OutputMinMax* range = node.output_min_max()) {
    clamp.min = range->output_min();
    clamp.max = range->output_max();
  }
  const xnn_status status = define(subgraph, delegate, node, clamp, xnn_ids);
  if (status != xnn_status_success) {
    KILN_LOG(Error, "XNNPACK rejected node %zu (%s): status %d (shapes, datatypes or parameters "
             "it cannot take)", index, kiln_xnnpack::EnumNameNodeUnion(node.xnode_union_type()),
             static_cast<int>(status));
    return Error::DelegateInvalidCompatibility;
  }
  return Error::Ok;
}

}  // namespace xnnpack
}  // namespace kiln
