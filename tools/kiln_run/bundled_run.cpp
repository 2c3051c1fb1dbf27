#include "tools/kiln_run/bundled_run.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/bundled_program/bundled_program.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/host/host_buffer.h"
#include "runtime/host/method_memory.h"
#include "tools/kiln_run/etdump_output.h"
#include "tools/kiln_run/printable.h"

namespace kiln::host {
namespace {

/// The bundle's bytes at a 32-byte boundary (its embedded program keeps its alignment).
struct AlignedFile {
  HostBuffer buffer;
  Span<const uint8_t> bytes;
};

constexpr size_t kBundleAlignment = 32;

Result<AlignedFile> read_aligned(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    KILN_LOG(Error, "cannot open %s", path.c_str());
    return Error::AccessFailed;
  }
  std::fseek(file, 0, SEEK_END);
  const long size = std::ftell(file);
  std::fseek(file, 0, SEEK_SET);
  if (size < 0) {
    std::fclose(file);
    KILN_LOG(Error, "cannot read the size of %s", path.c_str());
    return Error::AccessFailed;
  }
  AlignedFile result;
  Result<HostBuffer> buffer = HostBuffer::allocate(static_cast<size_t>(size) + kBundleAlignment, "bundled program");
  if (!buffer.ok()) {
    std::fclose(file);
    return buffer.error();
  }
  result.buffer = std::move(*buffer);
  uint8_t* start = result.buffer.data();
  start += (kBundleAlignment - reinterpret_cast<uintptr_t>(start) % kBundleAlignment) % kBundleAlignment;
  const size_t read = std::fread(start, 1, static_cast<size_t>(size), file);
  std::fclose(file);
  if (read != static_cast<size_t>(size)) {
    KILN_LOG(Error, "read %zu of the %ld bytes of %s", read, size, path.c_str());
    return Error::AccessFailed;
  }
  result.bytes = {start, static_cast<size_t>(size)};
  return result;
}

}  // namespace

bool is_bundled_program_file(const std::string& path) {
  uint8_t head[8] = {};
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  const size_t read = std::fread(head, 1, sizeof(head), file);
  std::fclose(file);
  return read == sizeof(head) && BundledProgram::has_identifier({head, sizeof(head)});
}

int run_bundled_program(const Options& options, LogCapture& capture) {
  std::string while_doing = "loading the bundled program " + options.program_path;
  auto fail = [&](Error error) { return report_failure(capture, error, while_doing); };

  Result<AlignedFile> file = read_aligned(options.program_path);
  if (!file.ok()) return fail(file.error());
  Result<BundledProgram> bundle = BundledProgram::load(file->bytes);
  if (!bundle.ok()) return fail(bundle.error());
  BufferDataLoader loader(bundle->program().data(), bundle->program().size());
  Result<Program> program = Program::load(&loader, Program::Verification::Full);
  if (!program.ok()) return fail(program.error());
  Result<std::string> method_name = choose_method(*program, options.method_name);
  if (!method_name.ok()) return fail(method_name.error());
  while_doing = "preparing method '" + printable(*method_name) + "'";
  Result<MethodMeta> meta = program->method_meta(method_name->c_str());
  if (!meta.ok()) return fail(meta.error());
  Result<std::unique_ptr<MethodMemory>> memory = MethodMemory::allocate(*meta, options.temp_bytes);
  if (!memory.ok()) return fail(memory.error());
  if (options.fill_planned >= 0) (*memory)->fill_planned_buffers(static_cast<uint8_t>(options.fill_planned));
  Result<Method> method = program->load_method(method_name->c_str(), (*memory)->manager());
  if (!method.ok()) return fail(method.error());
  Result<std::unique_ptr<EtdumpOutput>> etdump = EtdumpOutput::create(options);
  if (!etdump.ok()) return fail(etdump.error());
  if (*etdump) method->set_event_tracer(&(*etdump)->writer());

  const size_t cases = bundle->num_test_cases(method_name->c_str());
  std::printf("bundled program: %s (%zu bytes, program %zu bytes), method '%s', %zu test case(s), "
              "tolerance |actual - expected| <= %g + %g * |expected|\n",
              options.program_path.c_str(), file->bytes.size(), bundle->program().size(),
              printable(*method_name).c_str(), cases, options.bundle_atol, options.bundle_rtol);
  if (cases == 0) {
    KILN_LOG(Error, "the bundle has no test cases for method '%s'", method_name->c_str());
    return fail(Error::BundledProgramInvalid);
  }
  std::vector<BundledOutputCheck> checks(method->outputs_size());
  BundledInputs inputs;
  size_t failed = 0;
  for (size_t c = 0; c < cases; ++c) {
    while_doing = "running bundled test case " + std::to_string(c);
    Error error = bundle->set_inputs(*method, method_name->c_str(), c, inputs);
    if (error != Error::Ok) return fail(error);
    if (*etdump) (*etdump)->writer().set_bundled_input_index(static_cast<int32_t>(c));
    error = method->execute();
    if (error != Error::Ok) return fail(error);
    capture.errors.clear();
    error = bundle->verify_outputs(*method, method_name->c_str(), c, options.bundle_rtol, options.bundle_atol,
                                   {checks.data(), checks.size()});
    if (error != Error::Ok && error != Error::BundledProgramOutputMismatch) return fail(error);
    const bool passed = error == Error::Ok;
    failed += passed ? 0 : 1;
    std::printf("test case %zu: %s\n", c, passed ? "PASS" : "FAIL");
    for (size_t i = 0; i < checks.size(); ++i) {
      std::printf("  output %zu: max |error| %.6g, %zu of %zu elements beyond tolerance\n", i,
                  checks[i].max_abs_error, checks[i].mismatches, checks[i].numel);
    }
  }
  method->set_event_tracer(nullptr);
  if (*etdump) {
    const Error error = (*etdump)->save(&while_doing);
    if (error != Error::Ok) return fail(error);
  }
  if (failed > 0) {
    std::printf("Test_result: FAIL (%zu of %zu test case(s) failed)\n", failed, cases);
    return kExitRuntimeError;
  }
  std::printf("Test_result: PASS (%zu test case(s))\n", cases);
  return 0;
}

}  // namespace kiln::host
