"""`make lab` serves the course: JupyterLab starts and hands out the student notebook."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

from autograder.nbtext import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_jupyterlab_serves_the_release_notebook(tmp_path):
    port, token = _free_port(), "flashcourse-test"
    jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path), JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"))
    proc = subprocess.Popen([jupyter, "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise AssertionError("JupyterLab did not start") from None
                time.sleep(0.5)
        url = f"{base}/api/contents/release/ch01_softmax/ch01_softmax.ipynb?token={token}"
        nb = json.load(urllib.request.urlopen(url, timeout=10))
        assert nb["type"] == "notebook" and nb["content"]["cells"]
        page = urllib.request.urlopen(f"{base}/lab?token={token}", timeout=10).read().decode()
        assert "JupyterLab" in page
        specs = json.load(urllib.request.urlopen(f"{base}/api/kernelspecs?token={token}", timeout=10))
        assert "python3" in specs["kernelspecs"]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
