// The virtual Ethos-U on hand-made command streams: decoding, regions, DMA, address
// generation (NHWC and NHCWB16), errors and work limits. Bit-exactness against the TOSA
// reference on Vela's streams is tested in tests/python/arm/vnpu.
#include "backends/arm/vnpu/virtual_npu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "backends/arm/vnpu/output_stage.h"
#include "backends/arm/vnpu/scratch_arena.h"
#include "backends/arm/vnpu/weight_decoder.h"
#include "stream_builder.h"

namespace kiln::vnpu {
namespace {

using testing::StreamBuilder;
using u55::Cmd0;
using u55::Cmd1;
using u55::ElementwiseMode;

class VirtualNpuTest : public ::testing::Test {
 protected:
  Error run(const std::vector<uint32_t>& words, Config config = Config{}) {
    VirtualNpu npu(config, Span<uint8_t>(work.data(), work.size()));
    Region bound[3] = {{region0.data(), region0.size(), region0_read_only},
                       {region1.data(), region1.size()}, {nullptr, 0}};
    return npu.run(Span<const uint32_t>(words.data(), words.size()), Span<const Region>(bound, 3),
                   &counters, Span<OpRecord>(records, 8), &num_records);
  }
  std::vector<uint8_t> work = std::vector<uint8_t>(kInternalMemoryBytes + 256 * 1024);
  std::vector<uint8_t> region0 = std::vector<uint8_t>(256);
  std::vector<uint8_t> region1 = std::vector<uint8_t>(1024);
  bool region0_read_only = false;
  Counters counters;
  OpRecord records[8];
  size_t num_records = 0;
};

TEST_F(VirtualNpuTest, UnknownOpcodeIsNamed) {
  EXPECT_EQ(run({0x0007}), Error::NpuUnknownCommand);
  EXPECT_EQ(run({0x0108}), Error::NpuUnknownCommand);                 // no register 0x108
  EXPECT_EQ(run({0x0002 | 0x0400}), Error::NpuUnknownCommand);        // reserved bit
  EXPECT_EQ(run({0x8000 | 0x0010, 0, 0}), Error::NpuUnknownCommand);  // payload size 2
}

TEST_F(VirtualNpuTest, MissingPayloadIsTruncation) {
  EXPECT_EQ(run({static_cast<uint32_t>(Cmd1::IfmBase0) | kPayloadFlag}), Error::NpuStreamTruncated);
}

TEST_F(VirtualNpuTest, StopEndsTheStream) {
  EXPECT_EQ(run({0x0000, 0x0007}), Error::Ok);  // the unknown word after STOP is never read
  EXPECT_EQ(counters.commands, 1u);
}

TEST_F(VirtualNpuTest, RegisterStreamReportsHowItEnded) {
  VirtualNpu npu(Config{}, Span<uint8_t>(work.data(), work.size()));
  Region bound[2] = {{region0.data(), region0.size()}, {region1.data(), region1.size()}};
  StreamEnd end;
  // NPU_OP_IRQ with masks 0x0005 and 0x0100, then STOP at word 2: QREAD is word 3.
  const uint32_t stopped[] = {0x0001 | (0x0005u << 16), 0x0001 | (0x0100u << 16), 0x0000, 0x0007};
  EXPECT_EQ(npu.run_registers(stopped, bound, nullptr, {}, nullptr, &end), Error::Ok);
  EXPECT_TRUE(end.stop_reached);
  EXPECT_EQ(end.words_read, 3u);
  EXPECT_EQ(end.irq_mask, 0x0105u);
  // Running off the end without STOP: ends, and says so.
  const uint32_t unterminated[] = {0x0011, 0x0012};  // DMA_WAIT, KERNEL_WAIT
  EXPECT_EQ(npu.run_registers(unterminated, bound, nullptr, {}, nullptr, &end), Error::Ok);
  EXPECT_FALSE(end.stop_reached);
  EXPECT_EQ(end.words_read, 2u);
  // A failing command: QREAD points at it.
  const uint32_t failing[] = {0x0011, 0x0007};
  EXPECT_EQ(npu.run_registers(failing, bound, nullptr, {}, nullptr, &end), Error::NpuUnknownCommand);
  EXPECT_EQ(end.words_read, 1u);
  // The words of a COP1 payload are register commands here (malformed ones), not a payload.
  const uint32_t cop1[] = {kCop1Magic, 0x0000};
  EXPECT_EQ(npu.run_registers(cop1, bound, nullptr, {}, nullptr, &end), Error::NpuUnknownCommand);
  EXPECT_EQ(npu.run(cop1, bound, nullptr), Error::NpuUnknownCommand);  // a COP1 action 0
}

TEST_F(VirtualNpuTest, DmaCopiesBetweenRegionsAndChecksBounds) {
  for (size_t i = 0; i < region0.size(); ++i) region0[i] = static_cast<uint8_t>(i * 7);
  StreamBuilder s;
  s.cmd0(Cmd0::Dma0SrcRegion, 0).cmd0(Cmd0::Dma0DstRegion, 1);
  s.cmd1(Cmd1::Dma0Src, 16).cmd1(Cmd1::Dma0Dst, 100).cmd1(Cmd1::Dma0Len, 32).cmd0(Cmd0::OpDmaStart);
  ASSERT_EQ(run(s.words), Error::Ok);
  EXPECT_TRUE(std::equal(region0.begin() + 16, region0.begin() + 48, region1.begin() + 100));
  EXPECT_EQ(counters.dma_transfers, 1u);
  EXPECT_EQ(counters.bytes_read[0], 32u);
  EXPECT_EQ(counters.bytes_written[1], 32u);

  StreamBuilder beyond;
  beyond.cmd0(Cmd0::Dma0SrcRegion, 0).cmd0(Cmd0::Dma0DstRegion, 1);
  beyond.cmd1(Cmd1::Dma0Src, 250).cmd1(Cmd1::Dma0Dst, 0).cmd1(Cmd1::Dma0Len, 32).cmd0(Cmd0::OpDmaStart);
  EXPECT_EQ(run(beyond.words), Error::NpuRegionOutOfBounds);

  StreamBuilder no_region;
  no_region.cmd0(Cmd0::Dma0SrcRegion, 5).cmd1(Cmd1::Dma0Len, 1).cmd0(Cmd0::OpDmaStart);
  EXPECT_EQ(run(no_region.words), Error::NpuRegionOutOfBounds);
}

TEST_F(VirtualNpuTest, ReadOnlyRegionRefusesOfmAndDmaWrites) {
  region0_read_only = true;
  region0.assign(region0.size(), 0x5a);
  StreamBuilder to_weights;  // an elementwise op whose OFM lands in the weights
  to_weights.ifm(1, 0, 1, 2, 3).ifm2(1, 64, 1, 2, 3).ofm(0, 0, 1, 2, 3).unit_output_stage();
  to_weights.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Max));
  EXPECT_EQ(run(to_weights.words), Error::NpuRegionReadOnly);
  StreamBuilder dma;  // a DMA into the weights
  dma.cmd0(Cmd0::Dma0SrcRegion, 1).cmd0(Cmd0::Dma0DstRegion, 0);
  dma.cmd1(Cmd1::Dma0Src, 0).cmd1(Cmd1::Dma0Dst, 0).cmd1(Cmd1::Dma0Len, 16).cmd0(Cmd0::OpDmaStart);
  EXPECT_EQ(run(dma.words), Error::NpuRegionReadOnly);
  for (uint8_t byte : region0) ASSERT_EQ(byte, 0x5a);
  StreamBuilder read;  // reading it is fine
  read.cmd0(Cmd0::Dma0SrcRegion, 0).cmd0(Cmd0::Dma0DstRegion, 1);
  read.cmd1(Cmd1::Dma0Src, 0).cmd1(Cmd1::Dma0Dst, 0).cmd1(Cmd1::Dma0Len, 16).cmd0(Cmd0::OpDmaStart);
  EXPECT_EQ(run(read.words), Error::Ok);
  EXPECT_EQ(region1[15], 0x5a);
}

// OPA_32 (IFM_PRECISION scale_mode 1): the IFM is scaled by OPA_SCALE/shift, the IFM2 is
// shifted left by 19 bits; OPB_SCALE (0 in this mode) is not a multiplier. Expected values
// are the TOSA RESCALE/ADD/RESCALE arithmetic written out (see test_elementwise_bitexact.py
// for the same against the reference model).
TEST_F(VirtualNpuTest, AddWithOneScaledOperand) {
  const int8_t a[4] = {-100, 3, 77, 127};
  const int8_t b[4] = {50, -128, 9, 127};
  std::copy(a, a + 4, reinterpret_cast<int8_t*>(region1.data()));
  std::copy(b, b + 4, reinterpret_cast<int8_t*>(region1.data()) + 64);
  StreamBuilder s;
  s.ifm(1, 0, 1, 1, 4).ifm2(1, 64, 1, 1, 4).ofm(1, 128, 1, 1, 4).unit_output_stage();
  s.cmd0(Cmd0::IfmPrecision, 1u | (1u << 8) | (2u << 14));  // S8, OPA_32, natural rounding
  s.cmd1(Cmd1::OpaScale, 3u << 17, 2).cmd1(Cmd1::OpbScale, 0);  // a * 0.75 * 2^17
  s.cmd1(Cmd1::OfmScale, 1, 19);                              // back down by 2^19
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  ASSERT_EQ(run(s.words), Error::Ok);
  const int8_t* out = reinterpret_cast<const int8_t*>(region1.data()) + 128;
  for (int i = 0; i < 4; ++i) {
    const int64_t sum = ((int64_t{a[i]} * (3 << 17) + 2) >> 2) + int64_t{b[i]} * (1 << 19);
    const int64_t tfl_round = int64_t{1} << 18;  // OFM rounding TFL, shift 19 <= 31
    int64_t want = (sum + tfl_round) >> 19;
    want = std::min<int64_t>(127, std::max<int64_t>(-128, want));
    EXPECT_EQ(out[i], want) << i;
  }
}

// A corrupt stream's shift of 63 with truncating rounding used to overflow the rounding term
// ((1 << 63) - 1) in the output stage; shifts are now checked when the op is decoded.
TEST_F(VirtualNpuTest, ShiftsAbove62AreRefusedAtDecode) {
  StreamBuilder s;
  s.ifm(1, 0, 1, 1, 4).ifm2(1, 64, 1, 1, 4).ofm(1, 128, 1, 1, 4).unit_output_stage();
  s.cmd0(Cmd0::OfmPrecision, 1u | (1u << 8) | (1u << 14));  // S8, global, truncating rounding
  s.cmd1(Cmd1::OfmScale, 0x7fffffffu, 63);
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  EXPECT_EQ(run(s.words), Error::NpuInvalidRegister);
  StreamBuilder opa;
  opa.ifm(1, 0, 1, 1, 4).ifm2(1, 64, 1, 1, 4).ofm(1, 128, 1, 1, 4).unit_output_stage();
  opa.cmd1(Cmd1::OpaScale, 1, 63).cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  EXPECT_EQ(run(opa.words), Error::NpuInvalidRegister);
  // A per-channel scale record with shift 63 (byte 9 of the 10-byte entry).
  StreamBuilder conv;
  conv.ifm(1, 0, 1, 1, 1).ofm(1, 128, 1, 1, 1).unit_output_stage();
  conv.cmd0(Cmd0::WeightRegion, 1).cmd1(Cmd1::WeightBase, 256).cmd1(Cmd1::WeightLength, 64);
  conv.cmd0(Cmd0::ScaleRegion, 1).cmd1(Cmd1::ScaleBase, 512).cmd1(Cmd1::ScaleLength, 10);
  conv.cmd0(Cmd0::OfmBlkDepthM1, 7).cmd0(Cmd0::OpConv);
  region1[512 + 9] = 63;
  EXPECT_EQ(run(conv.words), Error::NpuInvalidRegister);
  region1[512 + 9] = 62;  // accepted: the op goes on to its (empty) weight stream
  EXPECT_EQ(run(conv.words), Error::NpuWeightStreamInvalid);
}

TEST_F(VirtualNpuTest, ElementwiseMaxWithBroadcastScalarOrder) {
  const int8_t a[6] = {-5, 7, 100, -128, 3, 0};
  const int8_t b[3] = {2, -9, 50};  // broadcast along H and W (1x1x3 vs 1x2x3)
  std::copy(a, a + 6, reinterpret_cast<int8_t*>(region1.data()));
  std::copy(b, b + 3, reinterpret_cast<int8_t*>(region1.data()) + 64);
  StreamBuilder s;
  s.ifm(1, 0, 1, 2, 3).ifm2(1, 64, 1, 1, 3).ofm(1, 128, 1, 2, 3).unit_output_stage();
  s.cmd0(Cmd0::Ifm2Broadcast, 0x3);  // broadcast height and width
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Max));
  ASSERT_EQ(run(s.words), Error::Ok);
  const int8_t* out = reinterpret_cast<const int8_t*>(region1.data()) + 128;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], std::max(a[i], b[i % 3])) << i;
  ASSERT_EQ(num_records, 1u);
  EXPECT_EQ(records[0].kind, static_cast<uint16_t>(OpKind::Elementwise));
  EXPECT_EQ(records[0].macs, 6u);
}

TEST_F(VirtualNpuTest, Nhcwb16OutputUsesBricks) {
  // 1x2x20 IFM (NHWC) copied by a MAX with itself into an NHCWB16 OFM.
  for (int i = 0; i < 40; ++i) region1[i] = static_cast<uint8_t>(i);
  StreamBuilder s;
  s.ifm(1, 0, 1, 2, 20).ifm2(1, 0, 1, 2, 20).ofm(1, 256, 1, 2, 20, /*nhcwb16=*/true);
  s.unit_output_stage().cmd0(Cmd0::Ifm2Broadcast, 0);
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Max));
  ASSERT_EQ(run(s.words), Error::Ok);
  for (int x = 0; x < 2; ++x) {
    for (int c = 0; c < 20; ++c) {
      // brick c/16 at stride_c = w*16, pixel x at 16 bytes, channel c%16.
      const size_t offset = 256 + (c / 16) * 32 + x * 16 + c % 16;
      EXPECT_EQ(region1[offset], x * 20 + c) << "x " << x << " c " << c;
    }
  }
}

// The C stride only steps between NHCWB16 bricks: an NHWC map's channels are packed whatever
// the register holds. ExecuTorch's Vela 5.1 leaves 4 there on an 8-bit map after a 32-bit one
// (its smallcnn stream), which the virtual NPU once refused with NpuInvalidRegister.
TEST_F(VirtualNpuTest, NhwcMapsIgnoreTheChannelStride) {
  const int8_t a[6] = {-5, 7, 100, -128, 3, 0};
  const int8_t b[6] = {2, -9, 50, 1, 1, 1};
  std::copy(a, a + 6, reinterpret_cast<int8_t*>(region1.data()));
  std::copy(b, b + 6, reinterpret_cast<int8_t*>(region1.data()) + 64);
  StreamBuilder s;
  s.ifm(1, 0, 1, 2, 3).ifm2(1, 64, 1, 2, 3).ofm(1, 128, 1, 2, 3).unit_output_stage();
  s.cmd1(Cmd1::IfmStrideC, 4).cmd1(Cmd1::Ifm2StrideC, 7).cmd1(Cmd1::OfmStrideC, 4);
  s.cmd0(Cmd0::Ifm2Broadcast, 0);
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Max));
  ASSERT_EQ(run(s.words), Error::Ok);
  const int8_t* out = reinterpret_cast<const int8_t*>(region1.data()) + 128;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], std::max(a[i], b[i])) << i;
  // Packed: nothing written past the 6 bytes a C stride of 4 would have reached.
  for (int i = 6; i < 32; ++i) EXPECT_EQ(region1[128 + i], 0) << i;
}

TEST_F(VirtualNpuTest, FeatureMapBeyondRegionIsRejected) {
  StreamBuilder s;
  s.ifm(1, 1000, 1, 2, 20).ifm2(1, 0, 1, 2, 20).ofm(1, 0, 1, 2, 20).unit_output_stage();
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  EXPECT_EQ(run(s.words), Error::NpuRegionOutOfBounds);
}

// A brick holds 16 channels whatever the C stride says: with a C stride shorter than a brick,
// the first brick reaches further than the last one, and the extent check must see that
// (the fuzzers found a read past a region this way).
TEST_F(VirtualNpuTest, Nhcwb16BricksLongerThanTheChannelStrideAreChecked) {
  StreamBuilder s;
  // 1x1x20 NHCWB16 IFM at 1010 in the 1024-byte region 1, C stride 1: channel 15 of the
  // first brick is byte 1025; the last brick (channels 16-19) ends at byte 1015.
  s.ifm(1, 1010, 1, 1, 20).cmd0(Cmd0::IfmPrecision, 1u | (1u << 6)).cmd1(Cmd1::IfmStrideC, 1);
  s.ifm2(1, 0, 1, 1, 20).ofm(1, 64, 1, 1, 20).unit_output_stage();
  s.cmd0(Cmd0::Ifm2Broadcast, 0);
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  EXPECT_EQ(run(s.words), Error::NpuRegionOutOfBounds);
  // The same map with a C stride of a whole brick and room for it runs.
  StreamBuilder ok;
  ok.ifm(1, 900, 1, 1, 20).cmd0(Cmd0::IfmPrecision, 1u | (1u << 6)).cmd1(Cmd1::IfmStrideC, 16);
  ok.ifm2(1, 0, 1, 1, 20).ofm(1, 64, 1, 1, 20).unit_output_stage();
  ok.cmd0(Cmd0::Ifm2Broadcast, 0);
  ok.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  EXPECT_EQ(run(ok.words), Error::Ok);
}

TEST_F(VirtualNpuTest, WorkLimitStopsLargeOperations) {
  StreamBuilder s;
  s.ifm(1, 0, 4, 4, 8).ifm2(1, 0, 4, 4, 8).ofm(1, 256, 4, 4, 8).unit_output_stage();
  s.cmd0(Cmd0::OpElementwise, static_cast<uint32_t>(ElementwiseMode::Add));
  Config config;
  config.max_macs = 100;  // the op needs 128 element steps
  EXPECT_EQ(run(s.words, config), Error::NpuWorkLimitExceeded);
  config.max_macs = 128;
  EXPECT_EQ(run(s.words, config), Error::Ok);
  config.max_operations = 0;
  EXPECT_EQ(run(s.words, config), Error::NpuWorkLimitExceeded);
}

TEST_F(VirtualNpuTest, Cop1PayloadIsUnwrappedAndChecked) {
  StreamBuilder body;
  body.cmd0(Cmd0::Dma0SrcRegion, 0).cmd0(Cmd0::Dma0DstRegion, 1).cmd1(Cmd1::Dma0Len, 4);
  body.cmd0(Cmd0::OpDmaStart).cmd0(Cmd0::OpStop, 0xffff);
  // COP1, config (U55, 2^7 = 128 MACs, 24 KiB SHRAM), id, NOP, command stream header.
  std::vector<uint32_t> payload = {kCop1Magic, 0x00100001, 0x00001807, 0x10066001, 0x00000005,
                                   0x00000002 | (static_cast<uint32_t>(body.words.size()) << 16)};
  payload.insert(payload.end(), body.words.begin(), body.words.end());
  EXPECT_EQ(run(payload), Error::Ok);
  EXPECT_EQ(counters.dma_transfers, 1u);

  Config u65;
  u65.arch = Arch::EthosU65;
  u65.macs = 256;
  EXPECT_EQ(run(payload, u65), Error::NpuConfigMismatch);

  std::vector<uint32_t> short_payload(payload.begin(), payload.end() - 2);
  EXPECT_EQ(run(short_payload), Error::NpuStreamTruncated);
}

TEST(VnpuOutputStage, ScaleValueRoundsLikeTosa) {
  // Reference: TOSA apply_scale_32 with 128-bit arithmetic.
  const int64_t values[] = {0, 1, -1, 12345, -12345, 1 << 20, -(1 << 20), INT32_MAX, INT32_MIN};
  const uint32_t multipliers[] = {1u << 30, 1518500250u, 2147483647u};
  const uint32_t shifts[] = {1, 15, 31, 32, 40, 62};
  for (int64_t v : values) {
    for (uint32_t m : multipliers) {
      for (uint32_t s : shifts) {
        __int128 round = static_cast<__int128>(1) << (s - 1);
        __int128 round_double = round;
        if (s > 31) round_double += v >= 0 ? (1 << 30) : -(1 << 30);
        auto clamp = [](__int128 x) -> int64_t {
          return x > INT32_MAX ? INT32_MAX : (x < INT32_MIN ? INT32_MIN : static_cast<int64_t>(x));
        };
        const __int128 product = static_cast<__int128>(v) * m;
        EXPECT_EQ(scale_value(v, Scaling{m, s, RoundMode::DoubleSymmetric, 0}), clamp((product + round_double) >> s));
        EXPECT_EQ(scale_value(v, Scaling{m, s, RoundMode::Natural, 0}), clamp((product + round) >> s));
      }
    }
  }
}

TEST(VnpuOutputStage, Int16TablesInterpolateLikeTflite) {
  // The Ethos-U55's 16-bit table: 512 (base, slope) pairs; the scaled 16-bit value's top 9
  // bits pick the pair, the low 7 interpolate. Reference: TFLite's int16 LUTLookup,
  // base + ((slope * offset + 64) >> 7) (the same as TOSA's int16 TABLE followed by a
  // RESCALE by 2^-7), then the clip.
  std::vector<uint8_t> table(2048);
  std::vector<int32_t> base(512), slope(512);
  for (int i = 0; i < 512; ++i) {
    base[i] = (i * 977) % 60000 - 30000;
    slope[i] = (i * 131) % 4001 - 2000;
    const uint32_t word = (static_cast<uint32_t>(slope[i] & 0xffff) << 16) | static_cast<uint32_t>(base[i] & 0xffff);
    for (int b = 0; b < 4; ++b) table[4 * i + b] = static_cast<uint8_t>(word >> (8 * b));
  }
  OutputStage stage;
  stage.lut = LutKind::Int16InterpolatedAfterScaling;
  stage.table = table.data();
  stage.clip_min = -32767;
  stage.clip_max = 32767;
  for (int32_t v = -32768; v <= 32767; ++v) {
    const int32_t index = (v + 32768) >> 7, offset = (v + 32768) & 127;
    const int64_t interpolated = base[index] + ((slope[index] * offset + 64) >> 7);
    ASSERT_EQ(stage.before_scaling(v), v);  // unlike the 32-bit result's table (Ethos-U85)
    ASSERT_EQ(stage.finish(v), std::min<int64_t>(32767, std::max<int64_t>(-32767, interpolated))) << "value " << v;
  }
  stage.zero_point = 100;  // the zero point is added before the lookup
  EXPECT_EQ(stage.finish(-32868), base[0]);
}

TEST(VnpuWeightDecoder, DecodesAnMlwCodecStream) {
  // Encoded by ethosu.mlw_codec.encode; the values are what mlw_codec.decode returns.
  const uint8_t stream[] = {
      0x90, 0x00, 0x5c, 0xf1, 0x98, 0x72, 0xca, 0x39, 0x8a, 0xe0, 0x86, 0x51, 0xd2, 0x92, 0x10, 0x83,
      0xc0, 0x7d, 0x67, 0x15, 0x32, 0xa6, 0x52, 0x08, 0xdb, 0xa9, 0x16, 0x02, 0x70, 0x01, 0x4f, 0xce,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const int16_t expected[] = {14, 5, 0, 0, 0, -19, 0, 0, 0, 0, 0, 16, 0, 0, 0, 9, 5, 0, 0, 17,
                              0, 12, 0, -20, -5, 0, 2, 0, 10, 0, 0, -13, 0, 14, -20, 1, -17, 0, -1, -4};
  std::vector<uint8_t> work(64 * 1024);
  ScratchArena arena(Span<uint8_t>(work.data(), work.size()));
  int16_t out[64] = {};
  size_t count = 0;
  ASSERT_EQ(decode_weight_stream(Span<const uint8_t>(stream, sizeof(stream)), Span<int16_t>(out, 64),
                                 arena, &count),
            Error::Ok);
  ASSERT_EQ(count, 40u);
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(out[i], expected[i]) << i;
  EXPECT_EQ(decode_weight_stream(Span<const uint8_t>(stream, 6), Span<int16_t>(out, 64), arena, &count),
            Error::NpuWeightStreamInvalid);
}

TEST(VnpuConfig, TargetNames) {
  Config c;
  ASSERT_TRUE(config_from_target_name("ethos-u65-256", &c));
  EXPECT_EQ(c.arch, Arch::EthosU65);
  EXPECT_EQ(c.macs, 256);
  EXPECT_EQ(c.cores, 1);
  ASSERT_TRUE(config_from_target_name("ethos-u65-512", &c));
  EXPECT_EQ(c.cores, 2);
  ASSERT_TRUE(config_from_target_name("ethos-u85-1024", &c));
  EXPECT_EQ(c.arch, Arch::EthosU85);
  EXPECT_EQ(c.macs, 1024);
  EXPECT_EQ(c.cores, 4);
  EXPECT_FALSE(config_from_target_name("ethos-u85-64", &c));
  EXPECT_FALSE(config_from_target_name("ethos-u55-100", &c));
  EXPECT_FALSE(config_from_target_name("ethos-u55-", &c));
}

}  // namespace
}  // namespace kiln::vnpu
