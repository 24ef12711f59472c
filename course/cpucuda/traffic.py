"""Memory traffic of one CUDA launch, counted on the CPU execution layer (course.cuda.traffic).

What is counted (flashcuda_cpu.h logs every load and store while a traffic launch runs):

- global memory: the bytes each thread loads or stores in the launch's tensors (pointer arguments), per
  tensor. The ideal is derived from the sizes of the tensors the launch was given: each tensor the
  kernel reads at all counts its size once as ideal bytes read, each tensor it writes its size once as
  ideal bytes written (so an input read twice is 2x, a tensor read and written counts in both);
- requests: a warp is 32 consecutive threads of a block in x-major order (threadIdx.x fastest); one
  load or store instruction executed by the warp's active lanes is one request (the layer's threads do
  not run in lockstep, so lanes are matched by instruction and by how many times each has executed it;
  requests never span a __syncthreads()). A global request touches some distinct 32-byte sectors; its
  ideal is its distinct bytes / 32, rounded up (4 for 32 lanes loading 4 consecutive bytes each);
- shared memory: 32 banks of 4 bytes; a warp-wide shared access costs as many wavefronts as the largest
  number of distinct 4-byte words that fall in one bank (lanes reading the same word get it by
  broadcast); its ideal is its distinct words / 32, rounded up; the excess is bank conflicts.

Not modelled: caches (a sector loaded twice counts twice), memory the kernel reaches other than through
its tensors and shared memory, the CPU compiler's optimisations differ from nvcc's (it may merge or drop a
repeated load that nvcc keeps, or the other way round).
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from . import _cell_line

KINDS = {1: "load", 2: "store", 3: "atomic"}
SHARED = 255


@dataclass
class Access:
    """The warp-wide requests of one source line to one tensor (or to shared memory), loads or stores."""
    line: str
    space: str  # "global" or "shared"
    kind: str  # "load", "store" or "atomic"
    buffer: str  # the kernel's parameter name, or the __shared__ variable's ("shared" if unknown)
    requests: int = 0
    lanes: int = 0  # active lanes summed over the requests
    bytes: int = 0
    sectors: int = 0  # global: distinct 32-byte sectors summed over the requests
    ideal_sectors: int = 0
    wavefronts: int = 0  # shared: max distinct words in one bank, summed over the requests
    ideal_wavefronts: int = 0

    @property
    def per_request(self) -> float:
        """Sectors (global) or wavefronts (shared) per request."""
        return (self.sectors if self.space == "global" else self.wavefronts) / max(1, self.requests)

    @property
    def ideal_per_request(self) -> float:
        return (self.ideal_sectors if self.space == "global" else self.ideal_wavefronts) / max(1, self.requests)

    @property
    def bank_conflicts(self) -> int:
        """Extra wavefronts (replays) beyond the ideal, over all requests (as Nsight Compute counts them)."""
        return self.wavefronts - self.ideal_wavefronts


@dataclass
class Buffer:
    """One pointer argument: its size as given to the launch, and the bytes the kernel moved in it."""
    name: str
    size: int
    elements: int
    read: int = 0  # bytes the threads loaded
    written: int = 0  # bytes they stored
    atomic: int = 0  # bytes of atomic operations
    read_sectors: int = 0  # distinct 32-byte sectors summed over the load requests
    written_sectors: int = 0


@dataclass
class Traffic:
    """The memory traffic of one launch (course.cuda.traffic returns it; print it, or read its fields)."""
    kernel: str
    grid: tuple
    block: tuple
    buffers: dict = field(default_factory=dict)  # name -> Buffer
    accesses: list = field(default_factory=list)  # Access, in source order

    # -- global memory: bytes ------------------------------------------------------------------------
    @property
    def read_bytes(self) -> int:
        return sum(b.read for b in self.buffers.values())

    @property
    def written_bytes(self) -> int:
        return sum(b.written for b in self.buffers.values())

    @property
    def ideal_read_bytes(self) -> int:
        """The size of every tensor the kernel read (each input byte read once)."""
        return sum(b.size for b in self.buffers.values() if b.read or b.atomic)

    @property
    def ideal_written_bytes(self) -> int:
        """The size of every tensor the kernel wrote (each output byte written once)."""
        return sum(b.size for b in self.buffers.values() if b.written or b.atomic)

    @property
    def output_elements(self) -> int:
        return sum(b.elements for b in self.buffers.values() if b.written or b.atomic)

    @property
    def bytes_per_output(self) -> float:
        return (self.read_bytes + self.written_bytes) / max(1, self.output_elements)

    @property
    def ideal_bytes_per_output(self) -> float:
        return (self.ideal_read_bytes + self.ideal_written_bytes) / max(1, self.output_elements)

    @property
    def ratio(self) -> float:
        """Bytes moved / ideal bytes (1.0: each input byte read once, each output byte written once)."""
        return (self.read_bytes + self.written_bytes) / max(1, self.ideal_read_bytes + self.ideal_written_bytes)

    # -- requests --------------------------------------------------------------------------------------
    def _sum(self, space: str, kind: str | None, attr: str) -> int:
        return sum(getattr(a, attr) for a in self.accesses if a.space == space and kind in (None, a.kind))

    def requests(self, space: str = "global", kind: str | None = None) -> int:
        return self._sum(space, kind, "requests")

    def sectors(self, kind: str | None = None) -> int:
        """Distinct 32-byte sectors summed over the global requests (loads, stores or both)."""
        return self._sum("global", kind, "sectors")

    def sector_bytes(self, kind: str | None = None) -> int:
        """What moves between the SMs and memory if nothing is cached: 32 bytes per sector."""
        return 32 * self.sectors(kind)

    def sectors_per_request(self, kind: str | None = None) -> float:
        return self.sectors(kind) / max(1, self.requests("global", kind))

    def ideal_sectors_per_request(self, kind: str | None = None) -> float:
        return self._sum("global", kind, "ideal_sectors") / max(1, self.requests("global", kind))

    def wavefronts(self, kind: str | None = None) -> int:
        return self._sum("shared", kind, "wavefronts")

    def wavefronts_per_request(self, kind: str | None = None) -> float:
        """Shared memory: 1.0 without bank conflicts (for 4-byte accesses), 32.0 for a 32-way conflict."""
        return self.wavefronts(kind) / max(1, self.requests("shared", kind))

    def bank_conflicts(self, kind: str | None = None) -> int:
        return self.wavefronts(kind) - self._sum("shared", kind, "ideal_wavefronts")

    # -- text ------------------------------------------------------------------------------------------
    def __str__(self) -> str:
        dims = lambda d: "(" + ", ".join(map(str, d)) + ")"  # noqa: E731
        out = [f"memory traffic of {self.kernel}, grid {dims(self.grid)}, block {dims(self.block)} "
               "(counted on the CPU, per warp-wide request; caches not modelled)"]
        if self.buffers:
            out.append(f"global memory: read {self.read_bytes} B, written {self.written_bytes} B; ideal "
                       f"{self.ideal_read_bytes} B and {self.ideal_written_bytes} B (each tensor it reads read "
                       f"once, each it writes written once): {self.ratio:.2f}x ideal")
            if self.output_elements:
                out.append(f"  {self.bytes_per_output:.2f} B per output element (ideal "
                           f"{self.ideal_bytes_per_output:.2f})")
            for b in self.buffers.values():
                x = lambda n: f"{n / max(1, b.size):.2f}x its size"  # noqa: E731
                moved = [f"read {b.read} B ({x(b.read)}; in 32-byte sectors {32 * b.read_sectors} B, "
                         f"{x(32 * b.read_sectors)})" if b.read else "",
                         f"written {b.written} B ({x(b.written)}; in 32-byte sectors {32 * b.written_sectors} B, "
                         f"{x(32 * b.written_sectors)})" if b.written else "",
                         f"atomics {b.atomic} B" if b.atomic else ""]
                out.append(f"  {b.name} ({b.size} B): {', '.join(m for m in moved if m) or 'not touched'}")
        for space in ("global", "shared"):
            rows = [a for a in self.accesses if a.space == space]
            if not rows:
                continue
            if space == "global":
                out.append(f"global requests: {self.sectors_per_request():.2f} sectors of 32 B per request "
                           f"(ideal {self.ideal_sectors_per_request():.2f}); {self.sector_bytes()} B in sectors")
            else:
                out.append(f"shared memory: {self.wavefronts_per_request():.2f} wavefronts per request, "
                           f"{self.bank_conflicts()} bank conflicts (extra wavefronts)")
            for a in rows:
                unit = "sectors" if space == "global" else "wavefronts"
                extra = "" if space == "global" else ", no conflicts" if not a.bank_conflicts else (
                    f", {a.bank_conflicts / a.requests:.2f} conflicts/request")
                out.append(f"  {a.line}: {a.kind} {a.buffer}: {a.requests} requests, {a.lanes / a.requests:.1f} "
                           f"lanes and {a.per_request:.2f} {unit} each (ideal {a.ideal_per_request:.2f}){extra}")
        if not self.accesses:
            out.append("no loads or stores of its tensors or of shared memory were seen")
        return "\n".join(out)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython shows it as text
        p.text(str(self))


def lines_of(so: str, pcs: list[int]) -> dict[int, str]:
    """Code addresses -> 'line N' of the cell (one addr2line call)."""
    if not pcs:
        return {}
    try:
        r = subprocess.run(["addr2line", "-a", "-i", "-e", so, *(f"0x{pc:x}" for pc in pcs)],
                           capture_output=True, text=True, timeout=60)
        out = r.stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        out = []
    frames: dict[int, list[str]] = {}
    cur = None
    for ln in out:
        if re.fullmatch(r"0x[0-9a-f]+", ln.strip()):
            cur = int(ln, 16)
            frames[cur] = []
        elif cur is not None:
            frames[cur].append(ln)
    return {pc: _cell_line(frames.get(pc, [])) for pc in pcs}


def parse(text: str, so: str, kernel: str, grid, block, buffers: list[Buffer]) -> Traffic:
    """The child's counts (flashcuda_cpu.h, traffic_report) -> a Traffic report."""
    rep = Traffic(kernel, tuple(grid), tuple(block))
    for b in buffers:
        if b.name in rep.buffers:  # the same name twice cannot happen in C; keep both anyway
            b.name += "'"
        rep.buffers[b.name] = b
    rows = []
    for ln in text.splitlines():
        f = ln.split()
        if f and f[0] == "B":
            i, read, written, atomic = map(int, f[1:])
            if i < len(buffers):
                buffers[i].read, buffers[i].written, buffers[i].atomic = read, written, atomic
        elif f and f[0] == "I":
            rows.append((int(f[1], 16), *map(int, f[2:9]), f[9] if len(f) > 9 and f[9] != "-" else "shared"))
    where = lines_of(so, sorted({r[0] for r in rows}))
    merged: dict[tuple, Access] = {}
    for pc, buf, kind, requests, lanes, nbytes, units, ideal, var in rows:
        space = "shared" if buf == SHARED else "global"
        name = var if buf == SHARED else (buffers[buf].name if buf < len(buffers) else f"argument {buf}")
        key = (where[pc], space, KINDS.get(kind, "access"), name)
        a = merged.setdefault(key, Access(*key))
        a.requests += requests
        a.lanes += lanes
        a.bytes += nbytes
        if space == "global":
            a.sectors += units
            a.ideal_sectors += ideal
            if buf < len(buffers) and kind == 1:
                buffers[buf].read_sectors += units
            elif buf < len(buffers) and kind == 2:
                buffers[buf].written_sectors += units
        else:
            a.wavefronts += units
            a.ideal_wavefronts += ideal

    def order(a: Access):
        m = re.match(r"line (\d+)(.*)", a.line)
        return (m.group(2), int(m.group(1))) if m else ("~", 0)
    rep.accesses = sorted(merged.values(), key=lambda a: (order(a), a.space, a.kind, a.buffer))
    return rep


def count(kernel, grid, block, args, shared_mem: int = 0) -> Traffic:
    """course.cuda.traffic: one launch on the CPU layer, counted (its docstring says what is counted)."""
    import numpy as np
    import torch

    from .. import mode
    from ..cuda import CompileFailed, CudaKernel, _as_arg, _dim3, _StubKernel, find_kernels, uses_cccl
    from ..errors import NeedsGPU
    from . import CpuLauncher, share
    if isinstance(kernel, (_StubKernel, CompileFailed)):
        kernel()  # raises: not implemented yet, or did not compile
    if not isinstance(kernel, CudaKernel):
        raise TypeError(f"traffic() takes a CUDA kernel (the name a %%cuda cell binds), got {kernel!r}")
    params = kernel.signature.params
    if len(args) != len(params):
        raise TypeError(f"{kernel.name} takes {len(params)} arguments "
                        f"({', '.join(p.name for p in params)}), got {len(args)}")
    grid, block = _dim3(grid, "grid"), _dim3(block, "block")
    if block[0] * block[1] * block[2] > 1024:
        raise ValueError(f"{kernel.name}: a block holds at most 1024 threads, asked for {block}")
    module = kernel.module
    if uses_cccl(module.source):
        raise NeedsGPU(f"{kernel.name} uses CUB: the CPU layer cannot run it, so its traffic cannot be counted")
    launcher = module._launcher if not mode.GPU else module.__dict__.get("_cpu_launcher")
    if launcher is None:
        launcher = module._cpu_launcher = CpuLauncher(module._full, find_kernels(module._full))
    if mode.GPU:  # run on CPU copies; the GPU tensors are not touched
        args = tuple(a.detach().cpu().clone() if isinstance(a, torch.Tensor) else a for a in args)
    tensors = [(p, a) for a, p in zip(args, params) if p.pointer and isinstance(a, torch.Tensor)]
    share([a for _, a in tensors])
    buffers = [Buffer(p.name, a.numel() * a.element_size(), a.numel()) for p, a in tensors]
    ranges = [(a.data_ptr(), _span(a)) for _, a in tensors]
    converted = tuple(np.uint64(a.data_ptr()) if p.pointer and isinstance(a, torch.Tensor) else
                      _as_arg(a, p, kernel.name) for a, p in zip(args, params))  # CPU tensors, on a GPU too
    counts, so = launcher(kernel.name, grid, block, converted, int(shared_mem), traffic=ranges)
    return parse(counts, so, kernel.name, grid, block, buffers)


def _span(t) -> int:
    """Bytes from a tensor's first element to the end of its last (its size when contiguous)."""
    if t.numel() == 0:
        return 0
    return (1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))) * t.element_size()
