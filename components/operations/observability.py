"""``Observability``: what a serving stack is watched with: scraping, a dashboard and alerts.

- a PodMonitoring (Google Cloud Managed Service for Prometheus, ``monitoring.googleapis.com/v1``) per scrape target
  its backend declares (:class:`ScrapeTarget`), so managed collection scrapes the servers' Prometheus endpoints;
- one Cloud Monitoring dashboard for the stack: the backend's serving signals (requests running and waiting, time
  to first token, time per output token, KV-cache use) and the TPU signals GKE exports for every container holding
  chips (duty cycle, HBM use), all in PromQL;
- alert policies with PromQL conditions, each with a severity that picks its channels
  (:mod:`tpu_serving.operations.alerts.alert_policies`), where their signals exist;
- for a backend that runs LeaderWorkerSets, a log-based metric of their group recreations, its chart and its
  restart-storm alert (:mod:`tpu_serving.operations.group_recreations`).

Every object is built by a pure function from typed data (the dashboard is ``json.dumps`` of dataclasses, never a
template). Pass the cluster's Kubernetes provider in ``opts.providers`` and the project's APIs in ``opts.depends_on``.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..catalog import SliceShape
from ..catalog.versions import PINS
from ..common.naming import namespace_problem, project_problems
from ..common.options import child_options
from ..common.settings import CreateOrExisting
from ..common.validation import check_arguments
from ..platform.controllers import WatchedDeployment
from . import group_recreations as recreations
from . import observability_roles as roles_
from . import prober
from . import refused_pods as refused
from .alerts import cluster_notices, platform_gateway_alerts
from .alerts.alert_policies import Alert, alert_policy_args, alerts, controller_policies
from .alerts.page_steps import on_shared_cluster
from .maintenance import host_maintenance
from .observability_settings import ObservabilitySettings as ObservabilitySettings  # its module before 0.3.0
from .serving_metrics import TPU_DUTY_CYCLE as TPU_DUTY_CYCLE
from .serving_metrics import TPU_MEMORY_TOTAL as TPU_MEMORY_TOTAL
from .serving_metrics import TPU_MEMORY_USED as TPU_MEMORY_USED
from .serving_metrics import Scope as Scope
from .serving_metrics import ScrapeTarget as ScrapeTarget
from .serving_metrics import ServingMetrics as ServingMetrics
from .serving_metrics import ServingSignals as ServingSignals

# --------------------------------------------------------------------------- facts

POD_MONITORING_API = "monitoring.googleapis.com/v1"
"""PodMonitoring API version (GoogleCloudPlatform/prometheus-engine@v0.17.2 charts/operator/crds/
monitoring.googleapis.com_podmonitorings.yaml: ``v1`` served and stored)."""
GMP_RELEASE = PINS["gmp"].value
"""The prometheus-engine release whose PodMonitoring CRD the objects are validated against. GKE installs the CRD
itself when Managed Prometheus is on; the stack installs nothing."""

GMP_COLLECTOR_NAMESPACE = "gmp-system"
GMP_COLLECTOR_LABELS: Mapping[str, str] = {"app.kubernetes.io/name": "collector", "app": "managed-prometheus-collector"}
"""Where managed collection scrapes from: the ``collector`` DaemonSet in ``gmp-system``, its pods labelled
``app.kubernetes.io/name: collector`` and ``app: managed-prometheus-collector``, on the pod network (no
``hostNetwork`` in its pod spec), each scraping the targets on its own node
(GoogleCloudPlatform/prometheus-engine@v0.17.2 manifests/operator.yaml, "Source: operator/templates/collector.yaml",
and charts/operator/templates/_helpers.tpl ``collector.templateLabels``; "Managed collection runs Prometheus-based
collectors as a Daemonset", https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed). A namespace
whose NetworkPolicies isolate the scraped pods must admit these pods."""


DASHBOARD_COLUMNS = 48
"""Width of a dashboard's mosaic layout (``MosaicLayout.columns``: 1 to 48, https://cloud.google.com/monitoring/api/
ref_v3/rest/v1/projects.dashboards#mosaiclayout)."""


# --------------------------------------------------------------------------- builders


def pod_monitoring(
    target: ScrapeTarget, namespace: str, interval_seconds: int, labels: Mapping[str, str]
) -> dict[str, Any]:
    """The PodMonitoring object scraping ``target`` (its ``spec`` per the v0.17.2 CRD)."""
    return {
        "apiVersion": POD_MONITORING_API,
        "kind": "PodMonitoring",
        "metadata": {"name": target.name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(target.pods)},
            "endpoints": [
                {"port": target.port, "path": target.path, "interval": f"{interval_seconds}s", **target.endpoint}
            ],
        },
    }


def tpu_duty_cycle(scope: Scope, by: str = "pod_name") -> str:
    return f"avg by ({by}) ({TPU_DUTY_CYCLE}{scope.containers})" if by else f"avg({TPU_DUTY_CYCLE}{scope.containers})"


def tpu_memory_share(scope: Scope) -> str:
    used, total = f"{TPU_MEMORY_USED}{scope.containers}", f"{TPU_MEMORY_TOTAL}{scope.containers}"
    return f"sum by (pod_name) ({used}) / sum by (pod_name) ({total})"


def quantile(metric: str, q: float, scope: Scope) -> str:
    return f"histogram_quantile({q:g}, sum by (le) (rate({metric}_bucket{scope.scraped}[5m])))"


@dataclass(frozen=True)
class Chart:
    """One line chart of the dashboard: its title, its queries and the y axis label."""

    title: str
    queries: Sequence[str | Mapping[str, Any]]
    """PromQL, or a ``TimeSeriesQuery`` as the API takes it (a Cloud Monitoring filter of a metric the stack creates)."""
    y_label: str


def charts(
    scope: Scope,
    signals: ServingSignals | None,
    groups: recreations.Groups | None = None,
    roles: Sequence[roles_.RoleSignals] = (),
) -> list[Chart]:
    """The dashboard's charts: the serving signals the server exports, the TPU signals, then the groups' recreations."""
    out = []
    s = signals or ServingSignals()
    if s.requests_running or s.requests_waiting:
        queries = [f"sum({m}{scope.scraped})" for m in (s.requests_running, s.requests_waiting) if m]
        out.append(Chart("Requests running and waiting", queries, "requests"))
    for metric, title in (
        (s.time_to_first_token, "Time to first token"),
        (s.time_per_output_token, "Time per output token"),
    ):
        if metric:
            out.append(Chart(f"{title} (p50, p99)", [quantile(metric, q, scope) for q in (0.5, 0.99)], "seconds"))
    if s.cache_usage:
        out.append(Chart(s.cache_title, [f"avg({s.cache_usage}{scope.scraped})"], "share in use"))
    out.append(Chart("TPU duty cycle by pod", [tpu_duty_cycle(scope)], "percent"))
    out.append(Chart("TPU HBM in use by pod", [tpu_memory_share(scope)], "share of HBM"))
    for role in roles:
        out += [Chart(t, q, y) for t, q, y in roles_.charts(scope.cluster, scope.namespace, role)]
    if groups is not None:
        out.append(Chart(recreations.PANEL_TITLE, [recreations.dashboard_query(groups)], "recreations"))
    return out


def _query(query: str | Mapping[str, Any]) -> dict[str, Any]:
    return {"prometheusQuery": query} if isinstance(query, str) else dict(query)


def dashboard_json(title: str, items: Sequence[Chart]) -> str:
    """The dashboard as the Cloud Monitoring API takes it: a mosaic of two charts per row
    (https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards; a chart's
    ``TimeSeriesQuery.prometheusQuery`` holds PromQL, its ``timeSeriesFilter`` a Monitoring filter)."""
    width, height = DASHBOARD_COLUMNS // 2, 16
    tiles = [
        {
            "xPos": (i % 2) * width,
            "yPos": (i // 2) * height,
            "width": width,
            "height": height,
            "widget": {
                "title": chart.title,
                "xyChart": {
                    "dataSets": [{"timeSeriesQuery": _query(q), "plotType": "LINE"} for q in chart.queries],
                    "yAxis": {"label": chart.y_label, "scale": "LINEAR"},
                },
            },
        }
        for i, chart in enumerate(items)
    ]
    return json.dumps(
        {"displayName": title, "mosaicLayout": {"columns": DASHBOARD_COLUMNS, "tiles": tiles}},
        sort_keys=True,
        separators=(",", ":"),
    )


# --------------------------------------------------------------------------- component


@dataclass(frozen=True)
class ObservabilityArgs:
    """Arguments of :class:`Observability`."""

    project: str
    """GCP project of the dashboard, the alert policies and the log-based metric."""
    cluster: str
    """Name of the GKE cluster (the ``cluster`` label of the series)."""
    namespace: str = field(metadata={"check": namespace_problem})
    """The serving namespace (the PodMonitorings' namespace)."""
    metrics: ServingMetrics = field(default_factory=ServingMetrics)
    """What the backend declares to be scraped and watched."""
    settings: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    """Scrape interval, alert thresholds and notification channels."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the PodMonitorings."""
    controllers: Sequence[WatchedDeployment] = ()
    """The controllers' Deployments the serving relies on (:mod:`tpu_serving.operations.alerts.controller_alerts`)."""
    maintenance_zones: Sequence[str] = ()
    """The serving slices' zones, whose VMs' upcoming host maintenance opens a ticket
    (:mod:`tpu_serving.operations.maintenance.host_maintenance`); none: no such policy."""
    maintenance_startable: bool = True
    """This namespace's TPU pools take a manual start of host maintenance
    (:func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`), which its gate then starts (the gate's ``starts``):
    the gate's page says so, or that the gate watches; and, without :attr:`maintenance_shapes`, what the zone pages
    tell on-call. ``tpu-serving check`` compares the gate's page with its CronJob's ``STARTS``."""
    maintenance_shapes: Sequence[SliceShape] = ()
    """The TPU slice shapes in :attr:`maintenance_zones`, every namespace's where this ``Observability`` holds the zone
    pages of namespaces whose slices share a zone (library review 9, M5: one argument told both the zone pages and
    the gate's page): the pages tell of a manual start on all, none or some of them
    (:func:`tpu_serving.operations.maintenance.host_maintenance.all_startable`); none given: as :attr:`maintenance_startable`.
    ``tpu-serving check`` compares the pages' claim with the plan's pools in their zones."""
    maintenance_whole: bool = False
    """The serving restarts as a whole (a JobSet, a PathwaysJob: :attr:`tpu_serving.backends.Backend.restarts_as_a_whole`;
    or one standing group): the maintenance ticket says to start every pending pool at once, in one window, and the
    unscheduled maintenance page that it stops the serving, with no other group to check."""
    maintenance_gate: bool = False
    """The stack runs the host-maintenance gate (:mod:`tpu_serving.operations.maintenance.host_maintenance_job`): its page, the log-based
    metric of its runs and its silence alert; with :attr:`maintenance_startable`, the ticket says the gate starts
    the maintenance (elsewhere the gate only watches)."""
    maintenance_fallback: bool = False
    """The gate watches a capacity fallback's ComputeClass (``HostMaintenanceGateArgs.compute_class``): its ticket on
    a group that has served from a slice of the class for an hour (:func:`tpu_serving.operations.maintenance.gate_fallback.away`)."""
    shared_cluster: bool = False
    """The cluster is an existing one, shared with other tenants, where the operators hold no ClusterRole
    (:mod:`tpu_serving.tenancy.operator_access`): the pages mark their cluster-scoped steps, such as ``kubectl get nodes``, as
    the cluster administrators' (:func:`tpu_serving.operations.alerts.page_steps.on_shared_cluster`)."""
    platform_gateway: pulumi.Input[str] | None = None
    """A model stack's platform Gateway (``<namespace>/<name>``, from the platform's output): the load balancer's
    alerts on it (:mod:`tpu_serving.operations.alerts.platform_gateway_alerts`); None: none (a self-contained stack's Gateway is in
    :attr:`metrics`)."""
    platform_gateway_timeout_seconds: int = 0
    """The request timeout of the model stack's route (``gateway.requestTimeoutSeconds``), for the alert on requests
    near it."""
    upgrade_notices: bool = False
    """The cluster's node upgrades are held back: GKE's end-of-support and security-bulletin notifications of the
    cluster open a ticket (:mod:`tpu_serving.operations.alerts.cluster_notices`)."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`): the stack file's paging
        rule too (:func:`tpu_serving.config.checks.paging_problems`, library review 4, M5): alert policies created
        for a serving notify a channel, or say they notify nobody."""
        watch, m = self.settings, self.metrics
        serving = m.serves and bool(m.scrape or m.leader_worker_sets)
        creates = watch.enabled and watch.cloud_resources == CreateOrExisting.CREATE
        unpaged = serving and creates and not watch.notification_channels and not watch.unpaged
        return project_problems(self.project) + (
            [
                "settings.notification_channels = []: the serving's alert policies would notify nobody, so an outage "
                "is seen only by someone looking at Cloud Monitoring; name a channel "
                "(projects/<project>/notificationChannels/<id>), or pass settings.unpaged=True to say so"
            ]
            if unpaged
            else []
        )


def _paged(policy: gcp.monitoring.AlertPolicyArgs, args: ObservabilityArgs) -> gcp.monitoring.AlertPolicyArgs:
    """``policy`` as the stack's own on a shared cluster: its title names the namespace after the cluster (``<cluster>/
    <namespace>: <title>``: tenants of one cluster, such as a platform's model stacks, each have their own policy
    titles), and its page marks its cluster-scoped steps as the cluster administrators'."""
    if not args.shared_cluster:
        return policy
    own = f"{args.cluster}: "
    if isinstance(policy.display_name, str) and policy.display_name.startswith(own):
        policy.display_name = f"{args.cluster}/{args.namespace}: {policy.display_name.removeprefix(own)}"
    doc = policy.documentation
    if isinstance(doc, gcp.monitoring.AlertPolicyDocumentationArgs) and isinstance(doc.content, str):
        content = on_shared_cluster(doc.content)
        policy.documentation = gcp.monitoring.AlertPolicyDocumentationArgs(content=content, mime_type=doc.mime_type)
    return policy


class Observability(pulumi.ComponentResource):
    """PodMonitorings of a serving namespace, its Cloud Monitoring dashboard and alert policies, and for
    LeaderWorkerSets the log-based metric of their group recreations. Pass the cluster's Kubernetes provider in
    ``opts.providers`` and the project's APIs in ``opts.depends_on``.
    """

    dashboard_name: pulumi.Output[str] | None
    """Resource name of the dashboard (``projects/<number>/dashboards/<id>``); None when it exists (settings)."""
    alert_policies: list[str]
    """Display names of the alert policies (none when they are existing)."""
    pod_monitorings: list[str]
    """Names of the PodMonitorings."""

    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"Observability {name!r}", args, ObservabilityArgs)
        super().__init__("tpu-serving:index:Observability", name, None, opts)
        child = child_options(self, opts)
        scope = Scope(args.cluster, args.namespace)
        lws_names = tuple(args.metrics.leader_worker_sets)
        groups = recreations.Groups(args.project, args.cluster, args.namespace, lws_names) if lws_names else None
        for target in args.metrics.scrape:
            obj = pod_monitoring(target, args.namespace, args.settings.scrape_interval_seconds, args.labels)
            k8s.apiextensions.CustomResource(
                f"{name}-{target.name}",
                api_version=obj["apiVersion"],
                kind=obj["kind"],
                metadata=obj["metadata"],
                spec=obj["spec"],
                opts=child,
            )
        prober.create(name, args.namespace, args.metrics.probe, args.labels, child, args.metrics.gateway_probe)
        self.dashboard_name, self.alert_policies = None, []
        if args.settings.cloud_resources == CreateOrExisting.CREATE:
            self._cloud_resources(name, args, scope, groups, child)
        self.pod_monitorings = [t.name for t in args.metrics.scrape]
        self.register_outputs(
            {
                "dashboard": self.dashboard_name,
                "alertPolicies": self.alert_policies,
                "podMonitorings": self.pod_monitorings,
            }
        )

    def _cloud_resources(
        self,
        name: str,
        args: ObservabilityArgs,
        scope: Scope,
        groups: recreations.Groups | None,
        child: pulumi.ResourceOptions,
    ) -> None:
        """The dashboard, the alert policies and, for LeaderWorkerSets, the log-based metric of their recreations."""
        dashboard = gcp.monitoring.Dashboard(
            f"{name}-dashboard",
            dashboard_json=dashboard_json(
                f"{args.cluster} serving", charts(scope, args.metrics.signals, groups, args.metrics.roles)
            ),
            project=args.project,
            opts=child,
        )
        watched = controller_policies(args.cluster, tuple(args.controllers), args.settings)
        policies: list[Alert] = alerts(scope, args.metrics, args.settings) + watched
        self.dashboard_name, self.alert_policies = dashboard.id, []
        for alert in policies:
            policy = _paged(alert_policy_args(alert, args.cluster, args.settings, args.project), args)
            gcp.monitoring.AlertPolicy(f"{name}-{alert.key}", policy, opts=child)
            self.alert_policies.append(str(policy.display_name))
        if args.platform_gateway is not None:
            self.alert_policies += self._watch_platform_gateway(name, args, args.platform_gateway, child)
        if args.maintenance_zones:
            zones, shapes = args.maintenance_zones, args.maintenance_shapes
            startable = host_maintenance.all_startable(shapes) if shapes else args.maintenance_startable
            upcoming = host_maintenance.policy_args(
                args.project,
                args.cluster,
                zones,
                args.settings,
                args.maintenance_gate,
                startable,
                args.maintenance_whole,
            )
            gcp.monitoring.AlertPolicy(f"{name}-{host_maintenance.KEY}", _paged(upcoming, args), opts=child)
            page = host_maintenance.unscheduled_policy_args(
                args.project,
                args.cluster,
                zones,
                args.settings,
                startable,
                args.maintenance_whole,
                args.metrics.leader_worker_sets,
            )
            gcp.monitoring.AlertPolicy(f"{name}-{host_maintenance.UNSCHEDULED_KEY}", _paged(page, args), opts=child)
            self.alert_policies += [str(upcoming.display_name), str(page.display_name)]
        if args.maintenance_gate:
            self.alert_policies += self._watch_gate(name, args, child)
        if args.upgrade_notices:
            notices = cluster_notices.policy_args(args.project, args.cluster, args.settings)
            gcp.monitoring.AlertPolicy(f"{name}-{cluster_notices.KEY}", notices, opts=child)
            self.alert_policies.append(str(notices.display_name))
        if groups is not None:
            self.alert_policies += self._watch_recreations(name, groups, args, child)

    @staticmethod
    def _watch_platform_gateway(
        name: str, args: ObservabilityArgs, gateway: pulumi.Input[str], child: pulumi.ResourceOptions
    ) -> list[str]:
        """The load balancer's alerts on the platform's Gateway, as the stack's own (:func:`_paged`)."""
        page = on_shared_cluster if args.shared_cluster else str
        found = platform_gateway_alerts.policies(
            args.project, args.cluster, gateway, args.settings, args.platform_gateway_timeout_seconds, page
        )
        names = []
        for key, policy in found:
            paged = _paged(policy, args)
            gcp.monitoring.AlertPolicy(f"{name}-{key}", paged, opts=child)
            names.append(str(paged.display_name))
        return names

    @staticmethod
    def _watch_gate(name: str, args: ObservabilityArgs, child: pulumi.ResourceOptions) -> list[str]:
        """The gate's page on its ERROR lines, the log-based metric of its runs and the alert on their absence."""
        hm, project, cluster, ns = host_maintenance, args.project, args.cluster, args.namespace
        starts = args.maintenance_startable
        page = hm.gate_policy_args(project, cluster, ns, args.settings, starts)
        gcp.monitoring.AlertPolicy(f"{name}-{hm.GATE_KEY}", _paged(page, args), opts=child)
        gcp.logging.Metric(f"{name}-{hm.GATE_KEY}-runs-metric", hm.gate_metric_args(project, cluster, ns), opts=child)
        silent = hm.silent_alert(cluster, ns)
        silent_policy = _paged(alert_policy_args(silent, cluster, args.settings, project), args)
        gcp.monitoring.AlertPolicy(f"{name}-{silent.key}", silent_policy, opts=child)
        names = [str(page.display_name), str(silent_policy.display_name)]
        if not starts:  # a watching gate: its ticket on two serving pools' close windows
            close = hm.close_policy_args(project, cluster, ns, args.settings)
            gcp.monitoring.AlertPolicy(f"{name}-{hm.CLOSE_KEY}", _paged(close, args), opts=child)
            names.append(str(close.display_name))
        if args.maintenance_fallback:  # a group long on a fallback slice (SRE review of the capacity fallback, M1)
            moved = hm.fallback_policy_args(project, cluster, ns, args.settings)
            gcp.monitoring.AlertPolicy(f"{name}-{hm.FALLBACK_KEY}", _paged(moved, args), opts=child)
            names.append(str(moved.display_name))
        return names

    @staticmethod
    def _watch_recreations(
        name: str, groups: recreations.Groups, args: ObservabilityArgs, child: pulumi.ResourceOptions
    ) -> list[str]:
        """The log-based metrics of the groups' recreations and of their refused pods, each before the alert policies
        whose filters name it; the policies' names."""
        policies = {k: _paged(p, args) for k, p in recreations.policies(groups, args.settings).items()}
        refusal = {refused.KEY: _paged(refused.policy_args(groups, args.settings), args)}
        return [
            *_counted(f"{name}-{recreations.KEY}-metric", recreations.metric_args(groups), name, policies, child),
            *_counted(f"{name}-{refused.KEY}-metric", refused.metric_args(groups), name, refusal, child),
        ]


def _counted(
    metric_name: str,
    metric: gcp.logging.MetricArgs,
    name: str,
    policies: Mapping[str, gcp.monitoring.AlertPolicyArgs],
    child: pulumi.ResourceOptions,
) -> list[str]:
    """A log-based metric, then the alert policies whose filters name it (``<name>-<key>``, each after the metric);
    the policies' names."""
    made = gcp.logging.Metric(metric_name, metric, opts=child)
    after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[made]))
    for key, policy in policies.items():
        gcp.monitoring.AlertPolicy(f"{name}-{key}", policy, opts=after)
    return [str(p.display_name) for p in policies.values()]
