"""Every dtype table of Kiln: torch dtypes, numpy dtypes and names by ScalarType code.

The numbers are c10's ScalarType codes (runtime/schema/scalar_type.fbs), which
ExecuTorch uses as well: ``NAME_BY_CODE`` spells them as torch does (``float32``),
``SCALAR_TYPE_NAMES`` as the C++ enum and the kernel op tables do (``Float``; it lives in
:mod:`kiln.serialize.operator_list`, which the code generator loads without the package).
MemoryFormat and Layout arguments travel as Int values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kiln.serialize.operator_list import SCALAR_TYPE_NAMES

if TYPE_CHECKING:
    import torch


def _dtype_table() -> dict["torch.dtype", int]:
    import torch

    return {
        torch.uint8: 0,
        torch.int8: 1,
        torch.int16: 2,
        torch.int32: 3,
        torch.int64: 4,
        torch.float16: 5,
        torch.float32: 6,
        torch.float64: 7,
        torch.bool: 11,
        torch.bfloat16: 15,
        torch.uint16: 27,
        torch.uint32: 28,
        torch.uint64: 29,
    }


# Element sizes by ScalarType code, for reading programs without torch.
ELEMENT_SIZE_BY_CODE: dict[int, int] = {
    0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 12: 1, 13: 1, 14: 4,
    15: 2, 16: 1, 17: 1, 22: 2, 27: 2, 28: 4, 29: 8,
}  # fmt: skip

NAME_BY_CODE: dict[int, str] = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16",
    6: "float32", 7: "float64", 11: "bool", 12: "qint8", 13: "quint8", 14: "qint32",
    15: "bfloat16", 16: "quint4x2", 17: "quint2x4", 22: "bits16", 27: "uint16",
    28: "uint32", 29: "uint64",
}  # fmt: skip

#: numpy dtypes of the ScalarType codes numpy can hold.
NUMPY_BY_CODE: dict[int, np.dtype] = {code: np.dtype(NAME_BY_CODE[code]) for code in (0, 1, 2, 3, 4, 5, 6, 7, 11, 27, 28, 29)}
CODE_BY_NUMPY: dict[np.dtype, int] = {dtype: code for code, dtype in NUMPY_BY_CODE.items()}
#: numpy dtypes by the C++ enum's names (what the runtime's method metadata says).
NUMPY_BY_CPP_NAME: dict[str, np.dtype] = {SCALAR_TYPE_NAMES[code]: dtype for code, dtype in NUMPY_BY_CODE.items()}


def scalar_type_code(dtype: "torch.dtype") -> int:
    """ScalarType code of ``dtype``; KeyError if the format has none."""
    return _dtype_table()[dtype]


def is_supported_dtype(dtype: "torch.dtype") -> bool:
    return dtype in _dtype_table()


def memory_format_code(memory_format: "torch.memory_format") -> int:
    """MemoryFormat as Int: contiguous 0, preserve 1 (the only two kernels accept)."""
    import torch

    codes = {torch.contiguous_format: 0, torch.preserve_format: 1}
    return codes[memory_format]


def layout_code(layout: "torch.layout") -> int:
    """Layout as Int: strided 0 (the only layout the runtime has)."""
    import torch

    codes = {torch.strided: 0}
    return codes[layout]
