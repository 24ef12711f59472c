"""The %%cuda cell magic: compile the cell, show the report, bind kernels to names."""
from __future__ import annotations

from .cuda import CompileFailed, CudaModule, names_defined
from .errors import CudaCompileError


def cell_body(cell: str) -> str:
    """The CUDA source of a %%cuda cell's body, with a blank first line where the magic stands, so
    that compiler line numbers are the editor's."""
    return "\n" + cell


def run_cell(source: str, namespace: dict) -> CudaModule:
    """Compile a %%cuda cell and bind each kernel, or each device function of a library cell.
    If it does not compile, its names are bound to CompileFailed (and the error is raised)."""
    try:
        mod = CudaModule(source, namespace)
    except CudaCompileError:
        for name in names_defined(source):
            namespace[name] = CompileFailed(name)
        raise
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
            mod = run_cell(cell_body(cell), ip.user_ns)
        except CudaCompileError as e:
            raise UsageError(f"CUDA compile error\n{e}") from None
        print(mod.summary())

    return True
