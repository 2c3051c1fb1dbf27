// Python hook for the EthosUBackend: registers the delegate on the host's NPU (the
// register-level driver on the virtual NPU's register-accurate device), so that delegated
// programs loaded through kiln.runtime run, exposes what the NPU did in the calling thread's
// last execute (the PMU's counters and the model's; per method with Method.npu_counters),
// the NPU's identity from its ID/CONFIG registers, on request one record per operation of
// the latest NPU call, and
// runs one delegate payload on its own (ethos_u_run_payload: the same init/execute a
// program's delegate call goes through, for checking payloads against a reference).
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/host_virtual_npu.h"
#include "backends/arm/runtime/npu_identity.h"
#include "python/kiln/runtime/ethos_u_bindings.h"
#include "python/kiln/runtime/npu_counters_dict.h"
#include "python/kiln/runtime/runtime_error.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

/// Storage for per-operation records (sized from Python, before execution; guarded by
/// the virtual NPU's mutex, which every invocation that writes them holds).
std::vector<vnpu::OpRecord>& op_records() {
  static std::vector<vnpu::OpRecord> records;
  return records;
}

/// The calling thread's latest NPU counters: threads running methods at once each see
/// their own (the counters themselves are per delegate instance, ethos_u_backend.h).
struct ThreadCounters {
  ethos_u::NpuCounters counters;
  size_t delegate_calls = 0;
};

ThreadCounters& thread_counters() {
  thread_local ThreadCounters latest;
  return latest;
}

nb::dict counters_dict(const ethos_u::NpuCounters& counters, size_t delegate_calls) {
  nb::dict out = npu_counters_to_dict(counters, ethos_u::kNpuMaxRegions + 1);
  // The PMU's counts, as the register-level driver read them from the NPU.
  out["cycles"] = counters.cycles;
  out["active_cycles"] = counters.active_cycles;
  out["axi_read_beats"] = counters.axi_read_beats;
  out["axi_write_beats"] = counters.axi_write_beats;
  out["delegate_calls"] = delegate_calls;
  return out;
}

/// The NPU the driver identified from its ID/CONFIG registers for the latest delegate
/// call; None before the first.
nb::object npu_identity() {
  ethos_u::NpuIdentity npu;
  {
    std::lock_guard<std::mutex> lock(ethos_u::host_virtual_npu_mutex());
    if (!ethos_u::host_virtual_npu().identity(&npu)) return nb::none();
  }
  char line[256];
  ethos_u::describe_npu(npu, line, sizeof(line));
  nb::dict out;
  out["product"] = npu.arch->name;
  out["macs_per_cycle"] = npu.macs;
  out["id"] = npu.id;
  out["config"] = npu.config;
  namespace id = ethos_u::regs::id;
  out["architecture"] = std::to_string(id::arch_major(npu.id)) + "." + std::to_string(id::arch_minor(npu.id)) +
                        "." + std::to_string(id::arch_patch(npu.id));
  out["release"] = "r" + std::to_string(id::version_major(npu.id)) + "p" + std::to_string(id::version_minor(npu.id));
  out["description"] = std::string(line);
  return out;
}

nb::dict last_counters() {
  const ThreadCounters& latest = thread_counters();
  return counters_dict(latest.counters, latest.delegate_calls);
}

void record_ops(size_t max_records) {
  std::lock_guard<std::mutex> lock(ethos_u::host_virtual_npu_mutex());
  std::vector<vnpu::OpRecord>& records = op_records();
  records.assign(max_records, vnpu::OpRecord());
  ethos_u::host_virtual_npu().set_op_records({records.data(), records.size()});
}

nb::list last_op_records() {
  std::lock_guard<std::mutex> lock(ethos_u::host_virtual_npu_mutex());
  const std::vector<vnpu::OpRecord>& records = op_records();
  const size_t n = ethos_u::host_virtual_npu().num_records();
  return npu_op_records_to_list(records.data(), n < records.size() ? n : records.size());
}

using IntArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

ScalarType int_scalar_type(const IntArray& array, const char* what, size_t i) {
  const nb::dlpack::dtype dtype = array.dtype();
  const auto code = static_cast<nb::dlpack::dtype_code>(dtype.code);
  if (dtype.lanes == 1 && code == nb::dlpack::dtype_code::Int) {
    if (dtype.bits == 8) return ScalarType::Char;
    if (dtype.bits == 16) return ScalarType::Short;
    if (dtype.bits == 32) return ScalarType::Int;
  }
  if (dtype.lanes == 1 && code == nb::dlpack::dtype_code::UInt && dtype.bits == 8) {
    return ScalarType::Byte;
  }
  throw nb::type_error((std::string(what) + " " + std::to_string(i) +
                        " must be an int8, uint8, int16 or int32 array").c_str());
}

/// A contiguous tensor over a numpy array (its sizes and dim order stored alongside).
struct ArrayTensor {
  std::vector<SizesType> sizes;
  std::vector<DimOrderType> dim_order;
  std::vector<StridesType> strides;
  Tensor tensor{ScalarType::Char, 0, nullptr, nullptr, nullptr, nullptr};
  EValue value;
};

void bind_array(const IntArray& array, const char* what, size_t i, ArrayTensor* out) {
  if (array.ndim() > static_cast<size_t>(kTensorMaxDim)) throw nb::value_error("array rank too high");
  for (size_t d = 0; d < array.ndim(); ++d) {
    out->sizes.push_back(static_cast<SizesType>(array.shape(d)));
    out->dim_order.push_back(static_cast<DimOrderType>(d));
  }
  out->strides.resize(array.ndim());
  out->tensor = Tensor(int_scalar_type(array, what, i), static_cast<int32_t>(array.ndim()),
                       out->sizes.data(), out->dim_order.data(), out->strides.data(), array.data());
  out->value = EValue(&out->tensor);
}

nb::dict run_payload(nb::bytes blob, const std::vector<std::pair<std::string, nb::bytes>>& specs,
                     const std::vector<IntArray>& inputs, const std::vector<IntArray>& outputs) {
  const ethos_u::EthosUBackend* backend = ethos_u::registered_ethos_u_backend();
  if (backend == nullptr) throw std::runtime_error("the EthosUBackend is not registered");
  // The NPU reads the payload in place: give it a 16-byte aligned copy, as a .pte would.
  std::vector<uint8_t> storage(blob.size() + 16);
  uint8_t* aligned = storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) % 16) % 16;
  std::memcpy(aligned, blob.c_str(), blob.size());
  const Span<const uint8_t> processed(aligned, blob.size());
  std::vector<CompileSpec> compile_specs;
  for (const auto& spec : specs) {
    compile_specs.push_back({spec.first.c_str(), spec.first.size(),
                             reinterpret_cast<const uint8_t*>(spec.second.c_str()), spec.second.size()});
  }
  const Span<const CompileSpec> spec_span(compile_specs.data(), compile_specs.size());
  // Exactly what MethodMeta would reserve for this delegate.
  std::vector<uint8_t> pool(backend->method_allocator_size(processed, spec_span));
  MemoryAllocator allocator(pool.data(), pool.size());
  BackendInitContext init_context{&allocator};
  Result<DelegateHandle*> handle = backend->init(init_context, processed, spec_span);
  if (!handle.ok()) raise(handle.error(), "initializing an EthosUBackend payload");
  std::vector<ArrayTensor> tensors(inputs.size() + outputs.size());
  std::vector<EValue*> args;
  for (size_t i = 0; i < inputs.size(); ++i) bind_array(inputs[i], "input", i, &tensors[i]);
  for (size_t i = 0; i < outputs.size(); ++i) bind_array(outputs[i], "output", i, &tensors[inputs.size() + i]);
  for (ArrayTensor& t : tensors) args.push_back(&t.value);
  BackendExecuteContext execute_context{nullptr};
  Error error;
  {
    nb::gil_scoped_release release;
    error = backend->execute(execute_context, *handle, {args.data(), args.size()});
  }
  const Result<ethos_u::NpuCounters> counters = backend->last_counters(*handle);
  backend->destroy(*handle);
  if (error != Error::Ok) raise(error, "executing an EthosUBackend payload");
  thread_counters() = {*counters, 1};
  return last_counters();
}

}  // namespace

void remember_npu_counters(const Method& method) {
  size_t calls = 0;
  Result<ethos_u::NpuCounters> counters = ethos_u::method_npu_counters(method, &calls);
  // A method without Ethos-U delegates leaves the thread's latest NPU call as it was.
  if (counters.ok() && calls > 0) thread_counters() = {*counters, calls};
}

nb::dict method_npu_counters_dict(const Method& method) {
  size_t calls = 0;
  const ethos_u::NpuCounters counters =
      take_or_raise(ethos_u::method_npu_counters(method, &calls), "reading the NPU counters");
  return counters_dict(counters, calls);
}

void register_ethos_u_bindings(nb::module_& m) {
  // A second import in the same process finds it registered already, which is fine.
  const Error registered = ethos_u::register_ethos_u_backend_with_virtual_npu();
  if (registered != Error::Ok && registered != Error::RegistrationAlreadyRegistered) {
    throw std::runtime_error(std::string("kiln: registering the EthosUBackend failed: ") +
                             error_name(registered));
  }
  m.def("ethos_u_counters", &last_counters,
        "What the NPU did in this thread's last execute of a method with EthosUBackend "
        "delegates (their calls added up; or the last ethos_u_run_payload): the PMU's cycles, "
        "active_cycles, axi_read_beats, axi_write_beats (the virtual NPU device's estimate); the "
        "model's operations, dma_transfers, macs, element_ops, commands, bytes_read/"
        "bytes_written per region (index 8 = the NPU's internal memory); delegate_calls.");
  m.def("ethos_u_record_ops", &record_ops, nb::arg("max_records"),
        "Record up to max_records operations per delegate call from now on (0 stops).");
  m.def("ethos_u_run_payload", &run_payload, nb::arg("payload"), nb::arg("compile_specs"),
        nb::arg("inputs"), nb::arg("outputs"),
        "Runs one EthosUBackend payload (a .pte delegate blob) through the delegate's init and "
        "execute on the virtual NPU: inputs are int arrays in the program's layout, outputs "
        "preallocated arrays (program shapes and dtypes) filled in place. Returns the counters.");
  m.def("ethos_u_npu_identity", &npu_identity,
        "The NPU the register-level driver identified from its ID and CONFIG registers for the "
        "latest delegate call (product, macs_per_cycle, architecture, release, id, config, "
        "description), or None before the first.");
  m.def("ethos_u_op_records", &last_op_records,
        "One dict per operation of the last delegate call (kind, mode, command_index, macs, "
        "bytes_read, bytes_written, cycles: the device's estimate), when recording is on.");
}

}  // namespace kiln::python
