"""Tuning sweeps for the Chapter 2-3 references on a GPU (one line a result on stdout).

python benchmarks/gpu_tune.py: block sizes of the Triton online softmax, the on-chip (Chapter 1 Triton)
kernel up to 32k columns, torch.softmax, all as % of a copy measured in the same process.
"""


import torch  # noqa: E402

from autograder.declare import registry  # noqa: E402
from autograder.judge.grading import measure_bandwidth  # noqa: E402
from autograder.runner.local import LocalRunner
from course import timing  # noqa: E402
from kernels_ref.bench import namespace, reference_source  # noqa: E402


def main():
    import tempfile
    dev = torch.cuda.get_device_name()
    with tempfile.TemporaryDirectory() as tmp:
        tri = registry.get("ch03.online_softmax_triton")
        for block, warps in [(1024, 4), (2048, 8), (4096, 8), (4096, 16), (8192, 16)]:
            src = reference_source(tri).replace("BLOCK = min(triton.next_power_of_2(cols), 4096)",
                                                f"BLOCK = min(triton.next_power_of_2(cols), {block})")
            src = src.replace("num_warps=8)", f"num_warps={warps})")
            m = measure_bandwidth(tri, LocalRunner(namespace(tri, src, tmp)), 0, audited=False)
            print(f"{dev} | triton online BLOCK={block} warps={warps} {tuple(m['shape'])}: "
                  f"{m['gbps']:.0f} GB/s = {100 * m['fraction']:.1f}% of copy {m['copy_gbps']:.0f}", flush=True)
        onchip = registry.get("ch01.softmax_triton")
        ns = namespace(onchip, reference_source(onchip), tmp)
        for shape in [(8192, 4096), (8192, 8192), (4096, 16384), (2048, 32768), (1024, 65536), (1024, 131072)]:
            for name, ex, n in [("on-chip (ch01 Triton)", onchip, ns),
                                ("online Triton", tri, namespace(tri, reference_source(tri), tmp))]:
                try:
                    m = measure_bandwidth(ex, LocalRunner(n), 0, audited=False, shape=shape)
                    print(f"{dev} | {name} {shape}: {m['gbps']:.0f} GB/s = {100 * m['fraction']:.1f}% of copy "
                          f"{m['copy_gbps']:.0f}", flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"{dev} | {name} {shape}: failed {str(e)[:150]}", flush=True)
            x = torch.randn(*shape, device="cuda")
            nbytes = 2 * x.numel() * 4
            ms = timing.bench(lambda: torch.softmax(x, dim=-1))
            pct = 100 * timing.gbps(nbytes, ms) / timing.copy_gbps(nbytes)
            print(f"{dev} | torch.softmax {shape}: {pct:.1f}% of copy", flush=True)


if __name__ == "__main__":
    main()
