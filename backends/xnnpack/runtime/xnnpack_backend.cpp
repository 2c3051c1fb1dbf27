// XnnpackBackend: init reads the payload, checks every id and size, plans the steps
// (XNNPACK runtimes between Kiln's permutes) and builds them; execute binds the call's
// tensors and runs the steps.
#include "backends/xnnpack/runtime/xnnpack_backend.h"

#include <atomic>
#include <cstring>
#include <new>

#include "backends/xnnpack/runtime/delegate.h"
#include "backends/xnnpack/runtime/payload_header.h"
#include "kernels/portable/util/copy.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace xnnpack {

using kiln_xnnpack::NodeUnion;

namespace {

std::atomic<size_t> g_threads{1};

template <typename T>
std::unique_ptr<T[]> make_array(size_t n) {
  return std::unique_ptr<T[]>(new (std::nothrow) T[n > 0 ? n : 1]());
}

Result<const kiln_xnnpack::XNNGraph*> read_graph(Span<const uint8_t> flatbuffer) {
  const uint8_t* p = flatbuffer.data();
  if (flatbuffer.size() < 8 ||
      (std::memcmp(p + 4, "XN01", 4) != 0 && std::memcmp(p + 4, "XN00", 4) != 0)) {
    KILN_LOG(Error, "XNNPACK payload: the flatbuffer (%zu bytes) is not an XNNGraph (identifier "
             "XN00/XN01)", flatbuffer.size());
    return Error::DelegatePayloadBadBlock;
  }
  flatbuffers::Verifier verifier(p, flatbuffer.size());
  if (!verifier.VerifyBuffer<kiln_xnnpack::XNNGraph>(nullptr)) {
    KILN_LOG(Error, "XNNPACK payload: the %zu-byte XNNGraph flatbuffer fails verification",
             flatbuffer.size());
    return Error::DelegatePayloadBadBlock;
  }
  const kiln_xnnpack::XNNGraph* graph = flatbuffers::GetRoot<kiln_xnnpack::XNNGraph>(p);
  if (graph->xvalues() == nullptr || graph->xnodes() == nullptr) {
    KILN_LOG(Error, "XNNPACK payload: the graph has no %s", graph->xvalues() == nullptr ? "values" : "nodes");
    return Error::DelegatePayloadBadBlock;
  }
  return graph;
}

/// An upper bound on what XNNPACK's workspace and Kiln's step buffers may allocate: the
/// bytes of every non-constant value together (constants are bounded by the payload). 2 GiB
/// is far above any model this delegate is meant for; a hostile graph's shapes could
/// otherwise ask for terabytes at init.
constexpr size_t kMaxVariableBytes = size_t{2} << 30;

/// Indexes the values by id and sizes them; rejects what this backend cannot take.
Error index_values(Delegate& d) {
  const auto* values = d.graph->xvalues();
  d.num_values = values->size();
  d.value_position = make_array<uint32_t>(d.num_values);
  d.value_nbytes = make_array<size_t>(d.num_values);
  d.value_data = make_array<void*>(d.num_values);
  d.buffers = make_array<std::unique_ptr<uint8_t[]>>(d.num_values);
  d.scales = make_array<std::unique_ptr<float[]>>(d.num_values);
  d.value_constant = make_array<const void*>(d.num_values);
  auto seen = make_array<bool>(d.num_values);
  if (!d.value_position || !d.value_nbytes || !d.value_data || !d.buffers || !d.scales || !d.value_constant || !seen) {
    return Error::MemoryAllocationFailed;
  }
  size_t variable_bytes = 0;
  for (uint32_t i = 0; i < d.num_values; ++i) {
    const kiln_xnnpack::XNNTensorValue* t = tensor_of(*values->Get(i));
    if (t == nullptr) {
      KILN_LOG(Error, "XNNPACK value %u is not a tensor", i);
      return Error::DelegatePayloadBadIo;
    }
    if (t->id_out() >= d.num_values || seen[t->id_out()]) {
      KILN_LOG(Error, "XNNPACK value %u: id %u is %s (the graph has %zu values)", i, t->id_out(),
               t->id_out() >= d.num_values ? "out of range" : "defined twice", d.num_values);
      return Error::DelegatePayloadBadIo;
    }
    const size_t es = element_size(t->datatype());
    if (es == 0 || t->dq_datatype() != kiln_xnnpack::XNNDatatype::xnn_datatype_invalid) {
      KILN_LOG(Error, "XNNPACK value %u: datatype %s%s is not available in this XNNPACK version", i,
               kiln_xnnpack::EnumNameXNNDatatype(t->datatype()),
               es != 0 ? " (quantized at run time)" : "");
      return Error::NotSupported;
    }
    const size_t rank = t->dims() != nullptr ? t->dims()->size() : 0;
    if (rank > kMaxDims || rank != t->num_dims()) {
      KILN_LOG(Error, "XNNPACK value %u: %zu dims (num_dims %u); at most %zu", i, rank,
               t->num_dims(), kMaxDims);
      return Error::DelegatePayloadBadIo;
    }
    size_t nbytes = es;
    for (size_t k = 0; k < rank; ++k) {
      const size_t dim = t->dims()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (dim != 0 && nbytes > (size_t{1} << 40) / dim) {
        KILN_LOG(Error, "XNNPACK value %u: its shape overflows", i);
        return Error::DelegatePayloadBadSize;
      }
      nbytes *= dim;
    }
    if (t->constant_buffer_idx() == 0) {
      variable_bytes += nbytes;
      if (variable_bytes > kMaxVariableBytes) {
        KILN_LOG(Error, "XNNPACK graph: its inputs, outputs and intermediates declare more than %zu MiB "
                 "(value %u adds %zu bytes); this delegate takes at most that much", kMaxVariableBytes >> 20, i,
                 nbytes);
        return Error::DelegatePayloadBadSize;
      }
    }
    seen[t->id_out()] = true;
    d.value_position[t->id_out()] = i;
    d.value_nbytes[t->id_out()] = nbytes;
  }
  return Error::Ok;
}


bool is_constant(const Delegate& d, uint32_t id) { return tensor(d, id).constant_buffer_idx() != 0; }

Error check_ids(const Delegate& d, const NodeIo& io, size_t index) {
  for (size_t k = 0; k < io.num_inputs + io.num_outputs; ++k) {
    const bool is_input = k < io.num_inputs;
    const uint32_t id = is_input ? io.inputs[k] : io.outputs[k - io.num_inputs];
    if (id == kNoValue && is_input && k == 2) continue;  // no bias
    if (id >= d.num_values) {
      KILN_LOG(Error, "XNNPACK node %zu uses value %u, which is not defined (the graph has %zu)",
               index, id, d.num_values);
      return Error::DelegatePayloadBadIo;
    }
  }
  return Error::Ok;
}

Result<Permute> plan_permute(const Delegate& d, const kiln_xnnpack::XNNStaticTranspose& t, size_t index) {
  Permute p{};
  p.input = t.input_id();
  p.output = t.output_id();
  const auto& in = tensor(d, p.input);
  const size_t rank = in.dims() != nullptr ? in.dims()->size() : 0;
  p.rank = static_cast<int32_t>(rank);
  p.element_size = element_size(in.datatype());
  bool used[kMaxDims] = {};
  int64_t in_dims[kMaxDims];
  size_t perm[kMaxDims];
  bool ok = t.perm() != nullptr && t.perm()->size() == rank &&
            element_size(tensor(d, p.output).datatype()) == p.element_size &&
            d.value_nbytes[p.output] == d.value_nbytes[p.input];
  for (size_t i = 0; ok && i < rank; ++i) {
    in_dims[i] = in.dims()->Get(static_cast<flatbuffers::uoffset_t>(i));
    perm[i] = t.perm()->Get(static_cast<flatbuffers::uoffset_t>(i));
    ok = perm[i] < rank && !used[perm[i]];
    if (ok) used[perm[i]] = true;
  }
  if (!ok) {
    KILN_LOG(Error, "XNNPACK node %zu: transpose of value %u (%zu dims) to value %u: the permutation "
             "or the output's size does not fit", index, p.input, rank, p.output);
    return Error::DelegateInvalidCompatibility;
  }
  int64_t in_strides[kMaxDims];
  portable::contiguous_strides(in_dims, p.rank, in_strides);
  for (size_t i = 0; i < rank; ++i) {
    p.sizes[i] = in_dims[perm[i]];
    p.in_strides[i] = in_strides[perm[i]];
  }
  portable::contiguous_strides(p.sizes, p.rank, p.out_strides);
  return p;
}

/// Which step each node is in: transposes are steps of their own, the runs between them
/// are one XNNPACK runtime each.
Result<size_t> assign_steps(const Delegate& d, size_t* step_of_node) {
  size_t steps = 0;
  bool open_run = false;
  const auto* nodes = d.graph->xnodes();
  for (uint32_t k = 0; k < nodes->size(); ++k) {
    NodeIo io;
    KILN_TRY(node_io(*nodes->Get(k), k, &io));
    KILN_TRY(check_ids(d, io, k));
    KILN_TRY(check_node_shapes(d, *nodes->Get(k), k));
    const bool transpose = nodes->Get(k)->xnode_union_type() == NodeUnion::XNNStaticTranspose;
    if (transpose || !open_run) ++steps;
    open_run = !transpose;
    step_of_node[k] = steps - 1;
  }
  return steps;
}

constexpr size_t kNoStep = ~size_t{0};

struct ValueUse {
  size_t first_step = kNoStep;
  bool shared = false;          // touched by more than one step
  size_t producer = kNoStep;    // the step that writes it
};

Error check_io_ids(const Delegate& d, const flatbuffers::Vector<uint32_t>* ids, const char* what) {
  for (size_t i = 0; ids != nullptr && i < ids->size(); ++i) {
    const uint32_t id = ids->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (id >= d.num_values || is_constant(d, id)) {
      KILN_LOG(Error, "XNNPACK graph %s %zu is value %u: %s", what, i, id,
               id >= d.num_values ? "not defined" : "a constant");
      return Error::DelegatePayloadBadIo;
    }
  }
  return Error::Ok;
}

bool contains(const flatbuffers::Vector<uint32_t>* ids, uint32_t id) {
  for (size_t i = 0; ids != nullptr && i < ids->size(); ++i) {
    if (ids->Get(static_cast<flatbuffers::uoffset_t>(i)) == id) return true;
  }
  return false;
}

bool is_graph_io(const Delegate& d, uint32_t id) {
  return contains(d.graph->input_ids(), id) || contains(d.graph->output_ids(), id);
}

/// Builds step `s` (an XNNPACK runtime over the nodes assigned to it).
Error build_runtime(Delegate& d, const ValueSource& source, const size_t* step_of_node,
                    const ValueUse* uses, size_t s, uint32_t* xnn_ids) {
  Step& step = d.steps[s];
  const auto* nodes = d.graph->xnodes();
  for (size_t v = 0; v < d.num_values; ++v) xnn_ids[v] = XNN_INVALID_VALUE_ID;
  // The values this step touches; externals first counted, then defined.
  auto touched = make_array<bool>(d.num_values);
  if (!touched) return Error::MemoryAllocationFailed;
  for (uint32_t k = 0; k < nodes->size(); ++k) {
    if (step_of_node[k] != s) continue;
    NodeIo io;
    KILN_TRY(node_io(*nodes->Get(k), k, &io));
    for (size_t i = 0; i < io.num_inputs; ++i) if (io.inputs[i] != kNoValue) touched[io.inputs[i]] = true;
    for (size_t i = 0; i < io.num_outputs; ++i) touched[io.outputs[i]] = true;
  }
  size_t externals = 0;
  for (uint32_t v = 0; v < d.num_values; ++v) {
    if (touched[v] && !is_constant(d, v) && (uses[v].shared || is_graph_io(d, v))) ++externals;
  }
  step.externals = make_array<xnn_external_value>(externals);
  step.external_payload_ids = make_array<uint32_t>(externals);
  step.bound = make_array<void*>(externals);
  if (!step.externals || !step.external_payload_ids || !step.bound) return Error::MemoryAllocationFailed;
  xnn_subgraph_t subgraph = nullptr;
  if (xnn_create_subgraph(static_cast<uint32_t>(externals), 0, &subgraph) != xnn_status_success) {
    return Error::MemoryAllocationFailed;
  }
  Error error = Error::Ok;
  for (uint32_t v = 0; v < d.num_values && error == Error::Ok; ++v) {
    if (!touched[v]) continue;
    uint32_t external = XNN_INVALID_VALUE_ID;
    uint32_t flags = 0;
    if (!is_constant(d, v) && (uses[v].shared || is_graph_io(d, v))) {
      external = static_cast<uint32_t>(step.num_externals);
      flags = uses[v].producer == s ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : XNN_VALUE_FLAG_EXTERNAL_INPUT;
      step.externals[step.num_externals] = {external, nullptr};
      step.external_payload_ids[step.num_externals++] = v;
    }
    error = define_value(subgraph, source, v, external, flags, &xnn_ids[v]);
  }
  for (uint32_t k = 0; k < nodes->size() && error == Error::Ok; ++k) {
    if (step_of_node[k] == s) error = define_node(subgraph, d, *nodes->Get(k), k, xnn_ids);
  }
  if (error == Error::Ok) {
    const xnn_status status = xnn_create_runtime_v2(subgraph, d.threadpool, 0, &step.runtime);
    if (status != xnn_status_success) {
      KILN_LOG(Error, "XNNPACK could not build runtime %zu: status %d", s, static_cast<int>(status));
      error = Error::DelegateInvalidCompatibility;
    }
  }
  xnn_delete_subgraph(subgraph);
  return error;
}

Error plan(Delegate& d, const ValueSource& source) {
  KILN_TRY(index_values(d));
  KILN_TRY(check_io_ids(d, d.graph->input_ids(), "input"));
  KILN_TRY(check_io_ids(d, d.graph->output_ids(), "output"));
  const auto* nodes = d.graph->xnodes();
  auto step_of_node = make_array<size_t>(nodes->size());
  auto uses = make_array<ValueUse>(d.num_values);
  auto xnn_ids = make_array<uint32_t>(d.num_values);
  if (!step_of_node || !uses || !xnn_ids) return Error::MemoryAllocationFailed;
  KILN_TRY_ASSIGN(d.num_steps, assign_steps(d, step_of_node.get()));
  d.steps = make_array<Step>(d.num_steps);
  if (!d.steps) return Error::MemoryAllocationFailed;
  for (uint32_t k = 0; k < nodes->size(); ++k) {
    NodeIo io;
    KILN_TRY(node_io(*nodes->Get(k), k, &io));
    const size_t s = step_of_node[k];
    for (size_t i = 0; i < io.num_inputs + io.num_outputs; ++i) {
      const uint32_t v = i < io.num_inputs ? io.inputs[i] : io.outputs[i - io.num_inputs];
      if (v == kNoValue) continue;
      if (uses[v].first_step == kNoStep) uses[v].first_step = s;
      else if (uses[v].first_step != s) uses[v].shared = true;
      if (i < io.num_inputs) {
        // A value is read after something wrote it: a constant, a graph input or an earlier
        // node (XNNPACK asserts on, or reads garbage from, a value nothing writes).
        if (uses[v].producer == kNoStep && !is_constant(d, v) && !contains(d.graph->input_ids(), v)) {
          KILN_LOG(Error, "XNNPACK node %u reads value %u, which no earlier node writes and which is "
                   "neither a constant nor a graph input", k, v);
          return Error::DelegatePayloadBadIo;
        }
        continue;
      }
      // Each value has one producer, and it is not data from outside (XNNPACK asserts).
      const bool written = uses[v].producer != kNoStep;
      if (written || is_constant(d, v) || contains(d.graph->input_ids(), v)) {
        KILN_LOG(Error, "XNNPACK node %u writes value %u, which %s", k, v,
                 written ? "an earlier node writes" : is_constant(d, v) ? "is a constant" : "is a graph input");
        return Error::DelegatePayloadBadIo;
      }
      uses[v].producer = s;
    }
    if (nodes->Get(k)->xnode_union_type() == NodeUnion::XNNStaticTranspose) {
      KILN_TRY_ASSIGN(d.steps[s].permute, plan_permute(d, *nodes->Get(k)->xnode_union_as_XNNStaticTranspose(), k));
    }
  }
  // XNNPACK drops a node whose output nobody reads, and this version then trips over it:
  // every node output must be read by a later node or be a graph output.
  const auto* outputs = d.graph->output_ids();
  if (outputs == nullptr || outputs->size() == 0) {
    KILN_LOG(Error, "XNNPACK graph has no outputs");
    return Error::DelegatePayloadBadIo;
  }
  // An output is written by a node (or is an input passed through), never left as it was.
  for (size_t i = 0; i < outputs->size(); ++i) {
    const uint32_t v = outputs->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (uses[v].producer == kNoStep && !contains(d.graph->input_ids(), v)) {
      KILN_LOG(Error, "XNNPACK graph output %zu is value %u, which no node writes", i, v);
      return Error::DelegatePayloadBadIo;
    }
  }
  auto read = make_array<bool>(d.num_values);
  if (!read) return Error::MemoryAllocationFailed;
  for (uint32_t k = 0; k < nodes->size(); ++k) {
    NodeIo io;
    KILN_TRY(node_io(*nodes->Get(k), k, &io));
    for (size_t i = 0; i < io.num_inputs; ++i) if (io.inputs[i] != kNoValue) read[io.inputs[i]] = true;
  }
  for (uint32_t k = 0; k < nodes->size(); ++k) {
    NodeIo io;
    KILN_TRY(node_io(*nodes->Get(k), k, &io));
    for (size_t i = 0; i < io.num_outputs; ++i) {
      if (!read[io.outputs[i]] && !is_graph_io(d, io.outputs[i])) {
        KILN_LOG(Error, "XNNPACK node %u writes value %u, which nothing reads and is not a graph output",
                 k, io.outputs[i]);
        return Error::DelegatePayloadBadIo;
      }
    }
  }
  // Intermediates handed between steps get a buffer of their own.
  for (uint32_t v = 0; v < d.num_values; ++v) {
    if (!uses[v].shared || is_graph_io(d, v) || is_constant(d, v)) continue;
    d.buffers[v] = make_array<uint8_t>(d.value_nbytes[v]);
    if (!d.buffers[v]) return Error::MemoryAllocationFailed;
    d.value_data[v] = d.buffers[v].get();
  }
  for (size_t s = 0; s < d.num_steps; ++s) {
    const Permute& p = d.steps[s].permute;
    if (p.element_size == 0) {
      KILN_TRY(build_runtime(d, source, step_of_node.get(), uses.get(), s, xnn_ids.get()));
      continue;
    }
    for (const uint32_t v : {p.input, p.output}) {
      if (is_constant(d, v) || (d.value_data[v] == nullptr && !is_graph_io(d, v))) {
        KILN_LOG(Error, "XNNPACK step %zu transposes value %u, which no other step reads or writes",
                 s, v);
        return Error::DelegatePayloadBadIo;
      }
    }
  }
  return Error::Ok;
}

Error copy_io_ids(Delegate& d) {
  const auto* inputs = d.graph->input_ids();
  const auto* outputs = d.graph->output_ids();
  d.num_inputs = inputs != nullptr ? inputs->size() : 0;
  d.num_outputs = outputs != nullptr ? outputs->size() : 0;
  d.io_ids.reset(new (std::nothrow) uint32_t[d.num_inputs + d.num_outputs + 1]);
  if (!d.io_ids) return Error::MemoryAllocationFailed;
  for (size_t i = 0; i < d.num_inputs; ++i) d.io_ids[i] = inputs->Get(static_cast<flatbuffers::uoffset_t>(i));
  for (size_t i = 0; i < d.num_outputs; ++i) {
    d.io_ids[d.num_inputs + i] = outputs->Get(static_cast<flatbuffers::uoffset_t>(i));
  }
  return Error::Ok;
}

Error bind_args(Delegate& d, Span<EValue*> args) {
  const size_t num_in = d.num_inputs;
  const size_t num_out = d.num_outputs;
  if (args.size() != num_in + num_out) {
    KILN_LOG(Error, "XNNPACK delegate called with %zu values; its graph has %zu inputs and %zu outputs",
             args.size(), num_in, num_out);
    return Error::DelegatePayloadIoMismatch;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const uint32_t id = d.io_ids[i];
    if (args[i] == nullptr || !args[i]->is_tensor() ||
        args[i]->to_tensor().nbytes() != d.value_nbytes[id]) {
      KILN_LOG(Error, "XNNPACK delegate %s %zu (value %u): needs a tensor of %zu bytes, got %zu",
               i < num_in ? "input" : "output", i < num_in ? i : i - num_in, id, d.value_nbytes[id],
               args[i] != nullptr && args[i]->is_tensor() ? args[i]->to_tensor().nbytes() : 0);
      return Error::DelegatePayloadIoMismatch;
    }
    d.value_data[id] = args[i]->to_tensor().mutable_data_ptr();
  }
  return Error::Ok;
}

Error run_step(Delegate& d, Step& step, size_t index) {
  if (step.runtime == nullptr) {
    const Permute& p = step.permute;
    portable::strided_copy(d.value_data[p.input], p.in_strides, d.value_data[p.output], p.out_strides, p.sizes,
                           p.rank, p.element_size);
    return Error::Ok;
  }
  bool changed = false;
  for (size_t i = 0; i < step.num_externals; ++i) {
    void* data = d.value_data[step.external_payload_ids[i]];
    changed = changed || step.bound[i] != data;
    step.externals[i].data = data;
    step.bound[i] = data;
  }
  // Setting up again only when a tensor moved: XNNPACK may rebuild indirection buffers.
  if (changed && xnn_setup_runtime(step.runtime, step.num_externals, step.externals.get()) != xnn_status_success) {
    KILN_LOG(Error, "XNNPACK setup of runtime %zu failed", index);
    return Error::Internal;
  }
  if (xnn_invoke_runtime(step.runtime) != xnn_status_success) {
    KILN_LOG(Error, "XNNPACK runtime %zu failed", index);
    return Error::Internal;
  }
  return Error::Ok;
}

}  // namespace

Delegate::~Delegate() {
  for (size_t s = 0; steps && s < num_steps; ++s) {
    if (steps[s].runtime != nullptr) xnn_delete_runtime(steps[s].runtime);
  }
  if (threadpool != nullptr) pthreadpool_destroy(threadpool);
}

}  // namespace xnnpack

bool XnnpackBackend::is_available() const { return true; }

Result<DelegateHandle*> XnnpackBackend::init(BackendInitContext& context, Span<const uint8_t> processed,
                                             Span<const CompileSpec> /*compile_specs*/) const {
  KILN_TRY_ASSIGN(const xnnpack::PayloadSections sections, xnnpack::split_payload(processed));
  std::unique_ptr<xnnpack::Delegate> delegate(new (std::nothrow) xnnpack::Delegate());
  if (!delegate) return Error::MemoryAllocationFailed;
  Span<const uint8_t> flatbuffer = sections.flatbuffer;
  // ExecuTorch's payloads start the flatbuffer 8-byte aligned; a header with another offset
  // is read from a copy rather than refused.
  if (reinterpret_cast<uintptr_t>(flatbuffer.data()) % alignof(uint64_t) != 0) {
    delegate->aligned_flatbuffer = xnnpack::make_array<uint64_t>((flatbuffer.size() + 7) / 8);
    if (!delegate->aligned_flatbuffer) return Error::MemoryAllocationFailed;
    std::memcpy(delegate->aligned_flatbuffer.get(), flatbuffer.data(), flatbuffer.size());
    flatbuffer = Span<const uint8_t>(reinterpret_cast<const uint8_t*>(delegate->aligned_flatbuffer.get()),
                                     flatbuffer.size());
  }
  KILN_TRY_ASSIGN(const kiln_xnnpack::XNNGraph* graph, xnnpack::read_graph(flatbuffer));
  delegate->graph = graph;
  const size_t threads = xnnpack::g_threads.load();
  if (threads > 1) {
    delegate->threadpool = pthreadpool_create(threads);
    if (delegate->threadpool == nullptr) return Error::MemoryAllocationFailed;
  }
  const xnnpack::ValueSource source{sections.constant_data, context.named_data, delegate.get()};
  KILN_TRY(xnnpack::plan(*delegate, source));
  KILN_TRY(xnnpack::copy_io_ids(*delegate));
  delegate->graph = nullptr;  // execute must not read the payload
  return static_cast<DelegateHandle*>(delegate.release());
}

Error XnnpackBackend::execute(BackendExecuteContext& /*context*/, DelegateHandle* handle,
                              Span<EValue*> args) const {
  if (handle == nullptr) return Error::DelegateInvalidHandle;
  auto& d = *static_cast<xnnpack::Delegate*>(handle);
  KILN_TRY(xnnpack::bind_args(d, args));
  for (size_t s = 0; s < d.num_steps; ++s) KILN_TRY(xnnpack::run_step(d, d.steps[s], s));
  return Error::Ok;
}

void XnnpackBackend::destroy(DelegateHandle* handle) const {
  delete static_cast<xnnpack::Delegate*>(handle);
}

Error register_xnnpack_backend() {
  const xnn_status status = xnn_initialize(nullptr);
  if (status != xnn_status_success) {
    KILN_LOG(Error, "XNNPACK does not initialize on this CPU: status %d", static_cast<int>(status));
    return Error::Internal;
  }
  static const XnnpackBackend backend;
  if (get_backend("XnnpackBackend", 14) == &backend) return Error::Ok;
  return register_backend({"XnnpackBackend", &backend});
}

Error set_xnnpack_threads(size_t threads) {
  if (threads == 0) {
    KILN_LOG(Error, "XNNPACK threads: 0; at least 1");
    return Error::InvalidArgument;
  }
  xnnpack::g_threads.store(threads);
  return Error::Ok;
}

size_t xnnpack_threads() { return xnnpack::g_threads.load(); }

}  // namespace kiln
