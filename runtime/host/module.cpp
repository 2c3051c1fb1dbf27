#include "runtime/host/module.h"

#include <utility>

#include "runtime/executor/file_data_loader.h"
#include "runtime/platform/log.h"

namespace kiln {

Result<std::unique_ptr<Module>> Module::load(const char* path, size_t temp_bytes) {
  if (path == nullptr) {
    KILN_LOG(Error, "Module::load: no path");
    return Error::InvalidArgument;
  }
  KILN_TRY_ASSIGN(FileDataLoader file, FileDataLoader::from(path));
  return load(std::make_unique<FileDataLoader>(std::move(file)), temp_bytes);
}

Result<std::unique_ptr<Module>> Module::load(std::unique_ptr<DataLoader> loader, size_t temp_bytes) {
  if (loader == nullptr) {
    KILN_LOG(Error, "Module::load: no data loader");
    return Error::InvalidArgument;
  }
  std::unique_ptr<Module> module(new Module(std::move(loader), temp_bytes));
  KILN_TRY_ASSIGN(Program program, Program::load(module->loader_.get(), Program::Verification::Full));
  module->program_.emplace(std::move(program));
  return module;
}

bool Module::is_method_loaded(const char* name) const {
  return name != nullptr && methods_.count(name) != 0;
}

Error Module::load_method(const char* name) {
  if (is_method_loaded(name)) return Error::Ok;
  KILN_TRY_ASSIGN(const MethodMeta meta, program_->method_meta(name));
  auto loaded = std::make_unique<LoadedMethod>();
  KILN_TRY_ASSIGN(loaded->memory, host::MethodMemory::allocate(meta, temp_bytes_));
  KILN_TRY_ASSIGN(Method method, program_->load_method(name, loaded->memory->manager()));
  loaded->method.emplace(std::move(method));
  methods_[name] = std::move(loaded);
  return Error::Ok;
}

Error Module::reset_method(const char* name) {
  KILN_TRY(program_->method_meta(name).error());
  if (is_method_loaded(name)) methods_.erase(name);
  return load_method(name);
}

Result<Method*> Module::method(const char* name) {
  KILN_TRY(load_method(name));
  return &*methods_.find(name)->second->method;
}

Result<std::vector<EValue>> Module::execute(const char* name, Span<const EValue> inputs) {
  KILN_TRY_ASSIGN(Method* const method, this->method(name));
  if (inputs.size() != method->inputs_size()) {
    KILN_LOG(Error, "%zu input(s) given; method '%s' takes %zu", inputs.size(), name,
             method->inputs_size());
    return Error::InputCountMismatch;
  }
  for (size_t i = 0; i < inputs.size(); ++i) KILN_TRY(method->set_input(inputs[i], i));
  KILN_TRY(method->execute());
  std::vector<EValue> outputs;
  outputs.reserve(method->outputs_size());
  for (size_t i = 0; i < method->outputs_size(); ++i) outputs.push_back(method->get_output(i));
  return outputs;
}

}  // namespace kiln
