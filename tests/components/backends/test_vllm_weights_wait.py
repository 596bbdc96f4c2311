"""tpu_serving.backends.vllm.weights_wait: the leader waits for the checkpoint instead of restart-looping (issue 38,
point 9: until the weights were copied, the group restarted every hour on slices that bill)."""

from __future__ import annotations

import json
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
    assert "gs://" in wait["args"][0] and f"lacks {weights_wait.MARKER} or a shard" in wait["args"][0]
    assert wait["image"].endswith("vllm/vllm-tpu:v0.29.0") and "google.com/tpu" not in str(wait["resources"])
    # a multi-host group's workers wait too (GKE review round 63, m1)
    (lws,) = [r for r in plan_of("vllm-llama33-70b-v5e16").resources if r.type.endswith(":LeaderWorkerSet")]
    worker = lws.inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert [c["name"] for c in worker["initContainers"]] == [weights_wait.CONTAINER]
    # the Run:ai streamer reads gs:// itself: no mount to wait on
    assert not [c for c in _leader_inits("vllm-llama31-405b-v6e16") if c["name"] == weights_wait.CONTAINER]


def _waits(script: str, folder: Path) -> bool:
    """Whether the wait, run on ``folder`` as the mount, would go round again (its first check failed), else it ends
    with rc 0. The loop's sleep is replaced by an exit, so the answer takes no timing (a loaded machine's python3
    start took over a second)."""
    local = script.replace(WEIGHTS_MOUNT, str(folder)).replace("sleep 60 & wait $!; done", "exit 3; done")
    assert local != script
    done = subprocess.run(["sh", "-c", local], capture_output=True, text=True, timeout=120)
    if done.returncode == 3:
        assert "waiting for the weights: gs://ckpt-bucket/llama-3.3-70b/ lacks config.json" in done.stdout
        return True
    assert done.returncode == 0 and done.stdout.strip() == f"weights found: {folder}", done
    return False


def test_weights_wait_script_waits_until_the_whole_checkpoint_is_there(tmp_path: Path):
    """GKE review round 63, m2: config.json lands first in a parallel copy; the wait holds until every shard the
    index names is there too."""
    script = weights_wait.wait_script("ckpt-bucket", "llama-3.3-70b")
    assert _waits(script, tmp_path / "absent") and _waits(script, tmp_path)
    (tmp_path / "config.json").write_text("{}")
    assert _waits(script, tmp_path)  # no shard yet
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (tmp_path / weights_wait.INDEX).write_text(json.dumps(index))
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"x")
    assert _waits(script, tmp_path)  # one of two shards
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"x")
    assert not _waits(script, tmp_path)
    single = tmp_path / "single"
    single.mkdir()
    (single / "config.json").write_text("{}")
    (single / "model.safetensors").write_bytes(b"x")
    assert not _waits(script, single)  # an unsharded checkpoint: no index
