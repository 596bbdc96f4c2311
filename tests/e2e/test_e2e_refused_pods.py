"""The Event the refused-pods alert counts (tpu_serving.operations.refused_pods), as the real StatefulSet controller of
kube-controller-manager records it: a StatefulSet named as a LeaderWorkerSet's group (``<lws>-<index>``) in a
namespace whose ResourceQuota admits no pod gets a Warning ``FailedCreate`` about the StatefulSet, in its namespace,
and every field the metric's Logging filter reads matches it; the controller's own leader set name matches too, and a
pod's name does not. Marked ``e2e``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.conftest import require_toolchain
from tpu_serving.operations import refused_pods
from tpu_serving.operations.group_recreations import Groups
from tpu_serving_tools.e2e.controlplane import ControlPlane
from tpu_serving_tools.e2e.kube import wait_for

pytestmark = pytest.mark.e2e

NS = "refused"
GROUPS = Groups("my-project", "serving", NS, ("vllm",))


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    require_toolchain()
    with ControlPlane(run_timeout=300) as plane:
        yield plane


def _clauses(query: str) -> dict[str, str]:
    """The filter's ``field="value"`` and ``field=~"regex"`` clauses, by field."""
    return {m[0]: m[2] for m in re.findall(r'([\w.]+)(=~?)"([^"]*)"', query)}


def test_e2e_refused_pods_a_quota_refusal_is_the_event_the_metric_counts(cp: ControlPlane):
    kube = cp.kube
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "none", "namespace": NS}}
    kube.create({**quota, "spec": {"hard": {"pods": "0"}}})
    wait_for("the quota's status", lambda: kube.get("v1", "ResourceQuota", "none", NS).get("status", {}).get("hard"),
             timeout=60)  # fmt: skip
    labels = {"app": "vllm-group"}
    pod = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "example.invalid/c:1"}]}}
    spec = {"replicas": 1, "serviceName": "vllm", "selector": {"matchLabels": labels}, "template": pod}
    kube.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "vllm-1", "namespace": NS},
                 "spec": spec})  # fmt: skip

    def refused() -> dict | None:
        events = kube.list("v1", "Event", NS)
        return next((e for e in events if e.get("reason") == refused_pods.FAILED_CREATE_REASON), None)

    event = wait_for("a FailedCreate event", refused, timeout=120)
    assert event["type"] == "Warning" and "exceeded quota" in event["message"], event
    clauses = _clauses(refused_pods.event_filter(GROUPS))
    involved = event["involvedObject"]
    assert clauses["jsonPayload.reason"] == event["reason"]
    assert clauses["jsonPayload.involvedObject.kind"] == involved["kind"] == "StatefulSet"
    assert clauses["jsonPayload.involvedObject.namespace"] == involved["namespace"] == NS
    name = re.compile(clauses["jsonPayload.involvedObject.name"])
    assert name.search(involved["name"]) and name.search("vllm")
    assert not name.search("vllm-1-0") and not name.search("vllm-prober") and not name.search("other-1")
