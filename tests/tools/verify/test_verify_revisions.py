"""tpu_serving_tools.verify.revisions: a LeaderWorkerSet's rollout is done only when its controller says so for its
current generation (SRE review round 24, m2)."""

from __future__ import annotations

from typing import Any

import pytest

from tpu_serving_tools.verify.revisions import rolled_out, rollouts
from tpu_serving_tools.verify.snapshot import Snapshot


def _lws(
    conditions: dict[str, str],
    *,
    generation: int = 3,
    seen: int = 3,
    replicas: int = 2,
    updated: int = 2,
    ready: int = 2,
    partition: int | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas}
    if partition is not None:
        spec["rolloutStrategy"] = {"rollingUpdateConfiguration": {"partition": partition}}
    return {
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "serving", "generation": generation},
        "spec": spec,
        "status": {
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "conditions": [{"type": t, "status": s, "observedGeneration": seen} for t, s in conditions.items()],
        },
    }


DONE = {"Available": "True", "Progressing": "False", "UpdateInProgress": "False"}


def test_rolled_out_passes_an_available_lws_of_its_current_generation() -> None:
    finding = rolled_out(_lws(DONE))
    assert finding.ok and finding.check == "rollout"
    assert finding.subject == "LeaderWorkerSet serving/vllm"
    assert finding.detail == "2 of 2 groups on the latest revision, 2 ready"


def test_rolled_out_fails_a_rollout_stalled_before_its_surge_group() -> None:
    """The quota refused the surge pods: the old groups are Ready, none updated, UpdateInProgress."""
    stalled = {"Available": "False", "Progressing": "True", "UpdateInProgress": "True"}
    finding = rolled_out(_lws(stalled, updated=0))
    assert not finding.ok
    assert finding.detail == "rollout in progress (UpdateInProgress): 0 of 2 groups on the latest revision, 2 ready"


@pytest.mark.parametrize(
    ("lws", "says"),
    [
        (_lws(DONE, generation=4, seen=3), "its controller has not reconciled generation 4"),
        (_lws({}), "its controller has not reconciled generation 3"),
        (_lws({"Available": "False", "Progressing": "True"}, ready=1), "not Available (groups not ready)"),
    ],
)
def test_rolled_out_fails_what_its_controller_has_not_called_done(lws: dict[str, Any], says: str) -> None:
    finding = rolled_out(lws)
    assert not finding.ok and finding.detail.startswith(says)


def test_rolled_out_passes_a_canary_partition_and_says_it() -> None:
    """A partition leaves the groups below it on the old revision on purpose; its controller then says Available."""
    finding = rolled_out(_lws(DONE, replicas=3, updated=1, ready=3, partition=2))
    assert finding.ok
    assert finding.detail.endswith("(partition 2: groups below it stay on the old one)")


def test_rollouts_checks_every_lws_of_the_namespaces_only() -> None:
    other = _lws({"UpdateInProgress": "True"})
    other["metadata"] = {**other["metadata"], "namespace": "elsewhere"}
    snapshot = Snapshot({"LeaderWorkerSet": [_lws(DONE), other]})
    assert [f.subject for f in rollouts(snapshot, ["serving"])] == ["LeaderWorkerSet serving/vllm"]
    assert [f.ok for f in rollouts(snapshot, ["serving", "elsewhere"])] == [True, False]
