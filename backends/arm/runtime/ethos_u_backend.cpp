#include "backends/arm/runtime/ethos_u_backend.h"

#include <cstring>
#include <new>

#include "backends/arm/runtime/io_layout.h"
#include "backends/arm/runtime/npu_operation_tracer.h"
#include "backends/arm/runtime/payload_parser.h"
#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

/// Region numbers in Vela's convention (and in ExecuTorch's delegate).
constexpr size_t kWeightRegion = 0;
constexpr size_t kScratchRegion = 1;
constexpr size_t kFastScratchRegion = 2;
/// The delegate binds regions 0-2, as ExecuTorch's does.
constexpr size_t kBoundRegions = 3;
/// Scratch arenas start at a multiple of this (the NPU's base-address alignment).
constexpr size_t kArenaAlignment = 16;
constexpr size_t kMaxTargetName = 32;

/// Everything a delegate needs at execute; lives in the method allocator.
struct DelegateState {
  Payload payload;
  NpuRegion regions[kBoundRegions];
  /// The target the program was compiled for ("ethos-u55-128"), or empty.
  char target[kMaxTargetName];
  /// The program says its rank-4 NPU buffers are NHWC (compile spec io_layout=nhwc).
  bool npu_is_nhwc;
  /// What the NPU did in this delegate's latest call (per instance: see the header).
  NpuCounters counters;
  bool has_executed;
};

/// The value of compile spec `key`, or an empty span.
Span<const uint8_t> find_spec(Span<const CompileSpec> specs, const char* key) {
  const size_t key_length = std::strlen(key);
  for (const CompileSpec& spec : specs) {
    if (spec.key_length == key_length && std::memcmp(spec.key, key, key_length) == 0) {
      return {spec.value, spec.value != nullptr ? spec.value_length : 0};
    }
  }
  return {};
}

/// The text after `option` (e.g. "--memory-mode=") in Vela's compile flags, up to the next
/// space; empty if absent.
Span<const uint8_t> find_flag(Span<const uint8_t> flags, const char* option) {
  const size_t length = std::strlen(option);
  for (size_t i = 0; i + length <= flags.size(); ++i) {
    if ((i == 0 || flags[i - 1] == ' ') && std::memcmp(flags.data() + i, option, length) == 0) {
      size_t end = i + length;
      while (end < flags.size() && flags[end] != ' ' && flags[end] != '\0') ++end;
      return {flags.data() + i + length, end - i - length};
    }
  }
  return {};
}

/// "ethos-u55-128" from the "target" spec (ExecuTorch and Kiln write it), else from
/// Vela's --accelerator-config flag; empty when neither says.
void read_target(Span<const CompileSpec> specs, char (&target)[kMaxTargetName]) {
  Span<const uint8_t> name = find_spec(specs, "target");
  if (name.size() == 0) name = find_flag(find_spec(specs, "compile_flags"), "--accelerator-config=");
  const size_t n = name.size() < kMaxTargetName - 1 ? name.size() : 0;
  if (n > 0) std::memcpy(target, name.data(), n);
  target[n] = '\0';
}

/// Bytes of the fast scratch (region 2): the dedicated SRAM Vela plans for in the
/// "Dedicated_Sram_<N>KB" memory modes (Ethos-U65). ExecuTorch's payload does not carry
/// the size, so it comes from the memory mode; other modes use no fast scratch.
size_t fast_scratch_bytes(Span<const CompileSpec> specs) {
  const Span<const uint8_t> mode = find_flag(find_spec(specs, "compile_flags"), "--memory-mode=");
  constexpr char kPrefix[] = "Dedicated_Sram_";
  constexpr size_t kPrefixLength = sizeof(kPrefix) - 1;
  if (mode.size() <= kPrefixLength + 2 || std::memcmp(mode.data(), kPrefix, kPrefixLength) != 0 ||
      mode[mode.size() - 2] != 'K' || mode[mode.size() - 1] != 'B') {
    return 0;
  }
  size_t kib = 0;
  for (size_t i = kPrefixLength; i + 2 < mode.size(); ++i) {
    if (mode[i] < '0' || mode[i] > '9' || kib > 1024 * 1024) return 0;
    kib = kib * 10 + static_cast<size_t>(mode[i] - '0');
  }
  return kib * 1024;
}

/// Worst-case bytes of an allocation of `bytes` at `alignment` from a bump allocator.
size_t padded(size_t bytes, size_t alignment) { return bytes + alignment - 1; }

Error check_io_region(const PayloadIo& io, const NpuRegion (&regions)[kBoundRegions],
                      const char* what, size_t i) {
  if (io.region != static_cast<int32_t>(kScratchRegion) &&
      io.region != static_cast<int32_t>(kFastScratchRegion)) {
    KILN_LOG(Error, "ethos-u %s %zu is in region %d; tensors can only be bound into region 1 "
             "(scratch) or 2 (fast scratch)", what, i, static_cast<int>(io.region));
    return Error::DelegatePayloadBadIo;
  }
  const NpuRegion& region = regions[io.region];
  const uint64_t end = static_cast<uint64_t>(io.offset) + io.nbytes();
  if (end > region.size) {
    KILN_LOG(Error, "ethos-u %s %zu: bytes [%d, %llu) lie outside region %d (%zu bytes)", what, i,
             static_cast<int>(io.offset), static_cast<unsigned long long>(end),
             static_cast<int>(io.region), region.size);
    return Error::DelegatePayloadBadIo;
  }
  return Error::Ok;
}

Error check_addressable(const void* data, size_t alignment, const char* what) {
  if (alignment > 1 && reinterpret_cast<uintptr_t>(data) % alignment != 0) {
    KILN_LOG(Error, "ethos-u payload: %s at %p is not %zu-byte aligned, as the NPU needs", what,
             data, alignment);
    return Error::DelegatePayloadMisaligned;
  }
  return Error::Ok;
}

uint8_t* allocate_arena(MemoryAllocator& allocator, size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  void* memory = allocator.allocate(bytes, kArenaAlignment);
  if (memory == nullptr) {
    KILN_LOG(Error, "ethos-u delegate: the method allocator cannot hold the %s (%zu bytes, %zu "
             "free)", what, bytes, allocator.free_bytes());
    return nullptr;
  }
  // Deterministic contents: the NPU program never relies on them, but runs compare equal.
  std::memset(memory, 0, bytes);
  return static_cast<uint8_t*>(memory);
}

EthosUBackend* backend_slot = nullptr;

}  // namespace

bool EthosUBackend::is_available() const { return driver_ != nullptr && driver_->is_available(); }

size_t EthosUBackend::method_allocator_size(Span<const uint8_t> processed,
                                            Span<const CompileSpec> compile_specs) const {
  Result<Payload> payload = parse_payload(processed);
  if (!payload.ok()) return 0;
  return padded(sizeof(DelegateState), alignof(DelegateState)) +
         padded(payload->scratch_size, kArenaAlignment) +
         padded(fast_scratch_bytes(compile_specs), kArenaAlignment);
}

Result<DelegateHandle*> EthosUBackend::init(BackendInitContext& context,
                                            Span<const uint8_t> processed,
                                            Span<const CompileSpec> compile_specs) const {
  if (context.method_allocator == nullptr) {
    KILN_LOG(Error, "ethos-u delegate: init without a method allocator");
    return Error::InvalidArgument;
  }
  KILN_TRY_ASSIGN(const Payload payload, parse_payload(processed));
  const size_t alignment = driver_->region_alignment();
  KILN_TRY(check_addressable(payload.command_data.data(), alignment, "cmd_data"));
  if (payload.weight_data.size() > 0) {
    KILN_TRY(check_addressable(payload.weight_data.data(), alignment, "weight_data"));
  }
  MemoryAllocator& allocator = *context.method_allocator;
  void* memory = allocator.allocate(sizeof(DelegateState), alignof(DelegateState));
  if (memory == nullptr) return Error::DelegateMemoryAllocationFailed;
  auto* state = new (memory) DelegateState();
  state->payload = payload;
  read_target(compile_specs, state->target);
  const Span<const uint8_t> layout = find_spec(compile_specs, "io_layout");
  state->npu_is_nhwc = layout.size() == 4 && std::memcmp(layout.data(), "nhwc", 4) == 0;
  // Region 0 is only read by a correct stream; read_only makes the NPU refuse any write
  // (the pointer is non-const only because the interface is shared with writable regions).
  state->regions[kWeightRegion] = {const_cast<uint8_t*>(payload.weight_data.data()),
                                   payload.weight_data.size(), /*read_only=*/true};
  const size_t fast_bytes = fast_scratch_bytes(compile_specs);
  state->regions[kScratchRegion] = {allocate_arena(allocator, payload.scratch_size, "scratch arena"),
                                    payload.scratch_size};
  state->regions[kFastScratchRegion] = {allocate_arena(allocator, fast_bytes, "fast scratch"),
                                        fast_bytes};
  if ((payload.scratch_size > 0 && state->regions[kScratchRegion].data == nullptr) ||
      (fast_bytes > 0 && state->regions[kFastScratchRegion].data == nullptr)) {
    return Error::DelegateMemoryAllocationFailed;
  }
  for (size_t i = 0; i < payload.num_inputs; ++i) {
    KILN_TRY(check_io_region(payload.input(i), state->regions, "input", i));
  }
  for (size_t i = 0; i < payload.num_outputs; ++i) {
    KILN_TRY(check_io_region(payload.output(i), state->regions, "output", i));
  }
  KILN_LOG(Info, "ethos-u delegate: %zu command bytes, %zu weight bytes, scratch %u, fast scratch "
           "%zu, %zu inputs, %zu outputs, target '%s'", payload.command_data.size(),
           payload.weight_data.size(), payload.scratch_size, fast_bytes, payload.num_inputs,
           payload.num_outputs, state->target);
  return static_cast<DelegateHandle*>(state);
}

Error EthosUBackend::execute(BackendExecuteContext& context, DelegateHandle* handle,
                             Span<EValue*> args) const {
  if (handle == nullptr) return Error::DelegateInvalidHandle;
  DelegateState& state = *static_cast<DelegateState*>(handle);
  const Payload& payload = state.payload;
  if (args.size() != payload.num_inputs + payload.num_outputs) {
    KILN_LOG(Error, "ethos-u delegate called with %zu arguments; its payload has %zu inputs and "
             "%zu outputs", args.size(), payload.num_inputs, payload.num_outputs);
    return Error::DelegatePayloadIoMismatch;
  }
  for (size_t k = 0; k < args.size(); ++k) {
    if (args[k] == nullptr || !args[k]->is_tensor()) {
      KILN_LOG(Error, "ethos-u delegate argument %zu is a %s, not a tensor", k,
               args[k] != nullptr ? tag_name(args[k]->tag()) : "null");
      return Error::DelegatePayloadIoMismatch;
    }
    if (args[k]->to_tensor().nbytes() > 0 && args[k]->to_tensor().const_data_ptr() == nullptr) {
      KILN_LOG(Error, "ethos-u delegate argument %zu is a tensor without memory", k);
      return Error::InvalidState;
    }
  }
  // Outputs are checked before anything runs, so that a mismatch does not cost an inference.
  for (size_t i = 0; i < payload.num_outputs; ++i) {
    KILN_TRY(choose_boundary_copy(args[payload.num_inputs + i]->to_tensor(), payload.output(i),
                                  state.npu_is_nhwc, "output", i).error());
  }
  for (size_t i = 0; i < payload.num_inputs; ++i) {
    const Tensor& tensor = args[i]->to_tensor();
    const PayloadIo io = payload.input(i);
    KILN_TRY_ASSIGN(const BoundaryCopy copy,
                    choose_boundary_copy(tensor, io, state.npu_is_nhwc, "input", i));
    copy_to_npu(tensor, copy, state.regions[io.region].data + io.offset);
  }
  NpuInvocation invocation;
  invocation.command_stream = {reinterpret_cast<const uint32_t*>(payload.command_data.data()),
                               payload.command_data.size() / 4};
  invocation.regions = {state.regions, kBoundRegions};
  invocation.target = state.target[0] != '\0' ? state.target : nullptr;
  // With an event tracer, each NPU operation becomes a delegate event (and its output a
  // logged value when the tracer keeps them).
  NpuOperationTracer operation_tracer(context.event_tracer);
  if (context.event_tracer != nullptr) invocation.listener = &operation_tracer;
  state.counters = NpuCounters();
  state.has_executed = true;
  const Error error = driver_->invoke(invocation, &state.counters);
  if (error != Error::Ok) {
    KILN_LOG(Error, "ethos-u delegate: NPU driver %s failed: %s", driver_->name(), error_name(error));
    return error;
  }
  for (size_t i = 0; i < payload.num_outputs; ++i) {
    const Tensor& tensor = args[payload.num_inputs + i]->to_tensor();
    const PayloadIo io = payload.output(i);
    KILN_TRY_ASSIGN(const BoundaryCopy copy,
                    choose_boundary_copy(tensor, io, state.npu_is_nhwc, "output", i));
    copy_from_npu(state.regions[io.region].data + io.offset, copy, tensor);
  }
  return Error::Ok;
}

Error register_ethos_u_backend(NpuDriver* driver) {
  if (driver == nullptr) {
    KILN_LOG(Error, "register_ethos_u_backend: no NPU driver given");
    return Error::InvalidArgument;
  }
  if (backend_slot != nullptr || get_backend(kEthosUBackendName, sizeof(kEthosUBackendName) - 1)) {
    KILN_LOG(Error, "an %s is registered already", kEthosUBackendName);
    return Error::RegistrationAlreadyRegistered;
  }
  // One backend per process, built on first registration (no static initializer).
  alignas(EthosUBackend) static uint8_t storage[sizeof(EthosUBackend)];
  auto* backend = new (storage) EthosUBackend(driver);
  const Error error = register_backend({kEthosUBackendName, backend});
  if (error != Error::Ok) {
    backend->~EthosUBackend();
    return error;
  }
  backend_slot = backend;
  return Error::Ok;
}

const EthosUBackend* registered_ethos_u_backend() { return backend_slot; }

Result<NpuCounters> EthosUBackend::last_counters(const DelegateHandle* handle) const {
  if (handle == nullptr) return Error::DelegateInvalidHandle;
  return static_cast<const DelegateState*>(handle)->counters;
}

bool EthosUBackend::has_executed(const DelegateHandle* handle) const {
  return handle != nullptr && static_cast<const DelegateState*>(handle)->has_executed;
}

Result<NpuCounters> method_npu_counters(const Method& method, size_t* delegates_run) {
  NpuCounters total;
  size_t run = 0;
  for (size_t i = 0; i < method.delegates_size(); ++i) {
    KILN_TRY_ASSIGN(const DelegateInfo delegate, method.get_delegate(i));
    // Only the registered EthosUBackend's handles are DelegateStates (no RTTI to ask).
    if (backend_slot == nullptr || delegate.backend != backend_slot) continue;
    const EthosUBackend* backend = backend_slot;
    if (!backend->has_executed(delegate.handle)) continue;
    KILN_TRY_ASSIGN(const NpuCounters counters, backend->last_counters(delegate.handle));
    total.operations += counters.operations;
    total.chained_operations += counters.chained_operations;
    total.dma_transfers += counters.dma_transfers;
    total.macs += counters.macs;
    total.element_ops += counters.element_ops;
    total.commands += counters.commands;
    total.cycles += counters.cycles;
    total.active_cycles += counters.active_cycles;
    total.axi_read_beats += counters.axi_read_beats;
    total.axi_write_beats += counters.axi_write_beats;
    for (size_t r = 0; r <= kNpuMaxRegions; ++r) {
      total.bytes_read[r] += counters.bytes_read[r];
      total.bytes_written[r] += counters.bytes_written[r];
    }
    ++run;
  }
  if (delegates_run != nullptr) *delegates_run = run;
  return total;
}

}  // namespace kiln::ethos_u
