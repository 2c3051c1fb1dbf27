#include "runtime/executor/program.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "kiln_schema/program_generated.h"
#include "runtime/platform/log.h"

namespace kiln {
namespace {

/// Root offset (4 bytes) + file identifier (4 bytes).
constexpr size_t kIdentifierEnd = 8;
constexpr char kHeaderMagic[4] = {'e', 'h', '0', '0'};
/// Magic (4) + length (4) + program_size (8) + segment_base_offset (8).
constexpr uint32_t kMinHeaderLength = 24;
/// ... + segment_data_size (8).
constexpr uint32_t kHeaderLengthWithDataSize = 32;
/// The largest prefix the header can need.
constexpr size_t kPrefixSize = kIdentifierEnd + kHeaderLengthWithDataSize;

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

uint64_t read_u64(const uint8_t* p) {
  return static_cast<uint64_t>(read_u32(p)) | static_cast<uint64_t>(read_u32(p + 4)) << 32;
}

/// Where the flatbuffer ends and the segments start, from the "eh00" header.
struct FileLayout {
  size_t program_size;
  size_t segment_base_offset;
  bool has_header;
};

Result<FileLayout> parse_header(Span<const uint8_t> prefix, size_t file_size) {
  if (prefix.size() < kIdentifierEnd) {
    KILN_LOG(Error, "program is %zu bytes; a program has at least %zu", file_size, kIdentifierEnd);
    return Error::ProgramTruncated;
  }
  if (std::memcmp(prefix.data() + 4, kiln_pte::ProgramIdentifier(), 4) != 0) {
    KILN_LOG(Error, "bytes 4..8 are not the program identifier \"%s\"",
             kiln_pte::ProgramIdentifier());
    return Error::ProgramBadIdentifier;
  }
  // Even the smallest program (root table + vtable) is longer than this.
  if (prefix.size() < kIdentifierEnd + 8) {
    KILN_LOG(Error, "program is %zu bytes; too short to hold a program table", file_size);
    return Error::ProgramTruncated;
  }
  // Without the header, the whole file is the flatbuffer and there are no segments.
  if (std::memcmp(prefix.data() + kIdentifierEnd, kHeaderMagic, 4) != 0) {
    return FileLayout{file_size, file_size, false};
  }
  const uint32_t length = read_u32(prefix.data() + kIdentifierEnd + 4);
  if (length < kMinHeaderLength) {
    KILN_LOG(Error, "extended header length %" PRIu32 " is below the minimum %" PRIu32 "", length, kMinHeaderLength);
    return Error::ProgramBadHeader;
  }
  if (prefix.size() < kIdentifierEnd + kMinHeaderLength ||
      (length >= kHeaderLengthWithDataSize && prefix.size() < kPrefixSize)) {
    KILN_LOG(Error, "program is %zu bytes; its extended header needs %" PRIu32 " after byte %zu",
             file_size, length, kIdentifierEnd);
    return Error::ProgramTruncated;
  }
  const uint8_t* header = prefix.data() + kIdentifierEnd;
  const uint64_t program_size = read_u64(header + 8);
  const uint64_t segment_base = read_u64(header + 16);
  if (program_size < kIdentifierEnd + kMinHeaderLength) {
    KILN_LOG(Error, "extended header: program_size %llu cannot hold the header itself",
             static_cast<unsigned long long>(program_size));
    return Error::ProgramBadHeader;
  }
  if (program_size > file_size) {
    KILN_LOG(Error, "extended header: program_size %llu exceeds the file size %zu",
             static_cast<unsigned long long>(program_size), file_size);
    return Error::ProgramTruncated;
  }
  if (length >= kHeaderLengthWithDataSize) {
    const uint64_t segment_data_size = read_u64(header + 24);
    if (segment_data_size > 0 && segment_base < program_size) {
      KILN_LOG(Error, "extended header: segments start at %llu, inside the %llu-byte flatbuffer",
               static_cast<unsigned long long>(segment_base),
               static_cast<unsigned long long>(program_size));
      return Error::ProgramBadHeader;
    }
    if (segment_base > file_size || segment_data_size > file_size - segment_base) {
      KILN_LOG(Error, "extended header: segment data [%llu, +%llu) runs past the %zu-byte file",
               static_cast<unsigned long long>(segment_base),
               static_cast<unsigned long long>(segment_data_size), file_size);
      return Error::ProgramTruncated;
    }
  }
  return FileLayout{static_cast<size_t>(program_size), static_cast<size_t>(segment_base), true};
}

/// The flatbuffer verifier checks a vector's length prefix alignment (4 bytes) but not
/// its elements': a vector of 8-byte scalars may sit 4 bytes off, and reading it would
/// fault on cores without unaligned 64-bit loads.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr || reinterpret_cast<uintptr_t>(vector->data()) % alignof(T) == 0;
}

/// Every vector of 8-byte elements the runtime reads.
Error check_wide_vectors(const kiln_pte::Program& program) {
  if (program.constant_segment() != nullptr &&
      !elements_aligned(program.constant_segment()->offsets())) {
    KILN_LOG(Error, "constant segment offsets are not 8-byte aligned");
    return Error::InvalidProgram;
  }
  const auto* mutable_segments = program.mutable_data_segments();
  for (flatbuffers::uoffset_t i = 0; mutable_segments != nullptr && i < mutable_segments->size(); ++i) {
    if (!elements_aligned(mutable_segments->Get(i)->offsets())) {
      KILN_LOG(Error, "mutable data segment %" PRIu32 ": offsets are not 8-byte aligned", i);
      return Error::InvalidProgram;
    }
  }
  const auto* plans = program.execution_plan();
  for (flatbuffers::uoffset_t p = 0; plans != nullptr && p < plans->size(); ++p) {
    const kiln_pte::ExecutionPlan* plan = plans->Get(p);
    if (!elements_aligned(plan->non_const_buffer_sizes())) {
      KILN_LOG(Error, "method %" PRIu32 ": planned buffer sizes are not 8-byte aligned", p);
      return Error::InvalidProgram;
    }
    const auto* values = plan->values();
    for (flatbuffers::uoffset_t i = 0; values != nullptr && i < values->size(); ++i) {
      const kiln_pte::EValue* value = values->Get(i);
      const auto* ints = value->val_as_IntList();
      const auto* doubles = value->val_as_DoubleList();
      if ((ints != nullptr && !elements_aligned(ints->items())) ||
          (doubles != nullptr && !elements_aligned(doubles->items()))) {
        KILN_LOG(Error, "method %" PRIu32 ", value %" PRIu32 ": list items are not 8-byte aligned", p, i);
        return Error::InvalidProgram;
      }
    }
  }
  return Error::Ok;
}

bool fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

/// Checks a table of subsegment offsets (constants, mutable buffers' initial data)
/// against the segment it names: ProgramSegmentOutOfBounds for a missing segment or,
/// with full verification, an entry that starts past the segment's end.
Error check_subsegment_offsets(const kiln_pte::SubsegmentOffsets& table, Span<const uint8_t> segment,
                               const char* what, Program::Verification verification) {
  if (verification != Program::Verification::Full) return Error::Ok;
  const auto* offsets = table.offsets();
  for (flatbuffers::uoffset_t i = 0; offsets != nullptr && i < offsets->size(); ++i) {
    if (offsets->Get(i) > segment.size()) {
      KILN_LOG(Error, "%s %" PRIu32 " starts at %llu, past the %zu-byte segment", what, i,
               static_cast<unsigned long long>(offsets->Get(i)), segment.size());
      return Error::ProgramSegmentOutOfBounds;
    }
  }
  return Error::Ok;
}

/// Entry `index` of a subsegment table, `nbytes` long, inside `segment`.
Result<const void*> subsegment_entry(const kiln_pte::SubsegmentOffsets& table,
                                     Span<const uint8_t> segment, size_t index, size_t nbytes,
                                     const char* what) {
  const auto* offsets = table.offsets();
  const size_t count = offsets != nullptr ? offsets->size() : 0;
  if (index == 0 || index >= count) {
    KILN_LOG(Error, "%s %zu requested; the segment has entries 1..%zu", what, index,
             count > 0 ? count - 1 : 0);
    return Error::ProgramIndexOutOfRange;
  }
  const uint64_t offset = offsets->Get(static_cast<flatbuffers::uoffset_t>(index));
  if (!fits(offset, nbytes, segment.size())) {
    KILN_LOG(Error, "%s %zu: bytes [%llu, +%zu) past the %zu-byte segment", what, index,
             static_cast<unsigned long long>(offset), nbytes, segment.size());
    return Error::ProgramSegmentOutOfBounds;
  }
  return static_cast<const void*>(segment.data() + offset);
}

}  // namespace

Result<Program> Program::load(DataLoader* loader, Verification verification) {
  if (loader == nullptr) {
    KILN_LOG(Error, "Program::load: no data loader");
    return Error::InvalidArgument;
  }
  const size_t file_size = loader->size();
  const size_t prefix_size = file_size < kPrefixSize ? file_size : kPrefixSize;
  KILN_TRY_ASSIGN(const Span<const uint8_t> prefix, loader->load(0, prefix_size));
  KILN_TRY_ASSIGN(const FileLayout layout, parse_header(prefix, file_size));

  KILN_TRY_ASSIGN(const Span<const uint8_t> flatbuffer, loader->load(0, layout.program_size));
  // Tensors, lists and constants point into these bytes, so they must be aligned for
  // the widest element type they can hold.
  if (reinterpret_cast<uintptr_t>(flatbuffer.data()) % 8 != 0) {
    KILN_LOG(Error, "program data at %p is not 8-byte aligned", flatbuffer.data());
    return Error::InvalidArgument;
  }
  flatbuffers::Verifier verifier(flatbuffer.data(), flatbuffer.size());
  if (!kiln_pte::VerifyProgramBuffer(verifier)) {
    KILN_LOG(Error, "the %zu-byte program flatbuffer fails verification", flatbuffer.size());
    return Error::InvalidProgram;
  }
  const kiln_pte::Program* root = kiln_pte::GetProgram(flatbuffer.data());
  KILN_TRY(check_wide_vectors(*root));
  const auto* segments = root->segments();
  const size_t num_segments = segments != nullptr ? segments->size() : 0;
  // ExecuTorch lists an empty segment (offset 0, size 0) in programs without constants
  // and then writes no header: only segments that hold data need one to be located.
  bool any_segment_data = false;
  for (size_t i = 0; i < num_segments; ++i) {
    any_segment_data = any_segment_data ||
                       segments->Get(static_cast<flatbuffers::uoffset_t>(i))->size() > 0;
  }
  if (any_segment_data && !layout.has_header) {
    KILN_LOG(Error, "program lists %zu segments but has no extended header to locate them",
             num_segments);
    return Error::ProgramBadHeader;
  }
  if (any_segment_data && layout.segment_base_offset < layout.program_size) {
    KILN_LOG(Error, "segments start at %zu, inside the %zu-byte flatbuffer",
             layout.segment_base_offset, layout.program_size);
    return Error::ProgramBadHeader;
  }

  Program program(loader, root, file_size, layout.program_size, layout.segment_base_offset);
  if (verification == Verification::Full) {
    const size_t segment_space = file_size - layout.segment_base_offset;
    for (size_t i = 0; i < num_segments; ++i) {
      const kiln_pte::DataSegment* segment = segments->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (!fits(segment->offset(), segment->size(), segment_space)) {
        KILN_LOG(Error, "segment %zu: bytes [%llu, +%llu) past the %zu bytes after offset %zu", i,
                 static_cast<unsigned long long>(segment->offset()),
                 static_cast<unsigned long long>(segment->size()), segment_space,
                 layout.segment_base_offset);
        return Error::ProgramSegmentOutOfBounds;
      }
    }
  }

  const kiln_pte::SubsegmentOffsets* constants = root->constant_segment();
  // Entry 0 is reserved: a table with only that entry holds no constants (and may
  // name a segment that does not exist).
  if (constants != nullptr && constants->offsets() != nullptr && constants->offsets()->size() > 1) {
    const uint32_t index = constants->segment_index();
    if (index >= num_segments) {
      KILN_LOG(Error, "constant segment is segment %" PRIu32 "; the program has %zu", index, num_segments);
      return Error::ProgramSegmentOutOfBounds;
    }
    KILN_TRY_ASSIGN(program.constant_segment_, program.segment_data(index));
    program.has_constant_segment_ = true;
    KILN_TRY(check_subsegment_offsets(*constants, program.constant_segment_, "constant",
                                      verification));
  }
  KILN_TRY(program.locate_mutable_segment(verification));
  return program;
}

Error Program::locate_mutable_segment(Verification verification) {
  const auto* tables = program_->mutable_data_segments();
  if (tables == nullptr || tables->size() == 0) return Error::Ok;
  // Tensors name their initial data by entry in the first table (as ExecuTorch's
  // runtime reads it); further tables are never referenced.
  const kiln_pte::SubsegmentOffsets* table = tables->Get(0);
  const uint32_t index = table->segment_index();
  KILN_TRY_ASSIGN(mutable_segment_, segment_data(index));
  has_mutable_segment_ = true;
  return check_subsegment_offsets(*table, mutable_segment_, "mutable data", verification);
}

size_t Program::num_methods() const {
  const auto* plans = program_->execution_plan();
  return plans != nullptr ? plans->size() : 0;
}

Result<const char*> Program::get_method_name(size_t i) const {
  if (i >= num_methods()) {
    KILN_LOG(Error, "method %zu requested; the program has %zu", i, num_methods());
    return Error::InvalidArgument;
  }
  const auto* name = program_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(i))->name();
  return name != nullptr ? name->c_str() : "";
}

Result<MethodMeta> Program::method_meta(const char* name) const {
  if (name != nullptr) {
    for (size_t i = 0; i < num_methods(); ++i) {
      const kiln_pte::ExecutionPlan* plan =
          program_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (plan->name() != nullptr && std::strcmp(plan->name()->c_str(), name) == 0) {
        return MethodMeta(plan, this);
      }
    }
  }
  char names[160];
  KILN_LOG(Error, "the program has no method named '%s'; its methods: %s",
           name != nullptr ? name : "(null)", list_method_names(names, sizeof(names)));
  return Error::NotFound;
}

const char* Program::list_method_names(char* buf, size_t size) const {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < num_methods() && used + 1 < size; ++i) {
    const auto* name = program_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(i))->name();
    const int written = std::snprintf(buf + used, size - used, "%s'%s'", i == 0 ? "" : ", ",
                                      name != nullptr ? name->c_str() : "");
    if (written < 0) break;
    used += static_cast<size_t>(written);
  }
  if (used >= size && size > 4) std::memcpy(buf + size - 4, "...", 4);  // cut, and say so
  if (num_methods() == 0) std::snprintf(buf, size, "none");
  return buf;
}

Result<Method> Program::load_method(const char* name, MemoryManager* memory_manager) const {
  if (memory_manager == nullptr || memory_manager->method_allocator == nullptr) {
    KILN_LOG(Error, "load_method(%s): a memory manager with a method allocator is required",
             name != nullptr ? name : "(null)");
    return Error::InvalidArgument;
  }
  KILN_TRY_ASSIGN(const MethodMeta meta, method_meta(name));
  Method method(this, meta.plan(), *memory_manager);
  KILN_TRY(method.init());
  return method;
}

Result<const void*> Program::constant_data(size_t buffer_index, size_t nbytes) const {
  if (has_constant_segment_) {
    return subsegment_entry(*program_->constant_segment(), constant_segment_, buffer_index, nbytes,
                            "constant");
  }
  // Legacy layout: constants inline in the flatbuffer, entry 0 reserved.
  const auto* buffers = program_->constant_buffer();
  const size_t count = buffers != nullptr ? buffers->size() : 0;
  if (buffer_index == 0 || buffer_index >= count) {
    KILN_LOG(Error, "constant %zu requested; the program has %zu inline constant buffers",
             buffer_index, count);
    return Error::ProgramIndexOutOfRange;
  }
  const auto* storage = buffers->Get(static_cast<flatbuffers::uoffset_t>(buffer_index))->storage();
  const size_t available = storage != nullptr ? storage->size() : 0;
  if (nbytes > available) {
    KILN_LOG(Error, "constant %zu: %zu bytes needed, its inline buffer holds %zu", buffer_index,
             nbytes, available);
    return Error::ProgramSegmentOutOfBounds;
  }
  return static_cast<const void*>(storage != nullptr ? storage->data() : nullptr);
}

Result<const void*> Program::mutable_data(size_t buffer_index, size_t nbytes) const {
  if (!has_mutable_segment_) {
    KILN_LOG(Error, "initial data %zu of a planned tensor requested; the program has no mutable "
             "data segment", buffer_index);
    return Error::InvalidProgram;
  }
  return subsegment_entry(*program_->mutable_data_segments()->Get(0), mutable_segment_,
                          buffer_index, nbytes, "mutable data");
}

Result<Span<const uint8_t>> Program::segment_data(size_t index) const {
  const auto* segments = program_->segments();
  const size_t count = segments != nullptr ? segments->size() : 0;
  if (index >= count) {
    KILN_LOG(Error, "segment %zu requested; the program has %zu", index, count);
    return Error::ProgramIndexOutOfRange;
  }
  const kiln_pte::DataSegment* segment = segments->Get(static_cast<flatbuffers::uoffset_t>(index));
  // Checked here too: a Minimal-verified program has not had its segments checked.
  if (!fits(segment->offset(), segment->size(), file_size_ - segment_base_offset_)) {
    KILN_LOG(Error, "segment %zu: bytes [%llu, +%llu) lie past the end of the %zu-byte file",
             index, static_cast<unsigned long long>(segment->offset()),
             static_cast<unsigned long long>(segment->size()), file_size_);
    return Error::ProgramSegmentOutOfBounds;
  }
  return loader_->load(segment_base_offset_ + static_cast<size_t>(segment->offset()),
                       static_cast<size_t>(segment->size()));
}

Result<Span<const uint8_t>> Program::named_data(const char* key, size_t key_length) const {
  const auto* entries = program_->named_data();
  const size_t count = entries != nullptr ? entries->size() : 0;
  for (size_t i = 0; i < count; ++i) {
    const kiln_pte::NamedData* entry = entries->Get(static_cast<flatbuffers::uoffset_t>(i));
    const flatbuffers::String* name = entry->key();
    if (name != nullptr && name->size() == key_length &&
        (key_length == 0 || std::memcmp(name->data(), key, key_length) == 0)) {
      return segment_data(entry->segment_index());
    }
  }
  KILN_LOG(Error, "named data '%.*s' not found (the program has %zu entries)",
           static_cast<int>(key_length < 200 ? key_length : 200), key, count);
  return Error::NotFound;
}

}  // namespace kiln
