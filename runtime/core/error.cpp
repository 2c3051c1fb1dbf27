#include "runtime/core/error.h"

#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"

namespace kiln {

const char* error_name(Error error) {
  switch (error) {
    case Error::Ok: return "Ok";
    case Error::Internal: return "Internal";
    case Error::InvalidState: return "InvalidState";
    case Error::EndOfMethod: return "EndOfMethod";
    case Error::NotSupported: return "NotSupported";
    case Error::NotImplemented: return "NotImplemented";
    case Error::InvalidArgument: return "InvalidArgument";
    case Error::InvalidType: return "InvalidType";
    case Error::OperatorMissing: return "OperatorMissing";
    case Error::RegistrationExceedingMax: return "RegistrationExceedingMax";
    case Error::RegistrationAlreadyRegistered: return "RegistrationAlreadyRegistered";
    case Error::NotFound: return "NotFound";
    case Error::MemoryAllocationFailed: return "MemoryAllocationFailed";
    case Error::AccessFailed: return "AccessFailed";
    case Error::InvalidProgram: return "InvalidProgram";
    case Error::InvalidExternalData: return "InvalidExternalData";
    case Error::OutOfResources: return "OutOfResources";
    case Error::DelegateInvalidCompatibility: return "DelegateInvalidCompatibility";
    case Error::DelegateMemoryAllocationFailed: return "DelegateMemoryAllocationFailed";
    case Error::DelegateInvalidHandle: return "DelegateInvalidHandle";
    case Error::ProgramTruncated: return "ProgramTruncated";
    case Error::ProgramBadIdentifier: return "ProgramBadIdentifier";
    case Error::ProgramIndexOutOfRange: return "ProgramIndexOutOfRange";
    case Error::ProgramSegmentOutOfBounds: return "ProgramSegmentOutOfBounds";
    case Error::ProgramBadHeader: return "ProgramBadHeader";
    case Error::InputShapeMismatch: return "InputShapeMismatch";
    case Error::InputDtypeMismatch: return "InputDtypeMismatch";
    case Error::InputCountMismatch: return "InputCountMismatch";
    case Error::DelegatePayloadTruncated: return "DelegatePayloadTruncated";
    case Error::DelegatePayloadBadBlock: return "DelegatePayloadBadBlock";
    case Error::DelegatePayloadMissingBlock: return "DelegatePayloadMissingBlock";
    case Error::DelegatePayloadBadSize: return "DelegatePayloadBadSize";
    case Error::DelegatePayloadMisaligned: return "DelegatePayloadMisaligned";
    case Error::DelegatePayloadBadIo: return "DelegatePayloadBadIo";
    case Error::DelegatePayloadIoMismatch: return "DelegatePayloadIoMismatch";
    case Error::DelegatePayloadExternalBlock: return "DelegatePayloadExternalBlock";
    case Error::BundledProgramTruncated: return "BundledProgramTruncated";
    case Error::BundledProgramBadIdentifier: return "BundledProgramBadIdentifier";
    case Error::BundledProgramInvalid: return "BundledProgramInvalid";
    case Error::BundledProgramOutputMismatch: return "BundledProgramOutputMismatch";
    case Error::NpuUnknownCommand: return "NpuUnknownCommand";
    case Error::NpuRegionOutOfBounds: return "NpuRegionOutOfBounds";
    case Error::NpuInvalidRegister: return "NpuInvalidRegister";
    case Error::NpuWeightStreamInvalid: return "NpuWeightStreamInvalid";
    case Error::NpuWorkLimitExceeded: return "NpuWorkLimitExceeded";
    case Error::NpuStreamTruncated: return "NpuStreamTruncated";
    case Error::NpuConfigMismatch: return "NpuConfigMismatch";
    case Error::NpuRegionReadOnly: return "NpuRegionReadOnly";
    case Error::NpuBusError: return "NpuBusError";
    case Error::NpuCommandStreamParseError: return "NpuCommandStreamParseError";
    case Error::NpuEndOfStreamNotReached: return "NpuEndOfStreamNotReached";
    case Error::NpuTimeout: return "NpuTimeout";
    case Error::NpuBusy: return "NpuBusy";
    case Error::NpuRegionOutsideMemory: return "NpuRegionOutsideMemory";
    case Error::NpuMisalignedBase: return "NpuMisalignedBase";
    case Error::NpuResetFailed: return "NpuResetFailed";
  }
  return "UnknownError";
}

}  // namespace kiln

namespace kiln::internal {

void result_value_of_error(Error error) {
  KILN_LOG(Fatal, "Result::get() on a failed Result (%s, 0x%02x): check ok() first",
           error_name(error), static_cast<unsigned>(error));
  kiln_pal_abort();
}

}  // namespace kiln::internal
