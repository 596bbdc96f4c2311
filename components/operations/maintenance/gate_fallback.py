"""The gate's ticket on a group that has served from a capacity fallback's slice for an hour or more.

A stdlib-only part of the host-maintenance gate's program (:mod:`tpu_serving.maintenance_gate`, shipped with it in
its ConfigMap). With a capacity fallback (``serving.fallback``) a group whose own pool cannot add a slice lands on a
slice GKE makes for the serving's ComputeClass: on demand, flex-start or Spot, in a pool of GKE's, not the stack's.
It serves there, billed at that step's price, until someone moves it back, and a Spot slice goes whenever Compute
Engine needs it back. Nothing else says it is there (SRE review of the capacity fallback, M1): the capacity-wait ticket
is about groups with no slice at all. This one names each group on such a slice, its node, its pool and for how long,
and the runbook's section that moves it back once an own pool can take a slice.

The group's pods carry ``leaderworkerset.sigs.k8s.io/group-index`` (lws v0.9.0 ``GroupIndexLabelKey``); a pod's
``status.startTime`` is when the kubelet took it (k8s.io/api v0.36.3 core/v1 types.go ``PodStatus.StartTime``), so a
group's time on the slice needs no memory between runs.
"""

from collections.abc import Sequence

from .maintenance_gate import (
    GROUP_INDEX_LABEL,
    LWS_NAME_LABEL,
    POOL_LABEL,
    Gate,
    Obj,
    labels_of,
    name_of,
    rfc3339,
    serves,
)

AWAY_SECONDS: int = Gate.away_seconds
"""How long a group serves on a fallback slice before the gate tickets it (``Gate.away_seconds``, the CronJob's
``AWAY_SECONDS``): longer than the capacity-wait alert's default 30 minutes, so a group that lands there in a short
stockout and is moved back within the hour opens nothing."""
SAID = "on a fallback slice"
"""What every ticket line starts with: the log-match policy's filter (:func:`tpu_serving.host_maintenance
.fallback_policy_args`) looks for it in the line's ``fallback`` field."""


def away(nodes: Sequence[Obj], pods: Sequence[Obj], gate: Gate, now: float) -> str:
    """The ticket's text for the groups whose pods have run on a node of the serving's class outside the gate's own
    pools for ``gate.away_seconds`` (:data:`AWAY_SECONDS`) or longer, or ``""``. ``nodes`` and ``pods``: as :func:`~.maintenance_gate.decide`
    reads them."""
    if not gate.compute_class:
        return ""
    pools = {
        name_of(n): labels_of(n).get(POOL_LABEL, "")
        for n in nodes
        if serves(n, gate) and labels_of(n).get(POOL_LABEL) not in gate.pools
    }
    found: dict[str, tuple[str, float]] = {}
    for pod in pods:
        labels = labels_of(pod)
        node = str(pod.get("spec", {}).get("nodeName", ""))
        started = rfc3339(str(pod.get("status", {}).get("startTime", "")))
        if node in pools and labels.get(LWS_NAME_LABEL) in gate.leader_worker_sets and started is not None:
            group = f"{labels[LWS_NAME_LABEL]}-{labels.get(GROUP_INDEX_LABEL, '?')}"
            found[group] = min(found.get(group, (node, started)), (node, started), key=lambda f: f[1])
    late = {g: (node, now - t) for g, (node, t) in sorted(found.items()) if now - t >= gate.away_seconds}
    if not late:
        return ""
    listed = "; ".join(f"group {g} on {n} (pool {pools[n]}) for {int(s) // 60} min" for g, (n, s) in late.items())
    return (
        f"{SAID} of ComputeClass {gate.compute_class}, in a pool the stack does not make: {listed}. It serves at that "
        "step's price (a Spot slice goes whenever Compute Engine needs it); once an own pool can take a slice, move it "
        "back: tpu-serving runbook --stack <stack>, 'A group on a fallback slice'"
    )
