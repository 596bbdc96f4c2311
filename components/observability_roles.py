"""Dashboard panels and alerts per serving role (the disaggregated vLLM mode's prefill and decode), for
:mod:`tpu_serving.observability`.

A role's series are those its own PodMonitoring scraped: Managed Service for Prometheus sets the ``job`` target label
to the PodMonitoring's name (https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed, "the job
label ... the name of the PodMonitoring"). A role's pods are found in kube-state-metrics by name: its controller
names them ``<ds>-<slice>-<rev8>-<role>-<group>[-<worker>]`` (kubernetes-sigs/lws@v0.10.0 lws_manager.go l.59-99 for
the LeaderWorkerSet, the LWS pod names after it).

Plain data in, plain data out: this module imports nothing of the library, so :mod:`~tpu_serving.observability`
wraps its results in its own ``Chart`` and ``Alert``.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class Thresholds(Protocol):
    """The alert settings the role alerts read (``ObservabilitySettings`` is one)."""

    @property
    def not_ready_minutes(self) -> int: ...
    @property
    def backlog_threshold(self) -> float: ...
    @property
    def backlog_minutes(self) -> int: ...


@dataclass(frozen=True)
class RoleSignals:
    """One serving role's series: which PodMonitoring scraped them, its pods' names, and its signals."""

    role: str
    """The role's name (``prefill``, ``decode``)."""
    job: str
    """Name of the role's PodMonitoring (the ``job`` label of its series)."""
    pod_pattern: str
    """RE2 pattern of its pods' names (for kube-state-metrics' series)."""
    requests_waiting: str | None = None
    """Gauge of its queue."""
    requests_running: str | None = None
    """Gauge of its requests being processed."""
    time_to_first_token: str | None = None
    """Histogram (base name) of its time to the first token, in seconds."""
    transfer_time: str | None = None
    """Histogram (base name) of its KV transfers, in milliseconds (None: the role records none)."""


def _matchers(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def scraped(cluster: str, namespace: str, role: RoleSignals) -> str:
    """Matchers of the role's scraped series."""
    return _matchers({"cluster": cluster, "namespace": namespace, "job": role.job})


def charts(cluster: str, namespace: str, role: RoleSignals) -> list[tuple[str, list[str], str]]:
    """``(title, PromQL queries, y label)`` of the role's panels: its queue, its time to first token (on decode it
    includes the KV pull), its KV transfer time where it records one."""
    where = scraped(cluster, namespace, role)
    out = []
    queue = [f"sum({m}{where})" for m in (role.requests_running, role.requests_waiting) if m]
    if queue:
        out.append((f"{role.role}: requests running and waiting", queue, "requests"))
    for metric, title, unit in (
        (role.time_to_first_token, "time to first token", "seconds"),
        (role.transfer_time, "KV transfer time", "milliseconds"),
    ):
        if metric:
            out.append(
                (
                    f"{role.role}: {title} (p50, p99)",
                    [f"histogram_quantile({q:g}, sum by (le) (rate({metric}_bucket{where}[5m])))" for q in (0.5, 0.99)],
                    unit,
                )
            )
    return out


def backlog_query(cluster: str, namespace: str, role: RoleSignals, threshold: float) -> str | None:
    """The role's queue above ``threshold`` (None: it exports no queue)."""
    if not role.requests_waiting:
        return None
    return f"sum({role.requests_waiting}{scraped(cluster, namespace, role)}) > {threshold:g}"


def not_ready_query(cluster: str, namespace: str, role: RoleSignals, ready: str, phase: str, phases: str) -> str:
    """The role's pods Pending or Running and not Ready, including those with no Ready condition yet (never
    scheduled) (``ready`` and ``phase`` are kube-state-metrics' series, ``phases`` the phases that should be
    ready)."""
    where = f'cluster="{cluster}", namespace="{namespace}", pod=~"{role.pod_pattern}"'
    return f'sum(({phase}{{{where}, phase=~"{phases}"}} == 1) unless on(namespace, pod) {ready_pods(ready, where)}) > 0'


def ready_pods(ready: str, where: str) -> str:
    """PromQL of the pods (by namespace and pod) whose every container passes its readiness check, from
    kube-state-metrics' per-container readiness ``ready`` (1 ready, 0 not) under the label matchers ``where``: a pod
    is Ready when all its containers are (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/
    #pod-conditions). A pod with no container status yet (never scheduled) has no series."""
    return f"(min by (namespace, pod) ({ready}{{{where}}}) == 1)"


def alerts(
    cluster: str, namespace: str, role: RoleSignals, settings: Thresholds, kube: tuple[str, str, str]
) -> list[tuple[str, str, str, int, str]]:
    """``(key, title, PromQL, minutes, runbook)`` of the role's not-ready and backlog alerts: a role that cannot start
    or keep up is named (``kube``: kube-state-metrics' not-ready and phase series, the phases that should be ready).
    Like every alert of the stack, they are defined before their metrics exist (``disable_metric_validation``)."""
    r = role.role
    out = [
        (
            f"not-ready-{r}",
            f"{r} pods not ready",
            not_ready_query(cluster, namespace, role, *kube),
            settings.not_ready_minutes,
            f"A {r} pod has not been ready for {settings.not_ready_minutes} minutes: find it (kubectl -n {namespace} "
            f"get pods -l disaggregatedset.x-k8s.io/role={r}), read its events and logs; a pending group waits for a "
            "whole slice of its role.",
        )
    ]
    backlog = backlog_query(cluster, namespace, role, settings.backlog_threshold)
    if backlog is not None:
        out.append(
            (
                f"backlog-{r}",
                f"{r} queue backlog high",
                backlog,
                settings.backlog_minutes,
                f"More than {settings.backlog_threshold:g} requests have waited on {r} for {settings.backlog_minutes} "
                f"minutes: the {r} groups are saturated; add {r} slices (or let its autoscaling reach them) or shed load.",
            )
        )
    return out


def no_ready_leader_query(cluster: str, namespace: str, leaders: str, ready: str) -> str:
    """No pod matching ``leaders`` (RE2, the pods that take requests) is Ready, including when none exists (``or
    vector(0)``: a JobSet that failed for good has no pods, hence no series); ``ready`` is kube-state-metrics'
    readiness series."""
    where = f'cluster="{cluster}", namespace="{namespace}", pod=~"{leaders}"'
    return f"(count({ready_pods(ready, where)}) or vector(0)) < 1"


def leader_pods(serves: bool, pattern: str | None, leader_worker_sets: Sequence[str]) -> str | None:
    """RE2 pattern of the pods that take requests: the backend's own ``pattern``, or the leaders of its
    LeaderWorkerSets (a leader pod is ``<lws>-<group>``, a worker ``<lws>-<group>-<worker>``:
    kubernetes-sigs/lws@v0.10.0 pkg/controllers/leaderworkerset_controller.go l.524 reads the leader StatefulSet by
    the LeaderWorkerSet's name, pod_controller.go l.438 names each worker StatefulSet after its leader pod); None:
    it serves no requests, or declares neither."""
    if not serves:
        return None
    if pattern is not None:
        return pattern
    if not leader_worker_sets:
        return None
    names = "|".join(re.escape(n) for n in leader_worker_sets)
    return f"({names})-[0-9]+" if len(leader_worker_sets) > 1 else f"{names}-[0-9]+"


def no_ready_leader_alert(
    cluster: str, namespace: str, leaders: str, minutes: int, ready: str
) -> tuple[str, str, str, int, str]:
    """``(key, title, PromQL, minutes, runbook)`` of the alert on no pod that takes requests Ready: the fast page for
    an outage, which the not-ready alert (held past the startup window) is not."""
    return (
        "no-ready-leader",
        "No serving pod ready",
        no_ready_leader_query(cluster, namespace, leaders, ready),
        minutes,
        f"No pod of namespace {namespace} that takes requests has been Ready for {minutes} minutes: the stack serves "
        "nothing. It also fires while the first groups load after a deploy, and during a rollout that replaces every "
        f"group at once. Look at the pods (kubectl -n {namespace} get pods), their events and the controller's status "
        "(the JobSet's or LeaderWorkerSet's conditions).",
    )


ROUTER_ERROR_RATIO = 0.05
"""Share of the endpoint picker's requests that may fail, over five minutes, before its error alert fires."""


def router_pods(epp: str) -> str:
    """RE2 pattern of the endpoint picker Deployment ``epp``'s pods: ``<deployment>-<pod-template-hash>-<suffix>``
    (its ReplicaSet is "[DEPLOYMENT-NAME]-[HASH]", kubernetes.io/docs/concepts/workloads/controllers/deployment,
    "Creating a Deployment"; the ReplicaSet names its pods ``<replicaset>-<random suffix>``). ``epp`` is a DNS-1035
    label (the Service's name and ``-gateway-epp``): letters, digits and ``-``, none special in RE2, so it goes
    unescaped (a backslash would be an invalid escape in a PromQL string)."""
    return f"{epp}-[a-z0-9]+-[a-z0-9]+"


def router_alerts(
    cluster: str, namespace: str, epp: str | None, minutes: int, ready: str
) -> list[tuple[str, str, str, int, str]]:
    """``(key, title, PromQL, minutes, runbook)`` of the alerts on the endpoint picker ``epp`` (none without one): no
    replica Ready (kube-state-metrics' ``ready`` series; the probes ask the picker's ``liveness`` or
    ``inference-extension`` gRPC service, so a replica is Ready while it serves), and its own error ratio. The error
    series are llm-d/llm-d-router@v0.10.0's ``llm_d_epp_request_error_total`` over ``llm_d_epp_request_total``
    (pkg/epp/metrics/llm_d_router_metrics.go l.28 subsystem ``llm_d_epp``, l.40-56), scraped by the picker's
    PodMonitoring (``job`` = its name, the Deployment's)."""
    if epp is None:
        return []
    where = f'{{cluster="{cluster}", namespace="{namespace}", job="{epp}"}}'
    errors = f"sum(rate(llm_d_epp_request_error_total{where}[5m]))"
    total = f"sum(rate(llm_d_epp_request_total{where}[5m]))"
    return [
        (
            "router-not-ready",
            "No endpoint picker ready",
            no_ready_leader_query(cluster, namespace, router_pods(epp), ready),
            minutes,
            f"No replica of the endpoint picker {epp} in namespace {namespace} has been Ready for {minutes} minutes: "
            "a FailClose pool refuses every request, a FailOpen one routes without picking. Look at its pods (kubectl "
            f"-n {namespace} get pods -l app={epp}), their events and logs, and the CPU pool's nodes.",
        ),
        (
            "router-errors",
            "Endpoint picker errors high",
            f"({errors} / {total}) > {ROUTER_ERROR_RATIO:g}",
            5,
            f"More than {ROUTER_ERROR_RATIO:.0%} of the requests the endpoint picker {epp} handled failed over five "
            "minutes (by error_code on the dashboard's series llm_d_epp_request_error_total): read its logs "
            f"(kubectl -n {namespace} logs -l app={epp}) and the serving pods' readiness.",
        ),
    ]
