// Kiln's runner firmware: runs the .pte embedded at build time on a Cortex-M and prints
// a log on the UART — program size, methods, planned buffers, allocator use,
// per-operator and per-delegate timing, outputs — then exits through semihosting with
// a status QEMU passes on (board.h: 0 ok, 1 runtime error, 2 outputs differ from the
// host runtime's, 3 fault, 4 abort). An embedded bundled program (.bpte) runs its test
// cases instead (bundled_io.h); with an ETDump path set at build time the run is
// recorded and written to the host through semihosting.
//
// Memory comes from pools the build sized from the program's manifest (memory_pools.h);
// kernels and backends are registered explicitly below (backend_registration.h).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "examples/arm/executor_runner/bundled_io.h"
#include "examples/arm/executor_runner/embedded_files.h"
#include "examples/arm/executor_runner/firmware_options.h"
#include "examples/arm/executor_runner/memory_pools.h"
#include "runtime/npy/npy_view.h"
#include "examples/arm/executor_runner/operator_timing.h"
#include "examples/arm/executor_runner/output_report.h"
#include "examples/arm/platform/board.h"
#include "runtime/npy/dim_order_copy.h"
#include "kernels/register_cpu_kernels.h"
#include "runtime/core/error.h"
#include "runtime/core/hierarchical_allocator.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/bundled_program/bundled_program.h"
#include "runtime/etdump/etdump_writer.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/event_tracer_pair.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"
#include "examples/arm/executor_runner/backend_registration.h"

namespace kiln::firmware {
namespace {

/// Stops the run: names the error and what the runner was doing.
int fail(Error error, const char* doing) {
  board_set_activity(nullptr);
  board_printf("E [runner] %s failed: %s (0x%02lx)\n", doing, error_name(error),
               static_cast<unsigned long>(error));
  return KILN_EXIT_RUNTIME_ERROR;
}

#define RUNNER_TRY(expr, doing)                     \
  do {                                              \
    const ::kiln::Error runner_error_ = (expr);     \
    if (runner_error_ != ::kiln::Error::Ok) return fail(runner_error_, doing); \
  } while (0)

void print_pool(const char* name, const Pool& pool) {
  board_printf("I [runner]   %-18s %9zu bytes in %s at 0x%08lx\n", name, pool.size,
               pool.placement, static_cast<unsigned long>(reinterpret_cast<uintptr_t>(pool.data)));
}

void print_usage(const char* name, const MemoryAllocator& allocator) {
  board_printf("I [runner] %s: %zu / %zu bytes used, %zu free (peak %zu)\n", name, allocator.used(),
               allocator.size(), allocator.free_bytes(), allocator.peak());
}

/// Tensors over the embedded inputs; they must live as long as the method.
struct Inputs {
  Tensor* tensors[8];
  alignas(Tensor) uint8_t storage[8][sizeof(Tensor)];
  int32_t sizes[8][kTensorMaxDim];
  uint8_t dim_order[8][kTensorMaxDim];
  int32_t strides[8][kTensorMaxDim];
};

Error set_inputs(Method& method, const MethodMeta& meta, Inputs& inputs) {
  const size_t count = meta.num_inputs();
  if (count != kiln_embedded_num_inputs || count > 8) {
    KILN_LOG(Error, "method '%s' takes %zu inputs; the firmware embeds %lu (at most 8)",
             meta.name(), count, static_cast<unsigned long>(kiln_embedded_num_inputs));
    return Error::InputCountMismatch;
  }
  for (size_t i = 0; i < count; ++i) {
    char what[24];
    std::snprintf(what, sizeof(what), "input %zu", i);
    KILN_TRY_ASSIGN(NpyView view, parse_npy({kiln_embedded_inputs[i].data, kiln_embedded_inputs[i].size}, what));
    for (int32_t d = 0; d < view.dim; ++d) {
      inputs.sizes[i][d] = view.shape[d];
      inputs.dim_order[i][d] = static_cast<uint8_t>(d);
    }
    // The embedded bytes are read-only; a planned input is copied out of them by
    // set_input, an unplanned one is only read by the kernels.
    inputs.tensors[i] = new (inputs.storage[i]) Tensor(view.dtype, view.dim, inputs.sizes[i], inputs.dim_order[i],
                                                       inputs.strides[i], const_cast<uint8_t*>(view.data));
    KILN_TRY_ASSIGN(TensorInfo info, meta.input_tensor_meta(i));
    const bool reorder = !is_default_dim_order(info.dim_order) && info.dim_order.size() == static_cast<size_t>(view.dim);
    if (reorder) {
      // Stored in another dim order (channels-last): the .npy is row-major. Set the input
      // (sizes and dim order checked, bytes copied), then reorder into its planned memory.
      if (!info.is_memory_planned) {
        KILN_LOG(Error, "input %zu has dim order != row-major and no planned memory to reorder it into", i);
        return Error::NotSupported;
      }
      for (int32_t d = 0; d < view.dim; ++d) inputs.dim_order[i][d] = info.dim_order[d];
    }
    KILN_TRY(method.set_input(EValue(inputs.tensors[i]), i));
    if (reorder) {
      const Tensor& planned = method.get_input(i).to_tensor();
      KILN_TRY(copy_dim_order(view.data, planned.mutable_data_ptr(), view.sizes(), info.dim_order,
                              element_size(view.dtype), true));
    }
    board_printf("I [runner] input %zu: %s, %zu bytes from the embedded .npy\n", i,
                 scalar_type_name(view.dtype), view.nbytes);
  }
  return Error::Ok;
}

/// Writes the recorded ETDump to the host file named at build time.
void save_etdump(EtdumpWriter& writer) {
  const char* path = firmware_options().etdump_path;
  Result<Span<const uint8_t>> dump = writer.write();
  if (!dump.ok()) {
    board_printf("E [runner] writing the ETDump failed: %s\n", error_name(dump.error()));
    return;
  }
  const int written = board_write_host_file(path, dump->data(), dump->size());
  board_printf("I [runner] etdump: %zu events, %zu dropped%s, %zu bytes of %zu, times in ticks (%lu Hz) -> %s%s\n",
               writer.recorded_events(), writer.dropped_events(),
               writer.dropped_events() > 0 ? " (the buffer was full)" : "", dump->size(),
               firmware_options().etdump_buffer.size(), static_cast<unsigned long>(board_tick_hz()), path,
               written == 0 ? "" : " (FAILED: the host refused the file)");
}

int run() {
  const FirmwarePools& pools = firmware_pools();
  board_printf("I [runner] Kiln executor runner, firmware '%s'\n", kiln_embedded_firmware_name);
  RUNNER_TRY(register_cpu_kernels(), "registering the CPU kernels");
  RUNNER_TRY(register_firmware_backends(), "registering the backends");

  const KilnEmbeddedFile& embedded = kiln_embedded_program;
  Span<const uint8_t> pte(embedded.data, embedded.size);
  // A bundled program carries the .pte and its test cases.
  const bool bundled = BundledProgram::has_identifier(pte);
  Result<BundledProgram> bundle = bundled ? BundledProgram::load(pte) : Result<BundledProgram>(Error::NotFound);
  if (bundled) {
    if (!bundle.ok()) return fail(bundle.error(), "loading the bundled program");
    pte = bundle->program();
  }
  board_printf("I [runner] program: %zu bytes at 0x%08lx%s\n", pte.size(),
               static_cast<unsigned long>(reinterpret_cast<uintptr_t>(pte.data())),
               bundled ? " (in a bundled program)" : "");
  if (pte.size() != pools.program_bytes) {
    KILN_LOG(Error, "the embedded program has %zu bytes; the memory manifest was written "
             "for one of %zu bytes", pte.size(), pools.program_bytes);
    return fail(Error::InvalidProgram, "checking the program against its manifest");
  }
  BufferDataLoader loader(pte.data(), pte.size());
  board_set_activity("Program::load");
  uint64_t start = board_ticks();
  Result<Program> program = Program::load(&loader, Program::Verification::Full);
  if (!program.ok()) return fail(program.error(), "loading the program");
  const uint64_t load_ticks = board_ticks() - start;
  board_printf("I [runner] program loaded: %zu method(s), flatbuffer %zu bytes, %llu ticks\n",
               program->num_methods(), program->program_data_size(), static_cast<unsigned long long>(load_ticks));
  for (size_t i = 0; i < program->num_methods(); ++i) {
    Result<const char*> name = program->get_method_name(i);
    if (name.ok()) board_printf("I [runner]   method %zu: %s\n", i, *name);
  }

  Result<MethodMeta> meta = program->method_meta(pools.method_name);
  if (!meta.ok()) return fail(meta.error(), "reading the method's metadata");
  Result<size_t> method_bytes = meta->method_allocator_size();
  if (!method_bytes.ok()) return fail(method_bytes.error(), "sizing the method allocator");
  board_printf("I [runner] method '%s': %zu instructions, %zu operators, %zu delegates; "
               "method allocator needs %zu bytes here\n", meta->name(), meta->num_instructions(),
               meta->num_operators(), meta->num_backends(), *method_bytes);
  board_printf("I [runner] memory (sized from the manifest):\n");
  print_pool("method allocator", pools.method_allocator);
  if (*method_bytes > pools.method_allocator.size) {
    KILN_LOG(Error, "method allocator needs %zu bytes; the manifest sized its pool at %zu",
             *method_bytes, pools.method_allocator.size);
    return fail(Error::MemoryAllocationFailed, "checking the memory pools");
  }
  if (meta->num_memory_planned_buffers() != pools.num_planned) {
    KILN_LOG(Error, "the method has %zu planned buffers; the manifest %zu",
             meta->num_memory_planned_buffers(), pools.num_planned);
    return fail(Error::InvalidProgram, "checking the memory pools");
  }
  Span<uint8_t> planned_spans[kMaxPlannedBuffers];
  for (size_t i = 0; i < pools.num_planned; ++i) {
    Result<int64_t> size = meta->memory_planned_buffer_size(i);
    if (!size.ok()) return fail(size.error(), "reading the planned buffer sizes");
    char name[24];
    std::snprintf(name, sizeof(name), "planned buffer %zu", i);
    print_pool(name, pools.planned[i]);
    if (static_cast<uint64_t>(*size) > pools.planned[i].size) {
      KILN_LOG(Error, "planned buffer %zu needs %lld bytes; the manifest sized it at %zu", i,
               static_cast<long long>(*size), pools.planned[i].size);
      return fail(Error::MemoryAllocationFailed, "checking the memory pools");
    }
    planned_spans[i] = {pools.planned[i].data, static_cast<size_t>(*size)};
    if (firmware_options().fill_planned >= 0) {
      std::memset(planned_spans[i].data(), firmware_options().fill_planned, planned_spans[i].size());
    }
  }
  if (firmware_options().fill_planned >= 0) {
    board_printf("I [runner] planned buffers filled with 0x%02x before the method loads\n",
                 static_cast<unsigned>(firmware_options().fill_planned));
  }
  print_pool("temp allocator", pools.temp_allocator);
  if (pools.npu_scratch_bytes > 0) {
    board_printf("I [runner]   %-18s %9zu bytes inside the method allocator\n", "NPU scratch",
                 pools.npu_scratch_bytes);
  }

  MemoryAllocator method_allocator(pools.method_allocator.data, pools.method_allocator.size);
  HierarchicalAllocator planned_memory({planned_spans, pools.num_planned});
  MemoryAllocator temp_allocator(pools.temp_allocator.data, pools.temp_allocator.size);
  MemoryManager memory;
  memory.method_allocator = &method_allocator;
  memory.planned_memory = &planned_memory;
  memory.temp_allocator = &temp_allocator;

  board_set_activity("Method init");
  start = board_ticks();
  Result<Method> method = program->load_method(pools.method_name, &memory);
  if (!method.ok()) return fail(method.error(), "initializing the method");
  board_printf("I [runner] method initialized in %llu ticks\n",
               static_cast<unsigned long long>(board_ticks() - start));

  // The ETDump records every execute from here on (ticks of the board's counter).
  static EtdumpWriter* etdump = nullptr;
  if (firmware_options().etdump_path[0] != '\0') {
    alignas(EtdumpWriter) static uint8_t etdump_storage[sizeof(EtdumpWriter)];
    etdump = new (etdump_storage) EtdumpWriter(firmware_options().etdump_buffer, EtdumpWriter::TimeUnit::Ticks);
    method->set_event_tracer(etdump);
  }
  if (bundled) {
    board_set_activity("bundled test cases");
    const int status = run_bundled_test_cases(*method, *bundle, pools.method_name);
    board_set_activity(nullptr);
    if (etdump != nullptr) save_etdump(*etdump);
    return status;
  }

  static Inputs inputs;
  board_set_activity("setting inputs");
  RUNNER_TRY(set_inputs(*method, *meta, inputs), "setting the inputs");

  // The method's one tracing hook takes the timing table and the ETDump writer together.
  OperatorTiming timing(*meta);
  EventTracerPair tracers(&timing, etdump);
  method->set_event_tracer(&tracers);
  board_printf("I [runner] running '%s'\n", meta->name());
  timing.start();
  start = board_ticks();
  const Error executed = method->execute();
  const uint64_t execute_ticks = board_ticks() - start;
  timing.stop();
  method->set_event_tracer(etdump);
  if (etdump != nullptr) save_etdump(*etdump);
  if (executed != Error::Ok) return fail(executed, "executing the method");
  board_printf("I [runner] inference: %llu ticks, ~%llu instructions (-icount shift=0)\n",
               static_cast<unsigned long long>(execute_ticks),
               static_cast<unsigned long long>(execute_ticks * 1000000000ull / board_tick_hz()));
  timing.print();
  report_npu_counters(*method);
  print_usage("method allocator", method_allocator);
  print_usage("temp allocator", temp_allocator);

  board_printf("I [runner] %zu output(s):\n", method->outputs_size());
  for (size_t i = 0; i < method->outputs_size(); ++i) print_output(i, method->get_output(i));

  if (kiln_embedded_num_expected_outputs > 0) {
    if (kiln_embedded_num_expected_outputs != method->outputs_size()) {
      KILN_LOG(Error, "%lu expected outputs embedded; the method has %zu outputs",
               static_cast<unsigned long>(kiln_embedded_num_expected_outputs), method->outputs_size());
      return KILN_EXIT_OUTPUT_MISMATCH;
    }
    bool all_match = true;
    for (size_t i = 0; i < method->outputs_size(); ++i) {
      all_match = output_matches(i, method->get_output(i), kiln_embedded_expected_outputs[i]) && all_match;
    }
    if (!all_match) {
      board_printf("E [runner] outputs differ from the host runtime's\n");
      return KILN_EXIT_OUTPUT_MISMATCH;
    }
    board_printf("I [runner] outputs equal the host runtime's, bit for bit (%zu output(s))\n",
                 method->outputs_size());
  }
  board_printf("I [runner] done\n");
  return KILN_EXIT_OK;
}

}  // namespace
}  // namespace kiln::firmware

namespace kiln::firmware {

/// No backends unless the firmware links one (ethos_u_registration.cpp).
__attribute__((weak)) Error register_firmware_backends() { return Error::Ok; }

/// No NPU unless the firmware links one.
__attribute__((weak)) void report_npu_counters(const Method&) {}

}  // namespace kiln::firmware

int main() { return kiln::firmware::run(); }
