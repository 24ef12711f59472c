"""Plots the chapters draw: bandwidth against size, with the copy roofline."""
from __future__ import annotations


def bandwidth_plot(xs, series: dict, *, roofline: float | None = None, xlabel: str = "row length",
                   title: str = "", ax=None):
    """series: {label: [GB/s per x]}; roofline: the copy bandwidth in GB/s."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for label, ys in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    if roofline:
        ax.axhline(roofline, color="k", ls="--", lw=1, label=f"copy {roofline:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GB/s (read + write)")
    ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax
