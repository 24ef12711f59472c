"""course.timing's L2 flush: what it compiles to (offline, no GPU needed) and that it runs on a GPU."""
import os
import subprocess
import sys

import pytest

import course

_PTX = r"""
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import course.timing as t
triton.knobs.runtime.interpret = False  # CPU mode turned the interpreter on; compile for sm_90 instead
k = t._evicting_read()
sig = {"buf": "*fp32", "out": "*fp32", "n_lines": "i32", "LINES": "constexpr"}
ptx = triton.compile(ASTSource(k, sig, {"LINES": 1024}), target=GPUTarget("cuda", 90, 32)).asm["ptx"]
loads = set(re.findall(r"ld\.global[.\w:]*\.L2::cache_hint\.b32 \{ %r\d+ \}, \[ (%rd\d+) \+ 0 \]", ptx))
demoted = set(re.findall(r"applypriority\.global\.L2::evict_normal \[(%rd\d+)\], 128;", ptx))
print(len(re.findall(r"createpolicy\.fractional\.L2::evict_last", ptx)),
      len(re.findall(r"ld\.global[.\w:]*\.L2::cache_hint", ptx)),
      len(re.findall(r"applypriority\.global\.L2::evict_normal \[%rd\d+\], 128;", ptx)), int(loads == demoted))
"""


def test_flush_reads_with_evict_last_then_gives_the_lines_back(tmp_path):
    """flush_l2 first reads its buffer with the evict_last policy, one float of every 128-byte line, so that lines
    an earlier kernel loaded with evict_last are evicted too (a plain memset leaves them: run s23/e), then gives
    each line the normal priority back, so the flush's own lines do not outlive the next kernel's."""
    env = dict(os.environ, TRITON_INTERPRET="0", PYTHONPATH=os.getcwd(), TRITON_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _PTX], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    policies, hinted_loads, demotions, same = map(int, out.stdout.split()[-4:])
    # 1024 lines a program over 4 warps: 8 a thread, each an evict_last load and an applypriority of its own line
    assert policies >= 1 and hinted_loads == 8 and demotions == 8 and same, out.stdout


def test_flush_before_sm80_overwrites_only(monkeypatch):
    """Below compute capability 8.0 there are no L2 eviction priorities (ptxas rejects applypriority for sm_75):
    flush_l2 must not compile its evicting read there, only overwrite the buffer. Run with torch's CUDA queries
    faked and the buffer on the CPU."""
    import torch

    from course import timing

    class Props:
        L2_cache_size = 4 << 20
    real_empty = torch.empty
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a: Props())
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (7, 5))
    monkeypatch.setattr(torch, "empty", lambda *a, device=None, **k: real_empty(*a, **k).fill_(1))
    monkeypatch.setattr(timing, "_evicting_read", lambda: pytest.fail("compiled the evicting read on sm_75"))
    monkeypatch.setattr(timing, "_FLUSH", {})
    timing.flush_l2()
    assert timing._FLUSH["read"] is None and timing._FLUSH["buf"].numel() == 8 << 20
    assert not timing._FLUSH["buf"].any()  # overwritten (the fake allocation filled it with ones)


@pytest.mark.skipif(not course.GPU, reason="the flush runs on a GPU")
def test_flush_runs_and_zeroes_its_buffer():
    import torch

    from course import timing
    timing.flush_l2()
    timing.flush_l2()
    buf = timing._FLUSH["buf"]
    assert buf.numel() >= 2 * torch.cuda.get_device_properties(0).L2_cache_size and not buf.any()
