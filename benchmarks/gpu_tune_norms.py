"""Tuning sweep for the Chapter 5 references on a GPU (one line a result on stdout).

python benchmarks/gpu_tune_norms.py: LayerNorm register budgets (rows kept in registers up to
LN_VEC * 1024 floats), at both benchmark shapes, % of a copy measured in the same process."""
import tempfile


import torch  # noqa: E402

from autograder.declare import registry  # noqa: E402
from autograder.judge.grading import measure_bandwidth  # noqa: E402
from autograder.runner.local import LocalRunner
from kernels_ref.bench import namespace, reference_source  # noqa: E402


def main():
    dev = torch.cuda.get_device_name()
    ln = registry.get("ch05.layernorm_cuda")
    with tempfile.TemporaryDirectory() as tmp:
        for vec in (8, 4, 2):
            src = reference_source(ln).replace("#define LN_VEC 8", f"#define LN_VEC {vec}")
            for shape in ((16384, 4096), (65536, 1024), (16384, 1024), (4096, 8192)):
                m = measure_bandwidth(ln, LocalRunner(namespace(ln, src, tmp)), 0, audited=False, shape=shape)
                print(f"{dev} | layernorm LN_VEC={vec} {shape}: {m['gbps']:.0f} GB/s = {100 * m['fraction']:.1f}% "
                      f"of copy {m['copy_gbps']:.0f}", flush=True)


if __name__ == "__main__":
    main()
