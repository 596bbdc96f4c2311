"""The multi-host vLLM pods' shell scripts as their containers' PID 1, run in a PID namespace of their own
(``unshare --pid``), where the kernel delivers SIGTERM to the init only if it handles it: the kubelet's SIGTERM ends
the worker, the leader's wait for its workers and the wait for the weights at once (GKE review 71, M1: an ``exec``'d
bash ignored it and lived out the 360 s grace period). Ray and the bootstrap script are stand-ins on ``PATH`` and at
the script's path; the kubelet's ``$(VAR)`` expansion is done here. Marked ``slow``: it spawns processes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import plan_of
from tpu_serving.backends.vllm import weights_wait
from tpu_serving.backends.vllm.facts import MULTI_NODE_SCRIPTS, WEIGHTS_MOUNT


def _pid_namespaces() -> bool:
    """Whether this machine lets the test make a PID namespace (util-linux ``unshare``, and the privilege for it)."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True, check=False).returncode == 0


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not _pid_namespaces(), reason="needs `unshare --pid` (util-linux, and the privilege for it)"),
]

BOOTSTRAP = (
    "#!/bin/bash\n# multi-node-serving.sh stand-in: `ray start --block`, retried\nwhile true; do sleep 30; done\n"
)
RAY = '#!/bin/sh\n[ "$1" = stop ] && echo "$*" >> "$(dirname "$0")/ray.log"\nexit 0\n'


def _containers(stack: str) -> tuple[dict, dict]:
    """The leader's and a worker's serving container of the stack's LeaderWorkerSet."""
    (lws,) = [r for r in plan_of(stack).resources if r.type.endswith(":LeaderWorkerSet")]
    template = lws.inputs["spec"]["leaderWorkerTemplate"]
    leader = template["leaderTemplate"]["spec"]["containers"][0]
    worker = template["workerTemplate"]["spec"]["containers"][0]
    return leader, worker


def _local(script: str, tmp_path: Path) -> str:
    """``script`` on this machine: the bootstrap at a folder of the test, the kubelet's expansions done."""
    bootstrap = tmp_path / "multi-node-serving.sh"
    bootstrap.write_text(BOOTSTRAP)
    local = script
    for path in MULTI_NODE_SCRIPTS:
        local = local.replace(path, str(bootstrap))
    local = local.replace("$(LWS_LEADER_ADDRESS)", "vllm-0.vllm").replace("$(LWS_GROUP_SIZE)", "4")
    assert local != script
    return local


def _stopped_within(script: str, tmp_path: Path, seconds: float) -> int | None:
    """Run ``script`` as ``/bin/sh -c``'s PID 1 of a new PID namespace, send that init SIGTERM after a second, and
    return its exit status if the namespace ended within ``seconds``, else None (it is then killed)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "ray").write_text(RAY)
    for f in (bin_dir / "ray", tmp_path / "multi-node-serving.sh"):
        if f.exists():
            f.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    outer = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "/bin/sh", "-c", script], env=env)
    try:
        init = _child(outer.pid)
        time.sleep(1)
        os.kill(init, signal.SIGTERM)
        return outer.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None
    finally:
        if outer.poll() is None:
            outer.kill()
            outer.wait()


def _child(pid: int) -> int:
    """The process ``unshare --fork`` started: PID 1 of the new namespace."""
    for _ in range(100):
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.05)
    raise AssertionError(f"unshare {pid} started no process")


def test_vllm_pid1_worker_stops_its_ray_node_on_sigterm(tmp_path: Path):
    _, worker = _containers("vllm-llama33-70b-v5e16")
    assert worker["command"] == ["/bin/sh", "-c"]
    status = _stopped_within(_local(worker["args"][0], tmp_path), tmp_path, 5)
    assert status is not None, "the worker's PID 1 ignored SIGTERM"
    assert (tmp_path / "bin" / "ray.log").read_text() == "stop --force\n"


def test_vllm_pid1_leader_waiting_for_its_workers_stops_on_sigterm(tmp_path: Path):
    leader, _ = _containers("vllm-llama31-405b-v6e16")
    status = _stopped_within(_local(leader["args"][0], tmp_path), tmp_path, 5)
    assert status is not None, "the leader's PID 1 ignored SIGTERM while it waited for the Ray head"
    assert (tmp_path / "bin" / "ray.log").read_text() == "stop --force\n"


def test_vllm_pid1_weights_wait_stops_on_sigterm(tmp_path: Path):
    script = weights_wait.wait_script("ckpt-bucket", "llama-3.3-70b").replace(WEIGHTS_MOUNT, str(tmp_path / "absent"))
    status = _stopped_within(script, tmp_path, 5)  # mid-sleep of its minute between checks
    assert status == 143, "the wait's PID 1 ignored SIGTERM"
