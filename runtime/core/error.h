// Kiln runtime error codes.
//
// Every public runtime function returns Error or Result<T>. Codes are stable: they are
// grouped by range and never renumbered, so a code printed by firmware means the same
// thing on the host. The general codes keep ExecuTorch's numbers so that users who know
// one runtime can read the other's logs.
#pragma once

#include <cstdint>

namespace kiln {

/// [[nodiscard]]: a function that returns an Error must have it looked at; a call that
/// ignores one does not compile warning-free (cast to void, with a comment saying why, where
/// ignoring it is right).
enum class [[nodiscard]] Error : uint32_t {
  // 0x00-0x0f: status
  /// Success.
  Ok = 0x00,
  /// A bug or an unexpected state inside the runtime.
  Internal = 0x01,
  /// The object is not in a state that allows the call (e.g. execute before init).
  InvalidState = 0x02,
  /// The method ran to its end (used internally by step-wise execution).
  EndOfMethod = 0x03,

  // 0x10-0x1f: the caller asked for something the runtime cannot do
  /// The operation is not supported by this build or this program.
  NotSupported = 0x10,
  /// The operation is declared but not implemented yet.
  NotImplemented = 0x11,
  /// An argument is out of its allowed range.
  InvalidArgument = 0x12,
  /// A value has the wrong type (an EValue tag or a tensor dtype).
  InvalidType = 0x13,
  /// The program calls an operator that no registered kernel implements.
  OperatorMissing = 0x14,
  /// The kernel or backend registry is full.
  RegistrationExceedingMax = 0x15,
  /// A kernel or backend with this name is registered already.
  RegistrationAlreadyRegistered = 0x16,

  // 0x20-0x2f: resources and data
  /// A named item (method, backend, input) does not exist.
  NotFound = 0x20,
  /// An allocator or a planned buffer is too small for what was asked.
  MemoryAllocationFailed = 0x21,
  /// Reading the program data failed (file I/O).
  AccessFailed = 0x22,
  /// The program is malformed (it fails flatbuffer verification or a consistency check).
  InvalidProgram = 0x23,
  /// External data referenced by the program is missing or malformed.
  InvalidExternalData = 0x24,
  /// A resource other than memory ran out.
  OutOfResources = 0x25,

  // 0x30-0x3f: delegates
  /// The delegate blob was produced for another backend version or target.
  DelegateInvalidCompatibility = 0x30,
  /// The delegate could not get the memory it needs.
  DelegateMemoryAllocationFailed = 0x31,
  /// The delegate handle is invalid.
  DelegateInvalidHandle = 0x32,

  // 0x40-0x4f: program file format (Kiln's more precise reasons for InvalidProgram)
  /// The file ends before the data its header or tables describe.
  ProgramTruncated = 0x40,
  /// The file does not carry the "ET12" identifier of a program.
  ProgramBadIdentifier = 0x41,
  /// An index in the program (value, operator, buffer, segment) is out of range.
  ProgramIndexOutOfRange = 0x42,
  /// A data segment or constant lies outside the file.
  ProgramSegmentOutOfBounds = 0x43,
  /// The extended header ("eh00") is present but inconsistent.
  ProgramBadHeader = 0x44,

  // 0x50-0x5f: inputs and outputs given at execution time
  /// An input tensor's shape differs from the one the method expects.
  InputShapeMismatch = 0x50,
  /// An input tensor's dtype differs from the one the method expects.
  InputDtypeMismatch = 0x51,
  /// The number of inputs given differs from the method's.
  InputCountMismatch = 0x52,

  // 0x60-0x6f: NPU command streams (the virtual Ethos-U and NPU drivers)
  /// A command word has an opcode the NPU does not define (or malformed control bits).
  NpuUnknownCommand = 0x60,
  /// An address or length lies outside its region, or a region index is out of range.
  NpuRegionOutOfBounds = 0x61,
  /// A register holds a value the operation cannot use (precision, shape, mode).
  NpuInvalidRegister = 0x62,
  /// A compressed weight or scale stream does not decode.
  NpuWeightStreamInvalid = 0x63,
  /// The stream asks for more work (commands, operations, MACs) than allowed.
  NpuWorkLimitExceeded = 0x64,
  /// The command stream or its driver payload (COP1) ends early or is malformed.
  NpuStreamTruncated = 0x65,
  /// The stream was compiled for another NPU configuration.
  NpuConfigMismatch = 0x66,
  /// The stream writes (OFM or DMA destination) into a region given as read-only (weights).
  NpuRegionReadOnly = 0x67,
  /// The NPU reported a bus abort (STATUS.bus_status): an access outside the memory its
  /// bus reaches, or a write to read-only memory.
  NpuBusError = 0x68,
  /// The NPU reported a command stream it cannot parse (STATUS.cmd_parse_error).
  NpuCommandStreamParseError = 0x69,
  /// The NPU stopped without reaching the end of its command stream (NPU_OP_STOP).
  NpuEndOfStreamNotReached = 0x6a,
  /// The NPU's completion interrupt did not come within the driver's timeout.
  NpuTimeout = 0x6b,
  /// The NPU is running another command stream.
  NpuBusy = 0x6c,
  /// A region or the command stream lies outside the memory the NPU can address.
  NpuRegionOutsideMemory = 0x6d,
  /// The command stream or a region base is not at the alignment the NPU needs (16 bytes).
  NpuMisalignedBase = 0x6e,
  /// A soft reset of the NPU did not complete, or did not give the security and privilege
  /// level asked for.
  NpuResetFailed = 0x6f,

  // 0x70-0x7f: delegate payload (what a backend finds wrong in its processed blob or
  // between the blob and the delegate call's tensors)
  /// The payload ends inside a block header, a block's data or before its end marker.
  DelegatePayloadTruncated = 0x70,
  /// A block has an unknown, duplicate, unterminated or out-of-order name, or bad flags.
  DelegatePayloadBadBlock = 0x71,
  /// A block the backend needs (e.g. the command stream) is absent.
  DelegatePayloadMissingBlock = 0x72,
  /// A block's length disagrees with its contents, or a size overflows.
  DelegatePayloadBadSize = 0x73,
  /// The payload or one of its blocks is not at the alignment the format requires.
  DelegatePayloadMisaligned = 0x74,
  /// An input/output description is invalid (shape, element size, region, offset).
  DelegatePayloadBadIo = 0x75,
  /// The delegate call's tensors do not match the payload's inputs/outputs.
  DelegatePayloadIoMismatch = 0x76,
  /// A block refers to data stored outside the payload (not supported).
  DelegatePayloadExternalBlock = 0x77,

  // 0x80-0x8f: developer tools (bundled programs)
  /// The bundled program file ends before the data its tables describe.
  BundledProgramTruncated = 0x80,
  /// The file does not carry the "BP08" identifier of a bundled program.
  BundledProgramBadIdentifier = 0x81,
  /// The bundled program fails verification, or its test cases do not fit the method
  /// (unknown method, wrong number or kind of values, a test case index out of range).
  BundledProgramInvalid = 0x82,
  /// A bundled test case's outputs differ from its expected outputs beyond the tolerance.
  BundledProgramOutputMismatch = 0x83,
};

/// The enum value's name without the class prefix, e.g. "OperatorMissing".
const char* error_name(Error error);

}  // namespace kiln
