"""The Gluon long-row softmax candidate (kernels_ref/ch03_online_softmax/softmax_long_rows_gluon.py), compiled for
sm_90a without a GPU: Gluon does not run in Triton's interpreter, so on the CPU we check what the compiler made of
it. Its correctness on data and its speed come from benchmarks/softmax_gluon_check.py on a GPU.

For every config of SWEEP (float32 and bfloat16; CONFIGS' entries among them), at the shapes the GPU check times
(131072 columns; bfloat16 also 262144), at a width that leaves a last partial chunk (EVEN False), and for float16
(bfloat16's configs) at 131072: ptxas -v
reports no spills; the PTX loads x and stores y by TMA (cp.async.bulk.tensor, 3-D, the load completing on an
mbarrier), waits on mbarriers (try_wait.parity), waits for its TMA stores before a slot is reused
(cp.async.bulk.wait_group.read), fences the generic-proxy writes of y before the TMA store reads them, and its wait
for the row's partials ends in an acquire (an acquire load: the atomic add of 0)."""
import json
import os
import re
import subprocess
import sys

import pytest

from kernels_ref.ch03_online_softmax import softmax_long_rows_gluon as sg
from tests.ptxas_tools import ptxas_log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not sg.HAS_GLUON:
    pytest.skip("this triton has no triton.experimental.gluon Hopper module", allow_module_level=True)

# (dtype, cols): the GPU check's shapes, and 131072 + 256 (K one more, its last chunk 256 columns: EVEN False)
CASES = [("float32", 131072), ("float32", 131072 + 256), ("bfloat16", 131072), ("bfloat16", 262144),
         ("bfloat16", 131072 + 256), ("float16", 131072)]
COMPILES = [(dt, cols, cfg) for dt, cols in CASES for cfg in sg.SWEEP[dt]]


# In a child process without the interpreter: the course's CPU mode (tests/conftest.py imports course) sets
# TRITON_INTERPRET=1 before kernels are defined, which turns gl.max/gl.sum's combine functions into interpreter
# objects that the Gluon compiler rejects.
_COMPILE = """
import json, sys
from kernels_ref.ch03_online_softmax import softmax_long_rows_gluon as sg
out = {}
for dt, cols in json.loads(sys.argv[2]):
    for cfg in sg.SWEEP[dt]:
        key = f"{dt},{cols},{cfg.name()}"
        path = f"{sys.argv[1]}/{key.replace(',', '_')}.ptx"
        k = sg.compile_offline(cfg, dt, cols)
        with open(path, "w") as f:
            f.write(k.asm["ptx"])
        out[key] = [path, k.metadata.shared]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def ptx_files(tmp_path_factory):
    import triton
    tmp = tmp_path_factory.mktemp("softmax_gluon_ptx")
    env = dict(os.environ, TRITON_INTERPRET="0", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", _COMPILE, str(tmp), json.dumps(CASES)], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=900)
    if run.returncode != 0:
        last = [ln for ln in run.stderr.splitlines() if ln.strip() and not ln.strip().startswith("^")][-1:]
        if triton.__version__ not in ("3.6.0", "3.7.1"):  # the Gluon API moves between releases
            pytest.skip(f"does not compile with triton {triton.__version__} (written for 3.6.0, checked 3.7.1): "
                        f"{last}")
        raise AssertionError(run.stderr[-3000:])
    return json.loads(run.stdout)


def _ids(c):
    return f"{c[0]}-{c[1]}-{c[2].name()}"


@pytest.mark.parametrize("dt,cols,cfg", COMPILES, ids=[_ids(c) for c in COMPILES])
def test_ptx_tma_mbarriers_and_no_spills(ptx_files, dt, cols, cfg, tmp_path):
    path, shared = ptx_files[f"{dt},{cols},{cfg.name()}"]
    with open(path) as f:
        ptx = f.read()
    # TMA load completing on an mbarrier (shared::cluster in triton 3.6.0's PTX, shared::cta in 3.7.1's), TMA store
    assert re.search(r"cp\.async\.bulk\.tensor\.3d\.shared::\w+\.global\.mbarrier::complete_tx::bytes", ptx)
    assert re.search(r"cp\.async\.bulk\.tensor\.3d\.global\.shared::cta", ptx)
    assert "mbarrier.try_wait.parity" in ptx and "mbarrier.arrive.expect_tx" in ptx
    assert "cp.async.bulk.wait_group.read" in ptx  # a slot is reloaded only after its y has been read out
    assert "fence.proxy.async.shared::cta" in ptx  # y's st.shared before the TMA store reads it
    assert re.search(r"ld\.global\.gpu\.acquire|atom\.global\.gpu\.acquire", ptx)  # the row wait's acquire
    assert re.search(r"atom\.global\.gpu\.release\.add", ptx)  # publish: the count after the partial
    assert "ld.local" not in ptx and "st.local" not in ptx
    isz = 4 if dt == "float32" else 2
    assert sg.smem_bytes(cfg, isz) <= shared <= sg.smem_bytes(cfg, isz) + 1024, shared
    assert sg.programs_per_sm(cfg, isz) >= min(cfg.per_sm, 2), (cfg, shared)
    log = ptxas_log(path, tmp_path)  # assembled, no spills
    regs = int(re.search(r"Used (\d+) registers", log).group(1))
    if cols % cfg.CHUNK == 0:  # the timed shapes: per_sm programs fit the 64K register file (shared memory is the
        # limit). A partial last chunk's masks cost a few registers more (triton 3.6.0: 88 against 80 for bfloat16
        # CHUNK 8192 at 4 warps, so 5 of the 6 programs an SM fit there: slower, not wrong)
        assert cfg.per_sm * cfg.num_warps * 32 * (-(-regs // 8) * 8) <= 65536, (regs, cfg)


def test_configs_valid_and_unsupported_raise():
    for dt, cfgs in sg.SWEEP.items():
        assert sg.CONFIGS[dt] in cfgs and len({c.name() for c in cfgs}) == len(cfgs)
        isz = 4 if dt == "float32" else 2
        for c in cfgs:
            sg.check_config(c, isz)
            assert sg.programs_per_sm(c, isz) >= 1
        assert sg.programs_per_sm(sg.CONFIGS[dt], isz) >= 2  # 2+ programs an SM for the defaults
    with pytest.raises(ValueError, match="shared memory"):
        sg.check_config(sg.Config(16384, 4, 1, 4), 4)  # 4 x 64 KiB
    with pytest.raises(ValueError, match="stages"):
        sg.check_config(sg.Config(8192, 4, 3, 1), 4)
    with pytest.raises(ValueError, match="multiple"):
        sg.check_config(sg.Config(8192, 4, 3, 2, 1000), 4)
    with pytest.raises(ValueError, match="num_warps"):
        sg.check_config(sg.Config(8192, 8, 3, 2, 1024), 4)  # 4 rows of 256 columns for 8 warps


def test_refuses_without_a_gpu():
    torch = pytest.importorskip("torch")
    x = torch.zeros(2, 512)
    with pytest.raises(ValueError, match="Hopper"):
        sg.softmax_gluon(x, torch.empty_like(x))
