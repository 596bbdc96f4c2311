"""The ComputeClass of ``serving.fallback`` (tpu_serving.pools.compute_class) on a real API server with GKE's ComputeClass CRD
(built from the published schema, its CEL rules included: tools/e2e/crds.py): the class the library builds is
admitted, each planted break that GKE's rules refuse is refused with GKE's own message, and a pod that selects the
class lands on a node of a pool labelled and tainted for it, not on an unlabelled node of the same shape. Marked
``e2e``: skipped without the toolchain's JSON."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import require_toolchain
from tpu_serving import catalog
from tpu_serving.catalog import node_selector
from tpu_serving.pools.compute_class import (
    Fallback,
    TpuComputeClassArgs,
    compute_class_spec,
    node_labels,
    node_taints,
    toleration,
)
from tpu_serving_tools.e2e import nodes
from tpu_serving_tools.e2e.controlplane import ControlPlane
from tpu_serving_tools.e2e.crds import install_crds
from tpu_serving_tools.e2e.kube import ApiError, wait_for

pytestmark = pytest.mark.e2e

SHAPE = catalog.slice_shape("ct5lp-hightpu-4t", "2x2")
"""A single-host v5e slice: one ct5lp-hightpu-4t VM with 4 chips."""
CLASS = "e2e-serving"
PATH = "/apis/cloud.google.com/v1/computeclasses"
_names = (f"cc-{n}" for n in itertools.count())

CLASSED = nodes.Pool(
    "e2e-classed",
    "ct5lp-hightpu-4t",
    "us-west4-a",
    topology="2x2",
    initial_nodes=1,
    labels=node_labels(CLASS),
    taints=[{**t, "effect": "NoSchedule"} for t in node_taints(CLASS)],
)
"""A pool of the class, as the stack makes it: GKE's NO_SCHEDULE is the Node's NoSchedule."""
PLAIN = nodes.Pool("e2e-plain", "ct5lp-hightpu-4t", "us-west4-a", topology="2x2", initial_nodes=1)
"""A pool of the same shape outside the class."""


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    require_toolchain()
    with ControlPlane(run_timeout=600) as plane:
        install_crds(plane.kube)
        nodes.create_nodes(plane, CLASSED)
        nodes.create_nodes(plane, PLAIN)
        yield plane


def spec(*fallback: Fallback) -> dict[str, Any]:
    return compute_class_spec(
        TpuComputeClassArgs(
            shape=SHAPE,
            node_pools=[CLASSED.name],
            zones=["us-west4-a"],
            service_account="nodes@tpu-serving-demo.iam.gserviceaccount.com",
            fallback=fallback,
            disk_size_gb=200,
        )
    )


def create(cp: ControlPlane, name: str, body: dict[str, Any]) -> Any:
    obj = {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": name}, "spec": body}
    return cp.kube.request("POST", PATH, obj)


def test_e2e_compute_class_the_librarys_class_is_admitted(cp: ControlPlane) -> None:
    made = create(cp, CLASS, spec(Fallback.ON_DEMAND, Fallback.FLEX_START, Fallback.SPOT))
    assert [p.get("nodepools") for p in made["spec"]["priorities"]][0] == [CLASSED.name]
    assert made["spec"]["whenUnsatisfiable"] == "DoNotScaleUp"


def test_e2e_compute_class_planted_spot_and_flex_start_in_one_priority_is_refused(cp: ControlPlane) -> None:
    body = copy.deepcopy(spec(Fallback.FLEX_START))
    body["priorities"][1]["spot"] = True
    with pytest.raises(ApiError) as refused:
        create(cp, next(_names), body)
    assert refused.value.status == 422 and "Flex Start provisioning model is incompatible with Spot" in str(
        refused.value
    )


def test_e2e_compute_class_planted_pools_beside_a_tpu_in_one_priority_is_refused(cp: ControlPlane) -> None:
    body = copy.deepcopy(spec(Fallback.SPOT))
    body["priorities"][0]["spot"] = True
    with pytest.raises(ApiError) as refused:
        create(cp, next(_names), body)
    assert refused.value.status == 422 and "Nodepool field cannot be set along with other fields" in str(refused.value)


def _pod(cp: ControlPlane, name: str, selector: dict[str, str], tolerations: list[dict[str, str]]) -> None:
    cp.kube.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeSelector": selector, "tolerations": tolerations, "containers": [{
            "name": "c", "image": "registry.k8s.io/pause:3.10",
            "resources": {"limits": {"google.com/tpu": "4"}, "requests": {"google.com/tpu": "4"}}}]},
    })  # fmt: skip


def _node_of(cp: ControlPlane, name: str) -> str:
    return str(cp.kube.get("v1", "Pod", name, namespace="default")["spec"].get("nodeName") or "")


TPU = {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}


def test_e2e_compute_class_a_pod_of_the_class_lands_on_the_classed_pool(cp: ControlPlane) -> None:
    said = toleration(CLASS)
    tolerated = {"key": said.key, "operator": said.operator, "value": said.value, "effect": said.effect}
    _pod(cp, "of-the-class", {**node_selector(SHAPE), **node_labels(CLASS)}, [TPU, tolerated])  # type: ignore[dict-item]
    wait_for("the pod scheduled", lambda: _node_of(cp, "of-the-class"), timeout=60)
    assert _node_of(cp, "of-the-class").startswith(f"gke-{CLASSED.name}-")


def _unschedulable(cp: ControlPlane, name: str) -> str:
    pod = cp.kube.get("v1", "Pod", name, namespace="default")
    for c in pod.get("status", {}).get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable":
            return str(c.get("message", ""))
    return ""


def test_e2e_compute_class_planted_pod_of_the_class_without_its_toleration_stays_pending(cp: ControlPlane) -> None:
    """A planted pod: the real scheduler, without GKE's admission (which adds the class's toleration to a pod that
    selects the class: google/skills 1af77752 skills/cloud/gke-compute-classes/SKILL.md l.56-58), keeps a pod that
    selects the class without tolerating its taint off every node. What it shows is that the pods of the test above
    land because of their own toleration, which the stack's pods carry, not that GKE would refuse this one (GKE review
    of the capacity fallback, m5)."""
    _pod(cp, "untolerated", {**node_selector(SHAPE), **node_labels(CLASS)}, [TPU])
    said = wait_for("the scheduler's refusal", lambda: _unschedulable(cp, "untolerated"), timeout=60)
    assert "untolerated taint" in said and _node_of(cp, "untolerated") == "", said
