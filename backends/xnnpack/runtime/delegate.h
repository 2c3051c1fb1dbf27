// The XNNPACK delegate's state, built at init from the payload (xnnpack_backend.cpp) and
// used at execute. The payload's nodes run as a sequence of steps: XNNPACK runtimes for
// runs of nodes this XNNPACK version has, and Kiln's own permutes for the static
// transposes (ExecuTorch puts them at NCHW/NHWC boundaries; this version has no
// subgraph transpose). Everything is allocated at init, on the heap (the backend is
// host-only, like XNNPACK itself, which allocates its packed weights there too).
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kiln_xnnpack_schema/xnnpack_graph_generated.h"
#include "runtime/backend/backend_interface.h"
#include "runtime/core/error.h"
#include "runtime/core/result.h"

namespace kiln {
namespace xnnpack {

constexpr size_t kMaxDims = XNN_MAX_TENSOR_DIMS;
constexpr uint32_t kNoValue = 0xFFFFFFFFu;

/// The value ids a node reads and writes (bias ids may be kNoValue).
struct NodeIo {
  uint32_t inputs[5];
  size_t num_inputs = 0;
  uint32_t outputs[2];
  size_t num_outputs = 0;
};

/// Fills `io` for `node`. NotSupported (logged) for a node kind this backend does not run.
Error node_io(const kiln_xnnpack::XNode& node, size_t index, NodeIo* io);

/// A value's element size in bytes; 0 for a datatype this backend does not take.
size_t element_size(kiln_xnnpack::XNNDatatype datatype);

/// The tensor part of a value (plain or quantized), or nullptr.
const kiln_xnnpack::XNNTensorValue* tensor_of(const kiln_xnnpack::XValue& value);

/// output = input permuted (output dim i is input dim perm[i]), as the strided copy
/// plan_permute works out once at init: the output's sizes, and for each output dim its
/// stride in the input and in the (contiguous) output, in elements.
struct Permute {
  uint32_t input;
  uint32_t output;
  int32_t rank;
  int64_t sizes[kMaxDims];
  int64_t in_strides[kMaxDims];
  int64_t out_strides[kMaxDims];
  size_t element_size;
};

struct Step {
  xnn_runtime_t runtime = nullptr;  // nullptr: a permute step
  Permute permute{};
  /// For a runtime: its external values, and the payload value each one is.
  std::unique_ptr<xnn_external_value[]> externals;
  std::unique_ptr<uint32_t[]> external_payload_ids;
  size_t num_externals = 0;
  /// The pointers setup last bound (xnn_setup_runtime is skipped when they are unchanged).
  std::unique_ptr<void*[]> bound;
};

struct Delegate {
  /// The payload's graph, read during init only: execute uses what init copied out of it
  /// (ExecuTorch frees a delegate's payload after init, and so may a host application).
  const kiln_xnnpack::XNNGraph* graph = nullptr;
  /// An 8-byte aligned copy of the flatbuffer when the payload's is not aligned (flatbuffers
  /// reads scalars in place); kept with the delegate, as inline constants may live in it.
  std::unique_ptr<uint64_t[]> aligned_flatbuffer;
  /// The graph's input value ids, then its output value ids (copied at init).
  std::unique_ptr<uint32_t[]> io_ids;
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  size_t num_values = 0;
  /// Per payload value id: its position in XNNGraph.xvalues.
  std::unique_ptr<uint32_t[]> value_position;
  /// Per payload value id: where its data is at execute (args, an init-time buffer).
  std::unique_ptr<void*[]> value_data;
  std::unique_ptr<size_t[]> value_nbytes;
  /// Intermediates handed between steps, one buffer each.
  std::unique_ptr<std::unique_ptr<uint8_t[]>[]> buffers;
  /// Per payload value id: its constant bytes (nullptr for a non-constant).
  std::unique_ptr<const void*[]> value_constant;
  /// Per-channel scales, copied (XNNPACK keeps the pointers).
  std::unique_ptr<std::unique_ptr<float[]>[]> scales;
  std::unique_ptr<Step[]> steps;
  size_t num_steps = 0;
  pthreadpool_t threadpool = nullptr;
  ~Delegate();
};

/// Everything defining a value in a subgraph needs.
struct ValueSource {
  Span<const uint8_t> constant_data;
  const NamedDataMap* named_data;
  Delegate* delegate;
};

/// Defines payload value `id` in `subgraph` (external slot `external_id` or
/// XNN_INVALID_VALUE_ID, flags XNN_VALUE_FLAG_*), its XNNPACK id into `*xnn_id`.
Error define_value(xnn_subgraph_t subgraph, const ValueSource& source, uint32_t id,
                   uint32_t external_id, uint32_t flags, uint32_t* xnn_id);

/// Defines node `index` in `subgraph`; `xnn_ids` maps payload value ids to the subgraph's.
Error define_node(xnn_subgraph_t subgraph, const Delegate& delegate, const kiln_xnnpack::XNode& node,
                  size_t index, const uint32_t* xnn_ids);

/// A fully connected node with per-channel int8 weights, which this XNNPACK version's
/// fully connected lacks, as the equivalent 1x1 convolution between two reshapes.
xnn_status define_fully_connected_qc8(xnn_subgraph_t subgraph, const Delegate& delegate,
                                      const kiln_xnnpack::XNNFullyConnected& node, float output_min,
                                      float output_max, const uint32_t* xnn_ids);

/// DelegateInvalidCompatibility (logged) unless node `index`'s output shape is the one its
/// inputs and parameters give (ids checked before).
Error check_node_shapes(const Delegate& delegate, const kiln_xnnpack::XNode& node, size_t index);

/// The tensor of payload value `id` (ids are checked at init).
const kiln_xnnpack::XNNTensorValue& tensor(const Delegate& delegate, uint32_t id);

}  // namespace xnnpack
}  // namespace kiln
