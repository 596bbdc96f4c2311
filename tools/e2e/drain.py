"""A slice drain under the groups' disruption budget, through the Eviction API of the real API server: the group's
nodes are cordoned, as a drain does first (otherwise kwok would make a replacement pod Ready on the same VM at
once, and the group would never be down); each pod of one serving group is evicted once, as GKE drains a multi-host slice's VMs together (one is allowed, the others are
refused or gone with their group); then a pod of another group must be refused until the first group serves again,
and then be allowed. Under kwok a pod stays Ready until it is deleted, so what a real engine does when its group
loses a pod (its other pods fail, turn unready and may then be evicted) is not shown here. The budget's status is the disruption
controller's (kube-controller-manager), the refusal the API server's, the group's recreation the LeaderWorkerSet
controller's.

Sources (k8s.io/kubernetes v1.36.3): pkg/registry/core/pod/storage/eviction.go l.433-436 (a 429 "Cannot evict pod
as it would violate the pod's disruption budget." when ``disruptionsAllowed`` is 0; each allowed eviction
decrements it at once, l.459), pkg/controller/disruption/disruption.go l.813-830 (``desiredHealthy``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL, Finding

from .rollout import live_lws, lws_pods, serving_groups

REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."
"""The API server's message for an eviction the budget does not allow (eviction.go l.433)."""


def _evict(api_client: Any, namespace: str, pod: str, uid: str | None = None) -> str:
    """Evict ``pod`` (only the pod of that ``uid``, when given, as ``kubectl drain`` does: a pod of the same name
    that its controller made since answers 409); ``""`` when the API server allowed it, else its status and
    message."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    options = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=uid)) if uid else None
    body = client.V1Eviction(metadata=client.V1ObjectMeta(name=pod, namespace=namespace), delete_options=options)
    try:
        client.CoreV1Api(api_client).create_namespaced_pod_eviction(pod, namespace, body)
    except ApiException as err:
        import json

        try:
            status = json.loads(err.body or "{}")
        except ValueError:
            return f"{err.status} {err.body}"
        causes = [c.get("message", "") for c in (status.get("details") or {}).get("causes") or ()]
        return f"{err.status} {status.get('message', '')}" + (f" ({'; '.join(causes)})" if causes else "")
    return ""


def _budget(api_client: Any, namespace: str, name: str) -> Mapping[str, Any]:
    """The budget's generation and the disruption controller's status of it (all None when there is none)."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    try:
        pdb = client.PolicyV1Api(api_client).read_namespaced_pod_disruption_budget(name, namespace)
    except ApiException as err:
        if err.status == 404:
            return {"generation": None, "observed": None, "expected": None, "allowed": None}
        raise
    return {
        "generation": pdb.metadata.generation if pdb.metadata else None,
        "observed": pdb.status.observed_generation if pdb.status else None,
        "expected": pdb.status.expected_pods if pdb.status else None,
        "allowed": pdb.status.disruptions_allowed if pdb.status else None,
    }


def tpu_nodes(api_client: Any) -> set[str]:
    """The names of the Nodes with TPU chips to allocate (``google.com/tpu``)."""
    from kubernetes import client

    found = client.CoreV1Api(api_client).list_node().items
    return {
        str(n.metadata.name)
        for n in found
        if n.metadata is not None
        and n.status is not None
        and int((n.status.allocatable or {}).get("google.com/tpu", "0")) > 0
    }


def cordon(api_client: Any, nodes: set[str], unschedulable: bool) -> None:
    """Mark ``nodes`` unschedulable (a drain's cordon, ``kubectl cordon``), or schedulable again."""
    from kubernetes import client

    for node in sorted(nodes):
        client.CoreV1Api(api_client).patch_node(node, {"spec": {"unschedulable": unschedulable}})


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def drain_one_group(api_client: Any, target: tuple[str, str], timeout: float = 90.0) -> list[Finding]:
    """Drain group 0 of the LeaderWorkerSet ``target`` (namespace, name), which must run 2 groups or more, under
    its budget (a PodDisruptionBudget named after it): each of group 0's pods evicted once, as a slice's drain asks
    for them all; a pod of group 1 evicted while group 0 is disrupted, which the API server must refuse; then, once
    group 0 serves again, the same eviction, which it must allow. Without a budget the evictions still run, and the
    finding says both groups went down at once."""
    namespace, name = target
    subject = f"PodDisruptionBudget {namespace}/{name}"
    lws, size = live_lws(api_client, namespace, name)
    groups = int(lws["spec"].get("replicas", 1))
    if groups < 2:
        return [Finding("drain", subject, False, f"needs 2 groups or more to show the budget, has {groups}")]
    out, settled, generation = _budget_status(api_client, target, groups * size, timeout)
    if not settled and generation is not None:
        return out  # a budget the controller has not settled: the evictions below would show nothing
    by_group, serving = pods_by_group(api_client, namespace, name)
    second = sorted(by_group["1"])[0]
    # As a drain does first, cordon group 0's slice, and with it every other TPU node no other group runs on: a free
    # slice (a surge spare at its maximum) would take group 0 back at once, and then the budget rightly allows the
    # next eviction (CI saw it: 'allowed: both groups disrupted at once' while group 0 already served on the spare).
    # What is shown is the budget while group 0 is down.
    nodes = tpu_nodes(api_client) - serving
    cordon(api_client, nodes, True)
    out.append(evict_group(api_client, namespace, sorted(by_group["0"].items()), subject))
    answer = _evict(api_client, namespace, second)
    out.append(
        Finding(
            "drain",
            f"{subject}: a pod of group 1 while group 0 is down",
            answer.startswith("429") and REFUSED in answer,
            f"refused: {answer}" if answer else "allowed: both groups disrupted at once",
        )
    )
    cordon(api_client, nodes, False)  # the slice is back (upgraded, repaired)
    return out + _after_return(api_client, target, (groups, size), second, timeout)


def _budget_status(
    api_client: Any, target: tuple[str, str], pods: int, timeout: float
) -> tuple[list[Finding], bool, Any]:
    """The budget's status once its controller has counted ``pods`` pods and allows one disruption (or ``timeout``):
    its finding, whether it settled, and its generation (None: no budget)."""
    namespace, name = target
    settled = _wait(
        lambda: (
            (b := _budget(api_client, namespace, name))["observed"] == b["generation"]
            and b["expected"] == pods
            and b["allowed"] == 1
        ),
        timeout,
    )
    seen = _budget(api_client, namespace, name)
    detail = f"expected pods {seen['expected']} (groups x size = {pods}), disruptions allowed {seen['allowed']}"
    subject = f"PodDisruptionBudget {namespace}/{name}: status"
    return [Finding("drain", subject, settled, detail)], settled, seen["generation"]


def pods_by_group(api_client: Any, namespace: str, name: str) -> tuple[dict[str, dict[str, str]], set[str]]:
    """The set's pods by group index (name -> uid), and the nodes of every group but group 0."""
    by_group: dict[str, dict[str, str]] = {}
    serving: set[str] = set()
    for pod in lws_pods(api_client, namespace, name):
        meta = pod["metadata"]
        group = str((meta.get("labels") or {}).get(LWS_GROUP_LABEL))
        by_group.setdefault(group, {})[meta["name"]] = meta["uid"]
        if group != "0":
            serving.add(str((pod.get("spec") or {}).get("nodeName")))
    return by_group, serving


def evict_group(api_client: Any, namespace: str, pods: list[tuple[str, str]], subject: str) -> Finding:
    """Each of ``pods`` (name, uid) evicted once, as a slice's drain asks: at least one must be allowed."""
    answers = {pod: _evict(api_client, namespace, pod, uid) for pod, uid in pods}
    allowed = [pod for pod, why in answers.items() if not why]
    others = "; ".join(f"{pod}: {why.split(' (')[0]}" for pod, why in answers.items() if why)
    return Finding(
        "drain",
        f"{subject}: group 0's pods, each evicted once",
        bool(allowed),
        f"allowed {', '.join(allowed) or 'none'}" + (f"; {others}" if others else ""),
    )


def _after_return(
    api_client: Any, target: tuple[str, str], shape: tuple[int, int], second: str, timeout: float
) -> list[Finding]:
    """Once group 0's slice is back: it serves again, the budget then allows the eviction of group 1's pod
    ``second``, and group 1 serves again. ``shape`` is (groups, group size)."""
    namespace, name = target
    groups, size = shape
    subject = f"PodDisruptionBudget {namespace}/{name}"
    back = _wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == groups, timeout)
    out = [Finding("drain", f"{subject}: group 0 serves again", back, f"serving groups back to {groups}: {back}")]
    if not back:
        return out
    _wait(lambda: _budget(api_client, namespace, name)["allowed"] == 1, timeout)
    answer = _evict(api_client, namespace, second)
    out.append(
        Finding(
            "drain",
            f"{subject}: a pod of group 1 once group 0 serves",
            not answer,
            answer or "allowed: the budget came back",
        )
    )
    back = _wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == groups, timeout)
    out.append(Finding("drain", f"{subject}: group 1 serves again", back, f"serving groups back to {groups}: {back}"))
    return out


NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
"""The label GKE gives every Node of a node pool (tools/e2e/nodes.py)."""


def _group_nodes(api_client: Any, namespace: str, name: str, group: str) -> dict[str, str]:
    """The nodes of group ``group`` of the LeaderWorkerSet ``namespace/name``, each with its node pool."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    nodes = {
        str((pod.get("spec") or {}).get("nodeName"))
        for pod in lws_pods(api_client, namespace, name)
        if str((pod["metadata"].get("labels") or {}).get(LWS_GROUP_LABEL)) == group
        and (pod.get("spec") or {}).get("nodeName")
    }
    return {n: str(_labels(core.read_node(n)).get(NODE_POOL_LABEL)) for n in sorted(nodes)}


def _labels(node: Any) -> Mapping[str, str]:
    return (node.metadata.labels if node.metadata is not None else None) or {}


def move_one_group(
    api_client: Any,
    target: tuple[str, str],
    lowest: Mapping[str, int],
    reserved: Collection[str] = (),
    timeout: float = 90.0,
) -> list[Finding]:
    """A group whose slice a repair or host maintenance takes restarts on a free slice of its shape, and stays there:
    group 0's slice alone is cordoned, its pods evicted once (the budget allows it), and the real scheduler places
    the recreated group; then the pool it left must be one the cluster autoscaler can take down to zero
    (``lowest``: each pool the stack creates, its fewest VMs, from the plan), or it bills idle for good (GKE review
    37, M1), unless a specific reservation holds it (``reserved``), which bills its VMs used or not; an existing
    cluster's pool is its owner's. The free
    slices stay schedulable here, unlike in :func:`drain_one_group`."""
    namespace, name = target
    subject = f"LeaderWorkerSet {namespace}/{name}: group 0 off its slice"
    lws, size = live_lws(api_client, namespace, name)
    groups = int(lws["spec"].get("replicas", 1))
    before = _group_nodes(api_client, namespace, name, "0")
    left = set(before.values())
    if len(left) != 1:
        return [Finding("move", subject, False, f"group 0 is not on one pool: {sorted(left) or 'on no node'}")]
    _wait(lambda: _budget(api_client, namespace, name)["allowed"] in (None, 1), timeout)
    by_group, _ = pods_by_group(api_client, namespace, name)
    cordon(api_client, set(before), True)
    evicted = evict_group(api_client, namespace, sorted(by_group["0"].items()), subject)
    back = _wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == groups, timeout)
    now = set(_group_nodes(api_client, namespace, name, "0").values())
    cordon(api_client, set(before), False)  # the slice is back, repaired
    (pool,) = left
    moved = back and bool(now) and pool not in now
    out = [
        evicted,
        Finding("move", subject, moved, f"from pool {pool} to {', '.join(sorted(now)) or 'nowhere'}, serving: {back}"),
    ]
    fewest = lowest.get(pool)
    if fewest is None:  # an existing cluster's pool: its autoscaling is its owner's (docs/existing-cluster.md)
        detail, ok = "an existing cluster's pool, not the stack's: its size is its owner's", moved
    elif fewest == 0:
        detail, ok = "its pool autoscales down to 0 VMs once unused", moved
    elif pool in reserved:  # the reservation bills its VMs used or not (slice_capacity.scale_to_zero keeps such pools)
        detail, ok = f"its pool keeps {fewest} VMs, which its reservation holds and bills either way", moved
    else:
        detail, ok = f"its pool keeps {fewest} VMs: they bill idle while group 0 serves elsewhere", False
    out.append(Finding("move", f"{subject}: the slice it left ({pool})", ok, detail))
    return out
