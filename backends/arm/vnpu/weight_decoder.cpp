#include "backends/arm/vnpu/weight_decoder.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

constexpr uint32_t kZdivNoZeroRuns = 6;
constexpr uint32_t kZdivEndOfStream = 7;
constexpr uint32_t kWdivUncompressed = 7;
constexpr int kMaxSymbolsPerChunk = 12;

// Little-endian bit reader: bit i of the stream is bit (i % 8) of byte i / 8. Reads of up to
// 32 bits gather the (at most five) bytes they span at once.
class BitReader {
 public:
  explicit BitReader(Span<const uint8_t> data) : data_(data), size_bits_(data.size() * 8) {}
  bool read(uint32_t bits, uint32_t* value) {
    if (bits == 0) {
      *value = 0;
      return true;
    }
    if (bits > 32 || pos_ > size_bits_ || bits > size_bits_ - pos_) return false;
    const size_t byte = pos_ >> 3;
    const uint32_t shift = static_cast<uint32_t>(pos_ & 7u);
    uint64_t window = 0;
    if (byte + 8 <= data_.size()) {
      // Eight bytes at once (little-endian assembly, so the result does not depend on the
      // host's byte order); the compiler turns this into one load.
      const uint8_t* p = data_.data() + byte;
      window = uint64_t{p[0]} | uint64_t{p[1]} << 8 | uint64_t{p[2]} << 16 | uint64_t{p[3]} << 24 |
               uint64_t{p[4]} << 32 | uint64_t{p[5]} << 40 | uint64_t{p[6]} << 48 | uint64_t{p[7]} << 56;
    } else {
      const size_t count = (shift + bits + 7) >> 3;
      for (size_t i = 0; i < count; ++i) window |= uint64_t{data_[byte + i]} << (8 * i);
    }
    *value = static_cast<uint32_t>((window >> shift) & ((uint64_t{1} << bits) - 1));
    pos_ += bits;
    return true;
  }
  void align_to_byte() { pos_ = (pos_ + 7) & ~static_cast<size_t>(7); }
  bool at_end() const { return (pos_ >> 3) >= data_.size(); }
  size_t bit_position() const { return pos_; }

 private:
  Span<const uint8_t> data_;
  size_t size_bits_;
  size_t pos_ = 0;
};

// The palette/direct-offset state that a slice with NEWPAL=1 sets and later slices reuse.
struct Palette {
  uint32_t size = 0;
  uint32_t bits = 2;
  uint32_t direct_offset = 0;
  uint16_t entries[32] = {};
  bool zero_runs = false;
};

// Golomb-Rice quotients of one chunk of one of the two interleaved streams.
struct Chunk {
  bool enabled = false;
  int count = 0;
  uint32_t quotients[kMaxSymbolsPerChunk] = {};
};

struct SliceHeader {
  uint32_t zdiv, nvalues, wdiv, wtrunc, new_palette;
};

Error fail(const char* what, size_t bit) {
  KILN_LOG(Error, "weight stream: %s at bit %zu", what, bit);
  return Error::NpuWeightStreamInvalid;
}

// Decodes the chunks of one slice into weight indices (w) and zero runs (z).
Error decode_chunks(BitReader& bits, const SliceHeader& h, bool uncompressed, uint32_t wdiv,
                    uint32_t* w, uint32_t nw, uint32_t* z, uint32_t nz, bool zero_runs) {
  uint32_t w_pos = 0, z_pos = 0, w_done = 0, z_done = 0;
  uint32_t w_carry = 0, z_carry = 0;
  const uint32_t z_unary_bits = h.zdiv < 3 ? 12 : 8;
  const int w_max_symbols = (uncompressed && wdiv > 5) ? 8 : 12;
  Chunk w_prev, z_prev;
  do {
    const int64_t balance = zero_runs ? int64_t{w_pos} - int64_t{z_pos} : 0;
    Chunk w_cur, z_cur;
    w_cur.enabled = (!zero_runs || balance < 8) && w_pos < nw;
    z_cur.enabled = zero_runs && balance >= 0 && z_pos < nz;
    uint32_t w_unary0 = 0;
    if (w_cur.enabled && !uncompressed && !bits.read(12, &w_unary0)) {
      return fail("truncated weight unary", bits.bit_position());
    }
    if (z_cur.enabled) {
      uint32_t unary = 0;
      if (!bits.read(z_unary_bits, &unary)) return fail("truncated zero-run unary", bits.bit_position());
      uint32_t run = z_carry;
      for (uint32_t i = 0; i < z_unary_bits; ++i) {
        if ((unary >> i) & 1u) {
          ++run;
        } else {
          z_cur.quotients[z_cur.count++] = run;
          run = 0;
        }
      }
      z_carry = run;
      z_pos += static_cast<uint32_t>(z_cur.count);
    }
    if (w_cur.enabled) {
      uint32_t ones = 0;
      ones = static_cast<uint32_t>(__builtin_popcount(w_unary0 & ((1u << w_max_symbols) - 1u)));
      uint32_t unary1 = 0;
      if (!bits.read(ones, &unary1)) return fail("truncated weight unary1", bits.bit_position());
      uint32_t q = w_carry;
      for (int i = 0; i < w_max_symbols; ++i) {
        uint32_t code = 0;
        if ((w_unary0 >> i) & 1u) {
          code = 1 + (unary1 & 1u);
          unary1 >>= 1;
        }
        q += code;
        if (code < 2 || h.wtrunc) {
          w_cur.quotients[w_cur.count++] = q;
          q = 0;
        }
      }
      w_carry = q;
      w_pos += static_cast<uint32_t>(w_cur.count);
    }
    // Remainders of the previous chunk follow the unary parts of this one.
    for (int i = 0; w_prev.enabled && i < w_prev.count && w_done < nw; ++i, ++w_done) {
      uint32_t rem = 0;
      if (!bits.read(wdiv, &rem)) return fail("truncated weight remainder", bits.bit_position());
      const uint64_t value = (uint64_t{w_prev.quotients[i]} << wdiv) + rem;
      if (value >= 512) return fail("weight index >= 512", bits.bit_position());
      w[w_done] = static_cast<uint32_t>(value);
    }
    for (int i = 0; z_prev.enabled && i < z_prev.count && z_done < nz; ++i, ++z_done) {
      uint32_t rem = 0;
      if (!bits.read(h.zdiv, &rem)) return fail("truncated zero-run remainder", bits.bit_position());
      const uint64_t value = (uint64_t{z_prev.quotients[i]} << h.zdiv) + rem;
      if (value > (1u << 24)) return fail("zero run too long", bits.bit_position());
      z[z_done] = static_cast<uint32_t>(value);
    }
    w_prev = w_cur;
    z_prev = z_cur;
  } while (w_prev.enabled || z_prev.enabled);
  return Error::Ok;
}

}  // namespace

Error decode_weight_stream(Span<const uint8_t> stream, Span<int16_t> out, ScratchArena& arena,
                           size_t* count) {
  BitReader bits(stream);
  Palette pal;
  bool have_palette = false;
  size_t written = 0;
  for (;;) {
    uint32_t zdiv = 0;
    if (bits.at_end()) break;
    if (!bits.read(3, &zdiv)) return fail("truncated slice header", bits.bit_position());
    bool ended = false;
    while (zdiv == kZdivEndOfStream) {
      // End of a stream: byte align; a following stream must set up its palette again.
      bits.align_to_byte();
      have_palette = false;
      if (bits.at_end()) {
        ended = true;
        break;
      }
      if (!bits.read(3, &zdiv)) return fail("truncated slice header", bits.bit_position());
    }
    if (ended) break;
    SliceHeader h{zdiv, 0, 0, 0, 0};
    if (zdiv >= 4 && zdiv != kZdivNoZeroRuns) return fail("ZDIV 4/5 is reserved", bits.bit_position());
    if (!bits.read(15, &h.nvalues) || !bits.read(3, &h.wdiv) || !bits.read(1, &h.wtrunc) ||
        !bits.read(1, &h.new_palette)) {
      return fail("truncated slice header", bits.bit_position());
    }
    h.nvalues += 1;
    const bool zero_runs = zdiv != kZdivNoZeroRuns;
    if (h.new_palette) {
      uint32_t dirofs = 0, palsize = 0, palbits = 0;
      if (!bits.read(5, &dirofs) || !bits.read(5, &palsize) || !bits.read(3, &palbits)) {
        return fail("truncated palette header", bits.bit_position());
      }
      pal.direct_offset = dirofs;
      pal.size = palsize > 0 ? palsize + 1 : 0;
      pal.bits = palbits + 2;
      for (uint32_t i = 0; i < pal.size; ++i) {
        uint32_t entry = 0;
        if (!bits.read(pal.bits, &entry)) return fail("truncated palette", bits.bit_position());
        pal.entries[i] = static_cast<uint16_t>(entry);
      }
      pal.zero_runs = zero_runs;
      have_palette = true;
    } else if (!have_palette) {
      return fail("first slice of a stream has no palette", bits.bit_position());
    } else if (pal.zero_runs != zero_runs) {
      return fail("zero-run mode changed without a new palette", bits.bit_position());
    }
    uint32_t wdiv = h.wdiv;
    const bool uncompressed = wdiv == kWdivUncompressed;
    if (uncompressed) {
      wdiv = 0;
      if (pal.size > 0) {
        while ((1u << wdiv) < pal.size) ++wdiv;
      } else {
        wdiv = pal.bits;
      }
    } else if (wdiv > 5) {
      return fail("WDIV 6 is reserved", bits.bit_position());
    }

    const uint32_t nz = zero_runs ? h.nvalues + (h.new_palette ? 1u : 0u) : 0u;
    const size_t mark = arena.mark();
    uint32_t* w = arena.allocate<uint32_t>(h.nvalues);
    uint32_t* z = arena.allocate<uint32_t>(nz > 0 ? nz : 1);
    if (w == nullptr || z == nullptr) {
      KILN_LOG(Error, "weight stream: slice of %u values needs %zu bytes of work memory",
               h.nvalues, size_t{h.nvalues + nz} * 4);
      return Error::OutOfResources;
    }
    Error err = decode_chunks(bits, h, uncompressed, wdiv, w, h.nvalues, z, nz, zero_runs);
    if (err != Error::Ok) return err;

    // Interleave weights and zero runs into the output.
    auto emit_zeros = [&](uint32_t n) -> bool {
      if (n > out.size() - written) return false;
      if (n <= 8) {
        for (uint32_t i = 0; i < n; ++i) out[written + i] = 0;
      } else {
        std::memset(out.data() + written, 0, size_t{n} * sizeof(int16_t));
      }
      written += n;
      return true;
    };
    uint32_t zi = 0;
    if (zero_runs && h.new_palette && !emit_zeros(z[zi++])) break;
    bool full = false;
    for (uint32_t i = 0; i < h.nvalues; ++i) {
      const uint32_t index = w[i];
      const uint32_t code =
          index < pal.size ? pal.entries[index] : index - pal.size + pal.direct_offset;
      const int32_t magnitude = static_cast<int32_t>(code >> 1);
      if (written >= out.size()) {
        full = true;
        break;
      }
      out[written++] = static_cast<int16_t>((code & 1u) ? -magnitude : magnitude);
      if (zero_runs && !emit_zeros(z[zi++])) {
        full = true;
        break;
      }
    }
    arena.release(mark);
    if (full) break;
  }
  *count = written;
  return Error::Ok;
}

}  // namespace kiln::vnpu
