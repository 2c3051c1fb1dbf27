"""Each Ethos-U family's operator limits, as data: the one table of them in Kiln.

The partitioner's checks and the TOSA lowering's checks both read it, through the
questions in :mod:`kiln.backends.arm.constraints.rules`, so a node the partition report
puts on the NPU is one the lowering takes. The facts come from Vela (5.1 and 5.2: the
``ethosu.vela.tflite_supported_operators`` and ``tosa_supported_operators`` rules, which
document what regor, Vela's compiled core, enforces for U55/U65; U85 rules where Kiln
checked them against Vela itself); each field says which rule it is.

U65 uses U55's NPU core: the two share every limit. A limit that is ``None`` is one the
family does not have.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from kiln.targets import DEFAULT_TARGET, TargetError, family_of


@dataclass(frozen=True)
class FamilyConstraints:
    """What one Ethos-U family's NPU (as Vela compiles for it) can run."""

    family: str  # "ethos-u55"
    #: TOSA operators the family's NPU has no operation for (Vela lists them for the
    #: Ethos-U85 only: comparisons, SELECT, the logical operators, REDUCE_ANY, GATHER)
    missing_tosa_operators: frozenset[str]
    # --- convolutions (Vela: constraint_stride_width_no_upper_limit, constraint_stride_range_no_padding)
    #: strides above this only with dilation 1 and no padding (Vela splits them into stride <= 3)
    max_stride: Optional[int]
    #: depthwise convolution strides 1..this (constraint_depthwise_conv_stride)
    max_depthwise_stride: Optional[int]
    #: transposed convolution strides, equal in both axes (constraint_tconv_stride: the
    #: upscaler doubles the input)
    transposed_strides: Optional[tuple[int, ...]]
    # --- upsampling (constraint_resize: OFM 2x/4x/8x the IFM, equal in both axes)
    #: nearest RESIZE factors, equal in both axes; None: any integer up to max_resize_factor
    resize_factors: Optional[tuple[int, ...]]
    #: the largest RESIZE factor (U85: the scale_n/scale_d ratio regor accepts)
    max_resize_factor: int
    #: BILINEAR RESIZE on the NPU (Vela lists it for Ethos-U85 only; U55/U65 run
    #: Kiln's bilinear 2x as nearest 2x and a 3x3 filter)
    bilinear_resize: bool
    # --- matrix products of two computed tensors (Vela's MATMUL: int8 on U55/U65)
    dynamic_matmul_dtypes: tuple[str, ...]
    # --- transposes (regor's U55 transpose decomposition; vela_limits.py models it)
    #: every axis of each 3-D transpose Vela decomposes a TRANSPOSE into at most this
    max_transpose_axis: Optional[int]
    #: a 32-bit H<->W transpose at most this many channels
    max_int32_hw_swap_depth: Optional[int]
    # --- every family (tosa_supported_operators / tflite_supported_operators)
    max_dimension: int = 65535  # tens_dim_range: every tensor dimension in [1, 65535]
    max_rank: int = 4  # MAC, pooling and table operators
    max_rank_elementwise: int = 6  # rank6_limited_ops: the element-wise operators
    max_kernel_height: int = 256  # filter_height_range (pooling)
    max_kernel_product: int = 256 * 256  # filter_product_range (pooling)
    max_padded_pool_kernel: int = 8  # filter_range: a padded pooling kernel at most 8x8
    #: pooling strides above this only without padding (constraint_stride_range_no_padding;
    #: Kiln's lowering holds the U85 to it too: no U85 case was checked against Vela)
    max_padded_pool_stride: int = 3
    max_depthwise_kernel: int = 64  # dilated_height_range: a depthwise kernel at most 64 high
    max_weight_sum: int = 127 * 65536  # weights_limit: sum of |weight - zp| per output channel
    max_reduced_axis: int = 4096  # mean_reduced_axis_max_size: a reduced axis below 64 x 64
    #: reduced elements per output, by input bits (mean_kernel_product_int8/int16)
    max_reduced_elements: tuple[tuple[int, int], ...] = ((8, 2**24), (16, 2**16))
    max_softmax_rows: int = 65536  # softmax rows below 2**16 (the row count is one axis)
    max_matmul_reduced_axis: int = 2**16  # a matrix product's reduced axis at most 2**16

    def reduced_elements_limit(self, bits: int) -> int:
        """The most elements one output of a reduction may sum for ``bits``-bit input
        (8-bit's limit for anything Vela does not list)."""
        limits = dict(self.max_reduced_elements)
        return limits.get(bits, limits[8])


#: The Ethos-U55's NPU core, which the U65 shares.
U55_CORE = FamilyConstraints(
    family="ethos-u55",
    missing_tosa_operators=frozenset({"EQUAL", "GREATER", "GREATER_EQUAL", "SELECT", "LOGICAL_NOT", "LOGICAL_AND",
                                      "LOGICAL_OR", "REDUCE_ANY", "GATHER"}),
    max_stride=3,
    max_depthwise_stride=3,
    transposed_strides=(1, 2),
    resize_factors=(2, 4, 8),
    max_resize_factor=8,
    bilinear_resize=False,
    dynamic_matmul_dtypes=("int8",),
    max_transpose_axis=1 << 16,
    max_int32_hw_swap_depth=1 << 14,
)

#: The table: family name -> its constraints.
FAMILY_CONSTRAINTS: dict[str, FamilyConstraints] = {c.family: c for c in (
    U55_CORE,
    replace(U55_CORE, family="ethos-u65"),
    FamilyConstraints(
        family="ethos-u85",
        missing_tosa_operators=frozenset(),
        max_stride=None,  # Vela compiles stride > 3 with padding and dilation (tested)
        max_depthwise_stride=None,
        transposed_strides=None,
        resize_factors=None,
        max_resize_factor=1024,
        bilinear_resize=True,
        dynamic_matmul_dtypes=("int8", "int16"),
        max_transpose_axis=None,  # U85 transposes split long axes
        max_int32_hw_swap_depth=None,
    ),
)}



def target_name(target: Any) -> str:
    """The target name of a compile spec (its ``target``) or of a target string; ""
    for None."""
    return str(getattr(target, "target", target) or "")


def family_constraints(target: Any) -> FamilyConstraints:
    """The constraints of ``target``'s family: a target name (``"ethos-u55-128"``), a family
    name, or a compile spec; None (no target given) means Kiln's default target."""
    name = target_name(target) or DEFAULT_TARGET
    family = name if name in FAMILY_CONSTRAINTS else family_of(name)
    if family not in FAMILY_CONSTRAINTS:
        raise TargetError(f"{name!r} is not an Ethos-U target: no operator constraints for it "
                          f"(families: {', '.join(FAMILY_CONSTRAINTS)})")
    return FAMILY_CONSTRAINTS[family]
