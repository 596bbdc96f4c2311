"""tpu_serving_tools.e2e.rollout: the image bump written into the stack file, and the verdicts on the pods the LWS
controller made (recorded pods here; make e2e reads them from the API server)."""

from __future__ import annotations

from typing import Any

from tpu_serving.backends.vllm.args import VllmImages
from tpu_serving_tools.e2e.rollout import (
    REVISION,
    bumped,
    floor_held,
    floor_of,
    mirrored,
    rolled_out,
    serving_groups,
)
from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL


def pod(group: int, revision: str, *, ready: bool = True, deleting: bool = False, image: str = "a/b:1") -> Any:
    meta: dict[str, Any] = {"labels": {LWS_GROUP_LABEL: str(group), REVISION: revision}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-28T00:00:00Z"
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return {"metadata": meta, "spec": {"containers": [{"image": image}]}, "status": status}


def test_mirrored_replaces_a_registry_host_and_keeps_path_tag_and_digest():
    assert mirrored("vllm/vllm-tpu:v0.29.0") == "mirror.example.com/vllm/vllm-tpu:v0.29.0"
    assert mirrored("us-docker.pkg.dev/p/r/jetstream:v1@sha256:" + "0" * 64) == (
        "mirror.example.com/p/r/jetstream:v1@sha256:" + "0" * 64
    )
    assert mirrored("localhost:5000/x:1") == "mirror.example.com/x:1"


def test_bumped_sets_the_engine_image_from_the_mirror_and_keeps_the_rest():
    config = {"zone": "z", "serving": {"backend": "vllm", "model": "m"}}
    new, image = bumped(config) or ({}, "")
    assert image == mirrored(VllmImages().vllm)
    assert new["serving"] == {"backend": "vllm", "model": "m", "images": {"vllm": image}}
    assert config["serving"] == {"backend": "vllm", "model": "m"}  # not changed in place
    given = {"serving": {"backend": "vllm", "images": {"vllm": "r.example/v:t"}}}
    assert (bumped(given) or ({}, ""))[1] == "mirror.example.com/v:t"
    assert bumped({"serving": {"backend": "saxml"}}) is None


def test_serving_groups_counts_whole_ready_groups_of_one_revision():
    assert serving_groups([pod(0, "r1"), pod(0, "r1"), pod(1, "r1"), pod(1, "r1")], 2) == 2
    assert serving_groups([pod(0, "r1"), pod(0, "r1", ready=False)], 2) == 0
    assert serving_groups([pod(0, "r1"), pod(0, "r1", deleting=True)], 2) == 0
    assert serving_groups([pod(0, "r1"), pod(0, "r2")], 2) == 0
    assert serving_groups([pod(0, "r1")], 2) == 0


def test_rolled_out_until_every_group_serves_on_a_new_revision_with_the_image():
    old, new = {"r1"}, "m/v:t"
    done = [pod(g, "r2", image=new) for g in (0, 0, 1, 1)]
    assert rolled_out(done, 2, 2, old, new) == ""
    assert rolled_out([*done[:3], pod(1, "r1")], 2, 2, old, new) == "1 pods still on the old revision"
    assert rolled_out([pod(g, "r2") for g in (0, 0, 1, 1)], 2, 2, old, new) == f"no pod runs {new}"
    assert rolled_out(done[:3], 2, 2, old, new) == "1 of 2 groups serve, 3 pods"
    assert rolled_out([*done[:3], pod(1, "r3", image=new)], 2, 2, old, new) == "2 revisions among 4 pods"


def test_floor_of_a_surge_is_every_group_and_in_place_one_fewer():
    assert floor_of("surge", 2) == 2
    assert floor_of("in-place", 2) == 1
    assert floor_of("in-place", 1) == 0


def test_floor_held_passes_at_the_floor_and_fails_below_it_or_without_samples():
    assert floor_held([2, 2, 3, 2], 2, "lws").ok
    dipped = floor_held([2, 1, 2], 2, "lws")
    assert not dipped.ok and dipped.detail == "lowest serving groups 1, floor 2, 3 samples"
    assert not floor_held([], 2, "lws").ok
