// A fixed-capacity backend table, filled by explicit register_backend() calls.
#include <cstring>

#include "runtime/backend/backend_interface.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace {

Backend g_backends[KILN_MAX_BACKENDS];
size_t g_num_backends = 0;

}  // namespace

Error register_backend(const Backend& backend) {
  if (backend.name == nullptr || backend.backend == nullptr) {
    KILN_LOG(Error, "register_backend: a backend needs a name and an implementation");
    return Error::InvalidArgument;
  }
  if (get_backend(backend.name, std::strlen(backend.name)) != nullptr) {
    KILN_LOG(Error, "backend %s is registered already", backend.name);
    return Error::RegistrationAlreadyRegistered;
  }
  if (g_num_backends >= KILN_MAX_BACKENDS) {
    KILN_LOG(Error, "cannot register backend %s: all %d slots are used (raise KILN_MAX_BACKENDS)",
             backend.name, KILN_MAX_BACKENDS);
    return Error::RegistrationExceedingMax;
  }
  g_backends[g_num_backends++] = backend;
  return Error::Ok;
}

const BackendInterface* get_backend(const char* name, size_t length) {
  if (name == nullptr) return nullptr;
  for (size_t i = 0; i < g_num_backends; ++i) {
    const char* registered = g_backends[i].name;
    if (std::strlen(registered) == length && std::memcmp(registered, name, length) == 0) {
      return g_backends[i].backend;
    }
  }
  return nullptr;
}

}  // namespace kiln
