"""What crosses between the judge and a runner: JSON messages and raw buffers, nothing executable.

Values are encoded as JSON-safe trees: numbers, strings, booleans, None and lists as they are;
tensors and arrays as {"buf": FILE, "lib": "torch"|"numpy", "dtype": NAME, "shape": [...]}, their
bytes written raw to FILE in a directory both sides can see. Decoding never unpickles or executes:
a dtype must be on a fixed list, a shape must match the file's size, and a message is capped.
"""
from __future__ import annotations

import json
import os

import numpy as np

# Bound at import, before any submission runs in a runner: replacing json.dumps or os.write later
# (an attack that makes every message say "passed") does not change what the runner sends.
_dumps, _loads, _write, _read = json.dumps, json.loads, os.write, os.read

MAX_MESSAGE = 1 << 20  # bytes: a message larger than this is a broken (or hostile) runner
MAX_BUFFER = 1 << 32   # bytes in one buffer

_TORCH_DTYPES = ("float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int64",
                 "int32", "int16", "int8", "uint8", "bool")
_NUMPY_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")


class WireError(ValueError):
    """A message or buffer that does not follow the schema."""


class HostTensor(np.ndarray):
    """In a runner without torch (autograder.runner.numpy_only): an array that the judge made as a CPU tensor, with
    the two methods a declaration calls on such an input (`inputs["x"].cpu().numpy()`)."""

    def cpu(self):
        return self

    def numpy(self):
        return self.view(np.ndarray)


def encode(value, directory: str, prefix: str, known=None, lend=None, host: bool = False) -> object:
    """A JSON-safe tree for `value`; tensors and arrays go to raw files in `directory`, except where
    known(v) gives an entry for it (a view of a buffer already sent: {"guarded": j, ...}) or, for a GPU
    tensor, lend(t) does (a copy in a GPU buffer lent by CUDA IPC: {"lent": handle, ...}, see gpushare).
    host: for a runner without torch, CPU tensors go as NumPy arrays marked "tensor" (decoded as HostTensor)."""
    counter = [0]

    def enc(v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if known is not None:
            entry = known(v)
            if entry is not None:
                return entry
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, (list, tuple)):
            return {"list": [enc(x) for x in v]}
        if isinstance(v, dict):
            return {"dict": {str(k): enc(x) for k, x in v.items()}}
        if isinstance(v, np.ndarray):
            a = np.ascontiguousarray(v)
            if str(a.dtype) not in _NUMPY_DTYPES:
                raise WireError(f"an array of dtype {a.dtype} cannot be graded: use one of {', '.join(_NUMPY_DTYPES)}")
            name = f"{prefix}{counter[0]}.bin"
            counter[0] += 1
            _write_new(directory, name, a.reshape(-1).view(np.uint8) if a.size else b"")
            return {"buf": name, "lib": "numpy", "dtype": str(a.dtype), "shape": list(a.shape)}
        import torch
        if isinstance(v, torch.Tensor) and host:
            if v.is_cuda or str(v.dtype).removeprefix("torch.") not in _NUMPY_DTYPES:
                raise WireError(f"a {v.dtype} tensor on {v.device} cannot go to a runner without torch")
            entry = enc(v.detach().contiguous().numpy())
            return {**entry, "like": "tensor"}
        if isinstance(v, torch.Tensor):
            if lend is not None and v.is_cuda and v.numel():
                dtype = str(v.dtype).removeprefix("torch.")
                if dtype not in _TORCH_DTYPES:
                    raise WireError(f"a tensor of dtype {dtype} cannot be graded")
                return {**lend(v), "lib": "torch", "dtype": dtype, "shape": list(v.shape)}
            t = v.detach().contiguous().cpu()
            dtype = str(t.dtype).removeprefix("torch.")
            if dtype not in _TORCH_DTYPES:
                raise WireError(f"a tensor of dtype {dtype} cannot be graded: use one of {', '.join(_TORCH_DTYPES)}")
            name = f"{prefix}{counter[0]}.bin"
            counter[0] += 1
            _write_new(directory, name, t.reshape(-1).view(torch.uint8).numpy() if t.numel() else b"")
            return {"buf": name, "lib": "torch", "dtype": dtype, "shape": list(t.shape)}
        raise WireError(f"cannot send a {type(v).__name__}")

    return enc(value)


def _write_new(directory: str, name: str, data) -> None:
    """Write a new file (bytes, or a uint8 array written in place), never through a link or into a file
    that is already there (the other side may have planted either in the shared directory)."""
    fd = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data).cast("B")
        while view:
            view = view[_write(fd, view):]
    finally:
        os.close(fd)


def _read_regular(path: str, limit: int) -> np.ndarray:
    """The bytes of a regular file (not a link, a FIFO or a device), at most `limit` of them, read straight
    into a new uint8 array (one copy)."""
    import stat
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise WireError(f"buffer {os.path.basename(path)}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise WireError(f"buffer {os.path.basename(path)} is not a regular file")
        if st.st_size > limit:
            raise WireError(f"buffer {os.path.basename(path)} too large ({st.st_size} bytes)")
        data = np.empty(st.st_size, dtype=np.uint8)
        view, got = memoryview(data), 0
        while got < st.st_size:
            n = os.readv(fd, [view[got:got + (1 << 28)]])
            if not n:
                break
            got += n
        return data[:got]
    finally:
        os.close(fd)


def nbytes(tree) -> int:
    """The bytes of every buffer a tree (as `encode` made it) names."""
    if isinstance(tree, dict):
        if "buf" in tree or "lent" in tree:
            n = int(np.prod(tree.get("shape") or [1]))
            dtype = str(tree.get("dtype"))
            return n * (2 if dtype == "bfloat16" else 1 if dtype.startswith("float8") else np.dtype(dtype).itemsize)
        return sum(nbytes(v) for v in tree.values())
    if isinstance(tree, list):
        return sum(nbytes(v) for v in tree)
    return 0


def decode(tree, directory: str, device: str = "cpu", budget: list[int] | None = None, guarded=None,
           arena=None, lent_ok: bool = False):
    """The value a tree stands for; tensors land on `device`. Each buffer file may be named once, and all the
    buffers of a message together may hold at most budget[0] bytes (what is left is written back): a runner
    cannot make the judge read more than it expects. `guarded`: (tensor, n, margin) triples that a
    {"guarded": j, "shape": [...]} entry stands for the middle of (elements margin to margin + n).
    `arena`: (the judge's uint8 tensor over the output arena it lent for this request, a list of the spans
    taken so far); an {"arena": offset, ...} entry is copied out of it (at once, into the judge's own
    memory), no two such entries overlapping. {"lent": handle, ...} entries are mapped by autograder.boundary.gpushare
    only where lent_ok (a runner decoding its inputs): the judge never maps anything a runner names."""
    seen: set[str] = set()
    budget = [MAX_BUFFER] if budget is None else budget

    def dec(v, depth=0):
        if depth > 20:
            raise WireError("nesting too deep")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if not isinstance(v, dict) or len(v) == 0:
            raise WireError(f"unexpected {type(v).__name__} in a message")
        if "list" in v:
            if not isinstance(v["list"], list):
                raise WireError("list expected")
            return [dec(x, depth + 1) for x in v["list"]]
        if "dict" in v:
            if not isinstance(v["dict"], dict):
                raise WireError("dict expected")
            return {str(k): dec(x, depth + 1) for k, x in v["dict"].items()}
        if "buf" in v:
            if v.get("buf") in seen:
                raise WireError(f"buffer {v.get('buf')!r} named twice")
            seen.add(v.get("buf"))
            return _buffer(v, directory, device, budget)
        if "arena" in v and arena is not None:
            return _from_arena(v, arena[0], arena[1])
        if "lent" in v and lent_ok:
            if v.get("lent") in seen:
                raise WireError("a lent buffer named twice")
            seen.add(v.get("lent"))
            return _lent(v)
        if "guarded" in v and guarded is not None:  # the middle of a guarded buffer decoded before
            j = v.get("guarded")
            if not (isinstance(j, int) and 0 <= j < len(guarded)) or ("g", j) in seen:
                raise WireError(f"bad or repeated guarded buffer {j!r}")
            seen.add(("g", j))
            buf, n, margin = guarded[j]
            shape = v.get("shape")
            if not (isinstance(shape, list) and all(isinstance(s, int) and s >= 0 for s in shape)) \
                    or int(np.prod(shape)) != n or len(buf.shape) != 1 or buf.shape[0] != n + 2 * margin:
                raise WireError(f"shape {shape!r} is not that of guarded buffer {j} ({n} elements)")
            return buf[margin:margin + n].reshape(shape)
        raise WireError(f"unknown entry {sorted(v)[:3]}")

    return dec(tree)


def _buffer(v: dict, directory: str, device: str, budget: list[int]):
    name, lib, dtype, shape = v.get("buf"), v.get("lib"), v.get("dtype"), v.get("shape")
    if not (isinstance(name, str) and name == os.path.basename(name) and name.endswith(".bin")):
        raise WireError(f"bad buffer name {name!r}")
    if not (isinstance(shape, list) and all(isinstance(s, int) and 0 <= s < 2**40 for s in shape)):
        raise WireError(f"bad shape {shape!r}")
    n = int(np.prod(shape)) if shape else 1
    if lib == "numpy":
        if dtype not in _NUMPY_DTYPES:
            raise WireError(f"dtype {dtype!r} not allowed")
        data = _read_regular(os.path.join(directory, name), _take(budget, n * np.dtype(dtype).itemsize, name))
        if len(data) != n * np.dtype(dtype).itemsize:
            raise WireError(f"buffer {name}: {len(data)} bytes for shape {shape} {dtype}")
        out = data.view(dtype).reshape(shape)
        return out.view(HostTensor) if v.get("like") == "tensor" else out
    if lib == "torch":
        import torch
        if dtype not in _TORCH_DTYPES:
            raise WireError(f"dtype {dtype!r} not allowed")
        dt = getattr(torch, dtype)
        itemsize = torch.empty((), dtype=dt).element_size()
        data = _read_regular(os.path.join(directory, name), _take(budget, n * itemsize, name))
        if len(data) != n * itemsize:
            raise WireError(f"buffer {name}: {len(data)} bytes for shape {shape} {dtype}")
        t = torch.from_numpy(data).view(dt).reshape(shape) if n else torch.empty(shape, dtype=dt)
        return t.to(device) if device != "cpu" else t
    raise WireError(f"unknown buffer kind {lib!r}")


def _torch_dtype(v: dict):
    import torch
    dtype, shape = v.get("dtype"), v.get("shape")
    if dtype not in _TORCH_DTYPES:
        raise WireError(f"dtype {dtype!r} not allowed")
    if not (isinstance(shape, list) and all(isinstance(s, int) and 0 <= s < 2**40 for s in shape)):
        raise WireError(f"bad shape {shape!r}")
    import math
    dt = getattr(torch, dtype)
    return dt, shape, math.prod(shape) * torch.empty((), dtype=dt).element_size()  # exact: no wrap-around


def _from_arena(v: dict, arena, spans: list) -> object:
    """A private copy of a guarded buffer the runner placed in the lent arena."""
    dt, shape, nbytes = _torch_dtype(v)
    off = v.get("arena")
    if not (isinstance(off, int) and 0 <= off and 0 < nbytes and off + nbytes <= arena.numel() and off % 16 == 0):
        raise WireError(f"bad place {off!r} in the output arena")
    if any(off < b and a < off + nbytes for a, b in spans):
        raise WireError("two buffers overlap in the output arena")
    spans.append((off, off + nbytes))
    return arena[off:off + nbytes].clone().view(dt).reshape(shape)


def _lent(v: dict) -> object:
    """Runner side: an input in a GPU buffer the judge lent (mapped once, kept)."""
    from autograder.boundary import gpushare
    dt, shape, nbytes = _torch_dtype(v)
    handle, size = v.get("lent"), v.get("size")
    if not (isinstance(handle, str) and isinstance(size, int) and nbytes <= size):
        raise WireError("bad lent buffer")
    return gpushare.open_lent(handle, size)[:nbytes].view(dt).reshape(shape)


def _take(budget: list[int], n: int, name: str) -> int:
    """Take n bytes from what a message may still carry; the most one buffer file may hold."""
    if n > min(budget[0], MAX_BUFFER):
        raise WireError(f"buffer {name}: {n} bytes, more than this answer may carry ({budget[0]} left)")
    budget[0] -= n
    return n


def send(fd: int, message: dict) -> None:
    data = _dumps(message).encode()
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message of {len(data)} bytes")
    _write(fd, len(data).to_bytes(8, "little"))
    view = memoryview(data)
    while view:
        n = _write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None = None) -> bytes:
    import select
    import time
    chunks, got = [], 0
    while got < n:
        if deadline is not None:  # a sender that stops half-way must not hold the reader forever
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError
        b = _read(fd, n - got)
        if not b:
            raise EOFError("the other side closed the channel")
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def receive(fd: int, deadline: float | None = None) -> dict:
    """One message; with a deadline (time.monotonic()), TimeoutError if it has not wholly come by then."""
    n = int.from_bytes(_read_exact(fd, 8, deadline), "little")
    if n > MAX_MESSAGE:
        raise WireError(f"message of {n} bytes announced")
    msg = _loads(_read_exact(fd, n, deadline))
    if not isinstance(msg, dict):
        raise WireError("a message is a JSON object")
    return msg
