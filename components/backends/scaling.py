"""Autoscaling by whole slices, shared by the backends that scale a LeaderWorkerSet with an HPA.

A backend's ``serving.autoscaling`` (:data:`AutoscalingConfig`) makes each group take one whole
slice: the autoscaled maximum must equal the serving slices, the first ``minReplicas`` slices keep
their VMs and the others scale from zero (:func:`always_on_slices`), and the stack installs the
Custom Metrics Stackdriver Adapter and a :class:`~tpu_serving.operations.autoscaling.ServingAutoscaler` on the
group count (:func:`add_autoscaler`). The HPA reads the leaders' queue gauge from Managed Service
for Prometheus, through the PodMonitoring of the stack's observability.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

import pulumi

from ..catalog import SliceShape
from ..common.settings import PROJECT_NAMESPACE, CreateOrExisting, settings_model, to_settings
from ..operations.autoscaling import (
    METRICS_ADAPTER,
    MONITORING_VIEWER,
    AutoscalingSettings,
    MetricKind,
    ServingAutoscaler,
    ServingAutoscalerArgs,
    adapter_member,
    declared_bounds,
    kind_problem,
    scale_down_window,
)
from ..platform.existing import CloudResource
from ..platform.lws import Rollout
from .base import Gap

if TYPE_CHECKING:
    from .base import Built, Platform, Stack

if TYPE_CHECKING:
    AutoscalingConfig: TypeAlias = AutoscalingSettings
else:
    AutoscalingConfig = settings_model(AutoscalingSettings, "AutoscalingConfig")

KEY = f"{PROJECT_NAMESPACE}:serving"


class Scaled(Protocol):
    """The serving settings an autoscaled backend shares: its groups, its slices and its LeaderWorkerSet's name."""

    @property
    def replicas(self) -> int: ...
    @property
    def autoscaling(self) -> AutoscalingConfig | None: ...
    @property
    def slices(self) -> Sequence[str]: ...
    @property
    def name(self) -> str: ...
    @property
    def rollout(self) -> Rollout: ...
    @property
    def canary_groups(self) -> int | None: ...
    @property
    def model_fields_set(self) -> set[str]: ...


def groups(serving: Scaled) -> int:
    """Leader-worker groups at most: the autoscaled maximum, else the fixed count."""
    return serving.autoscaling.max_replicas if serving.autoscaling is not None else serving.replicas


def autoscalers(serving: Scaled) -> tuple[str, ...]:
    """The HorizontalPodAutoscaler that sets the group count (:func:`add_autoscaler`: named after its target, the
    LeaderWorkerSet), for the autoscaler alert; none without autoscaling."""
    return (serving.name,) if serving.autoscaling is not None else ()


def autoscaler_bounds(serving: Scaled) -> dict[str, tuple[int, int]]:
    """Each HPA of :func:`autoscalers` with its bounds as :func:`add_autoscaler` declares them (the same settings,
    :func:`~tpu_serving.operations.autoscaling.declared_bounds`), which the host-maintenance gate gives back after a cover; none
    without autoscaling."""
    if serving.autoscaling is None:
        return {}
    return {serving.name: declared_bounds(to_settings(serving.autoscaling, AutoscalingSettings))}


def fewest_groups(serving: Scaled) -> int:
    """Leader-worker groups the stack is planned to keep: the autoscaled minimum, else the fixed count."""
    return serving.autoscaling.min_replicas if serving.autoscaling is not None else serving.replicas


FEW_GROUPS = (
    "one group serves whenever the load is low, and its node failure, repair, TPU host maintenance or upgrade stops "
    "the service until the slice is back and the model has reloaded; keep two"
)


def fewest_groups_gap(serving: Scaled, at: str = "serving") -> Gap | None:
    """An autoscaled serving whose minimum is one group of several (:data:`FEW_GROUPS`), at ``at``; None otherwise.
    One group at most is the stack's ``singleGroup`` case (:func:`tpu_serving.config.checks.full_outage`)."""
    if serving.autoscaling is None or fewest_groups(serving) >= 2 or groups(serving) < 2:
        return None
    return Gap(f"{at}.autoscaling.minReplicas", str(fewest_groups(serving)), FEW_GROUPS)


def spare_slices(serving: Scaled, pools: int) -> int:
    """Serving slices held for the surge group of a ``surge`` rollout: one group's share of ``pools`` (the groups
    and the surge group share them evenly); none in place."""
    return pools // (groups(serving) + 1) if serving.rollout == Rollout.SURGE else 0


def group_slices(serving: Scaled, pools: int) -> int:
    """Serving slices the groups hold between rollouts: ``pools`` but the surge group's spare share."""
    return pools - spare_slices(serving, pools)


def restart_unit_chips(serving: Scaled, chips: int) -> int:
    """One leader-worker group restarts at once (RecreateGroupOnPodRestart): the chips of its share of the slices
    (the surge group's spare share counts as one more group's)."""
    return chips // (groups(serving) + (1 if serving.rollout == Rollout.SURGE else 0))


def always_on_slices(serving: Scaled, pools: int) -> int:
    """The slices of the minimum replicas keep their VMs (all the groups' without autoscaling); a surge rollout's
    spare share scales from zero."""
    held = group_slices(serving, pools)
    return held if serving.autoscaling is None else min(serving.autoscaling.min_replicas, held)


def resolved_metric(serving: Scaled, waiting: str) -> str:
    """The HPA's Prometheus gauge: ``autoscaling.metric``, else ``waiting``, the server's gauge of waiting requests."""
    auto = serving.autoscaling
    return auto.metric if auto is not None and auto.metric else waiting


def autoscaling_problems(
    cfg: Stack,
    serving: Scaled,
    shape: SliceShape,
    pools: int,
    waiting: str,
    server: tuple[str, Mapping[str, MetricKind]],
    spanning: str | None = None,
) -> list[str]:
    """With ``serving.autoscaling`` (none without it): no fixed ``replicas``, a maximum equal to the serving slices (one whole
    slice per group), a gauge scraped into Managed Service for Prometheus.

    ``waiting`` is the server's gauge of waiting requests, the metric unless ``autoscaling.metric`` is set;
    ``server`` names the server and the kinds of the metrics it is known to export (its facts), which refuse a
    known counter or histogram; ``spanning``, when the backend could otherwise spread a group over several slices,
    says why an autoscaled group may not.
    """
    auto = serving.autoscaling
    if auto is None:
        return []
    metric = resolved_metric(serving, waiting)
    found = []
    if not_gauge := kind_problem(metric, server[1], server[0]):
        found.append(f"{KEY}.autoscaling.metric = {json.dumps(metric)}: {not_gauge}")
    if "replicas" in serving.model_fields_set:
        found.append(
            f"{KEY}.replicas = {serving.replicas}: the HPA sets the group count with autoscaling; "
            "remove replicas and use autoscaling.minReplicas and autoscaling.maxReplicas"
        )
    slices = f"{pools} {shape.topology} slice{'s' if pools != 1 else ''} ({', '.join(serving.slices)})"
    if auto.max_replicas > pools:
        found.append(
            f"{KEY}.autoscaling.maxReplicas = {auto.max_replicas}: each replica needs a whole {shape.topology} "
            f"slice and serving.slices provide {slices}; lower maxReplicas to {pools} or add slices "
            "(tpuSlices[].count)"
        )
    elif auto.max_replicas < pools and spanning is not None:
        found.append(
            f"{KEY}.autoscaling.maxReplicas = {auto.max_replicas}: serving.slices provide {slices}, and an "
            f"autoscaled group takes exactly one slice ({spanning}); set maxReplicas to {pools} or remove slices"
        )
    elif auto.max_replicas < pools:
        found.append(
            f"{KEY}.autoscaling.maxReplicas = {auto.max_replicas}: serving.slices provide {slices}, and "
            f"{pools - auto.max_replicas} would never hold a replica; raise maxReplicas to {pools} or remove slices"
        )
    return found + metric_reader_problems(cfg, f"{KEY}.autoscaling", metric, "the leaders")


def metric_reader_problems(cfg: Stack, at: str, metric: str, scraped: str) -> list[str]:
    """The HPA at key ``at`` reads ``metric`` through Managed Service for Prometheus, as the stack's PodMonitoring
    scrapes it from ``scraped``: both must be on."""
    found = []
    if not cfg.cluster.managed_prometheus:
        found.append(
            f"{at}: the HPA reads {metric} from Managed Service for Prometheus; set "
            f"{PROJECT_NAMESPACE}:cluster.managedPrometheus to true"
        )
    if not cfg.observability.enabled:
        found.append(
            f"{at}: the HPA reads {metric} as the stack's PodMonitoring scrapes it from {scraped}; "
            f"set {PROJECT_NAMESPACE}:observability.enabled to true"
        )
    return found


def adapter_grant(project: str, iam: CreateOrExisting, key: str) -> CloudResource:
    """The metrics adapter's ``roles/monitoring.viewer`` grant, created or existing (``key``)."""
    member = adapter_member(project, "<project number>")
    held = f"{member} holds {MONITORING_VIEWER} on project {project}"
    return CloudResource("IAM grant", f"{MONITORING_VIEWER} for the metrics adapter", iam, key, (held,))


def adapter_install(auto: AutoscalingSettings, existing_cluster: bool) -> CreateOrExisting:
    """``adapterInstall``, unset resolved by the cluster's mode: an existing cluster's adapter is the platform's."""
    if auto.adapter_install is not None:
        return auto.adapter_install
    return CreateOrExisting.EXISTING if existing_cluster else CreateOrExisting.CREATE


def install_adapter(platform: Platform, built: Built, auto: AutoscalingSettings) -> pulumi.Resource | None:
    """The metrics adapter's install (in ``built.installs``), or None when the cluster runs one already
    (``adapterInstall: existing``, the default on an existing cluster)."""
    if adapter_install(auto, platform.settings.existing) == CreateOrExisting.EXISTING:
        return None
    adapter = platform.install(METRICS_ADAPTER, auto.adapter_version, ())
    built.installs.append(adapter)
    return adapter


def add_autoscaler(
    platform: Platform, built: Built, serving: Scaled, scaler_of: tuple[str, int], workload: pulumi.Resource
) -> ServingAutoscaler:
    """The metrics adapter's install and the HPA on LeaderWorkerSet ``serving.name`` (``workload``), with their
    stack output; ``scaler_of``: the backend's queue gauge, which the HPA reads unless ``autoscaling.metric`` names
    another, and its groups' startup window, which the scale-down waits out
    (:func:`~tpu_serving.operations.autoscaling.scale_down_window`)."""
    waiting, startup_seconds = scaler_of
    auto = to_settings(serving.autoscaling, AutoscalingSettings)
    adapter = install_adapter(platform, built, auto)
    scaler = ServingAutoscaler(
        f"{platform.name}-autoscaler",
        ServingAutoscalerArgs(
            project=platform.settings.project,
            namespace=platform.identity.namespace_name,
            target=serving.name,
            settings=auto,
            metric=resolved_metric(serving, waiting),
            labels=platform.k8s_labels,
            startup_seconds=startup_seconds,
            grant_adapter_viewer=not platform.on_platform,  # the platform stack's (GKE review m2)
        ),
        opts=platform.options(adapter, workload, platform.apis),
    )
    if not platform.on_platform:
        built.cloud.append(adapter_grant(platform.settings.project, auto.adapter_iam, f"{KEY}.autoscaling.adapterIam"))
    built.outputs["autoscaling"] = {
        "minReplicas": auto.min_replicas,
        "maxReplicas": auto.max_replicas,
        "metric": scaler.metric,
        "targetPerReplica": auto.target,
        "scaleDownWindowSeconds": scale_down_window(auto.scale_down_stabilization_seconds, startup_seconds),
    }
    return scaler
