"""The archive of measurement runs (benchmarks/runs/): its index is what `python -m benchmarks.archive --index` writes
from the tree as it is, every run a file cites is in the archive, and no dated run folder is back in the tree."""
import os
import subprocess

from benchmarks import archive


def test_the_index_is_current():
    with open(archive.INDEX, encoding="utf-8") as f:
        assert f.read() == archive.index_text(), "regenerate: python -m benchmarks.archive --index"


def test_every_cited_run_is_archived():
    runs = archive.runs()
    assert len(runs) == 22 and sum(1 for gpu in runs.values() if gpu) >= 21, runs  # one holds a single note
    assert set(archive.citations()) <= set(runs)


def test_no_dated_run_folder_in_the_tree():
    tracked = subprocess.run(["git", "ls-files"], cwd=archive.ROOT, capture_output=True, text=True, check=True)
    dated = [p for p in tracked.stdout.splitlines() if archive.RUN.search(p) and not p.startswith("benchmarks/runs/")]
    assert not dated, dated[:5]
    assert not [d for d in os.listdir(os.path.join(archive.ROOT, "benchmarks")) if archive.RUN.fullmatch(d)]
