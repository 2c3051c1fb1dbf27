#include "examples/arm/executor_runner/output_report.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "runtime/npy/dim_order_copy.h"
#include "runtime/npy/npy_view.h"
#include "examples/arm/platform/board.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"
#include "runtime/platform/log.h"

namespace kiln::firmware {
namespace {

constexpr size_t kValuesShown = 10;
constexpr size_t kHexBytesPerLine = 32;

uint32_t fnv1a(const uint8_t* data, size_t size) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
  return hash;
}

void print_value(const Tensor& t, size_t i) {
  switch (t.scalar_type()) {
    case ScalarType::Float: board_printf(" %.6g", static_cast<double>(t.const_data_ptr<float>()[i])); break;
    case ScalarType::Double: board_printf(" %.9g", t.const_data_ptr<double>()[i]); break;
    case ScalarType::Char: board_printf(" %d", t.const_data_ptr<int8_t>()[i]); break;
    case ScalarType::Byte: board_printf(" %u", t.const_data_ptr<uint8_t>()[i]); break;
    case ScalarType::Short: board_printf(" %d", t.const_data_ptr<int16_t>()[i]); break;
    case ScalarType::Int: board_printf(" %ld", static_cast<long>(t.const_data_ptr<int32_t>()[i])); break;
    case ScalarType::Long: board_printf(" %lld", static_cast<long long>(t.const_data_ptr<int64_t>()[i])); break;
    case ScalarType::Bool: board_printf(" %d", t.const_data_ptr<uint8_t>()[i] != 0); break;
    default: board_printf(" ?"); break;
  }
}

}  // namespace

void print_output(size_t index, const EValue& value) {
  if (!value.is_tensor()) {
    board_printf("I [runner] output %zu: %s (not a tensor)\n", index, tag_name(value.tag()));
    return;
  }
  const Tensor& t = value.to_tensor();
  const auto* bytes = static_cast<const uint8_t*>(t.const_data_ptr());
  board_printf("I [runner] output %zu: %s [", index, scalar_type_name(t.scalar_type()));
  for (int32_t d = 0; d < t.dim(); ++d) board_printf(d == 0 ? "%ld" : ", %ld", static_cast<long>(t.sizes()[d]));
  board_printf("], %zu bytes, fnv1a32 0x%08lx\n", t.nbytes(),
               static_cast<unsigned long>(fnv1a(bytes, t.nbytes())));
  board_printf("I [runner]   first values:");
  for (size_t i = 0; i < t.numel() && i < kValuesShown; ++i) print_value(t, i);
  board_printf("%s\n", t.numel() > kValuesShown ? " ..." : "");
  // The whole tensor, for the host's bit-for-bit check.
  board_printf("KILN-OUTPUT %zu %s %zu\n", index, scalar_type_name(t.scalar_type()), t.nbytes());
  for (size_t offset = 0; offset < t.nbytes(); offset += kHexBytesPerLine) {
    char line[2 * kHexBytesPerLine + 1];
    const size_t n = t.nbytes() - offset < kHexBytesPerLine ? t.nbytes() - offset : kHexBytesPerLine;
    static const char kDigits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
      line[2 * i] = kDigits[bytes[offset + i] >> 4];
      line[2 * i + 1] = kDigits[bytes[offset + i] & 15];
    }
    line[2 * n] = '\0';
    board_printf("KILN-HEX %zu %s\n", index, line);
  }
  board_printf("KILN-OUTPUT-END %zu\n", index);
}

bool output_matches(size_t index, const EValue& value, const KilnEmbeddedFile& expected) {
  char what[32];
  std::snprintf(what, sizeof(what), "expected output %zu", index);
  Result<NpyView> view = parse_npy({expected.data, expected.size}, what);
  if (!view.ok()) return false;
  if (!value.is_tensor()) {
    KILN_LOG(Error, "output %zu is a %s; a tensor was expected", index, tag_name(value.tag()));
    return false;
  }
  const Tensor& t = value.to_tensor();
  bool same_shape = view->dim == t.dim() && view->dtype == t.scalar_type();
  for (int32_t d = 0; same_shape && d < t.dim(); ++d) same_shape = view->shape[d] == t.sizes()[d];
  if (!same_shape || view->nbytes != t.nbytes()) {
    KILN_LOG(Error, "output %zu is %s with %d dims (%zu bytes); expected %s with %d dims (%zu bytes)",
             index, scalar_type_name(t.scalar_type()), static_cast<int>(t.dim()), t.nbytes(),
             scalar_type_name(view->dtype), static_cast<int>(view->dim), view->nbytes);
    return false;
  }
  const auto* got = static_cast<const uint8_t*>(t.const_data_ptr());
  const size_t element = t.element_size();
  size_t first = 0;
  size_t differing = 0;
  if (!is_default_dim_order(t.dim_order())) {
    // Stored in another dim order (channels-last); the .npy is row-major.
    differing = count_differences_dim_order(got, view->data, t.sizes(), t.dim_order(), element, &first);
    if (differing == 0) return true;
  } else {
    if (std::memcmp(got, view->data, t.nbytes()) == 0) return true;
    for (size_t i = t.numel(); i-- > 0;) {
      if (std::memcmp(got + i * element, view->data + i * element, element) != 0) {
        first = i;
        ++differing;
      }
    }
  }
  KILN_LOG(Error, "output %zu differs from the host runtime's in %zu of %zu elements; first at "
           "element %zu", index, differing, t.numel(), first);
  return false;
}

}  // namespace kiln::firmware
