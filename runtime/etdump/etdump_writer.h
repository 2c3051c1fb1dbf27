// EtdumpWriter: an EventTracer that records into memory the caller provides and writes
// the record as an ETDump (the size-prefixed "ED00" flatbuffer of runtime/schema/etdump.fbs,
// which ExecuTorch's Inspector and kiln.devtools read).
//
// One buffer holds everything: fixed-size event records grow from its start, and the
// rest is kept free for the flatbuffer write() produces. An event is recorded only if
// the flatbuffer of all events so far would still fit; otherwise it is dropped and
// counted (dropped_events()), and recording stops there — the buffer is never overrun.
// Intermediate values (set_debug_buffer) are copied into a second buffer, the "debug
// buffer" a dump's tensors point into by offset; a value that does not fit is dropped
// and counted the same way.
//
// Nothing is allocated from the heap, recording or writing; the event names are kept as
// pointers (into the program or literals), so the method must outlive write().
// Not thread-safe: one writer per method execution at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/executor/event_tracer.h"

namespace kiln {

class EtdumpWriter final : public EventTracer {
 public:
  /// Units of the start/end times written.
  enum class TimeUnit : uint8_t {
    /// kiln_pal_current_ticks() converted to nanoseconds (hosts).
    Nanoseconds,
    /// Raw ticks of kiln_pal_current_ticks() (firmware: the board's counter).
    Ticks,
  };
  /// Bytes of one event record.
  static constexpr size_t kRecordBytes = 192;
  /// Longest delegate metadata kept per event (longer metadata is cut).
  static constexpr size_t kMaxMetadataBytes = 104;
  /// Dimensions kept per logged tensor (a value of higher rank is dropped).
  static constexpr int32_t kMaxLoggedDims = 6;
  /// Allocator ids of allocation events (the names RunData.allocators lists).
  static constexpr int32_t kTempAllocatorId = 0;

  /// `buffer` (aligned to 8 bytes) holds the records and the written ETDump; it must
  /// outlive the writer. A buffer too small for an empty dump records nothing.
  explicit EtdumpWriter(Span<uint8_t> buffer, TimeUnit unit = TimeUnit::Nanoseconds);
  EtdumpWriter(const EtdumpWriter&) = delete;
  EtdumpWriter& operator=(const EtdumpWriter&) = delete;

  /// Turns on intermediate values: every kernel output (and what a backend logs) is
  /// copied into `debug_buffer`, 16-byte aligned, and logged as a debug event.
  void set_debug_buffer(Span<uint8_t> debug_buffer);
  /// Records the timing of instructions and delegate operations (default on).
  void set_profiling(bool enabled) { profiling_ = enabled; }
  /// Tags every run recorded from now on with this bundled-program test case (-1: none).
  void set_bundled_input_index(int32_t index) { bundled_input_index_ = index; }

  /// Forgets every record (the buffers are reused); counters restart at zero.
  void reset();

  /// Writes the ETDump into the free end of the buffer and returns it (valid until the
  /// next record or reset). Internal if it does not fit — which the recording prevents.
  Result<Span<const uint8_t>> write();

  size_t recorded_events() const { return num_records_; }
  size_t dropped_events() const { return dropped_events_; }
  /// Intermediate values not kept because the debug buffer was full or the rank too high.
  size_t dropped_values() const { return dropped_values_; }
  /// Bytes of the debug buffer in use (what to save beside the dump).
  size_t debug_buffer_used() const { return debug_used_; }
  Span<const uint8_t> debug_buffer() const { return {debug_.data(), debug_used_}; }
  /// Worst-case size of the ETDump of the events recorded so far.
  size_t bound_bytes() const { return bound_; }
  TimeUnit time_unit() const { return unit_; }

  // EventTracer
  void begin_run(const char* method_name) override;
  void end_run(bool ok) override;
  void begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) override;
  void end_instruction() override;
  void log_scratch_use(size_t bytes) override;
  void log_delegate_event(const DelegateEvent& event) override;
  bool logs_values() const override { return debug_.size() > 0; }
  void log_value(const EValue& value, int32_t delegate_index) override;
  Span<uint8_t> log_tensor_in_place(ScalarType dtype, Span<const int32_t> sizes,
                                    int32_t delegate_index, const char* name) override;

  struct Record;

 private:
  /// Appends a record if its worst case still fits; nullptr (and a drop) otherwise.
  Record* append(uint8_t kind, size_t extra_bound);
  uint64_t now() const;
  Record& record(size_t index) const;

  Span<uint8_t> buffer_;
  Span<uint8_t> debug_;
  TimeUnit unit_;
  bool profiling_ = true;
  int32_t bundled_input_index_ = -1;
  size_t capacity_ = 0;  // records that fit in the buffer at most
  size_t num_records_ = 0;
  size_t bound_ = 0;
  size_t dropped_events_ = 0;
  size_t dropped_values_ = 0;
  size_t debug_used_ = 0;
  // The open run and instruction (records), for their end times; -1 when none.
  int64_t open_run_ = -1;
  int64_t open_instruction_ = -1;
  uint32_t chain_ = 0;
  int32_t instruction_id_ = -1;
  const char* instruction_name_ = nullptr;
};

}  // namespace kiln
