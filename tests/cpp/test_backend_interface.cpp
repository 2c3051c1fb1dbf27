#include "runtime/backend/backend_interface.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using kiln::Error;

class NullBackend : public kiln::BackendInterface {
 public:
  bool is_available() const override { return true; }
  kiln::Result<kiln::DelegateHandle*> init(kiln::BackendInitContext&, kiln::Span<const uint8_t>,
                                           kiln::Span<const kiln::CompileSpec>) const override {
    return static_cast<kiln::DelegateHandle*>(nullptr);
  }
  Error execute(kiln::BackendExecuteContext&, kiln::DelegateHandle*,
                kiln::Span<kiln::EValue*>) const override {
    return Error::Ok;
  }
};

TEST(BackendRegistry, RegistersAndFindsByName) {
  static NullBackend backend;
  ASSERT_EQ(kiln::register_backend({"EthosUBackend", &backend}), Error::Ok);
  // Names in the program are not NUL-terminated: the length decides.
  const char id[] = "EthosUBackendXYZ";
  EXPECT_EQ(kiln::get_backend(id, 13), &backend);
  EXPECT_EQ(kiln::get_backend(id, 12), nullptr);
  EXPECT_EQ(kiln::get_backend(id, 16), nullptr);
  EXPECT_EQ(kiln::get_backend(nullptr, 0), nullptr);
  EXPECT_EQ(kiln::register_backend({"EthosUBackend", &backend}), Error::RegistrationAlreadyRegistered);
  EXPECT_EQ(kiln::register_backend({nullptr, &backend}), Error::InvalidArgument);
  EXPECT_EQ(kiln::register_backend({"NoImplementation", nullptr}), Error::InvalidArgument);
}

TEST(BackendRegistry, StopsAtItsCapacity) {
  static NullBackend backend;
  static std::vector<std::string> names;
  for (int i = 0; i < KILN_MAX_BACKENDS + 1; ++i) names.push_back("B" + std::to_string(i));
  Error last = Error::Ok;
  for (const std::string& name : names) {
    last = kiln::register_backend({name.c_str(), &backend});
    if (last != Error::Ok) break;
  }
  EXPECT_EQ(last, Error::RegistrationExceedingMax);
}

}  // namespace
