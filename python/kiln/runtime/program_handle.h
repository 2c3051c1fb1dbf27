// kiln._runtime.Program: a loaded program and the bytes it points into.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "python/kiln/runtime/method_handle.h"
#include "runtime/executor/data_loader.h"
#include "runtime/executor/program.h"

namespace kiln::python {

class ProgramHandle {
 public:
  static std::unique_ptr<ProgramHandle> from_file(const std::string& path);
  /// A private, aligned copy of `data`: the program points into it for its lifetime.
  static std::unique_ptr<ProgramHandle> from_bytes(nanobind::bytes data);

  nanobind::list method_names() const;
  nanobind::dict method_meta(const std::string& name) const;
  /// `fill_planned`: a byte written over the planned buffers before init (-1: none).
  std::unique_ptr<MethodHandle> load_method(const std::string& name, size_t temp_bytes,
                                            int fill_planned) const;

  size_t file_size() const { return program_->file_size(); }
  size_t program_data_size() const { return program_->program_data_size(); }
  int64_t load_ns() const { return load_ns_; }

 private:
  ProgramHandle() = default;
  void load(const std::string& context);

  std::unique_ptr<std::max_align_t[]> bytes_;
  std::unique_ptr<DataLoader> loader_;
  std::optional<Program> program_;
  int64_t load_ns_ = 0;
};

}  // namespace kiln::python
