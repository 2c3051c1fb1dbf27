// The Ethos-U delegate payload: what a .pte file carries for each EthosUBackend delegate.
//
// The format is ExecuTorch's (its Arm backend packs Vela's raw output this way), so that
// programs from either tool run on either runtime. A payload is a sequence of blocks:
//
//   bytes 0-15   block name, NUL-terminated ("cmd_data")
//   bytes 16-19  data length in bytes (uint32, little endian), without padding
//   byte  20     1 when the data is a reference to external named data, else 0
//   bytes 21-31  reserved
//   data, zero-padded to a multiple of 16 bytes
//
// The first block is "vela_bin_stream" and the last "vela_end_stream" (both empty);
// between them: "cmd_data" (Vela's COP1 driver payload), "weight_data" (region 0),
// "scratch_size" (uint32: bytes of the scratch arena, region 1), "inputs" and "outputs"
// (int32 count, then per tensor nine int32: shape padded to 6 dims with leading 1s,
// element size, byte offset, region).
//
// The parser only looks: it returns views into the caller's bytes, checks every length
// and index against the payload, and never allocates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln::ethos_u {

/// Bytes of a block header (name, length, flags, reserved).
constexpr size_t kPayloadBlockHeaderBytes = 32;
/// Block data is padded to, and every block starts at, a multiple of this.
constexpr size_t kPayloadAlignment = 16;
/// Dims of an input/output shape in the payload (leading dims are 1).
constexpr size_t kPayloadIoDims = 6;
/// Bytes of one input/output description: 6 dims, element size, offset, region.
constexpr size_t kPayloadIoBytes = 9 * 4;

/// One input or output of the NPU program: where the NPU reads or writes it.
struct PayloadIo {
  /// Shape as Vela sees it, padded to 6 dims with leading 1s.
  int32_t shape[kPayloadIoDims];
  /// Bytes per element: 1 (int8), 2 (int16) or 4 (int32).
  int32_t element_size;
  /// Byte offset of the tensor in its region.
  int32_t offset;
  /// Region (base pointer index) that holds the tensor; 1 is the scratch arena.
  int32_t region;

  /// Elements of the shape (checked not to overflow when the payload was parsed).
  uint64_t numel() const;
  /// numel() * element_size.
  uint64_t nbytes() const;
};

/// A parsed payload: views into the bytes given to parse_payload().
struct Payload {
  /// Vela's driver payload: "COP1" header, then the command stream.
  Span<const uint8_t> command_data;
  /// Weights and other constants (region 0).
  Span<const uint8_t> weight_data;
  /// Bytes of the scratch arena (region 1) the program needs.
  uint32_t scratch_size = 0;
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  /// The raw io descriptions (after the count), num_inputs/num_outputs * kPayloadIoBytes.
  Span<const uint8_t> input_bytes;
  Span<const uint8_t> output_bytes;

  /// Input/output `i` (i < num_inputs / num_outputs; validated at parse time).
  PayloadIo input(size_t i) const;
  PayloadIo output(size_t i) const;
};

/// Parses and checks a payload. Errors (each logged with the offset and the block):
/// DelegatePayloadTruncated (ends inside a header, data or padding, or before
/// "vela_end_stream"), DelegatePayloadBadBlock (first block not "vela_bin_stream", a name
/// without NUL, an unknown or repeated name, a flag other than 0/1),
/// DelegatePayloadExternalBlock (data stored outside the payload),
/// DelegatePayloadMissingBlock (cmd_data, weight_data, scratch_size, inputs or outputs
/// absent), DelegatePayloadBadSize (scratch_size not 4 bytes, an io block whose length is
/// not 4 + 36 * count, a negative count, cmd_data not whole 32-bit words),
/// DelegatePayloadBadIo (a negative dim, an element count that overflows, an element size
/// other than 1/2/4, a negative offset or region), DelegatePayloadMisaligned (`payload`
/// not at a multiple of 4 bytes: the command stream is read as 32-bit words).
Result<Payload> parse_payload(Span<const uint8_t> payload);

}  // namespace kiln::ethos_u
