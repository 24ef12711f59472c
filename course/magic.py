"""The %%cuda cell magic: compile the cell, show the report, bind kernels to names."""
from __future__ import annotations

from .cuda import CudaModule
from .errors import CudaCompileError


def run_cell(source: str, namespace: dict) -> CudaModule:
    """Compile a %%cuda cell and bind each kernel, or each device function of a library cell."""
    mod = CudaModule(source, namespace)
    namespace.update(mod.kernels)
    namespace.update(mod.device_functions)
    return mod


def register(ipython=None) -> bool:
    try:
        from IPython import get_ipython
        from IPython.core.error import UsageError
        from IPython.core.magic import register_cell_magic
    except ImportError:
        return False
    ip = ipython or get_ipython()
    if ip is None:
        return False

    @register_cell_magic
    def cuda(line, cell):  # noqa: ARG001
        try:
            mod = run_cell(cell, ip.user_ns)
        except CudaCompileError as e:
            raise UsageError(f"CUDA compile error\n{e}") from None
        print(mod.summary())

    return True
