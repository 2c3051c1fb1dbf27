#include "tests/cpp/kernels/cortex_m/kernel_cases.h"

#include <cstring>
#include <new>

#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/operator_registry.h"
#include "runtime/platform/log.h"

namespace kiln_test {
namespace cortex_m_cases {
namespace {

using kiln::Error;
using kiln::EValue;
using kiln::Tensor;

constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 16;
constexpr size_t kMaxArgs = 24;
constexpr size_t kMaxTensors = 8;
constexpr size_t kMaxRank = 8;
constexpr size_t kMaxListItems = 48;
constexpr size_t kGuardBytes = 16;
constexpr uint8_t kSentinel = 0x5A;

enum Tag : uint8_t { kNone, kInt, kDouble, kBool, kIntList, kTensor, kOutput, kZeros };

/// Bounds-checked little-endian reads from one case record.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool ok() const { return ok_; }
  size_t position() const { return at_; }
  const uint8_t* bytes(size_t n) {
    if (!ok_ || n > size_ - at_) {
      ok_ = false;
      return nullptr;
    }
    const uint8_t* p = data_ + at_;
    at_ += n;
    return p;
  }
  template <typename T>
  T value() {
    T v{};
    const uint8_t* p = bytes(sizeof(T));
    if (p != nullptr) std::memcpy(&v, p, sizeof(T));
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
  bool ok_ = true;
};

/// Everything one case's EValues point at.
struct CaseStorage {
  EValue values[kMaxArgs + 1];
  EValue* pointers[kMaxArgs + 1];
  alignas(Tensor) unsigned char tensor_bytes[kMaxTensors][sizeof(Tensor)];
  kiln::SizesType sizes[kMaxTensors][kMaxRank];
  kiln::DimOrderType orders[kMaxTensors][kMaxRank];
  kiln::StridesType strides[kMaxTensors][kMaxRank];
  EValue list_items[kMaxListItems];
  EValue* list_pointers[kMaxListItems];
  int64_t list_scratch[kMaxListItems];
  size_t tensors = 0;
  size_t list_used = 0;
};

Error bad_file(uint32_t index, const char* what) {
  KILN_LOG(Error, "kernel case %u: %s", static_cast<unsigned>(index), what);
  return Error::InvalidProgram;
}

int64_t difference(kiln::ScalarType type, const uint8_t* got, const uint8_t* want, size_t i) {
  switch (type) {
    case kiln::ScalarType::Char:
      return static_cast<int64_t>(static_cast<int8_t>(got[i])) - static_cast<int8_t>(want[i]);
    case kiln::ScalarType::Short: {
      int16_t a, b;
      std::memcpy(&a, got + 2 * i, 2);
      std::memcpy(&b, want + 2 * i, 2);
      return static_cast<int64_t>(a) - b;
    }
    case kiln::ScalarType::Float:
    case kiln::ScalarType::Int: {
      // Floats compare by their bits: 0 = identical, else the distance in ULPs.
      int32_t a, b;
      std::memcpy(&a, got + 4 * i, 4);
      std::memcpy(&b, want + 4 * i, 4);
      return static_cast<int64_t>(a) - b;
    }
    default:
      return got[i] == want[i] ? 0 : 1;
  }
}

class CaseRunner {
 public:
  CaseRunner(const CaseMemory& memory, uint32_t index) : memory_(memory), index_(index) {}

  /// Parses the record (`size` bytes, starting with its length field) and runs it.
  Error run(const uint8_t* record, size_t size, CaseOutcome* outcome) {
    Reader r(record, size);
    (void)r.value<uint32_t>();
    const uint16_t name_length = r.value<uint16_t>();
    outcome->name = reinterpret_cast<const char*>(r.bytes(name_length));
    outcome->name_length = name_length;
    const uint16_t op_length = r.value<uint16_t>();
    outcome->op = reinterpret_cast<const char*>(r.bytes(op_length));
    outcome->op_length = op_length;
    outcome->tolerance = r.value<uint8_t>();
    const uint8_t count = r.value<uint8_t>();
    char op_name[96];
    if (!r.ok() || op_length >= sizeof(op_name) || count == 0 || count > kMaxArgs) {
      return bad_file(index_, "header cut short, operator name too long or argument count not in [1, 24]");
    }
    std::memcpy(op_name, outcome->op, op_length);
    op_name[op_length] = '\0';
    Tensor* out = nullptr;
    const uint8_t* expected = nullptr;
    for (size_t i = 0; i < count; ++i) {
      const Error error = parse_arg(r, record, size, &s_.values[i], &out, &expected);
      if (error != Error::Ok) return error;
      s_.pointers[i] = &s_.values[i];
    }
    if (out == nullptr) return bad_file(index_, "no output tensor");
    // The out argument is also the return value (the .out overload's last EValue).
    s_.values[count] = EValue(out);
    s_.pointers[count] = &s_.values[count];

    const kiln::OpFunction kernel = kiln::get_op_function(op_name, "out");
    if (kernel == nullptr) {
      KILN_LOG(Error, "kernel case %u: %s.out is not registered", static_cast<unsigned>(index_), op_name);
      outcome->error = Error::OperatorMissing;
      return Error::Ok;
    }
    kiln::MemoryAllocator temp(memory_.temp, memory_.temp_bytes);
    kiln::KernelContext context(&temp);
    const uint64_t start = memory_.clock != nullptr ? memory_.clock() : 0;
    kernel(context, {s_.pointers, static_cast<size_t>(count) + 1});
    outcome->kernel_ticks = memory_.clock != nullptr ? memory_.clock() - start : 0;
    outcome->error = context.failure_state();
    if (outcome->error != Error::Ok) return Error::Ok;
    compare(*out, expected, outcome);
    return Error::Ok;
  }

 private:
  Error parse_arg(Reader& r, const uint8_t* record, size_t size, EValue* value, Tensor** out,
                  const uint8_t** expected) {
    const uint8_t tag = r.value<uint8_t>();
    switch (tag) {
      case kNone:
        *value = EValue();
        break;
      case kInt:
        *value = EValue(r.value<int64_t>());
        break;
      case kDouble:
        *value = EValue(r.value<double>());
        break;
      case kBool:
        *value = EValue(r.value<uint8_t>() != 0);
        break;
      case kIntList: {
        const uint32_t n = r.value<uint32_t>();
        if (!r.ok() || n > kMaxListItems - s_.list_used) return bad_file(index_, "int list too long");
        EValue** items = &s_.list_pointers[s_.list_used];
        for (uint32_t k = 0; k < n; ++k) {
          s_.list_items[s_.list_used + k] = EValue(r.value<int64_t>());
          items[k] = &s_.list_items[s_.list_used + k];
        }
        *value = EValue::int_list({items, &s_.list_scratch[s_.list_used], n});
        s_.list_used += n;
        break;
      }
      case kTensor:
      case kOutput:
      case kZeros:
        return parse_tensor(r, tag, record, size, value, out, expected);
      default:
        return bad_file(index_, "unknown argument tag");
    }
    return r.ok() ? Error::Ok : bad_file(index_, "argument cut short");
  }

  Error parse_tensor(Reader& r, uint8_t tag, const uint8_t* record, size_t size, EValue* value,
                     Tensor** out, const uint8_t** expected) {
    const uint8_t dtype = r.value<uint8_t>();
    const uint8_t rank = r.value<uint8_t>();
    if (!r.ok() || rank > kMaxRank || s_.tensors == kMaxTensors) return bad_file(index_, "tensor rank or count too large");
    const size_t t = s_.tensors++;
    size_t numel = 1;
    for (uint8_t d = 0; d < rank; ++d) {
      s_.sizes[t][d] = r.value<int32_t>();
      if (s_.sizes[t][d] < 0 || s_.sizes[t][d] > (1 << 24)) return bad_file(index_, "tensor size out of range");
      numel *= static_cast<size_t>(s_.sizes[t][d]);
    }
    const uint8_t* order = r.bytes(rank);
    const uint32_t nbytes = r.value<uint32_t>();
    const uint32_t offset = r.value<uint32_t>();
    if (!r.ok()) return bad_file(index_, "tensor cut short");
    bool seen[kMaxRank] = {};
    for (uint8_t d = 0; d < rank; ++d) {
      if (order[d] >= rank || seen[order[d]]) return bad_file(index_, "dim order is not a permutation");
      seen[order[d]] = true;
      s_.orders[t][d] = order[d];
    }
    const auto type = static_cast<kiln::ScalarType>(dtype);
    if (numel * kiln::element_size(type) != nbytes || nbytes == 0) {
      return bad_file(index_, "tensor byte count disagrees with its sizes and dtype");
    }
    void* data = nullptr;
    if (tag == kTensor || tag == kOutput) {
      if (offset % 16 != 0 || offset > size || nbytes > size - offset) return bad_file(index_, "tensor data out of the record");
    }
    if (tag == kTensor) {
      data = const_cast<uint8_t*>(record + offset);  // kernels only read their inputs
    } else {
      // Outputs and scratch tensors live in the work memory, with a guard band after
      // each output that must stay untouched.
      const size_t need = (nbytes + kGuardBytes + 15) / 16 * 16;
      if (need > memory_.work_bytes - work_used_) return bad_file(index_, "work memory too small for the case");
      uint8_t* p = memory_.work + work_used_;
      work_used_ += need;
      std::memset(p, tag == kZeros ? 0 : kSentinel, need);
      data = p;
      if (tag == kOutput) {
        if (*out != nullptr) return bad_file(index_, "two output tensors");
        *expected = record + offset;
        out_bytes_ = nbytes;
      }
    }
    Tensor* tensor = new (s_.tensor_bytes[t]) Tensor(type, rank, s_.sizes[t], s_.orders[t], s_.strides[t], data);
    if (tag == kOutput) *out = tensor;
    *value = EValue(tensor);
    return Error::Ok;
  }

  void compare(const Tensor& out, const uint8_t* expected, CaseOutcome* outcome) const {
    const uint8_t* got = static_cast<const uint8_t*>(out.const_data_ptr());
    if (out.nbytes() != out_bytes_) {
      KILN_LOG(Error, "kernel case %u: output resized to %zu bytes, expected %zu", static_cast<unsigned>(index_),
               out.nbytes(), out_bytes_);
      outcome->error = Error::InvalidState;
      return;
    }
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (got[out_bytes_ + i] != kSentinel) {
        KILN_LOG(Error, "kernel case %u: the kernel wrote past its output (byte %zu after the end)",
                 static_cast<unsigned>(index_), i);
        outcome->error = Error::Internal;
        return;
      }
    }
    const size_t n = out.numel();
    outcome->elements = n;
    for (size_t i = 0; i < n; ++i) {
      int64_t d = difference(out.scalar_type(), got, expected, i);
      if (d < 0) d = -d;
      if (d > outcome->max_difference) outcome->max_difference = d;
      if (d > outcome->tolerance) {
        if (outcome->first_index < 0) outcome->first_index = static_cast<int64_t>(i);
        ++outcome->differing;
      }
    }
  }

  const CaseMemory& memory_;
  uint32_t index_;
  CaseStorage s_;
  size_t work_used_ = 0;
  size_t out_bytes_ = 0;
};

}  // namespace

Error count_cases(const uint8_t* file, size_t size, uint32_t* count) {
  uint32_t version = 0;
  if (file == nullptr || size < kHeaderBytes || std::memcmp(file, "KCMC", 4) != 0) {
    return bad_file(0, "not a kernel case file (no KCMC header)");
  }
  std::memcpy(&version, file + 4, 4);
  std::memcpy(count, file + 8, 4);
  if (version != kVersion) return bad_file(0, "unknown case file version");
  if (reinterpret_cast<uintptr_t>(file) % 16 != 0) return bad_file(0, "case file not 16-byte aligned in memory");
  return Error::Ok;
}

Error run_cases(const uint8_t* file, size_t size, const CaseMemory& memory, CaseCallback callback,
                void* context) {
  uint32_t count = 0;
  const Error header = count_cases(file, size, &count);
  if (header != Error::Ok) return header;
  size_t at = kHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t record_bytes = 0;
    if (size - at < 4) return bad_file(i, "file ends before the case");
    std::memcpy(&record_bytes, file + at, 4);
    if (record_bytes < 16 || record_bytes % 16 != 0 || record_bytes > size - at) {
      return bad_file(i, "record length out of the file");
    }
    CaseOutcome outcome;
    outcome.index = i;
    // The runner holds a few KiB of EValues and tensors: static, not on a small stack.
    alignas(CaseRunner) static unsigned char runner_bytes[sizeof(CaseRunner)];
    CaseRunner* runner = new (runner_bytes) CaseRunner(memory, i);
    const Error error = runner->run(file + at, record_bytes, &outcome);
    if (error != Error::Ok) return error;
    callback(context, outcome);
    at += record_bytes;
  }
  return Error::Ok;
}

}  // namespace cortex_m_cases
}  // namespace kiln_test
