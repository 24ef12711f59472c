"""The %%cuda cell magic: compile the cell, show the report, bind kernels to names."""
from __future__ import annotations

import re

from .cuda import CompileFailed, CudaModule, libraries_used, names_defined
from .errors import CudaCompileError

# "line 7: error: ..." (the cell) or "LIBRARY, line 7: ..." (a library cell it uses), as course.cuda words them
_WHERE = re.compile(r"^(?:(?P<lib>[^\n:]+?), )?line (?P<n>\d+)(?P<rest>:.*)$")


class CudaCellError(CudaCompileError):
    """A %%cuda cell that does not compile, shown as a plain error: its message, no traceback and no
    "UsageError:" prefix, and under each line it names, that source line quoted (JupyterLab hides line
    numbers by default)."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom tracebacks
        lines = str(self).splitlines() or [""]
        return [f"\x1b[0;31m{lines[0]}\x1b[0m", *lines[1:]]


def quote_lines(message: str, cell: str, libraries: dict[str, str] | None = None) -> str:
    """The compiler's message with the source line each entry names quoted under it, numbered as the
    editor numbers it (`cell` is the cell_body; `libraries` maps a library cell's label to its source).
    NVRTC's own copy of the line (unnumbered) and its caret are replaced by the numbered line and the caret
    under it."""
    entries, out, k = message.splitlines(), [], 0
    while k < len(entries):
        entry = entries[k]
        out.append(entry)
        k += 1
        m = _WHERE.match(entry)
        if not m:
            continue
        src = cell if m.group("lib") is None else (libraries or {}).get(m.group("lib"))
        n = int(m.group("n"))
        lines = src.split("\n") if src is not None else []
        if not (1 <= n <= len(lines) and lines[n - 1].strip()):
            continue
        line = lines[n - 1].rstrip().expandtabs(4)
        prefix = f"  {n:>4} | "
        out.append(prefix + line)
        if k < len(entries) and entries[k].strip() == line.strip():  # NVRTC's copy of the line, then its caret
            theirs = entries[k].expandtabs(4)
            k += 1
            if k < len(entries) and entries[k].strip() and set(entries[k].strip()) <= set("^~"):
                col = len(entries[k]) - len(entries[k].lstrip()) - (len(theirs) - len(theirs.lstrip()))
                at = len(line) - len(line.lstrip()) + max(0, col)
                out.append(" " * (len(prefix) - 2) + "| " + " " * at + entries[k].strip())
                k += 1
    return "\n".join(out)


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


def cell_error(e: CudaCompileError, body: str, namespace: dict) -> CudaCellError:
    """What the %%cuda magic raises when its cell does not compile."""
    try:
        libs = {lib.label: lib.source for lib in libraries_used(body, namespace)}
    except Exception:  # noqa: BLE001  (the message is shown without library lines quoted)
        libs = {}
    return CudaCellError("CUDA compile error\n" + quote_lines(str(e), body, libs))


def register(ipython=None) -> bool:
    try:
        from IPython import get_ipython
        from IPython.core.magic import register_cell_magic
    except ImportError:
        return False
    ip = ipython or get_ipython()
    if ip is None:
        return False

    @register_cell_magic
    def cuda(line, cell):  # noqa: ARG001
        body = cell_body(cell)
        try:
            mod = run_cell(body, ip.user_ns)
        except CudaCompileError as e:
            raise cell_error(e, body, ip.user_ns) from None
        print(mod.summary())

    return True
