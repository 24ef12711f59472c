"""ptxas for the offline-compile tests of the Gluon kernels (test_attention_gluon.py, test_softmax_long_rows_gluon.py):
the one shipped with Triton's NVIDIA backend, else one on PATH."""
import os
import re
import shutil
import subprocess

import pytest


def ptxas_path():
    import triton
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    return path if os.path.exists(path) else shutil.which("ptxas")


def ptxas_log(ptx_path, tmp_path, max_spill_bytes: int = 0) -> str:
    """ptxas -v's report for sm_90a (skips the test where there is no ptxas); asserts it assembled, with no spills
    (or, max_spill_bytes, at most that many bytes of spill stores and of spill loads)."""
    ptxas = ptxas_path()
    if ptxas is None:
        pytest.skip("no ptxas")
    out = subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx_path, "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    log = out.stdout + out.stderr
    if max_spill_bytes:
        pairs = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
        spills = [int(n) for pair in pairs for n in pair]
        assert spills and max(spills) <= max_spill_bytes, log
    else:
        assert "0 bytes spill stores, 0 bytes spill loads" in log, log
    return log
