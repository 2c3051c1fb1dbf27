// Which values each payload node reads and writes: the backend plans its steps and
// checks every id with it before anything is defined.
#include "backends/xnnpack/runtime/delegate.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace xnnpack {

using kiln_xnnpack::NodeUnion;

namespace {

template <typename T>
void one_to_one(const T* n, NodeIo* io) {
  io->inputs[0] = n->input_id();
  io->num_inputs = 1;
  io->outputs[0] = n->output_id();
  io->num_outputs = 1;
}

template <typename T>
void two_to_one(const T* n, NodeIo* io) {
  io->inputs[0] = n->input1_id();
  io->inputs[1] = n->input2_id();
  io->num_inputs = 2;
  io->outputs[0] = n->output_id();
  io->num_outputs = 1;
}

template <typename T>
void weighted(const T* n, NodeIo* io) {
  io->inputs[0] = n->input1_id();
  io->inputs[1] = n->filter_id();
  io->inputs[2] = n->bias_id();
  io->num_inputs = 3;
  io->outputs[0] = n->output_id();
  io->num_outputs = 1;
}

}  // namespace

Error node_io(const kiln_xnnpack::XNode& node, size_t index, NodeIo* io) {
  const void* table = node.xnode_union();
  if (table == nullptr && node.xnode_union_type() != NodeUnion::NONE) {
    KILN_LOG(Error, "XNNPACK node %zu has no body", index);
    return Error::DelegatePayloadBadBlock;
  }
  switch (node.xnode_union_type()) {
    case NodeUnion::XNNConv2d: weighted(node.xnode_union_as_XNNConv2d(), io); break;
    case NodeUnion::XNNDepthwiseConv2d: weighted(node.xnode_union_as_XNNDepthwiseConv2d(), io); break;
    case NodeUnion::XNNConvTranspose2d: weighted(node.xnode_union_as_XNNConvTranspose2d(), io); break;
    case NodeUnion::XNNFullyConnected: weighted(node.xnode_union_as_XNNFullyConnected(), io); break;
    case NodeUnion::XNNAdd: two_to_one(node.xnode_union_as_XNNAdd(), io); break;
    case NodeUnion::XNNSubtract: two_to_one(node.xnode_union_as_XNNSubtract(), io); break;
    case NodeUnion::XNNMultiply: two_to_one(node.xnode_union_as_XNNMultiply(), io); break;
    case NodeUnion::XNNDiv: two_to_one(node.xnode_union_as_XNNDiv(), io); break;
    case NodeUnion::XNNMinimum: two_to_one(node.xnode_union_as_XNNMinimum(), io); break;
    case NodeUnion::XNNMaximum: two_to_one(node.xnode_union_as_XNNMaximum(), io); break;
    case NodeUnion::XNNPReLU: two_to_one(node.xnode_union_as_XNNPReLU(), io); break;
    case NodeUnion::XNNAvgPooling2d: one_to_one(node.xnode_union_as_XNNAvgPooling2d(), io); break;
    case NodeUnion::XNNMaxPooling2d: one_to_one(node.xnode_union_as_XNNMaxPooling2d(), io); break;
    case NodeUnion::XNNGlobalAvgPooling2d: one_to_one(node.xnode_union_as_XNNGlobalAvgPooling2d(), io); break;
    case NodeUnion::XNNConvert: one_to_one(node.xnode_union_as_XNNConvert(), io); break;
    case NodeUnion::XNNClamp: one_to_one(node.xnode_union_as_XNNClamp(), io); break;
    case NodeUnion::XNNSoftmax: one_to_one(node.xnode_union_as_XNNSoftmax(), io); break;
    case NodeUnion::XNNSigmoid: one_to_one(node.xnode_union_as_XNNSigmoid(), io); break;
    case NodeUnion::XNNHardswish: one_to_one(node.xnode_union_as_XNNHardswish(), io); break;
    case NodeUnion::XNNFloor: one_to_one(node.xnode_union_as_XNNFloor(), io); break;
    case NodeUnion::XNNCeiling: one_to_one(node.xnode_union_as_XNNCeiling(), io); break;
    case NodeUnion::XNNSquareRoot: one_to_one(node.xnode_union_as_XNNSquareRoot(), io); break;
    case NodeUnion::XNNSquare: one_to_one(node.xnode_union_as_XNNSquare(), io); break;
    case NodeUnion::XNNNegate: one_to_one(node.xnode_union_as_XNNNegate(), io); break;
    case NodeUnion::XNNAbs: one_to_one(node.xnode_union_as_XNNAbs(), io); break;
    case NodeUnion::XNNLeakyReLU: one_to_one(node.xnode_union_as_XNNLeakyReLU(), io); break;
    case NodeUnion::XNNELU: one_to_one(node.xnode_union_as_XNNELU(), io); break;
    case NodeUnion::XNNStaticReshape: one_to_one(node.xnode_union_as_XNNStaticReshape(), io); break;
    case NodeUnion::XNNStaticConstantPad: one_to_one(node.xnode_union_as_XNNStaticConstantPad(), io); break;
    case NodeUnion::XNNStaticResizeBilinear2D:
      one_to_one(node.xnode_union_as_XNNStaticResizeBilinear2D(), io);
      break;
    case NodeUnion::XNNStaticTranspose: one_to_one(node.xnode_union_as_XNNStaticTranspose(), io); break;
    default:
      KILN_LOG(Error, "XNNPACK node %zu: %s is not available in this XNNPACK version (or not run by Kiln)",
               index, kiln_xnnpack::EnumNameNodeUnion(node.xnode_union_type()));
      return Error::NotSupported;
  }
  return Error::Ok;
}

}  // namespace xnnpack
}  // namespace kiln
