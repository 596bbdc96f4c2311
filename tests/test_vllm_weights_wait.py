"""tpu_serving.backends.vllm.weights_wait: the leader waits for the checkpoint instead of restart-looping (issue 38,
point 9: until the weights were copied, the group restarted every hour on slices that bill)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import plan_of
from tpu_serving.backends.vllm import weights_wait
from tpu_serving.backends.vllm.facts import WEIGHTS_MOUNT


def _leader_inits(stack: str) -> list[dict]:
    (lws,) = [r for r in plan_of(stack).resources if r.type.endswith(":LeaderWorkerSet")]
    template = lws.inputs["spec"]["leaderWorkerTemplate"]
    leader = template.get("leaderTemplate") or template["workerTemplate"]
    return list(leader["spec"].get("initContainers") or [])


def test_weights_wait_container_is_the_gcsfuse_leaders_and_names_the_object_it_waits_for():
    (wait,) = [c for c in _leader_inits("vllm-llama33-70b-v6e8") if c["name"] == weights_wait.CONTAINER]
    assert wait["volumeMounts"] == [{"mountPath": WEIGHTS_MOUNT, "name": "model-weights", "readOnly": True}]
    assert "gs://" in wait["args"][0] and f"/{weights_wait.MARKER} is not there yet" in wait["args"][0]
    assert wait["image"].endswith("vllm/vllm-tpu:v0.29.0") and "google.com/tpu" not in str(wait["resources"])
    # the Run:ai streamer reads gs:// itself: no mount to wait on
    assert not [c for c in _leader_inits("vllm-llama31-405b-v6e16") if c["name"] == weights_wait.CONTAINER]


def _run(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    local = script.replace(f"{WEIGHTS_MOUNT}/", f"{folder}/")
    return subprocess.run(
        ["sh", "-c", local.replace("sleep 60", "sleep 0.2")], capture_output=True, text=True, timeout=5
    )


def test_weights_wait_script_waits_until_the_config_is_there(tmp_path: Path):
    script = weights_wait.wait_script("ckpt-bucket", "llama-3.3-70b")
    try:
        subprocess.run(["sh", "-c", script.replace(f"{WEIGHTS_MOUNT}/", f"{tmp_path}/").replace("sleep 60", "sleep 0.2")],
                       capture_output=True, text=True, timeout=1)  # fmt: skip
        raise AssertionError("the wait ended with no config.json")
    except subprocess.TimeoutExpired as waited:
        out = waited.stdout.decode() if isinstance(waited.stdout, bytes) else str(waited.stdout)
        assert "waiting for the weights: gs://ckpt-bucket/llama-3.3-70b/config.json is not there yet" in out
    (tmp_path / "config.json").write_text("{}")
    done = _run(script, tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"weights found: {tmp_path}/config.json"
