"""Run CUDA cells on the CPU, for correctness (CPU mode).

The cell is compiled as host C++ against flashcuda_cpu.h (each CUDA thread a fiber, blocks one
after another, barriers and warp intrinsics real), cached by a hash of the source, and every
launch runs in a forked child on tensors moved to shared memory, with a timeout: a crash, an
endless loop or a deadlock comes back as a Python error and the notebook lives on.

Not modelled: warps do not run in lockstep (code relying on implicit warp synchrony fails, as it
may on Volta and later GPUs), races are not detected, __expf is exact, nothing is timed.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import select
import signal
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "flashcuda_cpu.h")
INCLUDE = os.path.join(HERE, "include")
CACHE = os.environ.get("FLASHCOURSE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "flashcourse"))
TIMEOUT_S = float(os.environ.get("FLASHCOURSE_CPU_CUDA_TIMEOUT", "30"))

_CTYPES = {
    "int": ctypes.c_int32, "int32_t": ctypes.c_int32, "unsigned": ctypes.c_uint32, "unsigned int": ctypes.c_uint32,
    "uint32_t": ctypes.c_uint32, "long long": ctypes.c_int64, "int64_t": ctypes.c_int64,
    "unsigned long long": ctypes.c_uint64, "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_uint64,
    "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
}


class CpuCudaError(RuntimeError):
    """A CUDA kernel failed when run on the CPU (deadlock, crash, timeout)."""


def translate(source: str) -> str:
    """CUDA source -> what the host compiler sees: dynamic shared memory becomes a pointer."""
    pattern = (r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?"
               r"([\w:]+(?:\s+[\w:]+)*?)\s+(\w+)\s*\[\s*\]\s*;")
    return re.sub(pattern, r"\1* \2 = (\1*)fc::dynamic_smem();", source)


def _launcher_cpp(sigs) -> str:
    out = ['\n#line 1 "flashcourse-launchers"', 'extern "C" const char* fc_error() { return fc::ctx().error.c_str(); }']
    for s in sigs:
        args = ", ".join(f"*({p.ctype}{'*' if p.pointer else ''}*)a[{i}]" for i, p in enumerate(s.params))
        out.append(f'extern "C" int fc_launch_{s.name}(unsigned gx, unsigned gy, unsigned gz, unsigned bx, '
                   f'unsigned by, unsigned bz, unsigned long smem, void** a) {{\n'
                   f'  return fc::launch([=] {{ {s.name}({args}); }}, dim3(gx, gy, gz), dim3(bx, by, bz), smem);\n}}')
    return "\n".join(out) + "\n"


def _format(log: str) -> str:
    lines = []
    for ln in log.splitlines():
        m = re.match(r"cell:(\d+):(\d+:)?\s*(error|warning):\s*(.*)", ln)
        if m and m.group(3) == "error":
            lines.append(f"line {m.group(1)}: error: {m.group(4)}")
    return "\n".join(lines[:10]) or log[-2000:]


# -fno-strict-aliasing: CUDA code reads registers through other types (a uint4 as 4 __nv_bfloat162),
# which nvcc compiles as meant and g++ -O2 may not.
CXXFLAGS = ("-std=gnu++17", "-O2", "-fno-strict-aliasing", "-fPIC", "-shared", "-w")


def build(source: str, sigs) -> str:
    """Compile the cell for the CPU; return the path of the shared library (cached)."""
    with open(HEADER) as f:
        header = f.read()
    text = f'#include "flashcuda_cpu.h"\n#line 1 "cell"\n{translate(source)}\n{_launcher_cpp(sigs)}'
    key = hashlib.sha256((header + "\0" + text + "\0" + " ".join(CXXFLAGS)).encode()).hexdigest()[:24]
    os.makedirs(CACHE, exist_ok=True)
    so = os.path.join(CACHE, f"cpucuda-{key}.so")
    if os.path.exists(so):
        return so
    with tempfile.TemporaryDirectory() as tmp:
        cpp = os.path.join(tmp, "cell.cpp")
        with open(cpp, "w") as f:
            f.write(text)
        out = os.path.join(tmp, "cell.so")
        cmd = [os.environ.get("CXX", "g++"), *CXXFLAGS, f"-I{HERE}", f"-I{INCLUDE}", cpp, "-o", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            from ..errors import CudaCompileError
            raise CudaCompileError("the CPU execution layer could not compile this cell (it compiled for the "
                                   "GPU; it may use a CUDA feature CPU mode does not model):\n" + _format(r.stderr))
        os.replace(out, so)
    return so


class CpuLauncher:
    def __init__(self, source: str, sigs):
        self.source, self.sigs = source, {s.name: s for s in sigs}
        self._so = None

    def __call__(self, name, grid, block, args, shared_mem):
        if self._so is None:
            self._so = build(self.source, list(self.sigs.values()))
        sig = self.sigs[name]
        keep, ptrs = [], []
        for value, p in zip(args, sig.params):
            if p.pointer:  # a tensor's address (already in shared memory), from course.cuda
                c = ctypes.c_void_p(int(value))
            else:
                c = _CTYPES[p.ctype](value.item() if hasattr(value, "item") else value)
            keep.append(c)
            ptrs.append(ctypes.cast(ctypes.pointer(c), ctypes.c_void_p))
        _run_in_child(self._so, name, grid, block, shared_mem, keep, ptrs)


def share(tensors) -> None:
    """Move CPU tensors' storage to shared memory, so a forked child's writes come back."""
    for t in tensors:
        st = t.untyped_storage()
        if not st.is_shared():
            st.share_memory_()


def _run_in_child(so, name, grid, block, smem, keep, ptrs) -> None:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: run the kernel, report, exit without cleanup
        try:
            os.close(rfd)
            import faulthandler
            faulthandler.disable()  # a crash is reported by the parent, once
            lib = ctypes.CDLL(so)
            fn = getattr(lib, f"fc_launch_{name}")
            fn.restype = ctypes.c_int
            arr = (ctypes.c_void_p * max(1, len(ptrs)))(*[p.value for p in ptrs])
            rc = fn(*[ctypes.c_uint(v) for v in (*grid, *block)], ctypes.c_ulong(smem), arr)
            lib.fc_error.restype = ctypes.c_char_p
            msg = lib.fc_error().decode() if rc else ""
            os.write(wfd, (f"{rc}\n{msg}").encode())
        except BaseException as e:  # noqa: BLE001
            os.write(wfd, f"1\n{type(e).__name__}: {e}".encode())
        finally:
            os._exit(0)
    os.close(wfd)
    data = b""
    try:
        while True:
            ready, _, _ = select.select([rfd], [], [], TIMEOUT_S)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise CpuCudaError(f"{name} did not finish within {TIMEOUT_S:.0f} s on the CPU and was stopped: "
                                   "an endless loop? (a loop bound that never grows, a stride of 0)")
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(rfd)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        raise CpuCudaError(f"{name} crashed on the CPU ({sig}): it read or wrote far outside its tensors "
                           "(an index past the end, a wrong row offset?)")
    rc, _, msg = data.decode(errors="replace").partition("\n")
    if rc.strip() != "0":
        raise CpuCudaError(f"{name}: {msg}")
