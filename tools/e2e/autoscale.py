"""The HPA's own path in ``make e2e``: the metric written through the stand-in adapter (:mod:`.metrics_adapter`), the
real HPA controller scaling the LeaderWorkerSet through its scale subresource (:func:`hpa_scale`).

For each HPA of the stack's state: the value of the metric the stack file names (``serving.autoscaling.metric``,
named as Managed Service for Prometheus names a series to the HPA: :func:`series_name`, written here and not taken
from the plan, so a plan whose HPA reads another name fails) is written for each leader pod the HPA selects (the
LeaderWorkerSet's ``status.hpaPodSelector``, its scale subresource's ``labelSelectorPath``: LWS v0.10.0 CRD), read
from the API server:

1. above the HPA's target (:data:`LOAD` times it) per leader: the HPA must read it (``ScalingActive`` True,
   ``ValidMetricFound``, that value in its ``status.currentMetrics``), and its ``desiredReplicas`` and the
   LeaderWorkerSet's ``spec.replicas`` reach
   ``maxReplicas``, and every new group's pods exist and are scheduled, each group on Nodes of one pool that no
   other group uses (a slice of its own; the run's Nodes are each pool at its maximum, :mod:`.nodes`);
2. then below it (:data:`IDLE`): the HPA recommends fewer groups. Its scale-down waits for the ``behavior``'s
   ``scaleDown.stabilizationWindowSeconds`` (the stacks': 900 s or more, longer than a run may wait), so where the window is
   longer than :data:`WAIT_DOWN` only the recommendation is asserted: ``AbleToScale`` True with reason
   ``ScaleDownStabilized`` ("recent recommendations were higher than current one", k8s.io/kubernetes v1.36.3
   ``pkg/controller/podautoscaler/horizontal.go`` l.1061), the HPA's metric at the low value, the groups still at
   the maximum; with a shorter window the scale-down itself (``spec.replicas`` below the maximum).

The HPA controller syncs every 15 s (``--horizontal-pod-autoscaler-sync-period`` default:
``pkg/controller/podautoscaler/config/v1alpha1/defaults.go`` l.40-41).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL, LWS_NAME_LABEL, POOL_LABEL, Finding

from .lifecycle import HPA_TYPE
from .rollout import LWS_GROUP, LWS_PLURAL, LWS_VERSION

Obj = dict[str, Any]

CHECK = "autoscale"
LOAD = 2.0
"""The value written for scale-up, in multiples of the HPA's per-leader target."""
IDLE = "0"
"""The value written for scale-down (and at rest, before ``verify``): no request waiting."""
WAIT_UP = 150.0
WAIT_DOWN = 90.0
"""How long the run waits for the scale-up, and for the scale-down's recommendation (or the scale-down itself)."""
DEFAULT_METRIC = "vllm:num_requests_waiting"
"""The gauge the HPA scales on when the stack file names none (``serving.autoscaling.metric`` unset)."""


def series_name(metric: str, kind: str = "gauge") -> str:
    """How the HPA names a Managed Service for Prometheus series: ``prometheus.googleapis.com|<metric>|<kind>``
    (GoogleCloudPlatform/k8s-stackdriver@cm-sd-adapter-v0.16.9
    custom-metrics-stackdriver-adapter/examples/prometheus-to-sd/README.md: "in this case, it will be
    ``prometheus.googleapis.com|foo|gauge``"); written out here, not the library's, so the harness checks it."""
    return f"prometheus.googleapis.com|{metric}|{kind}"


def stack_metric(config: Mapping[str, Any]) -> str:
    """The series of the gauge the stack file says the engine exports (``serving.autoscaling.metric``)."""
    autoscaling = (config.get("serving") or {}).get("autoscaling") or {}
    return series_name(str(autoscaling.get("metric") or DEFAULT_METRIC))


@dataclass(frozen=True)
class Hpa:
    """One HPA of the stack's state, as the plan says it."""

    namespace: str
    name: str
    target: str
    """The LeaderWorkerSet it scales."""
    metric: str
    average: float
    """The target's ``averageValue`` per leader."""
    low: int
    high: int
    down_window: int
    """``behavior.scaleDown.stabilizationWindowSeconds`` (300 unset: the autoscaling/v2 default)."""

    @property
    def subject(self) -> str:
        return f"HPA {self.namespace}/{self.name}"


def _quantity(value: str) -> float:
    suffixes = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9}
    text = str(value)
    return float(text[:-1]) * suffixes[text[-1]] if text and text[-1] in suffixes else float(text)


def hpas(state: Iterable[Mapping[str, Any]]) -> list[Hpa]:
    """The HPAs of the stack's state on a LeaderWorkerSet with a ``Pods`` metric of ``AverageValue``."""
    out = []
    for r in state:
        if r.get("type") != HPA_TYPE:
            continue
        obj = r.get("outputs") or r.get("inputs") or {}
        spec, meta = obj.get("spec") or {}, obj.get("metadata") or {}
        pods = next((m["pods"] for m in spec.get("metrics") or () if m.get("type") == "Pods"), None)
        ref = spec.get("scaleTargetRef") or {}
        if pods is None or ref.get("kind") != "LeaderWorkerSet" or "averageValue" not in pods["target"]:
            continue
        down = ((spec.get("behavior") or {}).get("scaleDown") or {}).get("stabilizationWindowSeconds", 300)
        out.append(Hpa(str(meta.get("namespace")), str(meta.get("name")), str(ref.get("name")), str(pods["metric"]["name"]),
                       _quantity(pods["target"]["averageValue"]), int(spec.get("minReplicas", 1)),
                       int(spec["maxReplicas"]), int(down)))  # fmt: skip
    return out


class Cluster(Protocol):
    """What the step reads from the API server."""

    def hpa(self, namespace: str, name: str) -> Obj: ...
    def lws(self, namespace: str, name: str) -> Obj: ...
    def pods(self, namespace: str, selector: str) -> list[Obj]: ...
    def node_pools(self) -> Mapping[str, str]: ...


class Writer(Protocol):
    def write(self, namespace: str, pod: str, metric: str, value: str) -> None: ...


@dataclass
class LiveCluster:
    """:class:`Cluster` through the Kubernetes API client."""

    api_client: Any

    def hpa(self, namespace: str, name: str) -> Obj:
        from kubernetes import client

        found = client.AutoscalingV2Api(self.api_client).read_namespaced_horizontal_pod_autoscaler(name, namespace)
        out: Obj = self.api_client.sanitize_for_serialization(found)
        return out

    def lws(self, namespace: str, name: str) -> Obj:
        from kubernetes import client

        api = client.CustomObjectsApi(self.api_client)
        return cast(Obj, api.get_namespaced_custom_object(LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name))

    def pods(self, namespace: str, selector: str) -> list[Obj]:
        from kubernetes import client

        found = client.CoreV1Api(self.api_client).list_namespaced_pod(namespace, label_selector=selector)
        return [dict(self.api_client.sanitize_for_serialization(p)) for p in found.items]

    def node_pools(self) -> Mapping[str, str]:
        from kubernetes import client

        nodes = self.api_client.sanitize_for_serialization(client.CoreV1Api(self.api_client).list_node().items)
        return {str(n["metadata"]["name"]): str((n["metadata"].get("labels") or {}).get(POOL_LABEL, "")) for n in nodes}


def leaders(cluster: Cluster, hpa: Hpa) -> list[str]:
    """The pods the HPA averages over: those of the LeaderWorkerSet's ``status.hpaPodSelector``, not being deleted."""
    selector = str((cluster.lws(hpa.namespace, hpa.target).get("status") or {}).get("hpaPodSelector") or "")
    if not selector:
        return []
    pods = cluster.pods(hpa.namespace, selector)
    return sorted(str(p["metadata"]["name"]) for p in pods if not p["metadata"].get("deletionTimestamp"))


def write_all(cluster: Cluster, writer: Writer, hpa: Hpa, metric: str, value: str) -> list[str]:
    """``value`` of ``metric`` for each leader the HPA selects now; the leaders' names."""
    names = leaders(cluster, hpa)
    for name in names:
        writer.write(hpa.namespace, name, metric, value)
    return names


def condition(hpa: Mapping[str, Any], kind: str) -> tuple[str, str]:
    """(status, reason) of the HPA's condition ``kind``; ("", "") when it has none."""
    conditions = (hpa.get("status") or {}).get("conditions") or ()
    found: Mapping[str, Any] = next((c for c in conditions if c.get("type") == kind), {})
    return str(found.get("status", "")), str(found.get("reason", ""))


def pools_of(pods: Sequence[Obj], pools: Mapping[str, str]) -> dict[str, set[str]]:
    """Group index -> the node pools its pods are scheduled on (``""`` for a pod on no Node yet)."""
    by_group: dict[str, set[str]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName") or ""
        group = ((pod.get("metadata") or {}).get("labels") or {}).get(LWS_GROUP_LABEL, "")
        by_group.setdefault(group, set()).add(pools.get(node, "?") if node else "")
    return by_group


def groups_placed(pods: Sequence[Obj], pools: Mapping[str, str], groups: Iterable[int]) -> str:
    """Why the pods of ``groups`` are not each scheduled on a pool of their own, or ``""``: every pod has a Node,
    each group's Nodes are of one pool, and no other group has a pod in it."""
    by_group = pools_of(pods, pools)
    for g in groups:
        held = by_group.get(str(g))
        if not held:
            return f"group {g} has no pod"
        if "" in held:
            return f"group {g} has a pod on no Node"
        others = set().union(*(p for k, p in by_group.items() if k != str(g)))
        if len(held) != 1 or held & others:
            return f"group {g} is on pools {sorted(held)}, shared with another group or more than one"
    return ""


def read_metric(live: Mapping[str, Any]) -> list[str]:
    """The ``Pods`` metric values the HPA last read (its ``status.currentMetrics``)."""
    current = [m.get("pods", {}).get("current", {}) for m in (live.get("status") or {}).get("currentMetrics") or ()]
    return [str(c.get("averageValue")) for c in current if c]


def _scaled_up(cluster: Cluster, hpa: Hpa, value: str) -> tuple[bool, str]:
    live = cluster.hpa(hpa.namespace, hpa.name)
    active, seen = condition(live, "ScalingActive"), read_metric(live)
    desired = int((live.get("status") or {}).get("desiredReplicas") or 0)
    replicas = int(cluster.lws(hpa.namespace, hpa.target)["spec"].get("replicas", 1))
    pods, pools = cluster.pods(hpa.namespace, f"{LWS_NAME_LABEL}={hpa.target}"), cluster.node_pools()
    new = range(hpa.low, hpa.high)
    placed = groups_placed(pods, pools, new)
    where = pools_of(pods, pools)
    landed = ", ".join(f"group {g} on {'/'.join(sorted(where[str(g)]))}" for g in new if where.get(str(g)))
    detail = (f"ScalingActive {'/'.join(active)}, metric {seen}, desiredReplicas {desired}, LeaderWorkerSet "
              f"spec.replicas {replicas} (maxReplicas {hpa.high}; ScalingLimited "
              f"{'/'.join(condition(live, 'ScalingLimited'))})" + (f"; {placed or landed}" if placed or landed else ""))  # fmt: skip
    read = [_quantity(v) for v in seen] == [_quantity(value)]
    return active[0] == "True" and read and desired == hpa.high and replicas == hpa.high and not placed, detail


def _down_recommended(cluster: Cluster, hpa: Hpa, waits_window: bool) -> tuple[bool, str]:
    live = cluster.hpa(hpa.namespace, hpa.name)
    able = condition(live, "AbleToScale")
    replicas = int(cluster.lws(hpa.namespace, hpa.target)["spec"].get("replicas", 1))
    seen = read_metric(live)
    detail = f"AbleToScale {'/'.join(able)}, metric {seen}, LeaderWorkerSet spec.replicas {replicas}"
    if waits_window:
        ok = able == ("True", "ScaleDownStabilized") and replicas == hpa.high and seen == [IDLE]
    else:
        ok = replicas < hpa.high
    return ok, detail


def _until(probe: Callable[[], tuple[bool, str]], timeout: float, poll: float, clock: Callable[[], float],
           sleep: Callable[[float], None]) -> tuple[bool, str, float]:  # fmt: skip
    began = clock()
    ok, detail = probe()
    while not ok and clock() - began < timeout:
        sleep(poll)
        ok, detail = probe()
    return ok, detail, clock() - began


def hpa_scale(
    cluster: Cluster,
    writer: Writer,
    hpa: Hpa,
    metric: str,
    *,
    load: float | None = None,
    poll: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Finding]:
    """The HPA ``hpa`` scaled up to its maximum by ``metric`` written above its target (``load`` times it, default
    :data:`LOAD`), then recommending a scale-down once it is written below (module docstring)."""
    value = f"{math.ceil(hpa.average * (LOAD if load is None else load) * 1000)}m"
    names = write_all(cluster, writer, hpa, metric, value)
    if not names:
        return [Finding(CHECK, hpa.subject, False, f"no leader pod selected by LeaderWorkerSet {hpa.target}")]
    ok, detail, took = _until(lambda: _scaled_up(cluster, hpa, value), WAIT_UP, poll, clock, sleep)
    wrote = f"{metric} = {value} on {len(names)} leaders (target {hpa.average:g})"
    out = [Finding(CHECK, f"{hpa.subject}: scale-up", ok, f"{wrote}; after {took:.0f} s: {detail}")]
    if not ok or hpa.high == hpa.low:
        return out
    write_all(cluster, writer, hpa, metric, IDLE)
    waits = hpa.down_window > WAIT_DOWN
    ok, detail, took = _until(lambda: _down_recommended(cluster, hpa, waits), WAIT_DOWN, poll, clock, sleep)
    what = (f"recommendation only: the scale-down stabilisation window ({hpa.down_window} s) is longer than the run "
            f"waits ({WAIT_DOWN:.0f} s)" if waits else f"scale-down (window {hpa.down_window} s)")  # fmt: skip
    out.append(
        Finding(CHECK, f"{hpa.subject}: scale-down", ok, f"{metric} = {IDLE}; {what}; after {took:.0f} s: {detail}")
    )
    return out


def _all_leaders(cluster: Cluster, hpa: Hpa) -> tuple[bool, str]:
    replicas = int(cluster.lws(hpa.namespace, hpa.target)["spec"].get("replicas", 1))
    return len(leaders(cluster, hpa)) >= replicas, ""


def at_rest(
    cluster: Cluster, writer: Writer, state: Iterable[Mapping[str, Any]], metric: str, timeout: float = 60.0
) -> None:
    """Every HPA's leaders given the idle value (before ``verify``): the metric exists, the HPA reads it. Waits
    (up to ``timeout``) for the LeaderWorkerSet's controller to have made a leader for each replica."""
    for hpa in hpas(state):
        _until(functools.partial(_all_leaders, cluster, hpa), timeout, 1.0, time.monotonic, time.sleep)
        write_all(cluster, writer, hpa, metric, IDLE)
