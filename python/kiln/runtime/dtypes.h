// Kiln scalar types <-> DLPack dtypes (what numpy arrays and torch tensors carry).
#pragma once

#include <nanobind/ndarray.h>

#include <optional>

#include "runtime/core/scalar_type.h"

namespace kiln::python {

/// The scalar type of an array's dtype, or nullopt if Kiln has none for it.
std::optional<ScalarType> scalar_type_of(nanobind::dlpack::dtype dtype);

/// The DLPack dtype of a scalar type, or nullopt if numpy cannot hold it.
std::optional<nanobind::dlpack::dtype> dlpack_dtype_of(ScalarType type);

}  // namespace kiln::python
