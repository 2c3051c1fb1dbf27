// Python hook for the XnnpackBackend: registered at import when the extension is built
// with XNNPACK (KILN_BUILD_XNNPACK), so that ExecuTorch's XNNPACK programs loaded through
// kiln.runtime run; the thread count applies to delegates initialized afterwards
// (Program.load_method sets it from its `threads` keyword).
#include "python/kiln/runtime/xnnpack_bindings.h"

#include <stdexcept>
#include <string>

#include "python/kiln/runtime/runtime_error.h"
#include "runtime/core/error.h"
#ifdef KILN_WITH_XNNPACK
#include "backends/xnnpack/runtime/xnnpack_backend.h"
#endif

namespace nb = nanobind;

namespace kiln::python {
namespace {

void set_threads(size_t threads) {
#ifdef KILN_WITH_XNNPACK
  const Error error = set_xnnpack_threads(threads);
  if (error != Error::Ok) raise(error, "setting the XNNPACK threads");
#else
  (void)threads;
#endif
}

}  // namespace

void register_xnnpack_bindings(nb::module_& m) {
#ifdef KILN_WITH_XNNPACK
  const Error registered = register_xnnpack_backend();
  if (registered != Error::Ok && registered != Error::RegistrationAlreadyRegistered) {
    throw std::runtime_error(std::string("kiln: registering the XnnpackBackend failed: ") +
                             error_name(registered));
  }
  constexpr bool kAvailable = true;
#else
  constexpr bool kAvailable = false;
#endif
  m.def("xnnpack_available", [] { return kAvailable; },
        "Whether this build runs XNNPACK delegates (built with KILN_BUILD_XNNPACK and the library).");
  m.def("set_xnnpack_threads", &set_threads, nb::arg("threads"),
        "Threads of the XNNPACK delegates initialized from now on (1: the calling thread).");
}

}  // namespace kiln::python
