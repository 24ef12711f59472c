"""The offline GPU node's install (docs/instructors/grade-a-class.md, "Grading on an offline GPU node"), with pip's
index switched off: `pip install --no-index --find-links DIR --no-deps -e .` must build the project from DIR's
setuptools."""
import os
import shutil
import subprocess
import sys

import pytest

from autograder.instructor import nbtext, wheelhouse


@pytest.mark.slow
def test_editable_install_needs_no_network(tmp_path):
    wheels = tmp_path / "wheels"
    got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--no-deps",
                          "-d", str(wheels), *wheelhouse.BUILD], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"no package index reachable to fetch the build wheels: {got.stderr[-300:]}")
    project = tmp_path / "course"  # a copy: the install writes egg-info beside the sources
    shutil.copytree(nbtext.ROOT, project, ignore=shutil.ignore_patterns(
        ".venv", ".git", "*.egg-info", "node_modules", ".whl", "build", "__pycache__", "release", "source"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, http_proxy="http://127.0.0.1:9",
               https_proxy="http://127.0.0.1:9", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--find-links", str(wheels),
                        "--no-deps", "-e", str(project)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert (venv / "bin" / "flashcourse").exists()
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--no-deps", "-e", str(project)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode != 0, "without the wheels the same install must fail offline (else this test proves nothing)"


def test_wheelhouse_bench_carries_the_report_peer(tmp_path, monkeypatch):
    """`flashcourse wheelhouse DIR --bench` adds the `bench` extra's wheels (pinned in pyproject.toml, read from the
    installed project's metadata) beside the grading ones: what `bench --report` on an offline node needs for its
    Liger-Kernel records. Without --bench they are not downloaded."""
    import tomllib

    from autograder.instructor import cli
    with open(os.path.join(nbtext.ROOT, "pyproject.toml"), "rb") as f:
        declared = tomllib.load(f)["project"]["optional-dependencies"]["bench"]
    reqs = wheelhouse.bench_requirements()
    assert reqs == declared and any(r.startswith("liger-kernel==") for r in reqs)
    calls = []
    monkeypatch.setattr(wheelhouse.subprocess, "run", lambda cmd, check: calls.append(cmd))
    assert cli.main(["wheelhouse", str(tmp_path)]) == 0
    assert calls and not any(r in cmd for cmd in calls for r in reqs)
    calls.clear()
    assert cli.main(["wheelhouse", str(tmp_path), "--bench"]) == 0
    bench = [cmd for cmd in calls if all(r in cmd for r in reqs)]
    assert len(bench) == 1 and "download" in bench[0] and "--no-deps" in bench[0]  # the node's torch, triton
    assert bench[0][bench[0].index("-d") + 1] == str(tmp_path)
