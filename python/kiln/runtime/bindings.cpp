// kiln._runtime: the Kiln C++ runtime as a Python extension (nanobind).
//
// This is the one translation unit of Kiln built with exceptions: a runtime Error is
// turned into a C++ exception here and translated into kiln.runtime.KilnRuntimeError,
// carrying the error's name, its code and the runtime's log messages of the failing
// call. The Python wrapper (kiln/runtime/executor.py) converts torch tensors to numpy
// and back; this module deals only in C-contiguous CPU arrays.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/portable/register_portable_kernels.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/hierarchical_allocator.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/executor/file_data_loader.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/kernel/operator_registry.h"
#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

using InputArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// ---- the runtime's log: kept per call so that an error can quote its reasons ----

struct LogRecord {
  int level;
  std::string message;
};

/// Messages since the last take; bounded so a chatty program cannot grow it forever.
class LogBuffer {
 public:
  static constexpr size_t kMaxRecords = 256;

  void add(LogLevel level, const char* message, size_t length) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (records_.size() == kMaxRecords) records_.erase(records_.begin());
    records_.push_back({static_cast<int>(level), std::string(message, length)});
  }

  std::vector<LogRecord> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<LogRecord> taken;
    taken.swap(records_);
    return taken;
  }

 private:
  std::mutex mutex_;
  std::vector<LogRecord> records_;
};

LogBuffer g_log;

void log_to_buffer(LogLevel level, const char* message, size_t length, void* user) {
  static_cast<LogBuffer*>(user)->add(level, message, length);
}

/// A runtime Error on its way to Python (see the translator in the module init).
struct RuntimeFailure {
  Error error;
  std::string context;
  std::vector<std::string> error_log;  // the call's Error/Fatal messages, oldest first
};

[[noreturn]] void raise(Error error, std::string context) {
  RuntimeFailure failure{error, std::move(context), {}};
  std::vector<LogRecord> records = g_log.take();
  for (LogRecord& record : records) {
    if (record.level >= static_cast<int>(LogLevel::Error)) {
      failure.error_log.push_back(std::move(record.message));
    }
  }
  throw failure;
}

void check(Error error, const std::string& context) {
  if (error != Error::Ok) raise(error, context);
}

template <typename T>
T take_or_raise(Result<T>&& result, const std::string& context) {
  if (!result.ok()) raise(result.error(), context);
  return std::move(*result);
}

/// Text from the program or the log as a Python str. Bytes that are not UTF-8 (a
/// corrupted program, a message cut inside a character) are replaced, not raised.
nb::str text(const char* data, size_t size) {
  PyObject* decoded = PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(size), "replace");
  if (decoded == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(decoded);
}

nb::str text(const std::string& value) { return text(value.data(), value.size()); }

// ---- dtypes ----

std::optional<ScalarType> scalar_type_of(nb::dlpack::dtype dtype) {
  using Code = nb::dlpack::dtype_code;
  if (dtype.lanes != 1) return std::nullopt;
  const auto code = static_cast<Code>(dtype.code);
  switch (code) {
    case Code::Float:
      if (dtype.bits == 16) return ScalarType::Half;
      if (dtype.bits == 32) return ScalarType::Float;
      if (dtype.bits == 64) return ScalarType::Double;
      break;
    case Code::Bfloat:
      if (dtype.bits == 16) return ScalarType::BFloat16;
      break;
    case Code::Int:
      if (dtype.bits == 8) return ScalarType::Char;
      if (dtype.bits == 16) return ScalarType::Short;
      if (dtype.bits == 32) return ScalarType::Int;
      if (dtype.bits == 64) return ScalarType::Long;
      break;
    case Code::UInt:
      if (dtype.bits == 8) return ScalarType::Byte;
      if (dtype.bits == 16) return ScalarType::UInt16;
      if (dtype.bits == 32) return ScalarType::UInt32;
      if (dtype.bits == 64) return ScalarType::UInt64;
      break;
    case Code::Bool:
      if (dtype.bits == 8) return ScalarType::Bool;
      break;
    default:
      break;
  }
  return std::nullopt;
}

std::optional<nb::dlpack::dtype> dlpack_dtype_of(ScalarType type) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, uint8_t bits) {
    nb::dlpack::dtype dtype;
    dtype.code = static_cast<uint8_t>(code);
    dtype.bits = bits;
    dtype.lanes = 1;
    return dtype;
  };
  switch (type) {
    case ScalarType::Half: return make(Code::Float, 16);
    case ScalarType::Float: return make(Code::Float, 32);
    case ScalarType::Double: return make(Code::Float, 64);
    case ScalarType::BFloat16: return make(Code::Bfloat, 16);
    case ScalarType::Char: return make(Code::Int, 8);
    case ScalarType::Short: return make(Code::Int, 16);
    case ScalarType::Int: return make(Code::Int, 32);
    case ScalarType::Long: return make(Code::Int, 64);
    case ScalarType::Byte: return make(Code::UInt, 8);
    case ScalarType::UInt16: return make(Code::UInt, 16);
    case ScalarType::UInt32: return make(Code::UInt, 32);
    case ScalarType::UInt64: return make(Code::UInt, 64);
    case ScalarType::Bool: return make(Code::Bool, 8);
    default: return std::nullopt;
  }
}

// ---- descriptions for Python (dicts; kiln/runtime/meta.py turns them into dataclasses) ----

nb::dict describe_tensor(const TensorInfo& info) {
  nb::dict out;
  nb::list sizes;
  for (int32_t size : info.sizes) sizes.append(size);
  nb::list dim_order;
  for (uint8_t d : info.dim_order) dim_order.append(d);
  out["shape"] = nb::tuple(sizes);
  out["dim_order"] = nb::tuple(dim_order);
  out["scalar_type"] = scalar_type_name(info.scalar_type);
  out["nbytes"] = info.nbytes;
  out["is_memory_planned"] = info.is_memory_planned;
  return out;
}

nb::object describe_value(Result<Tag> tag, Result<TensorInfo> (MethodMeta::*tensor_meta)(size_t)
                                               const,
                          const MethodMeta& meta, size_t i, const std::string& what) {
  const Tag kind = take_or_raise(std::move(tag), what);
  if (kind != Tag::Tensor) {
    nb::dict out;
    out["tag"] = tag_name(kind);
    return std::move(out);
  }
  nb::dict out = describe_tensor(take_or_raise((meta.*tensor_meta)(i), what));
  out["tag"] = tag_name(kind);
  return std::move(out);
}

nb::dict describe_meta(const MethodMeta& meta) {
  const std::string name = meta.name();
  nb::dict out;
  out["name"] = text(name);
  nb::list inputs;
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    inputs.append(describe_value(meta.input_tag(i), &MethodMeta::input_tensor_meta, meta, i,
                                 "reading input " + std::to_string(i) + " of " + name));
  }
  nb::list outputs;
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    outputs.append(describe_value(meta.output_tag(i), &MethodMeta::output_tensor_meta, meta, i,
                                  "reading output " + std::to_string(i) + " of " + name));
  }
  nb::list planned;
  for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
    planned.append(take_or_raise(meta.memory_planned_buffer_size(i),
                                 "reading planned buffer sizes of " + name));
  }
  nb::list operators;
  for (size_t i = 0; i < meta.num_operators(); ++i) {
    char buffer[256];
    const char* op = take_or_raise(meta.operator_name(i, buffer, sizeof(buffer)),
                                   "reading operators of " + name);
    operators.append(text(op, std::strlen(op)));
  }
  out["inputs"] = inputs;
  out["outputs"] = outputs;
  out["planned_buffer_sizes"] = planned;
  out["operators"] = operators;
  out["num_instructions"] = meta.num_instructions();
  out["num_backends"] = meta.num_backends();
  out["method_allocator_size"] =
      take_or_raise(meta.method_allocator_size(), "sizing the method allocator of " + name);
  return out;
}

// ---- Method ----

/// Memory for an allocator or planned buffer, from malloc and not zeroed: a program may
/// ask for much more than it touches, and a corrupted one for more than the host has,
/// which must become MemoryAllocationFailed rather than std::bad_alloc.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(HostBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~HostBuffer() { std::free(data_); }

  static HostBuffer allocate(size_t size, const char* what, const std::string& context) {
    HostBuffer buffer;
    buffer.data_ = static_cast<uint8_t*>(std::malloc(size == 0 ? 1 : size));
    if (buffer.data_ == nullptr) {
      KILN_LOG(Error, "the host cannot allocate %zu bytes for the %s", size, what);
      raise(Error::MemoryAllocationFailed, context);
    }
    buffer.size_ = size;
    return buffer;
  }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

/// An initialized method with the memory it runs in. Never moves once built: the
/// runtime keeps pointers to the allocators and to the input tensors held here.
class MethodHandle {
 public:
  MethodHandle(const Program& program, const std::string& name, size_t temp_bytes) {
    const std::string context = "loading method '" + name + "'";
    MethodMeta meta = take_or_raise(program.method_meta(name.c_str()), context);
    method_pool_ = HostBuffer::allocate(take_or_raise(meta.method_allocator_size(), context),
                                        "method allocator", context);
    method_allocator_.emplace(method_pool_.data(), method_pool_.size());
    for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
      const int64_t size = take_or_raise(meta.memory_planned_buffer_size(i), context);
      if (size < 0) {
        KILN_LOG(Error, "planned buffer %zu has a negative size (%lld)", i,
                 static_cast<long long>(size));
        raise(Error::InvalidProgram, context);
      }
      planned_pools_.push_back(
          HostBuffer::allocate(static_cast<size_t>(size), "planned buffer", context));
    }
    for (auto& pool : planned_pools_) planned_spans_.emplace_back(pool.data(), pool.size());
    planned_memory_.emplace(Span<Span<uint8_t>>{planned_spans_.data(), planned_spans_.size()});
    temp_pool_ = HostBuffer::allocate(temp_bytes, "temp allocator", context);
    temp_allocator_.emplace(temp_pool_.data(), temp_pool_.size());

    MemoryManager memory;
    memory.method_allocator = &*method_allocator_;
    memory.planned_memory = &*planned_memory_;
    memory.temp_allocator = &*temp_allocator_;
    const auto start = std::chrono::steady_clock::now();
    method_.emplace(take_or_raise(program.load_method(name.c_str(), &memory), context));
    init_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count();
    name_ = name;
  }
  MethodHandle(const MethodHandle&) = delete;
  MethodHandle& operator=(const MethodHandle&) = delete;

  nb::list execute(const std::vector<InputArray>& inputs) {
    set_inputs(inputs);
    run_once();
    return collect_outputs();
  }

  /// Outputs of the last run and the duration of each of `iterations` runs (ns).
  nb::tuple execute_timed(const std::vector<InputArray>& inputs, size_t iterations) {
    if (iterations == 0) {
      KILN_LOG(Error, "execute_timed needs at least one iteration");
      raise(Error::InvalidArgument, "timing '" + name_ + "'");
    }
    set_inputs(inputs);
    nb::list durations;
    for (size_t i = 0; i < iterations; ++i) {
      // Memory planning may reuse an input's planned bytes for a later tensor, so each
      // run gets its inputs again (outside the timed part).
      if (i > 0) reapply_inputs();
      const auto start = std::chrono::steady_clock::now();
      run_once();
      durations.append(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count());
    }
    return nb::make_tuple(collect_outputs(), durations);
  }

  nb::dict meta() const {
    nb::dict out = describe_meta(method_->method_meta());
    out["method_allocator_used"] = method_allocator_->used();
    out["temp_allocator_size"] = temp_allocator_->size();
    out["temp_allocator_peak"] = temp_allocator_->peak();
    out["init_ns"] = init_ns_;
    return out;
  }

  const std::string& name() const { return name_; }

 private:
  void set_inputs(const std::vector<InputArray>& inputs) {
    const MethodMeta meta = method_->method_meta();
    const size_t expected = meta.num_inputs();
    if (inputs.size() != expected) {
      KILN_LOG(Error, "%zu input(s) given; method '%s' takes %zu", inputs.size(),
               name_.c_str(), expected);
      raise(Error::InputCountMismatch, "setting the inputs of '" + name_ + "'");
    }
    // The method may point at these (unplanned inputs) until the next call.
    held_inputs_ = inputs;
    input_sizes_.assign(expected, {});
    input_dim_orders_.assign(expected, {});
    input_strides_.assign(expected, {});
    input_tensors_.clear();
    input_tensors_.reserve(expected);
    for (size_t i = 0; i < expected; ++i) {
      const std::string context = "setting input " + std::to_string(i) + " of '" + name_ + "'";
      const InputArray& array = held_inputs_[i];
      const std::optional<ScalarType> type = scalar_type_of(array.dtype());
      if (!type) {
        KILN_LOG(Error, "input %zu has an array dtype (code %u, %u bits) with no Kiln scalar type",
                 i, static_cast<unsigned>(array.dtype().code),
                 static_cast<unsigned>(array.dtype().bits));
        raise(Error::InputDtypeMismatch, context);
      }
      if (array.ndim() > static_cast<size_t>(kTensorMaxDim)) {
        KILN_LOG(Error, "input %zu has %zu dimensions; at most %d are supported", i, array.ndim(),
                 kTensorMaxDim);
        raise(Error::InputShapeMismatch, context);
      }
      for (size_t d = 0; d < array.ndim(); ++d) {
        if (array.shape(d) > static_cast<size_t>(INT32_MAX)) {
          KILN_LOG(Error, "input %zu dimension %zu has %zu elements (more than int32)", i, d,
                   array.shape(d));
          raise(Error::InputShapeMismatch, context);
        }
        input_sizes_[i].push_back(static_cast<int32_t>(array.shape(d)));
        input_dim_orders_[i].push_back(static_cast<uint8_t>(d));
      }
      input_strides_[i].resize(array.ndim());
      // The array is read-only to Python; the runtime copies a planned input into its
      // buffer and reads an unplanned one in place.
      input_tensors_.emplace_back(*type, static_cast<int32_t>(array.ndim()),
                                  input_sizes_[i].data(), input_dim_orders_[i].data(),
                                  input_strides_[i].data(), const_cast<void*>(array.data()));
      check(method_->set_input(EValue(&input_tensors_.back()), i), context);
    }
  }

  void reapply_inputs() {
    for (size_t i = 0; i < input_tensors_.size(); ++i) {
      check(method_->set_input(EValue(&input_tensors_[i]), i),
            "setting input " + std::to_string(i) + " of '" + name_ + "'");
    }
  }

  void run_once() {
    Error error;
    {
      nb::gil_scoped_release release;
      error = method_->execute();
    }
    check(error, "executing '" + name_ + "'");
  }

  nb::list collect_outputs() const {
    nb::list outputs;
    for (size_t i = 0; i < method_->outputs_size(); ++i) {
      outputs.append(to_python(method_->get_output(i), i));
    }
    return outputs;
  }

  /// A copy of output `i`: tensors become numpy arrays that own their data.
  nb::object to_python(const EValue& value, size_t i) const {
    switch (value.tag()) {
      case Tag::None: return nb::none();
      case Tag::Int: return nb::int_(value.to_int());
      case Tag::Double: return nb::float_(value.to_double());
      case Tag::Bool: return nb::bool_(value.to_bool());
      case Tag::Tensor: break;
      default:
        KILN_LOG(Error, "output %zu is a %s; only tensors and scalars can be returned", i,
                 tag_name(value.tag()));
        raise(Error::NotSupported, "reading the outputs of '" + name_ + "'");
    }
    const Tensor& tensor = value.to_tensor();
    const std::optional<nb::dlpack::dtype> dtype = dlpack_dtype_of(tensor.scalar_type());
    if (!dtype) {
      KILN_LOG(Error, "output %zu has dtype %s, which numpy cannot hold", i,
               scalar_type_name(tensor.scalar_type()));
      raise(Error::NotSupported, "reading the outputs of '" + name_ + "'");
    }
    const size_t nbytes = tensor.nbytes();
    auto* copy = new uint8_t[nbytes == 0 ? 1 : nbytes];
    if (nbytes != 0) std::memcpy(copy, tensor.const_data_ptr(), nbytes);
    nb::capsule owner(copy, [](void* p) noexcept { delete[] static_cast<uint8_t*>(p); });
    std::vector<size_t> shape(tensor.sizes().begin(), tensor.sizes().end());
    std::vector<int64_t> strides(tensor.strides().begin(), tensor.strides().end());
    nb::ndarray<nb::numpy> array(copy, shape.size(), shape.data(), owner, strides.data(), *dtype);
    return nb::cast(array);
  }

  std::string name_;
  int64_t init_ns_ = 0;
  HostBuffer method_pool_;
  std::optional<MemoryAllocator> method_allocator_;
  std::vector<HostBuffer> planned_pools_;
  std::vector<Span<uint8_t>> planned_spans_;
  std::optional<HierarchicalAllocator> planned_memory_;
  HostBuffer temp_pool_;
  std::optional<MemoryAllocator> temp_allocator_;
  std::optional<Method> method_;

  std::vector<InputArray> held_inputs_;
  std::vector<std::vector<int32_t>> input_sizes_;
  std::vector<std::vector<uint8_t>> input_dim_orders_;
  std::vector<std::vector<int32_t>> input_strides_;
  std::vector<Tensor> input_tensors_;
};

// ---- Program ----

/// A loaded program and the bytes it points into.
class ProgramHandle {
 public:
  static std::unique_ptr<ProgramHandle> from_file(const std::string& path) {
    auto handle = std::unique_ptr<ProgramHandle>(new ProgramHandle());
    const std::string context = "loading " + path;
    handle->loader_ = std::make_unique<FileDataLoader>(
        take_or_raise(FileDataLoader::from(path.c_str()), context));
    handle->load(context);
    return handle;
  }

  static std::unique_ptr<ProgramHandle> from_bytes(nb::bytes data) {
    auto handle = std::unique_ptr<ProgramHandle>(new ProgramHandle());
    // A private, 16-byte aligned copy: the program points into it for its lifetime.
    const size_t words = (data.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    handle->bytes_ = std::make_unique<std::max_align_t[]>(words == 0 ? 1 : words);
    if (data.size() != 0) std::memcpy(handle->bytes_.get(), data.c_str(), data.size());
    handle->loader_ = std::make_unique<BufferDataLoader>(handle->bytes_.get(), data.size());
    handle->load("loading a program from " + std::to_string(data.size()) + " bytes");
    return handle;
  }

  nb::list method_names() const {
    nb::list names;
    for (size_t i = 0; i < program_->num_methods(); ++i) {
      const char* name = take_or_raise(program_->get_method_name(i), "listing methods");
      names.append(text(name, std::strlen(name)));
    }
    return names;
  }

  nb::dict method_meta(const std::string& name) const {
    return describe_meta(
        take_or_raise(program_->method_meta(name.c_str()), "reading method '" + name + "'"));
  }

  std::unique_ptr<MethodHandle> load_method(const std::string& name, size_t temp_bytes) const {
    return std::make_unique<MethodHandle>(*program_, name, temp_bytes);
  }

  size_t file_size() const { return program_->file_size(); }
  size_t program_data_size() const { return program_->program_data_size(); }
  int64_t load_ns() const { return load_ns_; }

 private:
  ProgramHandle() = default;

  void load(const std::string& context) {
    const auto start = std::chrono::steady_clock::now();
    program_.emplace(take_or_raise(Program::load(loader_.get(), Program::Verification::Full),
                                   context));
    load_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count();
  }

  std::unique_ptr<std::max_align_t[]> bytes_;
  std::unique_ptr<DataLoader> loader_;
  std::optional<Program> program_;
  int64_t load_ns_ = 0;
};

// ---- module-level helpers ----

nb::list take_log() {
  nb::list out;
  for (LogRecord& record : g_log.take()) out.append(nb::make_tuple(record.level, text(record.message)));
  return out;
}

nb::dict error_names() {
  nb::dict out;
  for (uint32_t code = 0; code < 0x100; ++code) {
    const char* name = error_name(static_cast<Error>(code));
    if (std::strcmp(name, "UnknownError") != 0) out[nb::int_(code)] = name;
  }
  return out;
}

std::vector<std::string> registered_operators() {
  std::vector<std::string> names;
  for (const Kernel& kernel : registered_kernels()) names.emplace_back(kernel.name);
  return names;
}

}  // namespace
}  // namespace kiln::python

namespace kiln::python {
// Defined in vnpu_bindings.cpp: the virtual Ethos-U hook (run_vela).
void register_vnpu_bindings(nb::module_& m);
// Defined in ethos_u_bindings.cpp: registers the EthosUBackend on the virtual NPU (so
// delegated programs run) and its counters.
void register_ethos_u_bindings(nb::module_& m);
}  // namespace kiln::python

NB_MODULE(_runtime, m) {
  using namespace kiln;
  using namespace kiln::python;
  m.doc() = "Kiln's C++ runtime (use kiln.runtime, not this module)";

  kiln_pal_init();
  set_log_sink(&log_to_buffer, &g_log);
  // Explicit registration (no static initializers). A second import of the module in
  // the same process would find them registered already, which is fine.
  const Error registered = register_portable_kernels();
  if (registered != Error::Ok && registered != Error::RegistrationAlreadyRegistered) {
    throw std::runtime_error(std::string("kiln: registering the portable kernels failed: ") +
                             error_name(registered));
  }

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const RuntimeFailure& failure) {
      nb::object error_type = nb::module_::import_("kiln.runtime.errors").attr("KilnRuntimeError");
      nb::list log;
      for (const std::string& line : failure.error_log) log.append(text(line));
      nb::object error = error_type(error_name(failure.error), static_cast<uint32_t>(failure.error),
                                    log, text(failure.context));
      PyErr_SetObject(error_type.ptr(), error.ptr());
    }
  });

  nb::class_<MethodHandle>(m, "Method")
      .def_prop_ro("name", &MethodHandle::name)
      .def("execute", &MethodHandle::execute, nb::arg("inputs"),
           "Runs the method on C-contiguous CPU arrays; returns copies of the outputs.")
      .def("execute_timed", &MethodHandle::execute_timed, nb::arg("inputs"),
           nb::arg("iterations"), "Runs `iterations` times: (outputs, [duration_ns, ...]).")
      .def("meta", &MethodHandle::meta);

  nb::class_<ProgramHandle>(m, "Program")
      .def_static("from_file", &ProgramHandle::from_file, nb::arg("path"))
      .def_static("from_bytes", &ProgramHandle::from_bytes, nb::arg("data"))
      .def("method_names", &ProgramHandle::method_names)
      .def("method_meta", &ProgramHandle::method_meta, nb::arg("name"))
      // The method points into the program: keep the program alive as long as it.
      .def("load_method", &ProgramHandle::load_method, nb::arg("name"), nb::arg("temp_bytes"),
           nb::keep_alive<0, 1>())
      .def_prop_ro("file_size", &ProgramHandle::file_size)
      .def_prop_ro("program_data_size", &ProgramHandle::program_data_size)
      .def_prop_ro("load_ns", &ProgramHandle::load_ns);

  register_vnpu_bindings(m);
  register_ethos_u_bindings(m);
  m.def("take_log", &take_log, "The runtime's log messages since the last call: [(level, text)].");
  m.def("error_names", &error_names, "{code: name} of every kiln::Error.");
  m.def("registered_operators", &registered_operators);
}
