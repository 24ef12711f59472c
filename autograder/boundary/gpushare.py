"""GPU buffers the judge allocates and lends to one runner by CUDA IPC, so that a timed check's inputs and
outputs never cross through host memory and files (on an H100 that crossing cost 2-5 s per timed check).

The judge (`Pool`, one per runner process) allocates each buffer with its own cudaMalloc, rounded up to
2 MiB, so that the runner, which opens it by its IPC handle, maps that buffer and nothing of the judge's
beside it (a slice of PyTorch's caching allocator would export its neighbours too). The judge copies an
input's bytes into a buffer it lends and never reads them back; an output arena (a lent buffer the runner
carves its guarded output buffers from) is read by the judge once, straight after the runner's answer, into
the judge's own memory: what it verifies is that private copy. Buffers are reused for later requests of the
same runner (it could write to them anyway) and freed only once that runner's process is gone.

The runner (`open_lent`) maps each handle once and keeps the mapping until it exits. Where IPC is not
possible (no CuPy, a driver or sandbox that refuses the handle) the judge falls back to files for the rest
of that process's life and says so once.
"""
from __future__ import annotations

GRAIN = 2 << 20  # bytes: an IPC mapping covers a whole allocation; whole 2 MiB pages keep it exclusive
ALIGN = 256  # bytes: where an output's guarded buffer may start in an arena


def _round(n: int) -> int:
    return max(GRAIN, -(-n // GRAIN) * GRAIN)


def _as_torch(ptr: int, size: int):
    """A uint8 torch tensor over `size` bytes of device memory at `ptr` (not owned: never freed through it)."""
    import cupy
    import torch
    mem = cupy.cuda.UnownedMemory(ptr, size, owner=None)
    arr = cupy.ndarray((size,), dtype=cupy.uint8, memptr=cupy.cuda.MemoryPointer(mem, 0))
    return torch.as_tensor(arr, device="cuda")


class Pool:
    """The judge's lent buffers for one runner: [size, ptr, handle (hex), tensor, in use]."""

    def __init__(self, cap: int = 1 << 62):
        self.blocks: list[list] = []
        self.cap = cap  # bytes this runner may be lent in all: past it, its session sends files (a lent block
        # is freed only once the runner is gone, since the runner keeps its mappings open)

    def lend(self, nbytes: int) -> tuple[str, object]:
        """A free buffer of at least nbytes (reused when one fits within 2x, else newly allocated): its
        handle and a uint8 tensor over it."""
        want = _round(nbytes)
        for b in self.blocks:
            if not b[4] and want <= b[0] <= 2 * want:
                b[4] = True
                return b[2], b[3]
        if sum(b[0] for b in self.blocks) + want > self.cap:
            raise MemoryError(f"the GPU memory lent to one runner would pass {self.cap / 2**30:.0f} GiB")
        import cupy
        rt = cupy.cuda.runtime
        ptr = rt.malloc(want)
        try:
            handle = bytes(rt.ipcGetMemHandle(ptr)).hex()
            t = _as_torch(ptr, want)
        except Exception:
            rt.free(ptr)
            raise
        self.blocks.append([want, ptr, handle, t, True])
        return handle, t

    def done(self) -> None:
        """The request these buffers served is answered: they may serve the next one."""
        for b in self.blocks:
            b[4] = False

    def free(self) -> None:
        """Free every buffer: only once the runner that mapped them is gone."""
        if not self.blocks:
            return
        import cupy
        import torch
        torch.cuda.synchronize()
        for b in self.blocks:
            b[3] = None
            try:
                cupy.cuda.runtime.free(b[1])
            except Exception:  # noqa: BLE001  (a lost context frees everything anyway)
                pass
        self.blocks.clear()


class TransportError(RuntimeError):
    """The runner could not map a buffer the judge lent (the judge falls back to files)."""


_OPENED: dict[str, object] = {}  # runner side: handle -> uint8 tensor over the mapping (kept until exit)


def open_lent(handle: str, size: int):
    """Runner side: the buffer a handle names, mapped once, as a uint8 tensor of `size` bytes."""
    t = _OPENED.get(handle)
    if t is None:
        try:
            import cupy
            raw = bytes.fromhex(handle)
            ptr = cupy.cuda.runtime.ipcOpenMemHandle(raw, cupy.cuda.runtime.cudaIpcMemLazyEnablePeerAccess)
            t = _as_torch(ptr, size)
        except Exception as e:  # noqa: BLE001
            raise TransportError(f"cannot map the grader's GPU buffer: {type(e).__name__}: {e}") from None
        _OPENED[handle] = t
    if t.numel() < size:
        raise TransportError("a lent buffer is smaller than announced")
    return t


class Arena:
    """Runner side: carve guarded output buffers out of a lent buffer, in order; None when it is full."""

    def __init__(self, tensor, size: int):
        self.t, self.size, self.used = tensor, size, 0

    def take(self, nbytes: int, dtype):
        start = -(-self.used // ALIGN) * ALIGN
        if start + nbytes > self.size:
            return None
        self.used = start + nbytes
        return self.t[start:start + nbytes].view(dtype)

    def offset_of(self, buf) -> int | None:
        """Where a tensor starts in this arena, if it lies wholly in it."""
        base = self.t.data_ptr()
        start = buf.data_ptr() - base
        end = start + buf.numel() * buf.element_size()
        return start if 0 <= start and end <= self.size and buf.device == self.t.device else None
