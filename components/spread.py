"""Zone spread of the stack's replicated Deployments on the CPU pool: one constraint, built once.

Every Deployment the stack runs with two or more replicas on the CPU pool (the LWS, JobSet and metrics adapter
managers as installed, :class:`tpu_serving.controllers.Availability`; the endpoint picker, :mod:`tpu_serving.epp`;
sax-http) asks the scheduler to put its replicas in different zones, so a zone outage leaves one serving. The pool
spans several zones of the region (:func:`tpu_serving.gcp_zones.pool_zones`).

``whenUnsatisfiable: ScheduleAnyway``, never ``DoNotSchedule``: "ScheduleAnyway tells the scheduler to schedule the
pod in any location, but giving higher precedence to topologies that would help reduce the skew" (Kubernetes API
reference, Pod v1, ``topologySpreadConstraints.whenUnsatisfiable``,
https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#scheduling; "Pod Topology Spread
Constraints", https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/). A pool left in
one zone, or a zone that is down, then never keeps a replica Pending; the node spread the Deployments already have
(required, by ``kubernetes.io/hostname``) still holds. ``topology.kubernetes.io/zone`` is the well-known label the
kubelet sets to the node's zone (https://kubernetes.io/docs/reference/labels-annotations-taints/#topologykubernetesiozone).
"""

from collections.abc import Mapping
from typing import Any

import pulumi_kubernetes as k8s

from .validation import Choice

ZONE_LABEL = "topology.kubernetes.io/zone"
"""The node label of its zone."""


def zone_spread(match_labels: Mapping[str, str]) -> dict[str, Any]:
    """The constraint that spreads the pods ``match_labels`` selects (the Deployment's own pod selector) over zones,
    preferred, never required."""
    return {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": dict(match_labels)},
    }


def zone_spread_args(match_labels: Mapping[str, str]) -> k8s.core.v1.TopologySpreadConstraintArgs:
    """:func:`zone_spread` as the Kubernetes provider's typed pod spec takes it."""
    c = zone_spread(match_labels)
    return k8s.core.v1.TopologySpreadConstraintArgs(
        max_skew=c["maxSkew"],
        topology_key=c["topologyKey"],
        when_unsatisfiable=c["whenUnsatisfiable"],
        label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=c["labelSelector"]["matchLabels"]),
    )


class ZoneSpread(Choice):
    """How the serving groups' leaders keep apart over the zones of their slices (:func:`group_zone_spread`)."""

    REQUIRED = "required"
    """No more than one group more in a zone than in another, and never on another zone's free slice."""
    PREFERRED = "preferred"
    """The break glass of a zone outage: groups may take the surviving zone's free slices."""


def group_zone_spread(
    match_labels: Mapping[str, str], zones: int, spread: ZoneSpread = ZoneSpread.REQUIRED
) -> k8s.core.v1.TopologySpreadConstraintArgs:
    """The constraint that keeps serving groups apart over ``zones`` zones, required: the pods ``match_labels``
    selects (one per group: its leader) differ by at most one between zones, and while fewer than ``zones`` zones have
    a node the pods could take, the emptiest counts as holding none ("When the number of eligible domains with
    matching topology keys is less than minDomains, Pod Topology Spread treats 'global minimum' as 0 ... scheduler
    won't schedule more than maxSkew Pods to those domains": k8s.io/api v0.36.3 core/v1/types.go l.4734-4743,
    ``TopologySpreadConstraint.MinDomains``, which needs ``DoNotSchedule``).

    Unlike the CPU pool's Deployments (:func:`zone_spread`, preferred), a serving group that a repair, host
    maintenance or an upgrade pushes off its slice must not land on a free slice in the other group's zone: it would
    stay there, and the next zonal event would take both (GKE and SRE reviews round 42). It waits Pending for a slice
    in its own zone instead, and the cluster autoscaler, which simulates scheduling on a new node of each pool, adds
    one there. The price: while a zone is down its groups do not move to the other zone's free slices.

    ``preferred`` lifts that for a zone outage (SRE review round 44, M2): ``ScheduleAnyway``, which only scores the
    zones ("ScheduleAnyway tells the scheduler to schedule the pod in any location, but giving higher precedence to
    topologies that would help reduce the skew", the Pod API reference above), without
    ``minDomains``, which needs ``DoNotSchedule``. It changes the leaders' template, so the LeaderWorkerSet rolls every
    group (with ``rollout: surge``, a new group first)."""
    if spread == ZoneSpread.PREFERRED:
        return k8s.core.v1.TopologySpreadConstraintArgs(
            max_skew=1,
            topology_key=ZONE_LABEL,
            when_unsatisfiable="ScheduleAnyway",
            label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(match_labels)),
        )
    return k8s.core.v1.TopologySpreadConstraintArgs(
        max_skew=1,
        topology_key=ZONE_LABEL,
        when_unsatisfiable="DoNotSchedule",
        min_domains=zones,
        label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(match_labels)),
    )
