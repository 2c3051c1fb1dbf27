// Decoder of the Ethos-U55/U65 compressed weight stream (the format Vela's mlw_codec writes):
// a sequence of slices, each with a header (ZDIV 3 bits, SLICELEN 15, WDIV 3, WTRUNC 1,
// NEWPAL 1, then DIROFS 5 / PALSIZE 5 / PALBITS 3 and the palette when NEWPAL), followed by
// interleaved chunks of Golomb-Rice coded weight indices and zero runs. ZDIV 7 ends a
// stream (byte aligned; padding may repeat it), ZDIV 6 disables zero runs, WDIV 7 means the
// indices are stored uncompressed. Indices below the palette size pick a palette entry,
// others map to (index - palsize + dirofs); entries are sign/magnitude (bit 0 = sign).
// Written from the format description; every read is bounds checked.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/scratch_arena.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

/// Work memory decode_weight_stream() takes from the arena at most (one slice at a time:
/// up to 2^15 weight indices and 2^15 + 1 zero runs of 32 bits, with alignment).
constexpr size_t kWeightSliceScratchBytes = (32768u + 32769u) * 4u + 32u;

/// Decodes `stream` into `out` (9-bit signed weights). Stops at the end of the stream or when
/// `out` is full; `*count` receives the number of weights written. Slice scratch comes from
/// `arena`. NpuWeightStreamInvalid on a malformed or truncated stream.
Error decode_weight_stream(Span<const uint8_t> stream, Span<int16_t> out, ScratchArena& arena,
                           size_t* count);

}  // namespace kiln::vnpu
