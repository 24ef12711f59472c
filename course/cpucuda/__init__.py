"""Run CUDA cells on the CPU, for correctness (CPU mode).

The cell is compiled as host C++ against flashcuda_cpu.h (each CUDA thread a fiber, blocks one
after another, barriers and warp intrinsics real), cached by a hash of the source, and every
launch runs in a forked child on tensors moved to shared memory, with a timeout: a crash, an
endless loop or a deadlock comes back as a Python error and the notebook lives on.

Shared-memory races are detected, as compute-sanitizer's racecheck does: a write and a read, or
two writes, of one shared-memory byte by two threads with no __syncthreads() between (nor, for
two lanes of one warp, a __syncwarp() or shuffle that both join) fail the launch with both lines.
The cell is compiled with GCC's -fsanitize=thread instrumentation (the hooks are in the header, no
TSan runtime); __shared__ declarations are rewritten to live in one pool (see translate()).
FLASHCOURSE_CPU_RACECHECK=0 turns the check off.

Memory traffic (course.cuda.traffic): a launch can also count its global bytes per tensor, 32-byte
sectors per warp-wide request and shared-memory bank conflicts (course/cpucuda/traffic.py says how).
It runs on a build of its own (-DFC_TRAFFIC), so other launches neither compile nor run the counting.

Not modelled: warps do not run in lockstep (code relying on implicit warp synchrony fails, as it
may on Volta and later GPUs), races in global memory are not detected, __expf is exact, nothing
is timed.
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

from ..errors import NeedsGPU
from . import pch as precompiled

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "flashcuda_cpu.h")
INCLUDE = os.path.join(HERE, "include")
CACHE = os.environ.get("FLASHCOURSE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "flashcourse"))
TIMEOUT_S = float(os.environ.get("FLASHCOURSE_CPU_CUDA_TIMEOUT", "30"))
RACECHECK = os.environ.get("FLASHCOURSE_CPU_RACECHECK", "1").strip().lower() not in ("0", "no", "off", "false")

_CTYPES = {
    "int": ctypes.c_int32, "int32_t": ctypes.c_int32, "unsigned": ctypes.c_uint32, "unsigned int": ctypes.c_uint32,
    "uint32_t": ctypes.c_uint32, "long long": ctypes.c_int64, "int64_t": ctypes.c_int64,
    "unsigned long long": ctypes.c_uint64, "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_uint64,
    "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
}


class CpuCudaError(RuntimeError):
    """A CUDA kernel failed when run on the CPU (deadlock, crash, timeout)."""


def _strip_comments(src: str) -> str:
    """Blank out // and /* */ comments, keeping offsets and line numbers."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)


_ALIGN = re.compile(r"__align__\s*\(([^()]*)\)|alignas\s*\(([^()]*)\)"
                    r"|__attribute__\s*\(\(\s*aligned\s*\(([^()]*)\)\s*\)\)")
_CV = {"const", "volatile", "__restrict__", "__restrict", "restrict"}


def _decl_end(code: str, i: int) -> int:
    """Index of the `;` that ends the declaration starting at i, or -1 if it is not a plain one."""
    depth = angle = 0
    while i < len(code):
        ch = code[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch == "<":
            angle += 1
        elif depth == 0 and ch == ">":
            angle -= 1
        elif ch in "{}=" or ch == "#" or (ch == ";" and (depth or angle)):
            return -1
        elif ch == ";":
            return i
        i += 1
    return -1


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _declarator_name(d: str) -> re.Match | None:
    """The declared name in a declarator (`buf[256]`, `* p`, `float buf[N]`): the last identifier
    before the first top-level `[`."""
    depth, cut = 0, len(d)
    for i, ch in enumerate(d):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == "[" and depth == 0:
            cut = i
            break
    names = [m for m in re.finditer(r"[A-Za-z_]\w*", d[:cut]) if m.group(0) not in _CV]
    if not names or "(" in d[names[-1].end():cut]:
        return None
    return names[-1]


def _shared_decl(body: str) -> str | None:
    """`float sm[32], sd[32]` (after `__shared__`) -> references into the layer's shared pool."""
    aligns = [next(g for g in m.groups() if g is not None).strip() for m in _ALIGN.finditer(body)]
    body = _ALIGN.sub(" ", body)
    if "(" in re.sub(r"\[[^\[\]]*\]|<[^<>]*>", "", body):
        return None  # a function pointer or another declarator this does not read
    chunks = _split_top(body)
    first = _declarator_name(chunks[0])
    if first is None:
        return None
    star = chunks[0].find("*", 0, first.start())
    amp = chunks[0].find("&", 0, first.start())
    cut = min(x for x in (star, amp, first.start()) if x >= 0)
    spec = " ".join(chunks[0][:cut].split())
    if not spec or re.fullmatch(r"(?:\s*(?:const|volatile)\b)*", spec):
        return None
    align = f"(size_t)({aligns[-1]})" if aligns else "0"
    out = []
    for d in [chunks[0][cut:], *chunks[1:]]:
        m = _declarator_name(d)
        if m is None:
            return None
        name = m.group(0)
        ref = f"{d[:m.start()]}(&{name}){d[m.end():]}"
        abstract = f"{d[:m.start()]}{d[m.end():]}"
        out.append(f'static {spec} {" ".join(ref.split())} = *fc::shared_var<{spec} {" ".join(abstract.split())}>'
                   f'("{name}", {align});')
    return " ".join(out)


def _rewrite_static_shared(src: str) -> str:
    """`__shared__ float buf[N];` -> `static float (&buf)[N] = *fc::shared_var<float [N]>("buf", 0);`:
    the variable lives in the layer's shared-memory pool, where its accesses are checked for races
    and its name is known. Lines keep their numbers; a declaration this cannot read stays a plain
    static (it works, unchecked)."""
    code = _strip_comments(src)
    out, pos = [], 0
    for m in re.finditer(r"(?<![\w#])(?:static\s+)?__shared__\b", code):
        if m.start() < pos:
            continue
        line = code[code.rfind("\n", 0, m.start()) + 1:m.start()]
        if line.lstrip().startswith("#") or re.search(r"\bextern\s*$", code[max(0, m.start() - 30):m.start()]):
            continue
        end = _decl_end(code, m.end())
        if end < 0 or "\\\n" in code[m.start():end]:  # not plain, or continued inside a macro
            continue
        new = _shared_decl(code[m.end():end])
        if new is None:
            continue
        out += [src[pos:m.start()], new, "\n" * code.count("\n", m.start(), end)]
        pos = end + 1
    return "".join(out) + src[pos:]


def translate(source: str) -> str:
    """CUDA source -> what the host compiler sees: dynamic shared memory becomes a pointer into the
    layer's shared memory, static __shared__ variables references into its pool."""
    pattern = (r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?"
               r"([\w:]+(?:\s+[\w:]+)*?)\s+(\w+)\s*\[\s*\]\s*;")
    source = re.sub(pattern, r'\1* \2 = fc::dynamic_smem<\1>("\2");', source)
    return _rewrite_static_shared(source)


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
# which nvcc compiles as meant and g++ -O2 may not. -fno-threadsafe-statics: one OS thread.
# -D__CUDA_ARCH__=900: a cell's `#if __CUDA_ARCH__` branches are the ones an sm_90 compile takes (NVRTC defines it).
CXXFLAGS = ("-std=gnu++17", "-O2", "-fno-strict-aliasing", "-fPIC", "-fno-threadsafe-statics", "-w",
            "-D__CUDA_ARCH__=900")
# Race detection: GCC's ThreadSanitizer instrumentation calls the header's hooks on every load and
# store (not linked with the TSan runtime: compile and link are two steps); -g1 gives the lines.
RACE_FLAGS = ("-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0", "-g1")
LDFLAGS = ("-shared", "-Wl,-Bsymbolic", "-ldl")


def _cxxflags(traffic: bool = False) -> tuple[str, ...]:
    """The compiler flags: instrumented (every load and store seen) for the race check, and for a
    traffic build (course.cuda.traffic), which also compiles the header's counting code."""
    if traffic:
        return CXXFLAGS + RACE_FLAGS + ("-DFC_TRAFFIC",)
    return CXXFLAGS + (RACE_FLAGS if RACECHECK else ())


def _compile(flags, cpp: str, obj: str, out: str) -> subprocess.CompletedProcess:
    cxx = os.environ.get("CXX", "g++")
    includes = (f"-I{HERE}", f"-I{INCLUDE}")
    pch = precompiled.include_dir(flags, includes)  # the header, precompiled for these flags (course/cpucuda/pch.py)
    r = subprocess.run([cxx, *flags, *((f"-I{pch}",) if pch else ()), *includes, "-c", cpp, "-o", obj],
                       capture_output=True, text=True)
    if not r.returncode:
        r = subprocess.run([cxx, obj, *LDFLAGS, "-o", out], capture_output=True, text=True)
    return r


def build(source: str, sigs, traffic: bool = False) -> str:
    """Compile the cell for the CPU; return the path of the shared library (cached). `traffic`: the
    build that counts memory traffic (a library of its own, so that other launches pay nothing)."""
    with open(HEADER) as f:
        header = f.read()
    text = f'#include "flashcuda_cpu.h"\n#line 1 "cell"\n{translate(source)}\n{_launcher_cpp(sigs)}'
    flags = _cxxflags(traffic)
    key = hashlib.sha256((header + "\0" + text + "\0" + " ".join(flags + LDFLAGS)).encode()).hexdigest()[:24]
    os.makedirs(CACHE, exist_ok=True)
    so = os.path.join(CACHE, f"cpucuda-{key}.so")
    if os.path.exists(so):
        return so
    with tempfile.TemporaryDirectory() as tmp:
        cpp = os.path.join(tmp, "cell.cpp")
        with open(cpp, "w") as f:
            f.write(text)
        obj, out = os.path.join(tmp, "cell.o"), os.path.join(tmp, "cell.so")
        r = _compile(flags, cpp, obj, out)
        if r.returncode and traffic:
            from ..errors import CudaCompileError
            raise CudaCompileError("CPU mode: the C++ compiler cannot build this cell with -fsanitize=thread "
                                   "instrumentation, which counting memory traffic needs:\n" + _format(r.stderr))
        if r.returncode and flags != CXXFLAGS and not _compile(CXXFLAGS, cpp, obj, out).returncode:
            import warnings
            warnings.warn(f"CPU mode: the C++ compiler ({os.environ.get('CXX', 'g++')}) cannot build CUDA cells "
                          "with -fsanitize=thread instrumentation; they run, but shared-memory races are not "
                          "detected", RuntimeWarning, stacklevel=2)
            r = subprocess.CompletedProcess([], 0)
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
        self._so_traffic = None

    def __call__(self, name, grid, block, args, shared_mem, traffic=None):
        """Run one launch. `traffic`: a list of (address, bytes) of the launch's tensors, to count the
        memory traffic; then the counts come back as text (course.cpucuda.traffic reads them)."""
        from ..cuda import uses_cccl
        if uses_cccl(self.source):
            raise NeedsGPU(f"{name} uses CUB (or libcu++/Thrust), whose block- and warp-wide primitives are written "
                           "for the GPU itself (its warps, shuffles and shared memory): NVRTC compiled the cell (the "
                           "register report above is real), but CPU mode cannot run it. Run it on a GPU.")
        if traffic is not None:
            if self._so_traffic is None:
                self._so_traffic = build(self.source, list(self.sigs.values()), traffic=True)
            so = self._so_traffic
        else:
            if self._so is None:
                self._so = build(self.source, list(self.sigs.values()))
            so = self._so
        sig = self.sigs[name]
        keep, ptrs = [], []
        for value, p in zip(args, sig.params):
            if p.pointer:  # a tensor's address (already in shared memory), from course.cuda
                c = ctypes.c_void_p(int(value))
            else:
                c = _CTYPES[p.ctype](value.item() if hasattr(value, "item") else value)
            keep.append(c)
            ptrs.append(ctypes.cast(ctypes.pointer(c), ctypes.c_void_p))
        counts = _run_in_child(so, name, grid, block, shared_mem, keep, ptrs, traffic)
        return None if traffic is None else (counts, so)


def share(tensors) -> None:
    """Move CPU tensors' storage to shared memory, so a forked child's writes come back."""
    for t in tensors:
        st = t.untyped_storage()
        if not st.is_shared():
            st.share_memory_()


def _run_in_child(so, name, grid, block, smem, keep, ptrs, traffic=None) -> str:
    """Run the launch in a forked child; return the traffic counts' text (empty without `traffic`)."""
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
            if traffic is not None:
                flat = [int(v) for rng in traffic for v in rng]
                lib.fc_traffic_begin(ctypes.c_int(int(RACECHECK)), ctypes.c_int(len(traffic)),
                                     (ctypes.c_ulonglong * max(1, len(flat)))(*flat))
            rc = fn(*[ctypes.c_uint(v) for v in (*grid, *block)], ctypes.c_ulong(smem), arr)
            lib.fc_error.restype = ctypes.c_char_p
            msg = lib.fc_error().decode() if rc else ""
            if traffic is not None and not rc:
                lib.fc_traffic.restype = ctypes.c_char_p
                msg = "\0" + lib.fc_traffic().decode()
            _write_all(wfd, (f"{rc}\n{msg}").encode())
        except BaseException as e:  # noqa: BLE001
            _write_all(wfd, f"1\n{type(e).__name__}: {e}".encode())
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
        raise CpuCudaError(f"{name}: {_lines(msg, so)}")
    return msg[1:] if msg.startswith("\0") else ""


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _lines(msg: str, so: str) -> str:
    """Replace the code addresses of a race report (@L<hex>@) by the lines of the cell (addr2line,
    part of binutils, which g++ needs anyway)."""
    def line(m: re.Match) -> str:
        try:
            r = subprocess.run(["addr2line", "-i", "-e", so, f"0x{m.group(1)}"], capture_output=True, text=True,
                               timeout=30)
            return _cell_line(r.stdout.splitlines())
        except (OSError, subprocess.SubprocessError):
            return "an unknown line"
    return re.sub(r"@L([0-9a-f]+)@", line, msg)


def _cell_line(frames: list[str]) -> str:
    """The first frame in the student's code (a cell, or a library cell it calls), as 'line N'."""
    for f in frames:
        m = re.match(r"(.*?):(\d+)", f)
        if not m:
            continue
        file = os.path.basename(m.group(1))
        if file == "cell":
            return f"line {m.group(2)}"
        if file.startswith("cell of "):
            return f"line {m.group(2)} of the {file}"
    return "an unknown line"
