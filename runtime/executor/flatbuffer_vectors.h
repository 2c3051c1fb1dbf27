// Internal: sizes of the program's optional flatbuffer vectors and strings (a field the
// program leaves out reads as nullptr, which counts as empty).
#pragma once

#include <cstddef>

#include "flatbuffers/flatbuffers.h"

namespace kiln::internal {

template <typename T>
size_t length(const flatbuffers::Vector<T>* vector) {
  return vector != nullptr ? vector->size() : 0;
}

inline size_t string_length(const flatbuffers::String* s) { return s != nullptr ? s->size() : 0; }

}  // namespace kiln::internal
