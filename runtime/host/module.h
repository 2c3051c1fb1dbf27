// Module: a program and its methods behind one object, for host applications.
//
//   Result<std::unique_ptr<kiln::Module>> module = kiln::Module::load("model.pte");
//   Result<std::vector<EValue>> outputs = (*module)->forward({EValue(&input_tensor)});
//
// The lower-level API is underneath: the program is read with FileDataLoader (or any
// DataLoader), each method is loaded the first time it runs into memory sized from its
// MethodMeta (host::MethodMemory), and kept — so its state (mutable buffers) carries
// over from call to call until reset_method() loads it again from the initial values
// in the program. Host-only: it allocates, on the heap, what a firmware would place
// statically. Kernels and backends must be registered before methods are loaded.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/data_loader.h"
#include "runtime/executor/method.h"
#include "runtime/executor/method_meta.h"
#include "runtime/executor/program.h"
#include "runtime/host/method_memory.h"

namespace kiln {

class Module final {
 public:
  /// Kernel scratch (temp allocator) of each method unless load() is told otherwise.
  static constexpr size_t kDefaultTempBytes = size_t{1} << 20;

  /// Reads and loads the program at `path` (Program::load with full verification).
  /// AccessFailed if the file cannot be read, or Program::load's errors; each logged.
  static Result<std::unique_ptr<Module>> load(const char* path,
                                              size_t temp_bytes = kDefaultTempBytes);
  /// Loads the program `loader` serves; the Module owns the loader.
  static Result<std::unique_ptr<Module>> load(std::unique_ptr<DataLoader> loader,
                                              size_t temp_bytes = kDefaultTempBytes);

  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  size_t num_methods() const { return program_->num_methods(); }
  /// Name of method `i`; InvalidArgument if out of range.
  Result<const char*> method_name(size_t i) const { return program_->get_method_name(i); }
  /// NotFound (logged with the program's method names) for an unknown `name`.
  Result<MethodMeta> method_meta(const char* name) const { return program_->method_meta(name); }

  /// Loads method `name` unless it is loaded already. NotFound, or the errors of
  /// MethodMemory::allocate and Program::load_method.
  Error load_method(const char* name);
  bool is_method_loaded(const char* name) const;
  /// Loads method `name` again, in fresh memory: its state gets the program's initial
  /// values. Loads it if it was not loaded.
  Error reset_method(const char* name);
  /// Method `name`, loaded on first use; valid until reset_method(name) or the
  /// Module's destruction.
  Result<Method*> method(const char* name);

  /// Sets every input of method `name` (Method::set_input's errors, or
  /// InputCountMismatch for a wrong count, logged), runs it and returns its outputs.
  /// Tensor outputs point into the method's memory: valid until its next execute.
  Result<std::vector<EValue>> execute(const char* name, Span<const EValue> inputs);
  Result<std::vector<EValue>> forward(Span<const EValue> inputs) { return execute("forward", inputs); }

  const Program& program() const { return *program_; }

 private:
  struct LoadedMethod {
    std::unique_ptr<host::MethodMemory> memory;
    std::optional<Method> method;
  };

  Module(std::unique_ptr<DataLoader> loader, size_t temp_bytes)
      : loader_(std::move(loader)), temp_bytes_(temp_bytes) {}

  std::unique_ptr<DataLoader> loader_;
  std::optional<Program> program_;
  size_t temp_bytes_;
  std::map<std::string, std::unique_ptr<LoadedMethod>> methods_;
};

}  // namespace kiln
