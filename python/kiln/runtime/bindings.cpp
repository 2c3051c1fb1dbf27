// kiln._runtime: the Kiln C++ runtime as a Python extension (nanobind).
//
// The extension's sources are the only Kiln code built with exceptions (nanobind reports
// errors with them): a runtime Error becomes kiln.runtime.KilnRuntimeError
// (runtime_error.h). The Python wrapper (kiln/runtime/executor.py) converts torch tensors
// to numpy and back; this module deals only in C-contiguous CPU arrays. Its parts:
//   program_handle.*    Program: loading from a file or bytes, method metadata
//   method_handle.*     Method: memory sized from MethodMeta, inputs, execute, outputs
//   method_meta_dict.*  metadata as dicts;  dtypes.*  scalar types <-> DLPack dtypes
//   ethos_u_bindings.*  the EthosUBackend on the virtual NPU and its counters
//   xnnpack_bindings.*  the XnnpackBackend (when built with XNNPACK) and its threads
//   vnpu_bindings.cpp   the virtual NPU alone (command streams, weight decoding)
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/register_cpu_kernels.h"
#include "python/kiln/runtime/ethos_u_bindings.h"
#include "python/kiln/runtime/xnnpack_bindings.h"
#include "python/kiln/runtime/method_handle.h"
#include "python/kiln/runtime/program_handle.h"
#include "python/kiln/runtime/runtime_error.h"
#include "runtime/core/error.h"
#include "runtime/kernel/operator_registry.h"
#include "runtime/platform/platform.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

nb::list take_log() {
  nb::list out;
  for (LogRecord& record : take_thread_log()) {
    out.append(nb::make_tuple(record.level, text(record.message)));
  }
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

// Defined in vnpu_bindings.cpp: the virtual Ethos-U hook (run_vela).
void register_vnpu_bindings(nb::module_& m);
// Defined in etdump_bindings.cpp: ETDump recording of a method's executions.
void register_etdump_bindings(nb::module_& m);

}  // namespace kiln::python

NB_MODULE(_runtime, m) {
  using namespace kiln;
  using namespace kiln::python;
  m.doc() = "Kiln's C++ runtime (use kiln.runtime, not this module)";

  kiln_pal_init();
  register_runtime_errors();
  // Explicit registration (no static initializers). A second import of the module in
  // the same process would find them registered already, which is fine.
  const Error registered = register_cpu_kernels();
  if (registered != Error::Ok && registered != Error::RegistrationAlreadyRegistered) {
    throw std::runtime_error(std::string("kiln: registering the kernels failed: ") + error_name(registered));
  }

  nb::class_<MethodHandle>(m, "Method")
      .def_prop_ro("name", &MethodHandle::name)
      .def("execute", &MethodHandle::execute, nb::arg("inputs"),
           "Runs the method on C-contiguous CPU arrays (Python bool/int/float for non-tensor "
           "inputs); returns copies of the outputs.")
      .def("execute_timed", &MethodHandle::execute_timed, nb::arg("inputs"),
           nb::arg("iterations"), "Runs `iterations` times: (outputs, [duration_ns, ...]).")
      .def("meta", &MethodHandle::meta)
      .def("npu_counters", &MethodHandle::npu_counters,
           "What the NPU did in this method's last execute: its Ethos-U delegates' latest "
           "calls added up (the keys of ethos_u_counters(), plus delegate_calls).");

  nb::class_<ProgramHandle>(m, "Program")
      .def_static("from_file", &ProgramHandle::from_file, nb::arg("path"))
      .def_static("from_bytes", &ProgramHandle::from_bytes, nb::arg("data"))
      .def("method_names", &ProgramHandle::method_names)
      .def("method_meta", &ProgramHandle::method_meta, nb::arg("name"))
      // The method points into the program: keep the program alive as long as it.
      .def("load_method", &ProgramHandle::load_method, nb::arg("name"), nb::arg("temp_bytes"),
           nb::arg("fill_planned") = -1, nb::keep_alive<0, 1>())
      .def_prop_ro("file_size", &ProgramHandle::file_size)
      .def_prop_ro("program_data_size", &ProgramHandle::program_data_size)
      .def_prop_ro("load_ns", &ProgramHandle::load_ns);

  register_vnpu_bindings(m);
  register_ethos_u_bindings(m);
  register_xnnpack_bindings(m);
  register_etdump_bindings(m);
  m.def("take_log", &take_log,
        "The runtime's log messages on this thread since the last call: [(level, text)].");
  m.def("error_names", &error_names, "{code: name} of every kiln::Error.");
  m.def("registered_operators", &registered_operators);
}
