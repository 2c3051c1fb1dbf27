#include "python/kiln/runtime/runtime_error.h"

#include <exception>

namespace nb = nanobind;

namespace kiln::python {
namespace {

constexpr size_t kMaxRecords = 256;

/// A runtime Error on its way to Python (see register_runtime_errors).
struct RuntimeFailure {
  Error error;
  std::string context;
  std::vector<std::string> error_log;  // the call's Error/Fatal messages, oldest first
};

/// The runtime logs on the thread that runs it; each thread keeps its own messages.
std::vector<LogRecord>& thread_log() {
  thread_local std::vector<LogRecord> records;
  return records;
}

}  // namespace

void log_to_thread_buffer(LogLevel level, const char* message, size_t length, void*) {
  std::vector<LogRecord>& records = thread_log();
  // Bounded, so that a chatty program cannot grow it forever.
  if (records.size() == kMaxRecords) records.erase(records.begin());
  records.push_back({static_cast<int>(level), std::string(message, length)});
}

std::vector<LogRecord> take_thread_log() {
  std::vector<LogRecord> taken;
  taken.swap(thread_log());
  return taken;
}

void raise(Error error, std::string context) {
  RuntimeFailure failure{error, std::move(context), {}};
  for (LogRecord& record : take_thread_log()) {
    if (record.level >= static_cast<int>(LogLevel::Error)) {
      failure.error_log.push_back(std::move(record.message));
    }
  }
  throw failure;
}

nb::str text(const char* data, size_t size) {
  PyObject* decoded = PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(size), "replace");
  if (decoded == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(decoded);
}

nb::str text(const std::string& value) { return text(value.data(), value.size()); }

void register_runtime_errors() {
  set_log_sink(&log_to_thread_buffer, nullptr);
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
}

}  // namespace kiln::python
