#include "backends/arm/vnpu/weight_layout.h"

#include <cstring>

#include "backends/arm/vnpu/fast_weight_decoder.h"
#include "backends/arm/vnpu/u55/weight_order.h"
#include "backends/arm/vnpu/u85/weight_order.h"
#include "backends/arm/vnpu/weight_decoder.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// The stream order of the op's architecture (the only place that chooses between them).
template <typename Visit>
void traverse(const WeightDesc& d, const WeightShape& l, uint32_t stream, Visit&& visit) {
  if (d.family == WeightFamily::U85) {
    u85::traverse(d, l, stream, visit);
  } else {
    u55::traverse(d, l, stream, visit);
  }
}

uint64_t count_slots(const WeightDesc& d, const WeightShape& l, uint32_t stream) {
  uint64_t n = 0;
  traverse(d, l, stream, [&](uint32_t, uint32_t, uint32_t, uint32_t, bool) { ++n; });
  return n;
}

// The bytes of weight stream `s`, checked against its region.
Error stream_bytes(OpContext& ctx, uint32_t s, Span<const uint8_t>* bytes) {
  const WeightDesc& d = ctx.op.weights;
  const uint64_t base = d.weight_base[s], length = d.weight_length[s];
  if (d.weight_region >= ctx.regions.size() || ctx.regions[d.weight_region].data == nullptr ||
      base > ctx.regions[d.weight_region].size || length > ctx.regions[d.weight_region].size - base) {
    KILN_LOG(Error, "weight stream %u at 0x%llx+%llu lies outside region %u (%zu regions given)", s,
             static_cast<unsigned long long>(base), static_cast<unsigned long long>(length), d.weight_region,
             ctx.regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  *bytes = Span<const uint8_t>(ctx.regions[d.weight_region].data + base, static_cast<size_t>(length));
  ctx.bytes_read[d.weight_region] += length;
  ctx.record.bytes_read += length;
  return Error::Ok;
}

Error decode_stream(OpContext& ctx, Span<const uint8_t> bytes, bool fast, Span<int16_t> out) {
  if (fast) return decode_fast_weight_stream(bytes, out);
  size_t count = 0;
  Error err = decode_weight_stream(bytes, out, ctx.scratch, &count);
  if (err != Error::Ok) return err;
  if (count < out.size()) {
    KILN_LOG(Error, "weight stream decodes to %zu weights, the operation needs %zu", count, out.size());
    return Error::NpuWeightStreamInvalid;
  }
  return Error::Ok;
}

}  // namespace

uint64_t decoded_weight_slots(const WeightDesc& d, const WeightShape& l) {
  const uint32_t cores = d.cores < 1 ? 1u : (d.cores > 4 ? 4u : d.cores);
  uint64_t total = 0, longest = 0;
  for (uint32_t s = 0; s < cores; ++s) {
    const uint64_t n = count_slots(d, l, s);
    total += n;
    if (n > longest) longest = n;
  }
  return d.fast && cores > 1 ? total : longest;
}

Error load_dense_weights(OpContext& ctx, const WeightShape& l, const int16_t** dense) {
  const WeightDesc& d = ctx.op.weights;
  const uint32_t cores = d.cores < 1 ? 1u : (d.cores > 4 ? 4u : d.cores);
  // The fast format interleaves all cores' weights in one stream.
  const bool interleaved = d.fast && cores > 1;
  uint64_t slots[4] = {};
  uint64_t total_slots = 0, max_slots = 0;
  for (uint32_t s = 0; s < cores; ++s) {
    slots[s] = count_slots(d, l, s);
    total_slots += slots[s];
    if (slots[s] > max_slots) max_slots = slots[s];
  }
  const uint64_t kh = l.kernel_height, kw = l.kernel_width, id = l.ifm_depth;
  const uint64_t dense_count = uint64_t{l.ofm_depth} * kh * kw * id;
  int16_t* out = ctx.scratch.allocate<int16_t>(static_cast<size_t>(dense_count));
  const uint64_t decoded_count = interleaved ? total_slots : max_slots;
  int16_t* decoded = ctx.scratch.allocate<int16_t>(static_cast<size_t>(decoded_count));
  if (out == nullptr || decoded == nullptr) {
    KILN_LOG(Error, "work memory too small: %llu weight slots + %llu dense weights (int16), %zu bytes free",
             static_cast<unsigned long long>(decoded_count), static_cast<unsigned long long>(dense_count),
             ctx.scratch.free_bytes());
    return Error::OutOfResources;
  }
  std::memset(out, 0, static_cast<size_t>(dense_count) * sizeof(int16_t));
  // The stream order comes from registers (block depths, cores): a slot it names outside
  // the kernel is refused, never written.
  bool outside = false;
  const auto put = [&](uint32_t o, uint32_t y, uint32_t x, uint32_t c, int16_t value) {
    if (o >= l.ofm_depth || y >= kh || x >= kw || c >= id) {
      outside = true;
      return;
    }
    out[((o * kh + y) * kw + x) * id + c] = value;
  };
  if (interleaved) {
    for (uint32_t s = 1; s < cores; ++s) {
      if (slots[s] != slots[0]) {
        KILN_LOG(Error, "fast weights of %u cores with unequal lengths (%llu, %llu) are not modelled", cores,
                 static_cast<unsigned long long>(slots[0]), static_cast<unsigned long long>(slots[s]));
        return Error::NpuWeightStreamInvalid;
      }
    }
    Span<const uint8_t> bytes;
    Error err = stream_bytes(ctx, 0, &bytes);
    if (err == Error::Ok) err = decode_stream(ctx, bytes, true, Span<int16_t>(decoded, static_cast<size_t>(total_slots)));
    if (err != Error::Ok) return err;
    // Core s's k-th weight: block k / B of every core comes in turn; the last, shorter
    // block of each core likewise.
    const uint64_t block = u85::fast_block_slots(d, l);
    const uint64_t length = slots[0];
    for (uint32_t s = 0; s < cores; ++s) {
      uint64_t k = 0;
      traverse(d, l, s, [&](uint32_t o, uint32_t y, uint32_t x, uint32_t c, bool valid) {
        const uint64_t b = k / block, within = k % block;
        const uint64_t this_block = (b + 1) * block <= length ? block : length - b * block;
        if (valid) put(o, y, x, c, decoded[b * block * cores + s * this_block + within]);
        ++k;
      });
    }
  } else {
    for (uint32_t s = 0; s < cores; ++s) {
      if (slots[s] == 0) continue;  // a core without channels (Ethos-U65-512, depth 1)
      Span<const uint8_t> bytes;
      Error err = stream_bytes(ctx, s, &bytes);
      if (err == Error::Ok) err = decode_stream(ctx, bytes, d.fast, Span<int16_t>(decoded, static_cast<size_t>(slots[s])));
      if (err != Error::Ok) return err;
      size_t i = 0;
      traverse(d, l, s, [&](uint32_t o, uint32_t y, uint32_t x, uint32_t c, bool valid) {
        if (valid) put(o, y, x, c, decoded[i]);
        ++i;
      });
    }
  }
  if (outside) {
    KILN_LOG(Error, "weight stream order names a weight outside the %ux%llux%llux%llu kernel", l.ofm_depth,
             static_cast<unsigned long long>(kh), static_cast<unsigned long long>(kw),
             static_cast<unsigned long long>(id));
    return Error::NpuWeightStreamInvalid;
  }
  *dense = out;
  return Error::Ok;
}

}  // namespace kiln::vnpu
