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

from collections.abc import Mapping
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


def not_ready_query(cluster: str, namespace: str, role: RoleSignals, not_ready: str, phase: str, phases: str) -> str:
    """The role's pods not ready although Pending or Running (``not_ready`` and ``phase`` are kube-state-metrics'
    series, ``phases`` the phases that should be ready)."""
    where = f'cluster="{cluster}", namespace="{namespace}", pod=~"{role.pod_pattern}"'
    return (
        f'sum({not_ready}{{{where}, condition="false"}} and on(namespace, pod) '
        f'({phase}{{{where}, phase=~"{phases}"}} == 1)) > 0'
    )


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
