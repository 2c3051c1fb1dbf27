// kiln-run (the kiln_executor_runner binary the Python package installs): runs one
// method of a .pte program on the host, or the test cases of a bundled program
// (bundled_run.h), optionally recording an ETDump (etdump_output.h).
//
//   kiln-run PROGRAM.pte [--input x.npy|NUMBER ...] [--output-dir DIR]
//            [--iterations N] [--method NAME] [--temp-bytes N] [--profile]
//
// Every buffer is sized from the program (MethodMeta), not guessed: the method
// allocator gets exactly method_allocator_size() bytes and each planned buffer its
// planned size. Only the kernel scratch (temp) allocator has a default, 1 MiB.
//
// Exit status: 0 on success, 1 when the runtime (or reading/writing a file) reports an
// Error — the last line of stderr is then "error: <ErrorName> (0x..): <reason>" — and 2
// for a malformed command line (one line on stderr). Names and messages that come from
// the program are printed escaped (printable.h): a hostile file cannot write raw bytes
// to the terminal.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "runtime/npy/dim_order_copy.h"
#include "kernels/register_cpu_kernels.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/executor/file_data_loader.h"
#include "runtime/executor/event_tracer_pair.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/host/method_memory.h"
#include "runtime/host/npy_file.h"
#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"
#include "tools/kiln_run/bundled_run.h"
#include "tools/kiln_run/etdump_output.h"
#include "tools/kiln_run/operator_profile.h"
#include "tools/kiln_run/printable.h"
#include "tools/kiln_run/runner_common.h"
#include "tools/kiln_run/runner_options.h"
#ifdef KILN_RUN_ETHOS_U
#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/host_virtual_npu.h"
#include "backends/arm/runtime/npu_identity.h"
#endif
#ifdef KILN_WITH_XNNPACK
#include "backends/xnnpack/runtime/xnnpack_backend.h"
#endif

namespace kiln::host {
namespace {

// ---- small helpers ----

/// Generated inputs larger than this are refused (a corrupted program could declare
/// any size; a real model's input is far smaller).
constexpr size_t kMaxGeneratedInputBytes = size_t{1} << 30;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

template <typename T>
std::string shape_string(Span<const T> sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(sizes[i]);
  }
  return text + "]";
}

// "1 method" / "3 methods: forward, reset, step", names escaped.
std::string method_list(const Program& program) {
  const size_t count = program.num_methods();
  std::string text = std::to_string(count) + (count == 1 ? " method" : " methods");
  for (size_t i = 0; i < count && count > 1; ++i) {
    Result<const char*> name = program.get_method_name(i);
    text += (i == 0 ? ": " : ", ") + (name.ok() ? printable(*name, std::strlen(*name)) : "?");
  }
  return text;
}

// ---- inputs ----

// Checks what the runtime cannot see in a tensor: the .npy dtype, named with the file.
// The shape is checked by Method::set_input, which knows whether the input may be
// smaller (dynamic); the parser has made sure it is a valid tensor shape.
Error check_input(const NpyArray& array, const TensorInfo& info, size_t index,
                  const std::string& path) {
  if (array.dtype != info.scalar_type) {
    KILN_LOG(Error, "input %zu (%s) is %s; the method expects %s", index, path.c_str(),
             scalar_type_name(array.dtype), scalar_type_name(info.scalar_type));
    return Error::InputDtypeMismatch;
  }
  return Error::Ok;
}

// Deterministic, non-trivial values: a sawtooth in [-1, 1) (floats) or small integers.
void fill_deterministic(const Tensor& tensor) {
  const size_t n = tensor.numel();
  void* data = tensor.mutable_data_ptr();
  for (size_t i = 0; i < n; ++i) {
    const int64_t step = static_cast<int64_t>(i % 17) - 8;
    switch (tensor.scalar_type()) {
      case ScalarType::Float: static_cast<float*>(data)[i] = static_cast<float>(step) / 8.0f; break;
      case ScalarType::Double: static_cast<double*>(data)[i] = static_cast<double>(step) / 8.0; break;
      case ScalarType::Char: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(step); break;
      case ScalarType::Short: static_cast<int16_t*>(data)[i] = static_cast<int16_t>(step); break;
      case ScalarType::Int: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(step); break;
      case ScalarType::Long: static_cast<int64_t*>(data)[i] = step; break;
      case ScalarType::Byte: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(i % 17); break;
      case ScalarType::Bool: static_cast<bool*>(data)[i] = (i % 2) == 1; break;
      default: std::memset(data, 0, tensor.nbytes()); return;
    }
  }
}

// Keeps the tensors built over input data alive while the method may point at them.
struct InputStorage {
  std::vector<NpyArray> arrays;
  std::vector<std::vector<int32_t>> sizes;
  std::vector<std::vector<uint8_t>> dim_orders;
  std::vector<std::vector<int32_t>> strides;
  std::vector<Tensor> tensors;
  /// One per method input, in order: a number, or a Tensor value over `tensors`.
  std::vector<EValue> values;

  // A tensor over `array`'s data (the array moves into this storage), in `dim_order`
  // (the array's bytes must already be in that order; empty: row-major).
  Tensor* add(NpyArray array, Span<const uint8_t> dim_order) {
    arrays.push_back(std::move(array));
    NpyArray& stored = arrays.back();
    const size_t dim = stored.shape.size();
    sizes.push_back(stored.shape);
    dim_orders.emplace_back(dim);
    for (size_t d = 0; d < dim; ++d) {
      dim_orders.back()[d] = dim_order.size() == dim ? dim_order[d] : static_cast<uint8_t>(d);
    }
    strides.emplace_back(dim);
    tensors.emplace_back(stored.dtype, static_cast<int32_t>(dim), sizes.back().data(),
                         dim_orders.back().data(), strides.back().data(), stored.data.data());
    return &tensors.back();
  }
};

// An array of the input's dtype and shape holding deterministic values.
Result<NpyArray> make_deterministic_input(const TensorInfo& info) {
  NpyArray array;
  array.dtype = info.scalar_type;
  array.shape.assign(info.sizes.begin(), info.sizes.end());
  if (info.nbytes > kMaxGeneratedInputBytes) {
    KILN_LOG(Error, "the input needs %zu bytes; the runner generates at most %zu",
             info.nbytes, kMaxGeneratedInputBytes);
    return Error::MemoryAllocationFailed;
  }
  size_t numel = 1;
  for (SizesType size : array.shape) numel *= static_cast<size_t>(size);
  if (numel * element_size(array.dtype) != info.nbytes) {
    KILN_LOG(Error, "the input's sizes and dtype give %zu bytes, its metadata %zu",
             numel * element_size(array.dtype), info.nbytes);
    return Error::InvalidProgram;
  }
  array.data.resize(info.nbytes);
  return array;
}

// A non-tensor input (Int, Double or Bool) from its --input text: a decimal integer, a
// number, or true/false/1/0. InvalidArgument (logged) for text that is not one.
Result<EValue> parse_number_input(const std::string& text, Tag tag, size_t index) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (tag == Tag::Bool) {
    if (text == "true" || text == "True" || text == "1") return EValue(true);
    if (text == "false" || text == "False" || text == "0") return EValue(false);
  } else if (tag == Tag::Int) {
    const long long value = std::strtoll(begin, &end, 10);
    if (!text.empty() && *end == '\0' && errno == 0) return EValue(static_cast<int64_t>(value));
  } else {
    const double value = std::strtod(begin, &end);
    if (!text.empty() && *end == '\0' && errno == 0) return EValue(value);
  }
  KILN_LOG(Error, "input %zu is a%s %s; '%s' is not one (give %s)", index,
           tag == Tag::Int ? "n" : "", tag_name(tag), printable(text).c_str(),
           tag == Tag::Int ? "a decimal integer" : tag == Tag::Bool ? "true or false" : "a number");
  return Error::InvalidArgument;
}

// "Int 3", "Double 0.5", "Bool true" for the input lines.
std::string describe_number(const EValue& value) {
  if (value.is_int()) return "Int " + std::to_string(value.to_int());
  if (value.is_bool()) return std::string("Bool ") + (value.to_bool() ? "true" : "false");
  char text[40];
  std::snprintf(text, sizeof(text), "Double %.17g", value.to_double());
  return text;
}

// Input `i` when it is a number: from its --input text, else the value the program was
// exported with (the only one a fixed input accepts).
Error set_number_input(Method& method, Tag tag, size_t i, const Options& options,
                       InputStorage* storage) {
  const bool generated = options.input_paths.empty();
  EValue value = method.get_input(i);
  if (!generated) {
    KILN_TRY_ASSIGN(value, parse_number_input(options.input_paths[i], tag, i));
  }
  storage->values.push_back(value);
  KILN_TRY(method.set_input(value, i));
  std::printf("  input %zu: %s <- %s\n", i, describe_number(value).c_str(),
              generated ? "the program's value" : "--input");
  return Error::Ok;
}

Error set_inputs(Method& method, const MethodMeta& meta, const Options& options,
                 InputStorage* storage, std::string* while_doing) {
  const size_t num_inputs = meta.num_inputs();
  const bool generated = options.input_paths.empty();
  if (generated) {
    std::printf("inputs: none given; filling %zu input(s) with deterministic values "
                "(floats: sawtooth (i %% 17 - 8) / 8)\n",
                num_inputs);
  } else if (options.input_paths.size() != num_inputs) {
    KILN_LOG(Error, "%zu --input file(s) given; method '%s' has %zu input(s)",
             options.input_paths.size(), printable(meta.name(), std::strlen(meta.name())).c_str(),
             num_inputs);
    return Error::InputCountMismatch;
  }
  // Reserved up front: the method keeps pointers into these vectors.
  storage->arrays.reserve(num_inputs);
  storage->tensors.reserve(num_inputs);
  storage->values.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const std::string source = generated ? "generated" : options.input_paths[i];
    *while_doing = "preparing input " + std::to_string(i) + " (" + source + ")";
    KILN_TRY_ASSIGN(const Tag tag, meta.input_tag(i));
    if (tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool) {
      KILN_TRY(set_number_input(method, tag, i, options, storage));
      continue;
    }
    KILN_TRY_ASSIGN(TensorInfo info, meta.input_tensor_meta(i));
    NpyArray array;
    if (generated) {
      KILN_TRY_ASSIGN(array, make_deterministic_input(info));
    } else {
      KILN_TRY_ASSIGN(array, read_npy(source));
      KILN_TRY(check_input(array, info, i, source));
    }
    // A program may store an input in another dim order (channels-last): the .npy holds
    // it row-major, so its bytes are reordered (generated values are made in place).
    const bool reorder = !generated && !is_default_dim_order(info.dim_order) &&
                         array.shape.size() == info.dim_order.size();
    if (reorder) {
      std::vector<uint8_t> stored(array.data.size());
      KILN_TRY(copy_dim_order(array.data.data(), stored.data(), {array.shape.data(), array.shape.size()},
                              info.dim_order, element_size(array.dtype), true));
      array.data = std::move(stored);
    }
    Tensor* tensor = storage->add(std::move(array), info.dim_order);
    if (generated) fill_deterministic(*tensor);
    storage->values.emplace_back(tensor);
    KILN_TRY(method.set_input(storage->values.back(), i));  // checks dtype and shape now
    const std::string bound = info.shape_dynamism == ShapeDynamism::Static
                                  ? ""
                                  : " (upper bound " + shape_string(info.sizes) + ")";
    std::printf("  input %zu: %s %s%s <- %s\n", i, scalar_type_name(tensor->scalar_type()),
                shape_string(tensor->sizes()).c_str(), bound.c_str(), source.c_str());
  }
  while_doing->clear();
  return Error::Ok;
}

// Gives the method its inputs again. Needed before every execution: memory planning
// may reuse an input's planned bytes for a later tensor, so a run can overwrite them.
Error reapply_inputs(Method& method, InputStorage& storage) {
  for (size_t i = 0; i < storage.values.size(); ++i) {
    KILN_TRY(method.set_input(storage.values[i], i));
  }
  return Error::Ok;
}

// ---- outputs ----

/// Creates `directory` and its parents when missing. AccessFailed (logged) if that fails
/// or the path is something other than a directory.
Error make_output_dir(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error || !std::filesystem::is_directory(directory)) {
    KILN_LOG(Error, "cannot create the output directory %s: %s", directory.c_str(),
             error ? error.message().c_str() : "a file of that name exists");
    return Error::AccessFailed;
  }
  return Error::Ok;
}

Error write_outputs(const Method& method, const Options& options, std::string* while_doing) {
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    const EValue& value = method.get_output(i);
    if (value.is_scalar()) {
      std::printf("  output %zu: %s\n", i, describe_number(value).c_str());
      continue;
    }
    if (!value.is_tensor()) {
      std::printf("  output %zu: %s (not a tensor, not written)\n", i, tag_name(value.tag()));
      continue;
    }
    const Tensor& tensor = value.to_tensor();
    const std::string path =
        (std::filesystem::path(options.output_dir) / ("output_" + std::to_string(i) + ".npy"))
            .string();
    *while_doing = "writing output " + std::to_string(i) + " to " + path;
    if (is_default_dim_order(tensor.dim_order())) {
      KILN_TRY(write_npy(path, tensor.scalar_type(), tensor.sizes(), tensor.const_data_ptr(), tensor.nbytes()));
    } else {
      // A .npy is row-major: reorder an output stored in another dim order (channels-last).
      std::vector<uint8_t> row_major(tensor.nbytes());
      KILN_TRY(copy_dim_order(tensor.const_data_ptr(), row_major.data(), tensor.sizes(), tensor.dim_order(),
                              tensor.element_size(), false));
      KILN_TRY(write_npy(path, tensor.scalar_type(), tensor.sizes(), row_major.data(), tensor.nbytes()));
    }
    std::printf("  output %zu: %s %s -> %s\n", i, scalar_type_name(tensor.scalar_type()),
                shape_string(tensor.sizes()).c_str(), path.c_str());
  }
  while_doing->clear();
  return Error::Ok;
}

#ifdef KILN_RUN_ETHOS_U
/// The NPU the driver read from its ID/CONFIG registers, and what it did in the last
/// execute: the PMU's counters, the model's operation counts.
void print_npu_counters(const Method& method) {
  size_t delegates_run = 0;
  Result<ethos_u::NpuCounters> counters = ethos_u::method_npu_counters(method, &delegates_run);
  if (!counters.ok() || delegates_run == 0) return;
  ethos_u::NpuIdentity npu;
  bool identified = false;
  {
    std::lock_guard<std::mutex> lock(ethos_u::host_virtual_npu_mutex());
    identified = ethos_u::host_virtual_npu().identity(&npu);
  }
  if (identified) {
    char line[256];
    ethos_u::describe_npu(npu, line, sizeof(line));
    std::printf("ethos-u NPU (from its ID/CONFIG registers): %s\n", line);
  }
  const ethos_u::NpuCounters& c = *counters;
  std::printf("ethos-u PMU (last execute, %zu delegate call(s)): %llu cycles, %llu active cycles, "
              "%llu AXI read beats, %llu AXI write beats (the virtual NPU device's estimate; Vela's "
              "is in kiln-aot's summary and per layer in the program's .debug.json, kiln-inspect)\n",
              delegates_run, static_cast<unsigned long long>(c.cycles),
              static_cast<unsigned long long>(c.active_cycles),
              static_cast<unsigned long long>(c.axi_read_beats),
              static_cast<unsigned long long>(c.axi_write_beats));
  std::printf("ethos-u operations (virtual NPU): %llu operations, %llu MACs, %llu element ops, %llu "
              "DMAs, %llu commands\n",
              static_cast<unsigned long long>(c.operations), static_cast<unsigned long long>(c.macs),
              static_cast<unsigned long long>(c.element_ops),
              static_cast<unsigned long long>(c.dma_transfers),
              static_cast<unsigned long long>(c.commands));
}
#endif

/// One line per piece of state (mutable buffer), saying where its value at load comes from.
void print_states(const MethodMeta& meta) {
  for (size_t i = 0; i < meta.num_states(); ++i) {
    Result<StateInfo> state = meta.state_meta(i);
    if (!state.ok()) continue;  // logged; the method loaded, so this does not happen
    std::printf("state (kept between iterations): value %zu, %s %s, %zu bytes, %s\n",
                state->value_index, scalar_type_name(state->tensor.scalar_type),
                shape_string(state->tensor.sizes).c_str(), state->tensor.nbytes,
                state->has_initial_value ? "initial value from the program"
                                         : "no initial value in the program: starts at zero");
  }
}

// ---- the run ----

int run(const Options& options, LogCapture& capture) {
  if (is_bundled_program_file(options.program_path)) return run_bundled_program(options, capture);
  std::string while_doing = "loading " + options.program_path;
  auto fail = [&](Error error) { return report_failure(capture, error, while_doing); };

  auto start = std::chrono::steady_clock::now();
  Result<FileDataLoader> loader = FileDataLoader::from(options.program_path.c_str());
  if (!loader.ok()) return fail(loader.error());
  Result<Program> program = Program::load(&*loader, Program::Verification::Full);
  if (!program.ok()) return fail(program.error());
  const double load_ms = ms_since(start);

  Result<std::string> method_name = choose_method(*program, options.method_name);
  if (!method_name.ok()) return fail(method_name.error());
  while_doing = "preparing method '" + printable(*method_name) + "'";
  Result<MethodMeta> meta = program->method_meta(method_name->c_str());
  if (!meta.ok()) return fail(meta.error());
  // Exactly the sizes the program asks for.
  Result<std::unique_ptr<MethodMemory>> memory = MethodMemory::allocate(*meta, options.temp_bytes);
  if (!memory.ok()) return fail(memory.error());
  if (options.fill_planned >= 0) (*memory)->fill_planned_buffers(static_cast<uint8_t>(options.fill_planned));

  start = std::chrono::steady_clock::now();
  Result<Method> method = program->load_method(method_name->c_str(), (*memory)->manager());
  if (!method.ok()) return fail(method.error());
  const double init_ms = ms_since(start);

  std::printf("program: %s (%zu bytes, flatbuffer %zu), method '%s' of %s\n",
              options.program_path.c_str(), loader->size(), program->program_data_size(),
              printable(*method_name).c_str(), method_list(*program).c_str());
  InputStorage inputs;
  Error error = set_inputs(*method, *meta, options, &inputs, &while_doing);
  if (error != Error::Ok) return fail(error);

  while_doing = "creating the output directory " + options.output_dir;
  error = make_output_dir(options.output_dir);
  if (error != Error::Ok) return fail(error);

  OperatorProfile profile;
  Result<std::unique_ptr<EtdumpOutput>> etdump = EtdumpOutput::create(options);
  if (!etdump.ok()) return fail(etdump.error());
  // The method's one tracing hook takes the profiler and the ETDump writer together.
  EventTracerPair tracers(options.profile ? &profile : nullptr, *etdump ? &(*etdump)->writer() : nullptr);
  if (options.profile || *etdump) method->set_event_tracer(&tracers);
  std::vector<double> execute_ms;
  execute_ms.reserve(options.iterations);
  for (uint64_t i = 0; i < options.iterations; ++i) {
    while_doing = "executing '" + printable(*method_name) + "' (iteration " + std::to_string(i) + ")";
    if (i > 0) {
      error = reapply_inputs(*method, inputs);
      if (error != Error::Ok) return fail(error);
    }
    start = std::chrono::steady_clock::now();
    error = method->execute();
    execute_ms.push_back(ms_since(start));
    if (error != Error::Ok) return fail(error);
  }
  method->set_event_tracer(nullptr);

  std::printf("outputs:\n");
  error = write_outputs(*method, options, &while_doing);
  if (error != Error::Ok) return fail(error);

  std::vector<double> sorted = execute_ms;
  std::sort(sorted.begin(), sorted.end());
  std::printf("load: %.3f ms (file + Program::load), method init: %.3f ms\n", load_ms, init_ms);
  const size_t middle = sorted.size() / 2;
  const double median =
      sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
  std::printf("execute: %" PRIu64 " iteration(s), median %.3f ms, min %.3f ms\n",
              options.iterations, median, sorted.front());
  const MethodMemory& pools = **memory;
  std::printf("planned memory: %zu buffer(s)", pools.num_planned_buffers());
  size_t planned_total = 0;
  for (size_t i = 0; i < pools.num_planned_buffers(); ++i) {
    std::printf("%s [%zu] %zu bytes", i == 0 ? ":" : ",", i, pools.planned_buffer_size(i));
    planned_total += pools.planned_buffer_size(i);
  }
  std::printf(" (total %zu)\n", planned_total);
  print_states(*meta);
  std::printf("method allocator: %zu / %zu bytes used\n", pools.method_allocator().used(),
              pools.method_allocator().size());
  std::printf("temp allocator: peak %zu / %zu bytes\n", pools.temp_allocator().peak(),
              pools.temp_allocator().size());
#ifdef KILN_RUN_ETHOS_U
  print_npu_counters(*method);
#endif
  if (options.profile) profile.print(options.iterations);
  if (*etdump) {
    error = (*etdump)->save(&while_doing);
    if (error != Error::Ok) return fail(error);
  }
  return 0;
}

}  // namespace
}  // namespace kiln::host

int main(int argc, char** argv) {
  using namespace kiln;
  host::Options options;
  bool help = false;
  // parse_options has said why in one line.
  if (!host::parse_options(argc, argv, &options, &help)) return host::kExitUsage;
  if (help) {
    host::print_usage(stdout);
    return 0;
  }
  kiln_pal_init();
  host::LogCapture capture;
  capture.verbose = options.verbose;
  set_log_sink(&host::capture_log, &capture);

  const Error registered = register_cpu_kernels();
  if (registered != Error::Ok) return host::report_failure(capture, registered, "registering kernels");
#ifdef KILN_RUN_ETHOS_U
  // Delegated Ethos-U programs run on the host: the register-level driver on the virtual
  // NPU's register-accurate device.
  const Error npu = ethos_u::register_ethos_u_backend_with_virtual_npu();
  if (npu != Error::Ok) return host::report_failure(capture, npu, "registering the EthosUBackend");
#endif
#ifdef KILN_WITH_XNNPACK
  // ExecuTorch's XNNPACK-delegated programs run with the XNNPACK library.
  Error xnnpack = register_xnnpack_backend();
  if (xnnpack == Error::Ok) xnnpack = set_xnnpack_threads(static_cast<size_t>(options.threads));
  if (xnnpack != Error::Ok) return host::report_failure(capture, xnnpack, "registering the XnnpackBackend");
#endif
  return host::run(options, capture);
}
