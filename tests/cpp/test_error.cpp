#include "runtime/core/error.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using kiln::Error;

TEST(Error, CodesAreStable) {
  // Firmware prints numbers; these must never change.
  EXPECT_EQ(static_cast<uint32_t>(Error::Ok), 0x00u);
  EXPECT_EQ(static_cast<uint32_t>(Error::InvalidState), 0x02u);
  EXPECT_EQ(static_cast<uint32_t>(Error::OperatorMissing), 0x14u);
  EXPECT_EQ(static_cast<uint32_t>(Error::MemoryAllocationFailed), 0x21u);
  EXPECT_EQ(static_cast<uint32_t>(Error::InvalidProgram), 0x23u);
  EXPECT_EQ(static_cast<uint32_t>(Error::ProgramTruncated), 0x40u);
  EXPECT_EQ(static_cast<uint32_t>(Error::InputShapeMismatch), 0x50u);
}

TEST(Error, EveryCodeHasItsOwnName) {
  const Error all[] = {Error::Ok, Error::Internal, Error::InvalidState, Error::EndOfMethod,
                       Error::NotSupported, Error::NotImplemented, Error::InvalidArgument,
                       Error::InvalidType, Error::OperatorMissing, Error::RegistrationExceedingMax,
                       Error::RegistrationAlreadyRegistered, Error::NotFound,
                       Error::MemoryAllocationFailed, Error::AccessFailed, Error::InvalidProgram,
                       Error::InvalidExternalData, Error::OutOfResources,
                       Error::DelegateInvalidCompatibility, Error::DelegateMemoryAllocationFailed,
                       Error::DelegateInvalidHandle, Error::ProgramTruncated,
                       Error::ProgramBadIdentifier, Error::ProgramIndexOutOfRange,
                       Error::ProgramSegmentOutOfBounds, Error::ProgramBadHeader,
                       Error::InputShapeMismatch, Error::InputDtypeMismatch,
                       Error::InputCountMismatch};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    EXPECT_STRNE(kiln::error_name(all[i]), "UnknownError");
    for (size_t j = 0; j < i; ++j) EXPECT_STRNE(kiln::error_name(all[i]), kiln::error_name(all[j]));
  }
  EXPECT_STREQ(kiln::error_name(Error::ProgramBadIdentifier), "ProgramBadIdentifier");
  EXPECT_STREQ(kiln::error_name(static_cast<Error>(0xffff)), "UnknownError");
}

TEST(Error, NpuDriverCodesFillTheNpuRange) {
  // The register-level driver's errors: named, in 0x68-0x6f, each its own name.
  const Error npu[] = {Error::NpuBusError, Error::NpuCommandStreamParseError,
                       Error::NpuEndOfStreamNotReached, Error::NpuTimeout, Error::NpuBusy,
                       Error::NpuRegionOutsideMemory, Error::NpuMisalignedBase,
                       Error::NpuResetFailed};
  for (size_t i = 0; i < sizeof(npu) / sizeof(npu[0]); ++i) {
    EXPECT_EQ(static_cast<uint32_t>(npu[i]), 0x68u + i);
    EXPECT_STRNE(kiln::error_name(npu[i]), "UnknownError");
    for (size_t j = 0; j < i; ++j) EXPECT_STRNE(kiln::error_name(npu[i]), kiln::error_name(npu[j]));
  }
  EXPECT_STREQ(kiln::error_name(Error::NpuTimeout), "NpuTimeout");
}

}  // namespace
