"""The Slurm job-array template (autograder/instructor/slurm/) against a real single-node Slurm on localhost.

Runs only when asked: `make test-slurm` (pytest -m slurm tests/test_slurm.py). As root, it installs Debian's
slurm-wlm and munge with apt when slurmctld is missing, then starts its own munged, slurmctld and slurmd
(foreground processes of this test, configuration, sockets, ports, state and logs in a temporary directory:
nothing under /etc is touched and no service manager is needed), and stops them by PID at the end.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLURM_DIR = os.path.join(ROOT, "autograder", "instructor", "slurm")


def _only_when_asked(request) -> None:
    if "slurm" not in (request.config.getoption("markexpr", "") or "") and not os.environ.get("FLASHCOURSE_TEST_SLURM"):
        pytest.skip("Slurm integration test: run it with `make test-slurm` (pytest -m slurm tests/test_slurm.py)")


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _install_slurm() -> None:
    """Debian's slurm-wlm and munge, installed with apt where slurmctld is missing; skips only where that cannot be."""
    if all(shutil.which(b) or os.path.exists(f"/usr/sbin/{b}") for b in ("slurmctld", "slurmd", "sbatch", "munged")):
        return
    if os.geteuid() != 0:
        pytest.skip("Slurm is not installed and installing it (apt-get install slurm-wlm munge) needs root")
    if not shutil.which("apt-get"):
        pytest.skip("Slurm is not installed and there is no apt-get to install Debian's slurm-wlm and munge")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", "DPkg::Lock::Timeout=300"]  # another apt on the machine: wait for it
    cmd = ["apt-get", *lock, "install", "-y", "-q", "--no-install-recommends", "slurm-wlm", "munge"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:  # a fresh machine: the package lists may be missing or stale
        subprocess.run(["apt-get", *lock, "update", "-q"], env=env, capture_output=True, text=True, check=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"apt-get install slurm-wlm munge failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def _sbin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


class LocalSlurm:
    """munged + slurmctld + slurmd on localhost, one node with this machine's CPUs and memory, no GRES."""

    def __init__(self, base: str):
        self.base, self.procs, self.logs = base, {}, {}
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(base, d), mode=0o700, exist_ok=True)
        self.munge_socket = os.path.join(base, "munge", "munge.socket")
        self.conf = os.path.join(base, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in [k for k in self.env if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_")) and k != "SLURM_CONF"]:
            del self.env[k]  # a test run inside a Slurm job must not leak that job's settings

    # -- bring-up ------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._start_munge()
        self._write_conf()
        self._spawn("slurmctld", [_sbin("slurmctld"), "-D", "-c", "-f", self.conf])
        self._wait(lambda: "UP" in self.run(["scontrol", "ping"], check=False).stdout, 60, "slurmctld to answer")
        self._spawn("slurmd", [_sbin("slurmd"), "-D", "-f", self.conf, "-N", "localhost"])
        self._wait(lambda: self.node_state() in ("idle", "mixed", "allocated"), 90, "the node to be idle")

    def _start_munge(self) -> None:
        key = os.path.join(self.base, "munge", "munge.key")
        if not os.path.exists(key):
            with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400), "wb") as f:
                f.write(os.urandom(1024))
        d = os.path.join(self.base, "munge")
        self._spawn("munged", [_sbin("munged"), "-F", "--force", f"--socket={self.munge_socket}", f"--key-file={key}",
                               f"--pid-file={d}/munged.pid", f"--seed-file={d}/munged.seed",
                               f"--log-file={d}/munged.log"])
        self._wait(lambda: os.path.exists(self.munge_socket), 30, "munged's socket")

    def _write_conf(self) -> None:
        # what slurmd detects here (it drains a node configured with more); else what Python sees
        out = subprocess.run([_sbin("slurmd"), "-C"], capture_output=True, text=True).stdout
        found = re.search(r"\bCPUs=(\d+)", out), re.search(r"\bRealMemory=(\d+)", out)
        cpus = int(found[0][1]) if found[0] else len(os.sched_getaffinity(0))
        mem = int(found[1][1]) if found[1] else os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
        ctld_port, slurmd_port = _free_ports(2)
        b = self.base
        conf = f"""\
ClusterName=flashcourse-test
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=3600
StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool
SlurmctldPidFile={b}/slurmctld.pid
SlurmdPidFile={b}/slurmd.pid
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdLogFile={b}/log/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={max(mem * 9 // 10, 1)} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    def _spawn(self, name: str, argv: list[str]) -> None:
        self.logs[name] = os.path.join(self.base, "log", f"{name}.out")
        with open(self.logs[name], "w") as log:
            self.procs[name] = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, start_new_session=True)

    def _wait(self, ok, seconds: float, what: str) -> None:
        deadline = time.time() + seconds
        while not ok():
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead or time.time() > deadline:
                raise AssertionError(f"waiting for {what}: " + (f"{dead} exited" if dead else "timed out")
                                     + "\n" + self.diagnostics())
            time.sleep(0.5)

    # -- use -----------------------------------------------------------------------------------------------
    def run(self, argv: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
        kw.setdefault("env", self.env)
        r = subprocess.run(argv, capture_output=True, text=True, **kw)
        if check and r.returncode != 0:
            raise AssertionError(f"{argv} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}\n{self.diagnostics()}")
        return r

    def node_state(self) -> str:
        return self.run(["sinfo", "-h", "-N", "-n", "localhost", "-o", "%T"], check=False).stdout.strip().rstrip("*")

    def job_states(self, job_id: str) -> dict[str, str]:
        """JobId (array tasks as 12_0, 12_1) -> state; finished jobs stay visible for MinJobAge."""
        return _parse_states(self.run(["scontrol", "-o", "show", "job", job_id], check=False).stdout)

    def wait_jobs(self, job_ids: list[str], timeout: float) -> dict[str, str]:
        """Waits until every job (and array task) of job_ids is finished; returns their final states."""
        deadline = time.time() + timeout
        while True:
            states = {}
            for j in job_ids:
                states.update(self.job_states(j))
            if states and all(s in FINAL for s in states.values()):
                return states
            if time.time() > deadline:
                raise AssertionError(f"jobs {job_ids} not finished after {timeout} s: {states}\n" + self.diagnostics())
            time.sleep(2)

    def diagnostics(self) -> str:
        parts = []
        for name in ("munged", "slurmctld", "slurmd"):
            for path in (self.logs.get(name), os.path.join(self.base, "log", f"{name}.log")):
                if path and os.path.exists(path):
                    with open(path, errors="replace") as f:
                        parts.append(f"--- {path} (end)\n{f.read()[-2500:]}")
        return "\n".join(parts)

    # -- tear-down -----------------------------------------------------------------------------------------
    def stop(self) -> None:
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            subprocess.run(["scancel", "--user=root", "--partition=test"], env=self.env, capture_output=True)
            deadline = time.time() + 30  # let slurmd end the jobs' steps before it goes
            while time.time() < deadline and self.run(["squeue", "-h"], check=False).stdout.strip():
                time.sleep(1)
        for name in ("slurmd", "slurmctld", "munged"):  # by PID, in reverse order of start
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
         "PREEMPTED"}


def _parse_states(out: str) -> dict[str, str]:
    states = {}
    for line in out.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "JobId" not in fields:
            continue
        jid = fields["JobId"]
        if fields.get("ArrayTaskId") and fields.get("ArrayJobId"):
            jid = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
        states[jid] = fields.get("JobState", "?")
    return states


@pytest.fixture(scope="module")
def slurm(request, tmp_path_factory):
    _only_when_asked(request)
    _install_slurm()
    if os.geteuid() != 0:
        pytest.skip("a single-node Slurm with SlurmUser=root needs root")
    cluster = LocalSlurm(str(tmp_path_factory.mktemp("slurm")))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.mark.slurm
def test_local_slurm_runs_a_job_array(slurm, tmp_path):
    """The cluster itself: a 2-task array, then a job that depends on it (what the grading template relies on)."""
    script = tmp_path / "dummy.sbatch"
    script.write_text("#!/bin/bash\necho \"task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT\" "
                      "> \"$OUT/task-$SLURM_ARRAY_TASK_ID\"\n")
    env = dict(slurm.env, OUT=str(tmp_path))
    array = slurm.run(["sbatch", "--parsable", "--array=0-1", "-c", "1", f"--chdir={tmp_path}", str(script)],
                      env=env).stdout.strip().split(";")[0]
    after = slurm.run(["sbatch", "--parsable", f"--dependency=afterok:{array}", f"--chdir={tmp_path}",
                       "--wrap", f"cat {tmp_path}/task-* > {tmp_path}/all"], env=env).stdout.strip().split(";")[0]
    states = slurm.wait_jobs([array, after], timeout=120)
    assert set(states.values()) == {"COMPLETED"}, states
    assert (tmp_path / "all").read_text() == "task 0 of 2\ntask 1 of 2\n"


# --- the grading template: its commands (no Slurm needed), then on that cluster ------------------------------
CH = "ch01_softmax"


def test_grade_sbatch_commands(tmp_path):
    """What grade.sbatch runs in an array task (shard from the array indices, CPU or GPU mode) and for collect."""
    os.makedirs(tmp_path / "venv" / "bin")
    fake = tmp_path / "venv" / "bin" / "flashcourse"
    fake.write_text('#!/bin/sh\necho "$* | mode=$FLASHCOURSE_MODE gpus=${CUDA_VISIBLE_DEVICES-unset}" > "$OUT"\n')
    fake.chmod(0o755)
    out = tmp_path / "out"
    task = dict(PATH=os.environ["PATH"], OUT=str(out), CHAPTER=CH, COURSE_DIR="/c",
                FLASHCOURSE_VENV=str(tmp_path / "venv"), SLURM_ARRAY_TASK_ID="3", SLURM_ARRAY_TASK_MIN="2",
                SLURM_ARRAY_TASK_MAX="5", SLURM_ARRAY_TASK_COUNT="4", SLURM_CPUS_PER_TASK="6")
    script = os.path.join(SLURM_DIR, "grade.sbatch")

    def run(env, *args):
        r = subprocess.run(["bash", script, *args], env=env, capture_output=True, text=True)
        return r.returncode, out.read_text().strip() if r.returncode == 0 else r.stderr

    grade = f"autograde {CH} --course-dir /c --shard 1/4 --results /c/results/{CH}"
    assert run(task) == (0, f"{grade} --jobs 6 | mode=cpu gpus=")  # no GPU given: CPU mode, GPUs hidden
    assert run(dict(task, SLURM_JOB_GPUS="1", CUDA_VISIBLE_DEVICES="0")) == (0, f"{grade} | mode=gpu gpus=0")
    assert run(dict(task, JOBS="3", AUTOGRADE_ARGS="--force", RESULTS="/r")) == \
        (0, f"autograde {CH} --course-dir /c --shard 1/4 --results /r --jobs 3 --force | mode=cpu gpus=")
    assert run(task, "collect") == (0, f"collect {CH} --course-dir /c --results /c/results/{CH} | mode= gpus=unset")
    rc, err = run(dict(task, SLURM_ARRAY_TASK_MAX="8"))  # --array=2-8:2: shards would not be I/N
    assert rc == 2 and "contiguous" in err, err
    rc, err = run({k: v for k, v in task.items() if not k.startswith("SLURM_")})
    assert rc != 0 and "job array" in err, err


def _make_class(course) -> dict[str, str]:
    """A throwaway course directory (as tests/test_cli.py makes one) with four chapter 1 submissions."""
    import nbformat

    from autograder.instructor import nbtext
    os.makedirs(course)
    shutil.copy(os.path.join(ROOT, "nbgrader_config.py"), course)
    shutil.copytree(os.path.join(ROOT, "source", CH), os.path.join(course, "source", CH))
    solution = nbformat.read(nbtext.notebook_path(CH), 4)
    blank = nbformat.read(nbtext.notebook_path(CH, "release"), 4)
    partial = nbformat.read(nbtext.notebook_path(CH, "release"), 4)  # exercise 1 solved, nothing else
    cell = next(c for c in partial.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "safe_softmax")
    answer = "e = np.exp(x - x.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)"
    cell.source = cell.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()", answer)
    class_ = {"ada": solution, "bob": blank, "cyd": partial, "dan": blank}
    for student, nb in class_.items():
        os.makedirs(os.path.join(course, "submitted", student, CH))
        nbformat.write(nb, os.path.join(course, "submitted", student, CH, f"{CH}.ipynb"))
    return {s: ("solution" if nb is solution else "partial" if nb is partial else "blank") for s, nb in class_.items()}


def _scores(course: str) -> dict[str, dict[str, float]]:
    """student -> {test cell: score} from the course's gradebook.db, as nbgrader (formgrader, export) sees it."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{os.path.join(course, 'gradebook.db')}") as gb:
        return {s.id: {g.name: g.score for g in gb.find_submission_notebook(CH, CH, s.id).grades}
                for s in gb.students}


@pytest.mark.slurm
def test_grade_a_class_with_the_job_array(slurm, tmp_path):
    """submit.sh: 2 array tasks (CPU mode, no GRES) each drain a shard, then the dependent collect job; the
    gradebook it leaves equals the one of a local `flashcourse autograde` of the same class."""
    course, local = str(tmp_path / "course"), str(tmp_path / "local")
    kinds = _make_class(course)
    shutil.copytree(course, local)
    venv = os.path.dirname(os.path.dirname(sys.executable))
    env = dict(slurm.env, COURSE_DIR=course, SHARDS="2", GPUS_PER_TASK="0", CPUS_PER_TASK="1",
               FLASHCOURSE_VENV=venv)
    env.pop("FLASHCOURSE_MODE", None)  # grade.sbatch chooses: no GPU given -> CPU mode
    t0 = time.time()
    out = slurm.run(["bash", os.path.join(SLURM_DIR, "submit.sh"), CH, "--time=30"], env=env, cwd=course).stdout
    ids = re.search(r"array=(\d+) collect=(\d+)", out)
    assert ids, out
    states = slurm.wait_jobs([ids[1], ids[2]], timeout=1200)
    logs = {p: open(os.path.join(course, "slurm-logs", p), errors="replace").read()
            for p in sorted(os.listdir(os.path.join(course, "slurm-logs")))}
    shown = "\n".join(f"--- {p}\n{t[-4000:]}" for p, t in logs.items())
    assert set(states) == {f"{ids[1]}_0", f"{ids[1]}_1", ids[2]}, states
    assert set(states.values()) == {"COMPLETED"}, f"{states}\n{shown}"
    assert sum("mode cpu" in t for t in logs.values()) == 2, shown  # CPU mode fallback in both tasks
    for i in (0, 1):  # each task graded its own slice, as `--shard I/2` defines it
        assert f"shard {i}/2 of {CH}" in logs[f"flashcourse-grade-{ids[1]}_{i}.out"], shown
    assert {f"{s}.json" for s in kinds} <= set(os.listdir(os.path.join(course, "results", CH))), shown
    print(f"Slurm: 2 array tasks and collect in {time.time() - t0:.0f} s")

    t0 = time.time()
    r = subprocess.run([os.path.join(venv, "bin", "flashcourse"), "autograde", CH, "--course-dir", local,
                        "--jobs", "2"], env=dict(os.environ, FLASHCOURSE_MODE="cpu"), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    print(f"local autograde in {time.time() - t0:.0f} s")

    got, want = _scores(course), _scores(local)
    assert set(want) == set(kinds), want
    assert got == want, f"Slurm {got}\nlocal {want}\n{shown}"
    total = {s: sum(cells.values()) for s, cells in got.items()}
    print(f"scores (Slurm = local): {total}")
    assert total["ada"] > total["cyd"] > total["bob"] == total["dan"] == 0, total
