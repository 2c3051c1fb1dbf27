#include "python/kiln/runtime/program_handle.h"

#include <chrono>
#include <cstring>

#include "python/kiln/runtime/method_meta_dict.h"
#include "python/kiln/runtime/runtime_error.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/file_data_loader.h"

namespace nb = nanobind;

namespace kiln::python {

std::unique_ptr<ProgramHandle> ProgramHandle::from_file(const std::string& path) {
  auto handle = std::unique_ptr<ProgramHandle>(new ProgramHandle());
  const std::string context = "loading " + path;
  handle->loader_ = std::make_unique<FileDataLoader>(
      take_or_raise(FileDataLoader::from(path.c_str()), context));
  handle->load(context);
  return handle;
}

std::unique_ptr<ProgramHandle> ProgramHandle::from_bytes(nb::bytes data) {
  auto handle = std::unique_ptr<ProgramHandle>(new ProgramHandle());
  const size_t words = (data.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  handle->bytes_ = std::make_unique<std::max_align_t[]>(words == 0 ? 1 : words);
  if (data.size() != 0) std::memcpy(handle->bytes_.get(), data.c_str(), data.size());
  handle->loader_ = std::make_unique<BufferDataLoader>(handle->bytes_.get(), data.size());
  handle->load("loading a program from " + std::to_string(data.size()) + " bytes");
  return handle;
}

nb::list ProgramHandle::method_names() const {
  nb::list names;
  for (size_t i = 0; i < program_->num_methods(); ++i) {
    const char* name = take_or_raise(program_->get_method_name(i), "listing methods");
    names.append(text(name, std::strlen(name)));
  }
  return names;
}

nb::dict ProgramHandle::method_meta(const std::string& name) const {
  return describe_meta(
      take_or_raise(program_->method_meta(name.c_str()), "reading method '" + name + "'"));
}

std::unique_ptr<MethodHandle> ProgramHandle::load_method(const std::string& name,
                                                         size_t temp_bytes,
                                                         int fill_planned) const {
  return std::make_unique<MethodHandle>(*program_, name, temp_bytes, fill_planned);
}

void ProgramHandle::load(const std::string& context) {
  const auto start = std::chrono::steady_clock::now();
  program_.emplace(
      take_or_raise(Program::load(loader_.get(), Program::Verification::Full), context));
  load_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now() - start)
                 .count();
}

}  // namespace kiln::python
