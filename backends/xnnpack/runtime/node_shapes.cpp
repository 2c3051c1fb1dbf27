// Shape checks of every node before XNNPACK sees it. This XNNPACK version takes a node's
// declared output shape on trust (and reads the dims an input does not have as zeros),
// so a payload whose shapes disagree would make it read or write out of bounds: each
// node's output shape is computed here from its inputs and parameters and must match.
#include "backends/xnnpack/runtime/delegate.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace xnnpack {

using kiln_xnnpack::NodeUnion;

namespace {

struct Shape {
  size_t rank = 0;
  size_t d[kMaxDims] = {};
  size_t numel() const {
    size_t n = 1;
    for (size_t i = 0; i < rank; ++i) n *= d[i];
    return n;
  }
  bool operator==(const Shape& o) const {
    if (rank != o.rank) return false;
    for (size_t i = 0; i < rank; ++i) if (d[i] != o.d[i]) return false;
    return true;
  }
};

Shape shape(const Delegate& delegate, uint32_t id) {
  Shape s;
  const auto& t = tensor(delegate, id);
  s.rank = t.dims() != nullptr ? t.dims()->size() : 0;  // at most kMaxDims (index_values)
  for (size_t i = 0; i < s.rank; ++i) s.d[i] = t.dims()->Get(static_cast<flatbuffers::uoffset_t>(i));
  return s;
}

/// Output size of a window of `k` (dilated) over `in` + padding, with `stride`; 0 if none fits.
size_t window_out(size_t in, size_t pad, size_t k, size_t dilation, size_t stride) {
  const size_t span = dilation * (k - 1) + 1;
  if (k == 0 || dilation == 0 || stride == 0 || in + pad < span) return 0;
  return (in + pad - span) / stride + 1;
}

bool conv_ok(const Delegate& d, const kiln_xnnpack::_XNNNodeConv& n, NodeUnion kind) {
  const Shape in = shape(d, n.input1_id());
  const Shape filter = shape(d, n.filter_id());
  const Shape out = shape(d, n.output_id());
  if (in.rank != 4 || out.rank != 4 || filter.rank != 4 || in.d[0] != out.d[0]) return false;
  const size_t groups = n.groups();
  const size_t in_ch = static_cast<size_t>(groups) * n.group_input_channels();
  const size_t out_ch = static_cast<size_t>(groups) * n.group_output_channels();
  if (in.d[3] != in_ch || out.d[3] != out_ch || out_ch == 0) return false;
  if (filter.d[1] != n.kernel_height() || filter.d[2] != n.kernel_width()) return false;
  if (kind == NodeUnion::XNNDepthwiseConv2d) {
    if (filter.d[0] != 1 || filter.d[3] != out_ch) return false;
  } else if (kind == NodeUnion::XNNConvTranspose2d) {
    if (filter.d[0] != out_ch || filter.d[3] != n.group_input_channels()) return false;
  } else if (filter.d[0] != out_ch || filter.d[3] != n.group_input_channels()) {
    return false;
  }
  if (n.bias_id() != kNoValue && shape(d, n.bias_id()).numel() != out_ch) return false;
  const size_t pad_h = static_cast<size_t>(n.padding_top()) + n.padding_bottom();
  const size_t pad_w = static_cast<size_t>(n.padding_left()) + n.padding_right();
  if (kind == NodeUnion::XNNConvTranspose2d) {
    const auto up = [](size_t in, size_t pad, size_t k, size_t dil, size_t stride, size_t adj) -> size_t {
      const size_t full = stride * (in - 1) + adj + dil * (k - 1) + 1;
      return in == 0 || full < pad ? 0 : full - pad;
    };
    return out.d[1] == up(in.d[1], pad_h, n.kernel_height(), n.dilation_height(), n.subsampling_height(),
                          n.adjustment_height()) &&
           out.d[2] == up(in.d[2], pad_w, n.kernel_width(), n.dilation_width(), n.subsampling_width(),
                          n.adjustment_width()) && out.d[1] != 0 && out.d[2] != 0;
  }
  return out.d[1] != 0 && out.d[2] != 0 &&
         out.d[1] == window_out(in.d[1], pad_h, n.kernel_height(), n.dilation_height(), n.subsampling_height()) &&
         out.d[2] == window_out(in.d[2], pad_w, n.kernel_width(), n.dilation_width(), n.subsampling_width());
}

bool pool_ok(const Delegate& d, const kiln_xnnpack::_XNNPooling2D& n, bool dilated) {
  const Shape in = shape(d, n.input_id());
  const Shape out = shape(d, n.output_id());
  if (in.rank != 4 || out.rank != 4 || in.d[0] != out.d[0] || in.d[3] != out.d[3]) return false;
  const size_t dh = dilated ? n.dilation_height() : 1;
  const size_t dw = dilated ? n.dilation_width() : 1;
  const size_t pad_h = static_cast<size_t>(n.padding_top()) + n.padding_bottom();
  const size_t pad_w = static_cast<size_t>(n.padding_left()) + n.padding_right();
  return out.d[1] != 0 && out.d[2] != 0 &&
         out.d[1] == window_out(in.d[1], pad_h, n.pooling_height(), dh, n.stride_height()) &&
         out.d[2] == window_out(in.d[2], pad_w, n.pooling_width(), dw, n.stride_width());
}

bool fully_connected_ok(const Delegate& d, const kiln_xnnpack::XNNFullyConnected& n) {
  const Shape in = shape(d, n.input1_id());
  const Shape filter = shape(d, n.filter_id());
  const Shape out = shape(d, n.output_id());
  if (filter.rank != 2 || in.rank == 0 || out.rank == 0) return false;
  const bool transposed = (n.flags() & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  const size_t k = transposed ? filter.d[0] : filter.d[1];
  const size_t o = transposed ? filter.d[1] : filter.d[0];
  if (k == 0 || in.d[in.rank - 1] != k || out.d[out.rank - 1] != o) return false;
  if (n.bias_id() != kNoValue && shape(d, n.bias_id()).numel() != o) return false;
  return in.numel() / k * o == out.numel();
}

/// Numpy-style broadcast of a and b (aligned at the last dim) is `out`.
bool broadcast_ok(const Shape& a, const Shape& b, const Shape& out) {
  if (out.rank != (a.rank > b.rank ? a.rank : b.rank)) return false;
  for (size_t i = 0; i < out.rank; ++i) {
    const size_t da = i < out.rank - a.rank ? 1 : a.d[i - (out.rank - a.rank)];
    const size_t db = i < out.rank - b.rank ? 1 : b.d[i - (out.rank - b.rank)];
    const size_t want = da == 1 ? db : da;
    if ((da != db && da != 1 && db != 1) || out.d[i] != want) return false;
  }
  return true;
}

template <typename T>
bool same_shape(const Delegate& d, const T& n) {
  return shape(d, n.input_id()) == shape(d, n.output_id());
}

bool shapes_ok(const Delegate& d, const kiln_xnnpack::XNode& node) {
  switch (node.xnode_union_type()) {
    case NodeUnion::XNNConv2d: return conv_ok(d, *node.xnode_union_as_XNNConv2d(), NodeUnion::XNNConv2d);
    case NodeUnion::XNNDepthwiseConv2d:
      return conv_ok(d, *node.xnode_union_as_XNNDepthwiseConv2d(), NodeUnion::XNNDepthwiseConv2d);
    case NodeUnion::XNNConvTranspose2d:
      return conv_ok(d, *node.xnode_union_as_XNNConvTranspose2d(), NodeUnion::XNNConvTranspose2d);
    case NodeUnion::XNNFullyConnected: return fully_connected_ok(d, *node.xnode_union_as_XNNFullyConnected());
    case NodeUnion::XNNMaxPooling2d: return pool_ok(d, *node.xnode_union_as_XNNMaxPooling2d(), true);
    case NodeUnion::XNNAvgPooling2d: return pool_ok(d, *node.xnode_union_as_XNNAvgPooling2d(), false);
    case NodeUnion::XNNGlobalAvgPooling2d: {
      const auto* n = node.xnode_union_as_XNNGlobalAvgPooling2d();
      const Shape in = shape(d, n->input_id());
      const Shape out = shape(d, n->output_id());
      return in.rank == 4 && out.rank == 4 && out.d[0] == in.d[0] && out.d[1] == 1 && out.d[2] == 1 &&
             out.d[3] == in.d[3];
    }
    case NodeUnion::XNNStaticReshape: {
      const auto* n = node.xnode_union_as_XNNStaticReshape();
      const Shape out = shape(d, n->output_id());
      if (n->new_shape() == nullptr || n->new_shape()->size() != out.rank || n->num_dims() != out.rank) return false;
      for (size_t i = 0; i < out.rank; ++i) {
        if (n->new_shape()->Get(static_cast<flatbuffers::uoffset_t>(i)) != out.d[i]) return false;
      }
      return shape(d, n->input_id()).numel() == out.numel();
    }
    case NodeUnion::XNNStaticConstantPad: {
      const auto* n = node.xnode_union_as_XNNStaticConstantPad();
      const Shape in = shape(d, n->input_id());
      const Shape out = shape(d, n->output_id());
      if (n->pre_paddings() == nullptr || n->post_paddings() == nullptr || in.rank != out.rank ||
          n->pre_paddings()->size() != in.rank || n->post_paddings()->size() != in.rank) {
        return false;
      }
      for (flatbuffers::uoffset_t i = 0; i < in.rank; ++i) {
        if (out.d[i] != in.d[i] + n->pre_paddings()->Get(i) + n->post_paddings()->Get(i)) return false;
      }
      return true;
    }
    case NodeUnion::XNNStaticResizeBilinear2D: {
      const auto* n = node.xnode_union_as_XNNStaticResizeBilinear2D();
      const Shape in = shape(d, n->input_id());
      const Shape out = shape(d, n->output_id());
      return in.rank == 4 && out.rank == 4 && out.d[0] == in.d[0] && out.d[1] == n->new_height() &&
             out.d[2] == n->new_width() && out.d[3] == in.d[3];
    }
    case NodeUnion::XNNPReLU: {
      const auto* n = node.xnode_union_as_XNNPReLU();
      const Shape in = shape(d, n->input1_id());
      return in.rank > 0 && in == shape(d, n->output_id()) &&
             shape(d, n->input2_id()).numel() == in.d[in.rank - 1];
    }
    case NodeUnion::XNNStaticTranspose: return true;  // plan_permute checks it
#define KILN_BINARY(kind)                                                                         \
  case NodeUnion::kind: {                                                                         \
    const auto* n = node.xnode_union_as_##kind();                                                 \
    return broadcast_ok(shape(d, n->input1_id()), shape(d, n->input2_id()), shape(d, n->output_id())); \
  }
    KILN_BINARY(XNNAdd)
    KILN_BINARY(XNNSubtract)
    KILN_BINARY(XNNMultiply)
    KILN_BINARY(XNNDiv)
    KILN_BINARY(XNNMinimum)
    KILN_BINARY(XNNMaximum)
#undef KILN_BINARY
    case NodeUnion::XNNConvert: return same_shape(d, *node.xnode_union_as_XNNConvert());
    case NodeUnion::XNNClamp: return same_shape(d, *node.xnode_union_as_XNNClamp());
    case NodeUnion::XNNSoftmax: return same_shape(d, *node.xnode_union_as_XNNSoftmax());
    case NodeUnion::XNNSigmoid: return same_shape(d, *node.xnode_union_as_XNNSigmoid());
    case NodeUnion::XNNHardswish: return same_shape(d, *node.xnode_union_as_XNNHardswish());
    case NodeUnion::XNNFloor: return same_shape(d, *node.xnode_union_as_XNNFloor());
    case NodeUnion::XNNCeiling: return same_shape(d, *node.xnode_union_as_XNNCeiling());
    case NodeUnion::XNNSquareRoot: return same_shape(d, *node.xnode_union_as_XNNSquareRoot());
    case NodeUnion::XNNSquare: return same_shape(d, *node.xnode_union_as_XNNSquare());
    case NodeUnion::XNNNegate: return same_shape(d, *node.xnode_union_as_XNNNegate());
    case NodeUnion::XNNAbs: return same_shape(d, *node.xnode_union_as_XNNAbs());
    case NodeUnion::XNNLeakyReLU: return same_shape(d, *node.xnode_union_as_XNNLeakyReLU());
    case NodeUnion::XNNELU: return same_shape(d, *node.xnode_union_as_XNNELU());
    default: return false;
  }
}

}  // namespace

Error check_node_shapes(const Delegate& delegate, const kiln_xnnpack::XNode& node, size_t index) {
  if (shapes_ok(delegate, node)) return Error::Ok;
  KILN_LOG(Error, "XNNPACK node %zu (%s): its values' shapes do not fit the node's parameters",
           index, kiln_xnnpack::EnumNameNodeUnion(node.xnode_union_type()));
  return Error::DelegateInvalidCompatibility;
}

}  // namespace xnnpack
}  // namespace kiln
