#include "runtime/etdump/etdump_writer.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "kiln_schema/etdump_generated.h"
#include "runtime/platform/log.h"
#include "runtime/platform/platform.h"

namespace kiln {

namespace {

enum RecordKind : uint8_t {
  /// A Method::execute: starts a RunData; start/end are its times.
  kRun,
  /// An instruction: start/end times.
  kInstruction,
  /// A delegate operation: start/end times, metadata.
  kDelegate,
  /// Scratch used by an instruction: `start` holds the bytes.
  kAllocation,
  /// A logged tensor: `start` its offset in the debug buffer, sizes/dim/scalar_type.
  kValue,
};

// Worst-case flatbuffer bytes per record kind, before its strings and vectors. Every
// table is counted with its own vtable (the builder shares equal vtables, so the real
// size is smaller) and with the padding of its widest field.
constexpr size_t kBaseBound = 1536;           // root table, size prefix, identifier, builder scratch
constexpr size_t kRunBound = 384 + 192;       // RunData, allocator list, "Method::execute" event
constexpr size_t kProfileBound = 192;         // Event + ProfileEvent
constexpr size_t kAllocationBound = 96;       // Event + AllocationEvent
constexpr size_t kValueBound = 320;           // Event + DebugEvent + Value + Tensor
constexpr size_t kDelegateIdBytes = 48;       // "<name>#<index>" is cut to this
constexpr char kRunName[] = "Execute";        // ExecuTorch's name for execution runs
constexpr char kExecuteEventName[] = "Method::execute";
constexpr char kTempAllocatorName[] = "temp";

/// Bytes of a string (length prefix, NUL, padding to 4).
size_t string_bound(const char* text) { return (text != nullptr ? std::strlen(text) : 0) + 12; }

/// The "<name>#<index>" identifier of a delegate operation.
void delegate_id(char (&out)[kDelegateIdBytes], const char* name, int32_t index) {
  std::snprintf(out, sizeof(out), "%s#%ld", name != nullptr ? name : "op", static_cast<long>(index));
}

/// A flatbuffers allocator over one fixed span: it hands out the whole span once and
/// refuses to grow. write() checks the worst case first, so the builder never asks to.
class SpanAllocator final : public flatbuffers::Allocator {
 public:
  explicit SpanAllocator(Span<uint8_t> span) : span_(span) {}
  uint8_t* allocate(size_t size) override {
    if (given_ || size > span_.size()) return nullptr;
    given_ = true;
    return span_.data();
  }
  void deallocate(uint8_t*, size_t) override { given_ = false; }
  uint8_t* reallocate_downward(uint8_t*, size_t, size_t, size_t, size_t) override {
    return nullptr;
  }

 private:
  Span<uint8_t> span_;
  bool given_ = false;
};

size_t align_up(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace

struct EtdumpWriter::Record {
  uint8_t kind;
  int8_t scalar_type;
  uint8_t dim;
  uint8_t metadata_length;
  uint32_t chain;
  int32_t instruction_id;
  int32_t delegate_index;
  /// Offset of the table written for this record (set by write()).
  uint32_t written;
  int32_t bundled_input_index;
  const char* name;
  uint64_t start;
  uint64_t end;
  int32_t sizes[kMaxLoggedDims];
  uint8_t metadata[kMaxMetadataBytes];
};
static_assert(sizeof(EtdumpWriter::Record) <= EtdumpWriter::kRecordBytes,
              "records must fit their slots");
static_assert(EtdumpWriter::kRecordBytes % alignof(EtdumpWriter::Record) == 0,
              "record slots keep records aligned");

EtdumpWriter::EtdumpWriter(Span<uint8_t> buffer, TimeUnit unit) : buffer_(buffer), unit_(unit) {
  reset();
  if (buffer_.size() < kBaseBound + kRunBound || reinterpret_cast<uintptr_t>(buffer_.data()) % 8 != 0) {
    KILN_LOG(Error, "etdump: a buffer of %zu bytes at %p cannot hold a dump (at least %zu bytes, "
             "8-byte aligned); nothing will be recorded", buffer_.size(),
             static_cast<const void*>(buffer_.data()), kBaseBound + kRunBound);
    capacity_ = 0;
  }
}

void EtdumpWriter::set_debug_buffer(Span<uint8_t> debug_buffer) {
  debug_ = debug_buffer;
  debug_used_ = 0;
}

void EtdumpWriter::reset() {
  capacity_ = buffer_.size() / kRecordBytes;
  num_records_ = 0;
  bound_ = kBaseBound;
  dropped_events_ = 0;
  dropped_values_ = 0;
  debug_used_ = 0;
  open_run_ = -1;
  open_instruction_ = -1;
  instruction_id_ = -1;
  instruction_name_ = nullptr;
}

EtdumpWriter::Record& EtdumpWriter::record(size_t index) const {
  // Records sit kRecordBytes apart (not sizeof(Record)): the slot size is the format's.
  return *reinterpret_cast<Record*>(buffer_.data() + index * kRecordBytes);
}

uint64_t EtdumpWriter::now() const {
  const uint64_t ticks = kiln_pal_current_ticks();
  return unit_ == TimeUnit::Nanoseconds ? ticks_to_ns(ticks) : ticks;
}

EtdumpWriter::Record* EtdumpWriter::append(uint8_t kind, size_t extra_bound) {
  // Once something was dropped, later events are too: a dump with holes in the middle
  // would pair the wrong start and end times.
  const size_t records_end = (num_records_ + 1) * kRecordBytes;
  const size_t bound = bound_ + extra_bound;
  if (dropped_events_ > 0 || num_records_ >= capacity_ || records_end > buffer_.size() ||
      bound > buffer_.size() - records_end) {
    if (dropped_events_ == 0) {
      KILN_LOG(Error, "etdump: the buffer of %zu bytes is full after %zu events; recording stops "
               "(later events are counted as dropped)", buffer_.size(), num_records_);
    }
    ++dropped_events_;
    return nullptr;
  }
  Record* record = new (buffer_.data() + num_records_ * kRecordBytes) Record();
  record->kind = kind;
  record->chain = chain_;
  record->instruction_id = instruction_id_;
  record->delegate_index = -1;
  record->bundled_input_index = bundled_input_index_;
  ++num_records_;
  bound_ = bound;
  return record;
}

void EtdumpWriter::begin_run(const char* method_name) {
  instruction_id_ = -1;
  instruction_name_ = nullptr;
  Record* run = append(kRun, kRunBound + string_bound(method_name));
  open_run_ = run != nullptr ? static_cast<int64_t>(num_records_ - 1) : -1;
  if (run == nullptr) return;
  run->name = method_name;
  run->instruction_id = -1;
  run->start = now();
}

void EtdumpWriter::end_run(bool ok) {
  if (open_run_ >= 0 && static_cast<size_t>(open_run_) < num_records_) {
    Record& run = record(static_cast<size_t>(open_run_));
    run.end = now();
    (void)ok;  // a failed run keeps its events: they show where it stopped
  }
  open_run_ = -1;
}

void EtdumpWriter::begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) {
  chain_ = chain;
  instruction_id_ = static_cast<int32_t>(instruction_id);
  instruction_name_ = name;
  open_instruction_ = -1;
  if (!profiling_) return;
  Record* record = append(kInstruction, kProfileBound + string_bound(name));
  if (record == nullptr) return;
  open_instruction_ = static_cast<int64_t>(num_records_ - 1);
  record->name = name;
  record->start = now();
}

void EtdumpWriter::end_instruction() {
  if (open_instruction_ >= 0 && static_cast<size_t>(open_instruction_) < num_records_) {
    record(static_cast<size_t>(open_instruction_)).end = now();
  }
  // The instruction id stays: what is logged after the end (scratch, values) is its.
  open_instruction_ = -1;
}

void EtdumpWriter::log_scratch_use(size_t bytes) {
  if (!profiling_ || bytes == 0) return;
  Record* record = append(kAllocation, kAllocationBound);
  if (record == nullptr) return;
  record->start = bytes;
}

void EtdumpWriter::log_delegate_event(const DelegateEvent& event) {
  if (!profiling_) return;
  const size_t metadata = event.metadata.size() < kMaxMetadataBytes ? event.metadata.size()
                                                                    : kMaxMetadataBytes;
  Record* record = append(kDelegate, kProfileBound + string_bound(event.name) + kDelegateIdBytes +
                                         metadata + 12);
  if (record == nullptr) return;
  record->name = event.name;
  record->delegate_index = event.index;
  const uint64_t scale_start = unit_ == TimeUnit::Nanoseconds ? ticks_to_ns(event.start_ticks) : event.start_ticks;
  const uint64_t scale_end = unit_ == TimeUnit::Nanoseconds ? ticks_to_ns(event.end_ticks) : event.end_ticks;
  record->start = scale_start;
  record->end = scale_end;
  record->metadata_length = static_cast<uint8_t>(metadata);
  if (metadata > 0) std::memcpy(record->metadata, event.metadata.data(), metadata);
}

void EtdumpWriter::log_value(const EValue& value, int32_t delegate_index) {
  auto log_tensor = [&](const Tensor& tensor) {
    const Span<uint8_t> room = log_tensor_in_place(
        tensor.scalar_type(), {tensor.sizes().data(), tensor.sizes().size()}, delegate_index,
        instruction_name_);
    if (room.size() > 0) std::memcpy(room.data(), tensor.const_data_ptr(), room.size());
  };
  if (value.is_tensor()) {
    log_tensor(value.to_tensor());
  } else if (value.is_tensor_list()) {
    for (const Tensor* tensor : value.to_tensor_list()) {
      if (tensor != nullptr) log_tensor(*tensor);
    }
  }
}

Span<uint8_t> EtdumpWriter::log_tensor_in_place(ScalarType dtype, Span<const int32_t> sizes,
                                                int32_t delegate_index, const char* name) {
  if (debug_.size() == 0) return {};
  size_t numel = 1;
  for (int32_t size : sizes) numel *= size > 0 ? static_cast<size_t>(size) : 0;
  const size_t nbytes = numel * element_size(dtype);
  const size_t offset = align_up(debug_used_, 16);
  if (sizes.size() > static_cast<size_t>(kMaxLoggedDims) || offset > debug_.size() ||
      nbytes > debug_.size() - offset) {
    ++dropped_values_;
    return {};
  }
  Record* record = append(kValue, kValueBound + 16 * sizes.size() + string_bound(name) +
                                      (delegate_index >= 0 ? kDelegateIdBytes : 0));
  if (record == nullptr) return {};
  debug_used_ = offset + nbytes;
  record->name = name;
  record->delegate_index = delegate_index;
  record->scalar_type = static_cast<int8_t>(dtype);
  record->dim = static_cast<uint8_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) record->sizes[d] = sizes[d];
  record->start = offset;
  record->end = nbytes;
  return {debug_.data() + offset, nbytes};
}

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<flatbuffers::String> string_or_null(FlatBufferBuilder& builder, const char* text) {
  return text != nullptr ? builder.CreateString(text) : Offset<flatbuffers::String>();
}

Offset<kiln_etdump::Event> write_profile(FlatBufferBuilder& builder, const EtdumpWriter::Record& r) {
  Offset<flatbuffers::String> id;
  if (r.kind == kDelegate && r.delegate_index >= 0) {
    char text[kDelegateIdBytes];
    delegate_id(text, r.name, r.delegate_index);
    id = builder.CreateString(text);
  }
  Offset<flatbuffers::Vector<uint8_t>> metadata;
  if (r.metadata_length > 0 && r.kind == kDelegate) {
    metadata = builder.CreateVector(r.metadata, r.metadata_length);
  }
  const auto name = string_or_null(builder, r.name);
  const auto event = kiln_etdump::CreateProfileEvent(
      builder, name, static_cast<int32_t>(r.chain), r.instruction_id, -1, id, metadata, r.start, r.end);
  return kiln_etdump::CreateEvent(builder, event);
}

Offset<kiln_etdump::Event> write_value(FlatBufferBuilder& builder, const EtdumpWriter::Record& r) {
  int64_t sizes[EtdumpWriter::kMaxLoggedDims];
  int64_t strides[EtdumpWriter::kMaxLoggedDims];
  int64_t stride = 1;
  for (int d = r.dim - 1; d >= 0; --d) {
    sizes[d] = r.sizes[d];
    strides[d] = stride;
    stride *= r.sizes[d] > 0 ? r.sizes[d] : 1;
  }
  const auto size_vector = builder.CreateVector(sizes, r.dim);
  const auto stride_vector = builder.CreateVector(strides, r.dim);
  const auto tensor = kiln_etdump::CreateTensor(builder, static_cast<kiln_pte::ScalarType>(r.scalar_type),
                                                size_vector, stride_vector, static_cast<int64_t>(r.start));
  const auto output = kiln_etdump::CreateBool(builder, false);
  const auto value = kiln_etdump::CreateValue(builder, kiln_etdump::ValueType::Tensor, tensor, 0, 0, 0, 0, 0,
                                              output);
  Offset<flatbuffers::String> id;
  if (r.delegate_index >= 0) {
    char text[kDelegateIdBytes];
    delegate_id(text, r.name, r.delegate_index);
    id = builder.CreateString(text);
  }
  const auto name = string_or_null(builder, r.name);
  const auto event = kiln_etdump::CreateDebugEvent(builder, r.chain, r.instruction_id, value, -1, id, name);
  return kiln_etdump::CreateEvent(builder, 0, 0, event);
}

Offset<kiln_etdump::Event> write_allocation(FlatBufferBuilder& builder, const EtdumpWriter::Record& r) {
  const auto event = kiln_etdump::CreateAllocationEvent(builder, EtdumpWriter::kTempAllocatorId, r.start);
  return kiln_etdump::CreateEvent(builder, 0, event);
}

}  // namespace

Result<Span<const uint8_t>> EtdumpWriter::write() {
  const size_t records_end = num_records_ * kRecordBytes;
  if (capacity_ == 0 || records_end > buffer_.size() || bound_ > buffer_.size() - records_end) {
    KILN_LOG(Error, "etdump: %zu bytes left after %zu records cannot hold the dump's %zu bytes",
             buffer_.size() - (records_end < buffer_.size() ? records_end : buffer_.size()), num_records_, bound_);
    return Error::Internal;
  }
  Span<uint8_t> free_space(buffer_.data() + records_end, buffer_.size() - records_end);
  SpanAllocator allocator(free_space);
  FlatBufferBuilder builder(free_space.size(), &allocator, false, 8);
  // Each run record heads a RunData of the records up to the next one; records before
  // the first run (none when the Method records) form a run of their own.
  auto heads_run = [this](size_t i) { return i == 0 || record(i).kind == kRun; };
  size_t num_runs = 0;
  size_t begin = 0;
  while (begin < num_records_) {
    size_t end = begin + 1;
    while (end < num_records_ && !heads_run(end)) ++end;
    // A run record becomes its "Method::execute" event; the others follow in order.
    const Record& head = record(begin);
    for (size_t i = begin; i < end; ++i) {
      Record& r = record(i);
      Offset<kiln_etdump::Event> event;
      if (r.kind == kRun) {
        const auto name = builder.CreateString(kExecuteEventName);
        event = kiln_etdump::CreateEvent(builder, kiln_etdump::CreateProfileEvent(
                                                      builder, name, 0, -1, -1, 0, 0, r.start, r.end));
      } else if (r.kind == kInstruction || r.kind == kDelegate) {
        event = write_profile(builder, r);
      } else if (r.kind == kAllocation) {
        event = write_allocation(builder, r);
      } else {
        event = write_value(builder, r);
      }
      r.written = event.o;
    }
    builder.StartVector<Offset<kiln_etdump::Event>>(end - begin);
    for (size_t i = end; i > begin; --i) builder.PushElement(Offset<kiln_etdump::Event>(record(i - 1).written));
    const auto events = Offset<flatbuffers::Vector<Offset<kiln_etdump::Event>>>(builder.EndVector(end - begin));
    const Offset<kiln_etdump::Allocator> allocator_list[1] = {
        kiln_etdump::CreateAllocator(builder, builder.CreateString(kTempAllocatorName))};
    const auto allocators = builder.CreateVector(allocator_list, 1);
    const auto name = builder.CreateString(kRunName);
    const int32_t bundled = head.kind == kRun ? head.bundled_input_index : -1;
    // The head's event is in the vector already: its slot now keeps the RunData.
    record(begin).written = kiln_etdump::CreateRunData(builder, name, bundled, allocators, events).o;
    ++num_runs;
    begin = end;
  }
  builder.StartVector<Offset<kiln_etdump::RunData>>(num_runs);
  for (size_t i = num_records_; i > 0; --i) {
    if (heads_run(i - 1)) builder.PushElement(Offset<kiln_etdump::RunData>(record(i - 1).written));
  }
  const auto run_data = Offset<flatbuffers::Vector<Offset<kiln_etdump::RunData>>>(builder.EndVector(num_runs));
  const auto root = kiln_etdump::CreateETDump(builder, 0, run_data);
  kiln_etdump::FinishSizePrefixedETDumpBuffer(builder, root);
  return Span<const uint8_t>(builder.GetBufferPointer(), builder.GetSize());
}

}  // namespace kiln
