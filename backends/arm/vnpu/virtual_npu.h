// Kiln's virtual Ethos-U (U55, U65 and U85): a functional, bit-exact model that executes the
// command streams Vela produces.
//
// What it models: the register file (state persists across operations, because Vela omits
// writes whose value did not change), cmd0/cmd1 decoding, base-address regions, DMA (1D, and
// on the U85 2D/3D and indexed gather/scatter, including into the NPU's internal memory where
// lookup tables live), the compressed and (U85) fast weight streams of every core with their
// 10-byte scale/bias records, and the operations (convolution, depthwise, vector product,
// matmul, pooling, reductions, elementwise, resize) with NHWC/NHCWB16 layouts, the U85's
// chained operations, accumulator hand-over, transpose/reverse on output and branches.
// What it does not model: timing, caches, block scheduling. Block config matters only where
// it changes results (weight order).
//
// Architecture differences live in one decoder per architecture (u55/, u85/) that turns the
// registers into an OpDesc (op_desc.h); the operations in ops/ are shared.
//
// Portable: no heap, no exceptions, no RTTI, no OS calls. All scratch memory (decoded
// weights, the internal memory image, chaining buffers) comes from the work memory the
// caller gives to the constructor.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

/// Which NPU the stream was compiled for.
enum class Arch : uint8_t {
  /// Arm Ethos-U55 (32..256 MACs/cycle, one AXI port for weights+data).
  EthosU55 = 0,
  /// Arm Ethos-U65 (256 MACs/cycle, or 512 as two cores that split the OFM depth).
  EthosU65 = 1,
  /// Arm Ethos-U85 (128..2048 MACs/cycle on 1, 2 or 4 cores).
  EthosU85 = 2,
};

/// The NPU instance and the limits that bound the work a stream can ask for.
struct Config {
  /// NPU product.
  Arch arch = Arch::EthosU55;
  /// MACs per cycle of the configuration (32 ... 2048), all cores together. Checked against
  /// the COP1 config word; the weight stream order of some configurations depends on it.
  int macs = 128;
  /// Cores (weight decoders) of the configuration: 2 on ethos-u65-512 and ethos-u85-512,
  /// 4 on ethos-u85-1024/2048, else 1.
  int cores = 1;
  /// A stream that asks for more NPU operations than this fails with NpuWorkLimitExceeded.
  uint64_t max_operations = 1u << 20;
  /// A stream whose operations add up to more MACs (or elementwise/pooling element steps)
  /// than this fails with NpuWorkLimitExceeded before that operation runs.
  uint64_t max_macs = uint64_t{1} << 36;
  /// A stream with more command words than this fails with NpuWorkLimitExceeded.
  uint64_t max_commands = uint64_t{1} << 24;
  /// Sizing a stream's work memory (work_memory_bytes) counts the decoded weight slots of
  /// its operations, in time linear in the weights, up to this many weights for the whole
  /// stream; past it an operation's slots are bounded from its shape (a larger, safe size).
  /// Without it a hostile stream of large operations (16-bit registers allow 2^64 weights
  /// each) makes sizing take minutes. 2^26 is above every real program's weights.
  uint64_t max_counted_weights = uint64_t{1} << 26;
};

/// Number of region (base pointer) slots an Ethos-U has.
constexpr size_t kMaxRegions = 8;

/// One region: the memory a base pointer (BASEP<n>) points at. Vela's convention: 0 weights
/// and constants, 1 the scratch arena (IFM/OFM at offsets), 2 fast scratch, 3/4 separate
/// input/output when asked. Index i of the regions span is region number i; a region that a
/// stream does not use may be {nullptr, 0}. Every access is checked against `size`.
struct Region {
  uint8_t* data = nullptr;
  size_t size = 0;
  /// The program's weights/constants (region 0 from Vela): operations may read it, but an
  /// OFM or DMA destination in it fails with NpuRegionReadOnly, so a corrupt stream cannot
  /// change the weights later inferences use.
  bool read_only = false;
};

/// Kinds of recorded operations; the values are the cmd0 opcodes that start them.
enum class OpKind : uint16_t {
  /// NPU_OP_CONV: convolution or vector product (fully connected).
  Conv = 0x002,
  /// NPU_OP_DEPTHWISE.
  Depthwise = 0x003,
  /// NPU_OP_POOL: max/average pooling, reduce sum (mode in OpRecord::mode).
  Pool = 0x005,
  /// NPU_OP_ELEMENTWISE (mode in OpRecord::mode).
  Elementwise = 0x006,
  /// NPU_OP_RESIZE (Ethos-U85; mode in OpRecord::mode).
  Resize = 0x007,
  /// NPU_OP_DMA_START.
  Dma = 0x010,
};

/// One executed operation, for the PMU-style per-layer report.
struct OpRecord {
  /// An OpKind value.
  uint16_t kind = 0;
  /// The operation's mode parameter (pooling_mode / elementwise_mode / resize_mode), else 0.
  uint16_t mode = 0;
  /// 1 if the operation reads or writes a chaining buffer (Ethos-U85 chained operations:
  /// an elementwise operation consuming the previous operation's output inside the NPU).
  uint8_t chained = 0;
  /// Index (in 32-bit words from the start of the register stream) of the starting command.
  uint32_t command_index = 0;
  /// Multiply-accumulates (conv/depthwise), element operations otherwise.
  uint64_t macs = 0;
  /// Bytes the operation read (IFM, IFM2, weights, scales, DMA source).
  uint64_t bytes_read = 0;
  /// Bytes the operation wrote (OFM, DMA destination).
  uint64_t bytes_written = 0;
  /// NPU cycles by the register-accurate device's estimate (device/cycle_estimate.h); 0
  /// when the virtual NPU runs on its own.
  uint64_t cycles = 0;
};

/// PMU-style totals of one run. Reset at the start of run().
struct Counters {
  /// NPU operations executed (conv, depthwise, pool, elementwise, resize); DMAs are counted
  /// apart.
  uint64_t operations = 0;
  /// Of those, operations chained to another inside the NPU (OpRecord::chained).
  uint64_t chained_operations = 0;
  /// Branches taken (Ethos-U85 NPU_OP_BRANCH).
  uint64_t branches = 0;
  /// DMA transfers started.
  uint64_t dma_transfers = 0;
  /// Multiply-accumulates of conv/depthwise/vector product.
  uint64_t macs = 0;
  /// Element steps of pooling/elementwise operations (one per OFM element and kernel tap).
  uint64_t element_ops = 0;
  /// Commands decoded (a cmd1 with its payload word counts once).
  uint64_t commands = 0;
  /// Bytes read / written per region index; index kMaxRegions counts internal memory (SHRAM).
  uint64_t bytes_read[kMaxRegions + 1] = {};
  uint64_t bytes_written[kMaxRegions + 1] = {};
  /// Work memory the run used at most: the internal memory and the scratch's high-water
  /// mark (never more than work_memory_bytes() says the stream needs).
  uint64_t work_memory_used = 0;
};

/// How a register command stream ended, for a device that shows it in its registers
/// (device/: STATUS.cmd_end_reached, QREAD, the IRQ history).
struct StreamEnd {
  /// NPU_OP_STOP ended the stream (Vela ends every stream with it).
  bool stop_reached = false;
  /// Word offset of the command the NPU stopped at: after NPU_OP_STOP or the last word,
  /// or the failing command's.
  uint32_t words_read = 0;
  /// The OR of the NPU_OP_IRQ parameters executed.
  uint16_t irq_mask = 0;
};

/// Bytes of internal memory (SHRAM image) kept at the start of the work memory.
constexpr size_t kInternalMemoryBytes = 96 * 1024;
/// A work memory that is enough for small and medium models (MobileNetV2's delegated
/// 1280x1000 classifier decodes into 2 x 2.56 MB). It is a default, not a limit: size the
/// work memory of a given program with work_memory_bytes() (an operation's weights are
/// decoded whole, stream order then dense int16, so a 2000x250x32 convolution needs
/// ~72 MB); a stream that needs more than it is given fails with OutOfResources.
constexpr size_t kRecommendedWorkMemoryBytes = kInternalMemoryBytes + 12 * 1024 * 1024;

/// The work memory VirtualNpu::run() needs for `stream` (a COP1 payload or bare register
/// commands) on `config`: the internal memory plus the most scratch any operation asks
/// for, with the buffers an Ethos-U85 chain keeps. Worked out from the registers alone
/// (no region is read, nothing runs; branches are not followed, so every operation is
/// counted once), in time linear in the commands and the weights. An upper bound of what
/// run() uses. Named errors for a stream whose registers the NPU refuses
/// (NpuInvalidRegister, NpuUnknownCommand, NpuConfigMismatch, ...), as run() would.
Error work_memory_bytes(const Config& config, Span<const uint32_t> stream, uint64_t* bytes);

class OperationObserver;

class VirtualNpu final {
 public:
  /// `work_memory` must outlive the object; it holds the internal memory and decode scratch.
  VirtualNpu(const Config& config, Span<uint8_t> work_memory);

  /// Runs a command stream against `regions`.
  ///
  /// `stream` is either a Vela driver payload (starts with the "COP1" fourcc: the `cmd_data`
  /// of Vela's raw output and of ExecuTorch's Ethos-U delegate payload; its Config action is
  /// checked against this NPU, its NOPs skipped, its CmdStream action run) or bare register
  /// commands (anything else). Returns Error::Ok or a named error after logging (KILN_LOG) the
  /// command index, the opcode and the reason. Regions are written in place. `counters` (may
  /// be null) receives totals; `op_records` (may be empty) receives one record per operation
  /// up to its size, `num_records` (may be null) the number of operations executed.
  /// The internal memory (LUTs) is cleared at the start of every run.
  Error run(Span<const uint32_t> stream, Span<const Region> regions, Counters* counters,
            Span<OpRecord> op_records = {}, size_t* num_records = nullptr);

  /// Runs bare register commands — what an NPU does with the stream at QBASE — never a
  /// COP1 payload, whatever the first word. Otherwise as run(); `end` (may be null)
  /// receives how the stream ended.
  Error run_registers(Span<const uint32_t> words, Span<const Region> regions, Counters* counters,
                      Span<OpRecord> op_records, size_t* num_records, StreamEnd* end);

  const Config& config() const { return config_; }

  /// Shows `observer` every operation of the next runs as it completes, with its output
  /// (operation_observer.h); nullptr stops it.
  void set_operation_observer(OperationObserver* observer) { observer_ = observer; }

 private:
  enum class StreamKind : uint8_t { DriverPayloadOrRegisters, Registers };
  Error run_stream(StreamKind kind, Span<const uint32_t> stream, Span<const Region> regions,
                   Counters* counters, Span<OpRecord> op_records, size_t* num_records,
                   StreamEnd* end);

  Config config_;
  Span<uint8_t> work_memory_;
  OperationObserver* observer_ = nullptr;
};

/// "ethos-u55-128" style name of an NPU configuration → Config (arch, macs, cores); false if
/// it is none of Vela's targets (ethos-u55-32/64/128/256, ethos-u65-256/512,
/// ethos-u85-128/256/512/1024/2048).
bool config_from_target_name(const char* name, Config* config);

}  // namespace kiln::vnpu
