"""CUDA cells: compile CUDA C++ with NVRTC, report resources, launch on torch tensors.

    mod = compile_cuda(source)            # NVRTC -> cubin for sm_90 (CPU) or this GPU
    mod.report                            # registers / spills / shared memory per kernel
    mod.softmax_3pass(grid, block, (x, y, rows, cols), shared_mem=0)

Kernels must be `extern "C" __global__` so that their names survive compilation.
A cell that defines only `__device__` functions is a library: its functions are bound to
their names, and a later cell that calls them is compiled with that cell in front of it
(as a notebook's Python cells see the functions defined above them).
Scalar arguments are converted to the C type in the kernel's signature, so a
Python int passed for `int cols` arrives as a 32-bit int, not a 64-bit one.
In CPU mode kernels compile with NVRTC (same errors, same report), then run on the CPU
execution layer (course.cpucuda) for correctness.

    traffic(kernel, grid, block, args)    # or kernel.traffic(grid, block, args): one launch on the
                                          # CPU layer, its memory traffic counted (see traffic())
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

from . import mode
from .errors import CudaCompileError, NeedsGPU, NotImplementedYet

# What NVRTC lacks without math.h, and the stub that an unfilled exercise holds.
PRELUDE = r"""
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f
"""
STUB_TOKEN = "NOT_IMPLEMENTED"
CPU_ARCH = "sm_90"

_SCALARS = {
    "int": np.int32, "int32_t": np.int32, "unsigned": np.uint32, "unsigned int": np.uint32,
    "uint32_t": np.uint32, "long long": np.int64, "int64_t": np.int64,
    "unsigned long long": np.uint64, "uint64_t": np.uint64, "size_t": np.uint64,
    "float": np.float32, "double": np.float64, "bool": np.bool_,
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict"}


def strip_comments(src: str) -> str:
    """Blank out // and /* */ comments, keeping line numbers."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, src, flags=re.S)


@dataclass
class Param:
    name: str
    ctype: str
    pointer: bool


@dataclass
class KernelSignature:
    name: str
    params: list[Param]
    line: int


def _parse_params(text: str, kernel: str) -> list[Param]:
    params = []
    for raw in filter(None, (p.strip() for p in text.split(","))):
        if raw == "void":
            continue
        pointer = "*" in raw or "[" in raw
        words = [w for w in re.split(r"[\s*&\[\]]+", raw) if w and w not in _QUALIFIERS]
        if len(words) < 2:
            raise CudaCompileError(f"kernel {kernel}: cannot read parameter {raw!r}")
        name, ctype = words[-1], " ".join(words[:-1])
        if not pointer and ctype not in _SCALARS:
            raise CudaCompileError(
                f"kernel {kernel}: parameter {raw!r} has type {ctype!r}; kernels launched from "
                f"Python take pointers or one of: {', '.join(sorted(_SCALARS))}")
        params.append(Param(name, ctype, pointer))
    return params


def find_kernels(src: str) -> list[KernelSignature]:
    """Every `__global__` function of the source, with its parameters."""
    code = strip_comments(src)
    found = []
    attrs = r"(?:(?:__launch_bounds__|__cluster_dims__)\s*\([^)]*\)\s*)*"  # either, before or after void
    pattern = rf"__global__\s+{attrs}void\s+{attrs}(\w+)\s*\(([^)]*)\)"
    for m in re.finditer(pattern, code):
        line = code.count("\n", 0, m.start()) + 1
        before = code[max(0, m.start() - 40):m.start()]
        if not re.search(r'extern\s+"C"\s*$', before):
            raise CudaCompileError(
                f'line {line}: write `extern "C" __global__ void {m.group(1)}(...)` so the '
                "kernel keeps its name and Python can find it")
        found.append(KernelSignature(m.group(1), _parse_params(m.group(2), m.group(1)), line))
    return found


@dataclass
class KernelResources:
    registers: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0

    def __str__(self) -> str:
        spill = "no spills" if not (self.spill_stores or self.spill_loads) else \
            f"SPILLS {self.spill_stores} B stored / {self.spill_loads} B loaded"
        return (f"{self.registers} registers, {self.shared_bytes} B static shared memory, "
                f"{self.stack_bytes} B stack, {spill}")


def parse_ptxas_report(log: str) -> dict[str, KernelResources]:
    out: dict[str, KernelResources] = {}
    current = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line) or \
            re.search(r"Function properties for (\w+)", line)
        if m:
            current = out.setdefault(m.group(1), KernelResources())
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current.stack_bytes, current.spill_stores, current.spill_loads = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current.registers = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current.shared_bytes = int(s.group(1)) if s else 0
    return out


def _format_errors(log: str) -> str:
    out = []
    for entry in log.splitlines():
        m = re.match(r'(.*?)\((\d+)\): (error|warning)\s*:?\s*(.*)', entry)
        if m:
            where = f"line {m.group(2)}" if m.group(1) == "cell" else f"{m.group(1)}, line {m.group(2)}"
            out.append(f"{where}: {m.group(3)}: {m.group(4)}")
        elif entry.strip() and "ptxas" not in entry and "compilation" not in entry.lower():
            out.append(entry)
    return "\n".join(out) or log


def cuda_include_dirs() -> list[str]:
    """Where cuda_fp16.h and friends live: the nvidia-cuda-runtime wheel, else a CUDA toolkit."""
    import glob
    import os
    dirs = []
    try:
        import nvidia.cuda_runtime as rt
        dirs += [os.path.join(p, "include") for p in rt.__path__]
    except ImportError:
        pass
    try:
        import nvidia
        dirs += glob.glob(os.path.join(list(nvidia.__path__)[0], "cu1*", "include"))
    except (ImportError, IndexError):
        pass
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            dirs.append(os.path.join(os.environ[env], "include"))
    dirs.append("/usr/local/cuda/include")
    found = [d for d in dirs if os.path.exists(os.path.join(d, "cuda_fp16.h"))][:1]
    return found + cccl_include_dirs()


def uses_cccl(source: str) -> bool:
    """Whether CUDA source includes CUB, libcu++ or Thrust headers (GPU-only code: CPU mode cannot run it)."""
    return re.search(r'#\s*include\s*[<"](cub|cuda|thrust)/', strip_comments(source)) is not None


def cccl_include_dirs() -> list[str]:
    """CUB, Thrust and libcu++ headers (#include <cub/block/block_reduce.cuh>): the copies CuPy ships."""
    import os
    try:
        import cupy
    except Exception:  # noqa: BLE001  (no CuPy: no CUB)
        return []
    base = os.path.join(os.path.dirname(cupy.__file__), "_core", "include", "cupy", "_cccl")
    return [d for d in (os.path.join(base, n) for n in ("cub", "thrust", "libcudacxx")) if os.path.isdir(d)]


def _nvrtc_compile(src: str, arch: str) -> tuple[bytes, str]:
    """Compile `src` (a cell, after the libraries it uses and their #line markers)."""
    try:
        from cupy.cuda import nvrtc
    except Exception as e:  # pragma: no cover - depends on the install
        raise CudaCompileError(f"NVRTC is not available ({e}); install cupy and the nvrtc wheel") from None
    full = PRELUDE + src
    prog = nvrtc.createProgram(full, "cell.cu", (), ())
    try:
        opts = (f"-arch={arch}", "-std=c++17", "-Xptxas=-v", *(f"-I{d}" for d in cuda_include_dirs()))
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError:
            raise CudaCompileError(_format_errors(nvrtc.getProgramLog(prog))) from None
        log = nvrtc.getProgramLog(prog)
        cubin = nvrtc.getCUBIN(prog) + b"\0"  # cupy drops the last byte
    finally:
        nvrtc.destroyProgram(prog)
    return cubin, log


def _arch() -> str:
    if mode.GPU:
        import torch
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    return CPU_ARCH


def _as_arg(value, param: Param, kernel: str):
    import torch
    if param.pointer:
        if isinstance(value, torch.Tensor):
            if mode.GPU and not value.is_cuda:
                raise TypeError(f"{kernel}: argument {param.name!r} is a CPU tensor; move it to the GPU")
            return np.uint64(value.data_ptr())
        if isinstance(value, int):
            return np.uint64(value)
        raise TypeError(f"{kernel}: argument {param.name!r} expects a tensor (a pointer), got {type(value).__name__}")
    if isinstance(value, torch.Tensor):
        raise TypeError(f"{kernel}: argument {param.name!r} is a {param.ctype}, got a tensor")
    return _SCALARS[param.ctype](value)


def _dim3(v, what: str) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(int(i) for i in v)
    if not 1 <= len(t) <= 3 or min(t) < 1:
        raise ValueError(f"{what} must be 1 to 3 positive ints, got {v!r}")
    return t + (1,) * (3 - len(t))


@dataclass
class CudaKernel:
    signature: KernelSignature
    resources: KernelResources
    module: "CudaModule" = field(repr=False)

    @property
    def name(self) -> str:
        return self.signature.name

    def __call__(self, grid, block, args, shared_mem: int = 0) -> None:
        params = self.signature.params
        if len(args) != len(params):
            raise TypeError(f"{self.name} takes {len(params)} arguments "
                            f"({', '.join(p.name for p in params)}), got {len(args)}")
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        if not mode.GPU:  # the CPU layer runs launches in a child: outputs must be in shared memory
            import torch

            from .cpucuda import share
            share([a for a in args if isinstance(a, torch.Tensor)])
        converted = tuple(_as_arg(a, p, self.name) for a, p in zip(args, params))
        if block[0] * block[1] * block[2] > 1024:
            raise ValueError(f"{self.name}: a block holds at most 1024 threads, asked for {block}")
        launcher = self.module._launcher
        if launcher is None:
            raise NeedsGPU(f"{self.name}: CPU mode compiles CUDA cells but cannot run them; "
                           "run this on a machine with an NVIDIA GPU")
        launcher(self.name, grid, block, converted, int(shared_mem))

    def traffic(self, grid, block, args, shared_mem: int = 0):
        """Launch once on the CPU layer and count its memory traffic: see course.cuda.traffic."""
        return traffic(self, grid, block, args, shared_mem)

    def __repr__(self) -> str:
        return f"<CUDA kernel {self.name}: {self.resources}>"


def traffic(kernel, grid, block, args, shared_mem: int = 0):
    """Launch `kernel(grid, block, args)` once on the CPU execution layer and count its memory traffic,
    to see without a GPU whether it can run at copy speed. Returns a report (course.cpucuda.traffic.
    Traffic) that prints itself, per source line:

    - global memory: bytes read and written in each tensor argument, against the ideal: the size of
      each tensor the kernel reads, read once, and of each it writes, written once (also per output
      element: the elements of the tensors it writes);
    - coalescing: distinct 32-byte sectors per warp-wide request (a warp: 32 consecutive threads of a
      block, x-major; a request: one load or store instruction run by the warp's active lanes); ideal
      4 for 4-byte loads by 32 lanes of consecutive addresses, 32 when each lane is 128 bytes away;
    - shared memory: wavefronts per warp-wide access, the most distinct 4-byte words in one of the 32
      banks (1 without bank conflicts, 32 for a 32-way conflict; lanes reading one word share it).

    Fields for tests: read_bytes, written_bytes, ideal_read_bytes, ideal_written_bytes, buffers,
    sectors_per_request(kind), wavefronts_per_request(kind), bank_conflicts(kind), accesses. The
    kernel's outputs are written as by a launch in CPU mode; on a GPU the launch runs on CPU copies of
    the tensors and the GPU tensors are left as they were. Counting makes the launch a few times slower
    than a plain CPU-mode one (nothing is counted otherwise). Nothing is timed and caches are not
    modelled."""
    from .cpucuda.traffic import count
    return count(kernel, grid, block, args, shared_mem)


class _StubKernel:
    """What a kernel name is bound to while its exercise (or a library it uses) holds the stub."""

    def __init__(self, name: str, line: int, why: str = ""):
        self.name, self.line = name, line
        self.why = why or (f"CUDA kernel {name} is not implemented yet: replace {STUB_TOKEN}() "
                           f"(line {line} of its cell) with your code")

    def __call__(self, *args, **kwargs):
        raise NotImplementedYet(self.why)

    traffic = __call__


class CompileFailed:
    """What the names of a %%cuda cell that did not compile are bound to (not left undefined, so a
    test says "did not compile" rather than "run the cell first")."""

    def __init__(self, name: str):
        self.name = name
        self.why = (f"`{name}`: its %%cuda cell did not compile; fix the errors shown under that cell "
                    "and run it again")

    def __call__(self, *args, **kwargs):
        raise CudaCompileError(self.why)

    traffic = __call__

    def __repr__(self) -> str:
        return f"<CUDA {self.name}: did not compile>"


def names_defined(src: str) -> list[str]:
    """Kernel and device-function names a source defines, read without compiling it."""
    code = strip_comments(src)
    kernels = re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+"
                         r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(", code)
    return kernels + [n for n in find_device_functions(src) if n not in kernels]


_DEVICE_FN = re.compile(r"__device__\b[^;{(]*?\b(\w+)\s*\(")
_SERIAL = [0]


def find_device_functions(src: str) -> list[str]:
    """Names of the `__device__` functions a source defines (in order, once each)."""
    names = []
    for m in _DEVICE_FN.finditer(strip_comments(src)):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


class DeviceLibrary:
    """A %%cuda cell of `__device__` functions only, as later cells see it."""

    def __init__(self, source: str, functions: list[str], deps: list["DeviceLibrary"], stub_line: int):
        _SERIAL[0] += 1
        self.serial = _SERIAL[0]
        self.source, self.functions, self.deps, self.stub_line = source, functions, deps, stub_line
        self.label = f"cell of {functions[0]}"

    def closure(self) -> list["DeviceLibrary"]:
        """This library and everything it was compiled with, each after the ones it uses."""
        order: list[DeviceLibrary] = []
        seen: set[int] = set()

        def visit(lib):
            if lib.serial not in seen:
                seen.add(lib.serial)
                for d in lib.deps:
                    visit(d)
                order.append(lib)
        visit(self)
        return order


class DeviceFunction:
    """What the name of a library's `__device__` function is bound to."""

    def __init__(self, name: str, library: DeviceLibrary):
        self.name, self.library = name, library

    @property
    def implemented(self) -> bool:
        return not any(lib.stub_line for lib in self.library.closure())

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.name} is a __device__ function: call it from a kernel in a later "
                        "%%cuda cell (the cell that defines it is added in front of that cell)")

    def __repr__(self) -> str:
        return f"<CUDA device function {self.name}>"


def libraries_used(source: str, namespace: dict | None) -> list[DeviceLibrary]:
    """The libraries of the device functions a source calls but does not define, and those they
    call in turn, each after the ones it uses. Names resolve as the namespace binds them now, as
    in Python: re-running an edited library cell updates every later compile that uses it."""
    if not namespace:
        return []
    order: list[DeviceLibrary] = []
    state: dict[int, str] = {}

    def uses(src: str) -> list[DeviceLibrary]:
        words = set(re.findall(r"\b\w+\b", strip_comments(src))) - set(find_device_functions(src))
        found = {f.library.serial: f.library for w in words
                 if isinstance(f := namespace.get(w), DeviceFunction)}
        return [found[k] for k in sorted(found)]

    def visit(lib: DeviceLibrary) -> None:
        if state.get(lib.serial):
            return  # done, or on the current path (a cycle made by re-binding: keep going)
        state[lib.serial] = "visiting"
        for dep in uses(lib.source):
            visit(dep)
        state[lib.serial] = "done"
        order.append(lib)

    for lib in uses(source):
        visit(lib)
    return order


def compose(source: str, libraries: list[DeviceLibrary]) -> str:
    """The text the compiler sees: each library, then the cell, each with its own line numbers."""
    parts = [f'#line 1 "{lib.label}"\n{lib.source}\n' for lib in libraries]
    return "".join(parts) + '#line 1 "cell"\n' + source


class CudaModule:
    def __init__(self, source: str, namespace: dict | None = None):
        self.source = source
        self.kernels: dict[str, object] = {}
        self.device_functions: dict[str, DeviceFunction] = {}
        self.report: dict[str, KernelResources] = {}
        self.stub_line = 0
        self._launcher = None
        self.libraries = libraries_used(source, namespace)
        sigs = find_kernels(source)
        code = strip_comments(source)
        m = re.search(rf"\b{STUB_TOKEN}\b", code)
        if m:
            self.stub_line = code.count("\n", 0, m.start()) + 1
        device_fns = [] if sigs else find_device_functions(source)
        if device_fns:  # a library of device functions
            lib = DeviceLibrary(source, device_fns, self.libraries, self.stub_line)
            self.device_functions = {n: DeviceFunction(n, lib) for n in device_fns}
            if not self.stub_line and not any(d.stub_line for d in self.libraries):
                self._compile(compose(source, self.libraries))  # errors now, not in the cell that uses it
            return
        if self.stub_line:  # an unfilled exercise: no compile, no noise
            for s in sigs:
                self.kernels[s.name] = _StubKernel(s.name, self.stub_line)
            return
        if not sigs:
            raise CudaCompileError('no kernel found: write `extern "C" __global__ void name(...)` '
                                   '(or `__device__` functions, for later cells to call)')
        stubbed = [lib for lib in self.libraries if lib.stub_line]
        if stubbed:
            why = (f"it calls {stubbed[0].functions[0]}, which is not implemented yet: fill in its cell "
                   "and run it, then run this cell again")
            for s in sigs:
                self.kernels[s.name] = _StubKernel(s.name, 0, f"CUDA kernel {s.name} cannot run: {why}")
            self.stub_line = -1
            return
        full = self._full = compose(source, self.libraries)
        cubin = self._compile(full)
        for s in sigs:
            self.kernels[s.name] = CudaKernel(s, self.report.get(s.name, KernelResources()), self)
        if mode.GPU:
            self._launcher = _GpuLauncher(cubin)
            for s in sigs:  # NVRTC's ptxas log can come back empty (seen once a CUDA context exists)
                k = self.kernels[s.name]
                if s.name not in self.report:
                    k.resources = self.report[s.name] = self._launcher.resources(s.name)
        else:
            from .cpucuda import CpuLauncher
            self._launcher = CpuLauncher(full, sigs)

    def _compile(self, full: str) -> bytes:
        key = hashlib.sha256((_arch() + "\0" + full).encode()).hexdigest()
        if key not in _CACHE:
            _CACHE[key] = _nvrtc_compile(full, _arch())
        cubin, log = _CACHE[key]
        self.report = parse_ptxas_report(log)
        return cubin

    @property
    def implemented(self) -> bool:
        return not self.stub_line

    def __getattr__(self, name: str):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(name)

    def summary(self) -> str:
        if self.device_functions:
            names = ", ".join(self.device_functions)
            if self.stub_line:
                return (f"Not implemented yet: {names}. Replace {STUB_TOKEN}() on line {self.stub_line} "
                        "with your code, then run this cell again.")
            return (f"device functions {names}: compiled; later %%cuda cells that call them get "
                    "this cell in front of them")
        if self.stub_line == -1:
            return next(iter(self.kernels.values())).why
        if not self.implemented:
            names = ", ".join(self.kernels) or "(none)"
            return (f"Not implemented yet: {names}. Replace {STUB_TOKEN}() on line {self.stub_line} "
                    "with your code, then run this cell again.")
        where = mode.device_name() if mode.GPU else (
            f"{CPU_ARCH}; it uses CUB, which runs on a GPU only: CPU mode cannot launch it"
            if uses_cccl(self.source) else f"{CPU_ARCH}; in CPU mode it runs on the CPU execution layer")
        rows = [f"compiled for {where}"]
        rows += [f"  {k.name}: {k.resources}" for k in self.kernels.values()]
        return "\n".join(rows)


_CACHE: dict[str, tuple[bytes, str]] = {}


class _GpuLauncher:
    def __init__(self, cubin: bytes):
        import cupy
        self._cupy = cupy
        self._module = cupy.cuda.function.Module()
        self._module.load(cubin)
        self._functions: dict[str, object] = {}

    def resources(self, name: str) -> KernelResources:
        """Registers, static shared memory and local memory (stack + spills) from the driver."""
        drv = self._cupy.cuda.driver
        fn = self._functions.get(name) or self._functions.setdefault(name, self._module.get_function(name))
        get = lambda attr: int(drv.funcGetAttribute(attr, fn.ptr))  # noqa: E731
        return KernelResources(registers=get(drv.CU_FUNC_ATTRIBUTE_NUM_REGS),
                               shared_bytes=get(drv.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                               stack_bytes=get(drv.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES))

    def __call__(self, name, grid, block, args, shared_mem):
        import torch
        cupy = self._cupy
        fn = self._functions.get(name)
        if fn is None:
            fn = self._functions[name] = self._module.get_function(name)
        if shared_mem > 48 * 1024:
            cupy.cuda.driver.funcSetAttribute(
                fn.ptr, cupy.cuda.driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem)
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        fn(grid, block, args, shared_mem=shared_mem, stream=stream)


def compile_cuda(source: str, namespace: dict | None = None) -> CudaModule:
    """Compile CUDA source; `namespace` supplies the device-function libraries it may call."""
    return CudaModule(source, namespace)
