// Program: a loaded .pte file. Owns nothing but views of the loader's bytes.
//
// Loading checks the file's identifier, extended header and flatbuffer structure (and,
// with full verification, every segment's bounds), so that everything read later from
// the program is inside the data. Methods are then loaded by name.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/data_loader.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/method_meta.h"

namespace kiln_pte {
struct Program;
}  // namespace kiln_pte

namespace kiln {

class Program final {
 public:
  enum class Verification : uint8_t {
    /// Header and flatbuffer structure only (fast, for trusted programs in flash).
    Minimal,
    /// Also every segment's and constant's bounds.
    Full,
  };

  /// Loads the program served by `loader`, which must outlive the Program.
  /// Errors: ProgramTruncated (file shorter than its header or tables say),
  /// ProgramBadIdentifier (no "ET12"), ProgramBadHeader (inconsistent "eh00" header),
  /// InvalidProgram (flatbuffer verification failed), ProgramSegmentOutOfBounds
  /// (a segment or constant outside the file), InvalidArgument (null loader or data
  /// not 8-byte aligned). Each failure logs its reason.
  static Result<Program> load(DataLoader* loader, Verification verification = Verification::Full);

  Program(Program&&) = default;
  Program& operator=(Program&&) = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  size_t num_methods() const;
  /// Name of method `i`; InvalidArgument if `i` is out of range.
  Result<const char*> get_method_name(size_t i) const;
  /// NotFound (with a log line) if the program has no method `name`.
  Result<MethodMeta> method_meta(const char* name) const;
  /// Initializes method `name` in the caller's memory. The Program must outlive the
  /// Method. See Method for the errors.
  Result<Method> load_method(const char* name, MemoryManager* memory_manager) const;

  /// Bytes of the flatbuffer part (without segments), for summaries.
  size_t program_data_size() const { return program_size_; }
  /// Total bytes of the program file (flatbuffer + segments).
  size_t file_size() const { return file_size_; }

  // Used by Method while it initializes.

  /// Data of constant `buffer_index` (the tensor's data_buffer_idx), `nbytes` long.
  /// ProgramIndexOutOfRange for an unknown index, ProgramSegmentOutOfBounds if the
  /// bytes run past the end of the constant data.
  Result<const void*> constant_data(size_t buffer_index, size_t nbytes) const;
  /// Initial data of a memory-planned tensor (a mutable buffer's state), entry
  /// `buffer_index` (the tensor's data_buffer_idx) of the program's mutable data
  /// segment, `nbytes` long. InvalidProgram if the program has no mutable data segment,
  /// ProgramIndexOutOfRange for an unknown entry, ProgramSegmentOutOfBounds if the bytes
  /// run past the segment's end.
  Result<const void*> mutable_data(size_t buffer_index, size_t nbytes) const;
  /// The bytes of segment `index`. ProgramIndexOutOfRange or ProgramSegmentOutOfBounds.
  Result<Span<const uint8_t>> segment_data(size_t index) const;
  /// The bytes of the named data entry `key` (`key_length` chars): NotFound for an unknown
  /// key, else segment_data's errors for its segment.
  Result<Span<const uint8_t>> named_data(const char* key, size_t key_length) const;
  /// The verified flatbuffer root.
  const kiln_pte::Program* flatbuffer() const { return program_; }

 private:
  Program(DataLoader* loader, const kiln_pte::Program* program, size_t file_size,
          size_t program_size, size_t segment_base_offset)
      : loader_(loader),
        program_(program),
        file_size_(file_size),
        program_size_(program_size),
        segment_base_offset_(segment_base_offset) {}

  /// "'forward', 'reset'" into `buf` (cut with "..." when it does not fit), for messages.
  const char* list_method_names(char* buf, size_t size) const;
  /// Finds the mutable data segment, if the program has one (Program::load).
  Error locate_mutable_segment(Verification verification);

  DataLoader* loader_;
  const kiln_pte::Program* program_;
  size_t file_size_;
  size_t program_size_;
  size_t segment_base_offset_;
  /// The constant segment when the program has one (empty otherwise: then constants,
  /// if any, are in the legacy inline constant_buffer table).
  Span<const uint8_t> constant_segment_;
  bool has_constant_segment_ = false;
  /// The segment holding mutable buffers' initial data (entry 0 of the program's
  /// mutable_data_segments), when the program has one.
  Span<const uint8_t> mutable_segment_;
  bool has_mutable_segment_ = false;
};

}  // namespace kiln
