"""Mutable buffers in the lowering: a module's state kept between calls.

A buffer the model updates in place (``self.h.copy_(h)``, ``self.count += 1``)
shows up in the functional, core-ATen program as a BUFFER_MUTATION output: the
graph computes the new value and returns it. Kiln gives the buffer planned memory
that nothing else shares (:data:`kiln.ir.method_graph.TensorRole.STATE`), stores
its initial value in the program (loaded into that memory every time the method is
loaded), and writes the new value back at the end of the method with the in-place
``aten::copy_`` kernel, as ExecuTorch's programs do, so that the next call sees it.
"""

from __future__ import annotations

from torch.export import ExportedProgram
from torch.export.graph_signature import OutputKind

from kiln import ExportError
from kiln.ir.method_graph import Bool, KernelCall, TensorRole, TensorValue

# The in-place copy both runtimes provide for writing state back: arguments
# [self, src, non_blocking, self (the return value)].
WRITE_BACK_OPERATOR = "aten::copy_"


def mutated_buffers(program: ExportedProgram) -> list[str]:
    """Targets (fully qualified buffer names) of the buffers the program updates, in
    the order of the graph's BUFFER_MUTATION outputs (which come first)."""
    return [
        spec.target
        for spec in program.graph_signature.output_specs
        if spec.kind is OutputKind.BUFFER_MUTATION and spec.target is not None
    ]


def make_state(tensor: TensorValue, target: str) -> TensorValue:
    """Turns a buffer's constant tensor into the method's state (same data, planned)."""
    if tensor.dynamic:
        raise ExportError(f"buffer '{target}' has a dynamic shape; state needs a fixed shape")
    tensor.role = TensorRole.STATE
    return tensor


def write_back(state: TensorValue, new_value: TensorValue, target: str, node_name: str) -> KernelCall:
    """The call that stores ``new_value`` into ``state`` at the end of the method.

    Raises:
        ExportError: the new value's shape or dtype is not the buffer's (the runtime's
            copy would fail on every call), naming the buffer and both shapes.
    """
    if new_value.dynamic or new_value.shape != state.shape or new_value.dtype_code != state.dtype_code:
        bound = " (upper bound)" if new_value.dynamic else ""
        raise ExportError(
            f"the model writes a tensor of shape {list(new_value.shape)}{bound}, dtype code "
            f"{new_value.dtype_code} into buffer '{target}' of shape {list(state.shape)}, dtype "
            f"code {state.dtype_code} (node '{node_name}'); state keeps its shape and dtype"
        )
    return KernelCall(WRITE_BACK_OPERATOR, [state, new_value, Bool(False), state], [state], node_name)
