"""tpu_serving_tools.e2e.canary: the canary written into the stack file, and the verdicts on the groups' revisions
(recorded pods here; tests/e2e/test_e2e_canary_rollout.py reads them from the API server)."""

from __future__ import annotations

from typing import Any

from tpu_serving_tools.e2e.canary import Canary, held_finding, moved_finding, revisions_by_group, with_canary
from tpu_serving_tools.e2e.rollout import REVISION
from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL


def pod(group: int, revision: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": {LWS_GROUP_LABEL: str(group), REVISION: revision}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-29T00:00:00Z"
    return {"metadata": meta}


def test_with_canary_sets_and_removes_the_setting_and_keeps_the_rest():
    config = {"zone": "z", "serving": {"backend": "vllm", "model": "m"}}
    assert with_canary(config)["serving"] == {"backend": "vllm", "model": "m", "canaryGroups": 1}
    assert with_canary(with_canary(config), None)["serving"] == {"backend": "vllm", "model": "m"}
    assert config["serving"] == {"backend": "vllm", "model": "m"}  # not changed in place


def test_revisions_by_group_skips_pods_being_deleted():
    pods = [pod(0, "a"), pod(0, "a"), pod(1, "b"), pod(1, "a", deleting=True), {"metadata": {}}]
    assert revisions_by_group(pods) == {0: {"a"}, 1: {"b"}}


def test_held_finding_fails_when_group_0_left_the_old_revision_in_any_sample():
    c = Canary("ns", "vllm", 4, {"old"}, held=[{"old"}, {"old"}])
    assert held_finding(c).ok and held_finding(c).detail == "group 0 on ['old'] in 2 samples"
    c.held.append({"old", "new"})
    assert not held_finding(c).ok and held_finding(c).detail == "group 0 moved to ['new'] (1 of 3 samples)"
    assert not held_finding(Canary("ns", "vllm", 4, {"old"})).ok


def test_moved_finding_needs_one_new_revision():
    assert moved_finding(Canary("ns", "vllm", 4, {"old"}, moved={"new"})).ok
    assert not moved_finding(Canary("ns", "vllm", 4, {"old"}, moved={"old"})).ok
    assert not moved_finding(Canary("ns", "vllm", 4, {"old"})).ok
