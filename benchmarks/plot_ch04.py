"""benchmarks/ch04_attention_sweep_*.json -> benchmarks/ch04_attention_sweep.png (TFLOP/s against T).
python benchmarks/plot_ch04.py"""
import glob
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    runs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(HERE, "ch04_attention_sweep_*.json")))]
    fig, axes = plt.subplots(len(runs), 4, figsize=(16, 3.6 * len(runs)), sharey=True, squeeze=False)
    for r, run in zip(axes, runs):
        for ax, (D, causal) in zip(r, [(64, False), (64, True), (128, False), (128, True)]):
            rows = [x for x in run["rows"] if x["D"] == D and x["causal"] == causal]
            for name in ("triton reference", "sdpa flash", "sdpa cudnn"):
                pts = [(x["T"], x["tflops"]) for x in rows if x["variant"] == name and x["tflops"]]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=name)
            ax.set_xscale("log", base=2)
            ax.set_ylim(0, 700)
            ax.grid(alpha=0.3)
            ax.set_title(f"{run['device']}: D={D}, {'causal' if causal else 'full'}", fontsize=9)
            ax.set_xlabel("T (B = 65536 / T, H = 32, bf16)")
        r[0].set_ylabel("TFLOP/s")
    axes[0][0].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "ch04_attention_sweep.png"), dpi=70)


if __name__ == "__main__":
    main()
