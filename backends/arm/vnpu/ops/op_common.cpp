// Steps every operation shares: output stage, work budget, scale records, binding inputs and
// outputs (regions, chaining buffers), accumulator hand-over.
#include "backends/arm/vnpu/decode_common.h"
#include "backends/arm/vnpu/ops/op_context.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

int64_t read_signed(const uint8_t* p, uint32_t bytes) {
  uint64_t v = 0;
  for (uint32_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  const uint32_t unused = 64 - 8 * bytes;
  return static_cast<int64_t>(v << unused) >> unused;
}

uint32_t read_u32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// One 10-byte record → bias, multiplier, shift.
void decode_record(ScaleRecord format, const uint8_t* p, int64_t* bias, uint32_t* multiplier, uint32_t* shift) {
  switch (format) {
    case ScaleRecord::Bias40Scale32:
      *bias = read_signed(p, 5);
      *multiplier = read_u32(p + 5);
      *shift = p[9] & 0x3fu;
      break;
    case ScaleRecord::Bias32Scale31:
      *bias = read_signed(p, 4);
      *multiplier = read_u32(p + 4) & 0x7fffffffu;
      *shift = p[8] & 0x3fu;
      break;
    case ScaleRecord::Bias48Scale15:
      *bias = read_signed(p, 6);
      *multiplier = (uint32_t{p[6]} | (uint32_t{p[7]} << 8)) & 0x7fffu;
      *shift = p[8] & 0x3fu;
      break;
  }
}

uint64_t elements(uint32_t h, uint32_t w, uint32_t d) { return uint64_t{h} * w * d; }

}  // namespace

Error charge_work(OpContext& ctx, uint64_t work, const char* what) {
  if (work > ctx.work_budget) {
    KILN_LOG(Error, "%s needs %llu MAC/element steps, only %llu left of the stream's budget",
             what, static_cast<unsigned long long>(work),
             static_cast<unsigned long long>(ctx.work_budget));
    return Error::NpuWorkLimitExceeded;
  }
  ctx.work_budget -= work;
  ctx.record.macs += work;
  return Error::Ok;
}

Error make_output_stage(const OpContext& ctx, OutputStage* stage) {
  const OpDesc& op = ctx.op;
  stage->zero_point = op.ofm.zero_point;
  stage->clip_min = op.output.clip_min;
  stage->clip_max = op.output.clip_max;
  stage->lut = op.output.lut;
  stage->table = nullptr;
  stage->table_signed = elem_signed(op.ofm.type);
  if (op.output.lut != LutKind::None) {
    const uint32_t size = op.output.lut == LutKind::Int8 ? 256u
                          : op.output.lut == LutKind::Int8ToInt16 ? 512u
                          : op.output.lut == LutKind::Int8ToInt32 ? 1024u : 2048u;
    if (size_t{op.output.lut_offset} + size > ctx.internal_memory.size()) {
      KILN_LOG(Error, "table of %u bytes at 0x%x lies outside the internal memory (%zu bytes)", size,
               op.output.lut_offset, ctx.internal_memory.size());
      return Error::NpuInvalidRegister;
    }
    stage->table = ctx.internal_memory.data() + op.output.lut_offset;
  }
  return Error::Ok;
}

Error read_channel_scales(OpContext& ctx, uint32_t count, ChannelScales* out) {
  const OpDesc& op = ctx.op;
  int64_t* bias = ctx.scratch.allocate<int64_t>(count);
  Scaling* scale = ctx.scratch.allocate<Scaling>(count);
  if (bias == nullptr || scale == nullptr) {
    KILN_LOG(Error, "work memory too small for %u channel scales", count);
    return Error::OutOfResources;
  }
  out->bias = bias;
  out->scale = scale;
  // An op that keeps its accumulators writes nothing, so it reads no scale records.
  if (!op.output.per_channel || !op.acc_output) {
    for (uint32_t c = 0; c < count; ++c) {
      bias[c] = 0;
      scale[c] = op.output.scale;
    }
    return Error::Ok;
  }
  const WeightDesc& w = op.weights;
  if (w.scale_region >= ctx.regions.size()) {
    KILN_LOG(Error, "scale region %u: only %zu regions given", w.scale_region, ctx.regions.size());
    return Error::NpuRegionOutOfBounds;
  }
  const Region& mem = ctx.regions[w.scale_region];
  const uint32_t streams = w.scale_streams;
  for (uint32_t s = 0; s < streams; ++s) {
    // Stream s holds channels s, s + streams, ... (one stream: all of them).
    const uint64_t n = (count + streams - 1 - s) / streams;
    const uint64_t needed = n * 10u;
    const uint64_t base = w.scale_base[s];
    if (w.scale_length[s] < needed || mem.data == nullptr || base > mem.size || needed > mem.size - base) {
      KILN_LOG(Error,
               "scale stream %u at 0x%llx (length %llu) in region %u of %zu bytes cannot hold %llu "
               "channels of 10 bytes",
               s, static_cast<unsigned long long>(base), static_cast<unsigned long long>(w.scale_length[s]),
               w.scale_region, mem.size, static_cast<unsigned long long>(n));
      return Error::NpuRegionOutOfBounds;
    }
    const uint8_t* p = mem.data + base;
    for (uint64_t i = 0; i < n; ++i, p += 10) {
      const uint32_t c = static_cast<uint32_t>(i * streams + s);
      Scaling sc = op.output.scale;
      decode_record(w.record, p, &bias[c], &sc.multiplier, &sc.shift);
      if (sc.shift > 62) {
        KILN_LOG(Error, "scale record of channel %u has shift %u (at most 62)", c, sc.shift);
        return Error::NpuInvalidRegister;
      }
      scale[c] = sc;
    }
    ctx.bytes_read[w.scale_region] += needed;
    ctx.record.bytes_read += needed;
  }
  return Error::Ok;
}

Error bind_input(OpContext& ctx, const FmDesc& fm, const char* name, uint32_t height, uint32_t width,
                 uint32_t depth, FeatureMap* map) {
  if (fm.storage == FmStorage::Memory) {
    return map->bind(fm, name, ctx.regions, height, width, depth, /*output=*/false);
  }
  if (fm.storage != FmStorage::Chained) {
    KILN_LOG(Error, "%s is not a tensor (storage %u)", name, static_cast<unsigned>(fm.storage));
    return Error::NpuInvalidRegister;
  }
  const NpuState::Buffer& b = ctx.state.chain[fm.region];
  if (b.data == nullptr) {
    KILN_LOG(Error, "%s reads chaining buffer %u, which no operation of this chain wrote", name, fm.region);
    return Error::NpuInvalidRegister;
  }
  if (elements(b.height, b.width, b.depth) != elements(height, width, depth) || b.type != fm.type) {
    KILN_LOG(Error, "%s reads chaining buffer %u as %ux%ux%u (type %u); it holds %ux%ux%u (type %u)", name,
             fm.region, height, width, depth, static_cast<unsigned>(fm.type), b.height, b.width, b.depth,
             static_cast<unsigned>(b.type));
    return Error::NpuInvalidRegister;
  }
  map->bind_dense(b.data, b.type, height, width, depth);
  ctx.record.chained = 1;
  return Error::Ok;
}

Error bind_output(OpContext& ctx, FeatureMap* map, bool* bound) {
  const OpDesc& op = ctx.op;
  *bound = false;
  switch (op.ofm.storage) {
    case FmStorage::None:
      return Error::Ok;
    case FmStorage::Chained: {
      const uint64_t bytes = elements(op.ofm_height, op.ofm_width, op.ofm_depth) * elem_bytes(op.ofm.type);
      uint8_t* data = ctx.scratch.allocate_persistent<uint8_t>(static_cast<size_t>(bytes));
      if (data == nullptr) {
        KILN_LOG(Error, "work memory too small for a chaining buffer of %llu bytes (%zu free)",
                 static_cast<unsigned long long>(bytes), ctx.scratch.free_bytes());
        return Error::OutOfResources;
      }
      ctx.state.chain[op.ofm.region] = NpuState::Buffer{data, op.ofm.type, op.ofm_height, op.ofm_width, op.ofm_depth};
      map->bind_dense(data, op.ofm.type, op.ofm_height, op.ofm_width, op.ofm_depth);
      ctx.record.chained = 1;
      *bound = true;
      return Error::Ok;
    }
    case FmStorage::Memory: {
      uint32_t mh, mw, md;
      permuted_extent(op.transpose, op.ofm_height, op.ofm_width, op.ofm_depth, &mh, &mw, &md);
      Error err = map->bind(op.ofm, "OFM", ctx.regions, mh, mw, md, /*output=*/true);
      if (err != Error::Ok) return err;
      map->set_permutation(op.transpose, op.reverse, op.ofm_height, op.ofm_width, op.ofm_depth);
      *bound = true;
      return Error::Ok;
    }
    default:
      KILN_LOG(Error, "OFM storage %u cannot be written", static_cast<unsigned>(op.ofm.storage));
      return Error::NpuInvalidRegister;
  }
}

Error initial_accumulators(OpContext& ctx, const int64_t** acc) {
  const OpDesc& op = ctx.op;
  *acc = nullptr;
  const uint64_t n = elements(op.ofm_height, op.ofm_width, op.ofm_depth);
  if (op.acc_source == AccSource::Keep) {
    const NpuState::Buffer& b = ctx.state.accumulators;
    if (b.data == nullptr || b.height != op.ofm_height || b.width != op.ofm_width || b.depth != op.ofm_depth) {
      KILN_LOG(Error, "the operation continues accumulators of %ux%ux%u that no previous operation kept "
               "(it has %ux%ux%u)", op.ofm_height, op.ofm_width, op.ofm_depth, b.height, b.width, b.depth);
      return Error::NpuInvalidRegister;
    }
    *acc = reinterpret_cast<const int64_t*>(b.data);
    return Error::Ok;
  }
  if (op.acc_source != AccSource::Ifm2) return Error::Ok;
  FeatureMap ifm2;
  Error err = bind_input(ctx, op.ifm2, "IFM2 (accumulators)", op.ofm_height, op.ofm_width, op.ofm_depth, &ifm2);
  if (err != Error::Ok) return err;
  int64_t* values = ctx.scratch.allocate<int64_t>(static_cast<size_t>(n));
  if (values == nullptr) {
    KILN_LOG(Error, "work memory too small for %llu accumulators", static_cast<unsigned long long>(n));
    return Error::OutOfResources;
  }
  size_t i = 0;
  for (uint32_t y = 0; y < op.ofm_height; ++y) {
    for (uint32_t x = 0; x < op.ofm_width; ++x) {
      for (uint32_t c = 0; c < op.ofm_depth; ++c) values[i++] = ifm2.read(y, x, c);
    }
  }
  count_read(ctx, ifm2, ifm2.bytes());
  *acc = values;
  return Error::Ok;
}

Error kept_accumulators(OpContext& ctx, int64_t** acc) {
  const OpDesc& op = ctx.op;
  NpuState::Buffer& b = ctx.state.accumulators;
  if (op.acc_source == AccSource::Keep && b.data != nullptr) {
    *acc = reinterpret_cast<int64_t*>(b.data);  // same extent: checked by initial_accumulators
    return Error::Ok;
  }
  const uint64_t n = elements(op.ofm_height, op.ofm_width, op.ofm_depth);
  int64_t* data = ctx.scratch.allocate_persistent<int64_t>(static_cast<size_t>(n));
  if (data == nullptr) {
    KILN_LOG(Error, "work memory too small to keep %llu accumulators", static_cast<unsigned long long>(n));
    return Error::OutOfResources;
  }
  b = NpuState::Buffer{reinterpret_cast<uint8_t*>(data), ElemType::S64, op.ofm_height, op.ofm_width, op.ofm_depth};
  *acc = data;
  return Error::Ok;
}

void count_read(OpContext& ctx, const FeatureMap& map, uint64_t bytes) {
  ctx.bytes_read[map.counter_index()] += bytes;
  ctx.record.bytes_read += bytes;
}

void count_written(OpContext& ctx, const FeatureMap& map, uint64_t bytes) {
  ctx.bytes_written[map.counter_index()] += bytes;
  ctx.record.bytes_written += bytes;
}

}  // namespace kiln::vnpu
