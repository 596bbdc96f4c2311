"""``Observability``: what a serving stack is watched with: scraping, a dashboard and alerts.

- a PodMonitoring (Google Cloud Managed Service for Prometheus, ``monitoring.googleapis.com/v1``) per scrape target
  its backend declares (:class:`ScrapeTarget`), so managed collection scrapes the servers' Prometheus endpoints;
- one Cloud Monitoring dashboard for the stack: the backend's serving signals (requests running and waiting, time
  to first token, time per output token, KV-cache use) and the TPU signals GKE exports for every container holding
  chips (duty cycle, HBM use), all in PromQL;
- alert policies with PromQL conditions: pods not ready, a lasting backlog, TPUs idle while requests wait, a job's
  pods not running (:mod:`tpu_serving.job_alerts`), server errors (:mod:`tpu_serving.error_rate`), a controller with
  no available replica (:mod:`tpu_serving.controller_alerts`), a failing or slow serving probe (the prober's
  Deployment, :mod:`tpu_serving.prober`), each where its signals exist;
- for a backend that runs LeaderWorkerSets, a log-based metric of their group recreations, its chart and its
  restart-storm alert (:mod:`tpu_serving.group_recreations`).

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

from . import controller_alerts, error_rate, job_alerts, prober
from . import group_recreations as recreations
from . import observability_roles as roles_
from .controllers import WatchedDeployment
from .naming import label_name, namespace_problem, project_problems
from .observability_settings import ObservabilitySettings as ObservabilitySettings  # its module before 0.3.0
from .options import child_options
from .settings import CreateOrExisting
from .validation import check_arguments
from .versions import PINS

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

TPU_DUTY_CYCLE = "kubernetes_io:container_accelerator_duty_cycle"
TPU_MEMORY_USED = "kubernetes_io:container_accelerator_memory_used"
TPU_MEMORY_TOTAL = "kubernetes_io:container_accelerator_memory_total"
"""The accelerator metrics GKE system metrics export per container holding accelerators
(``kubernetes.io/container/accelerator/duty_cycle``: percent of the sample period the accelerator was processing;
``.../memory_used`` and ``.../memory_total``: bytes; https://cloud.google.com/monitoring/api/metrics_kubernetes; the
kubelet's AcceleratorStats ``dutyCycle``, ``memoryUsed``, ``memoryTotal``, kubernetes.io/docs/reference/kubelet-api/
stats.v1alpha1). Their PromQL names follow "replace the first / with :, every other special character with _"
(https://cloud.google.com/monitoring/promql/promql-mapping); their labels are the ``k8s_container`` resource's
(``cluster_name``, ``namespace_name``, ``pod_name``)."""

POD_NOT_READY = "kube_pod_container_status_ready"
"""Per-container readiness (1: its check passed), the only pod readiness series of GKE's ``POD`` kube state metrics
package (its table: this, ``..._waiting_reason``, ``kube_pod_status_phase``, ``kube_pod_status_unschedulable``;
https://cloud.google.com/stackdriver/docs/solutions/gke/kube-state-metrics, turned on by
:data:`tpu_serving.cluster.MONITORING_COMPONENTS`); ``kube_pod_status_ready`` is not sent. A pod is Ready when every
container is (:func:`~tpu_serving.observability_roles.ready_pods`); one never scheduled has no series, so the alerts
count live pods (:data:`POD_PHASE`) *unless* Ready: a stockout's Pending pod counts."""

POD_PHASE = "kube_pod_status_phase"
"""kube-state-metrics' pod phase, 1 for the pod's current ``phase`` (Pending, Running, Succeeded, Failed, Unknown;
kubernetes/kube-state-metrics docs/metrics/workload/pod-metrics.md, STABLE). A finished pod (Succeeded, Failed: a
completed Job's) keeps Ready=False for as long as it exists, so the not-ready alert counts only pods that should
become ready: those Pending or Running (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase)."""

SHOULD_BE_READY_PHASES = "Pending|Running"

DASHBOARD_COLUMNS = 48
"""Width of a dashboard's mosaic layout (``MosaicLayout.columns``: 1 to 48, https://cloud.google.com/monitoring/api/
ref_v3/rest/v1/projects.dashboards#mosaiclayout)."""


# --------------------------------------------------------------------------- what a backend declares


@dataclass(frozen=True)
class ScrapeTarget:
    """A Prometheus endpoint of the serving pods: the pods (labels), the port and the path."""

    name: str
    """Name of the PodMonitoring (its ``job`` label in the scraped series)."""
    pods: Mapping[str, str]
    """Labels selecting the pods to scrape."""
    port: int
    """Port of the endpoint."""
    path: str = "/metrics"
    """HTTP path of the endpoint."""
    endpoint: Mapping[str, Any] = field(default_factory=dict)
    """More fields of its PodMonitoring endpoint (a probe's ``params``, ``interval``: :func:`.prober.scrape_endpoint`)."""


@dataclass(frozen=True)
class ServingSignals:
    """PromQL metric names of a server's serving signals (``None``: the server exports none)."""

    requests_running: str | None = None
    """Gauge of requests being processed."""
    requests_waiting: str | None = None
    """Gauge of requests waiting to be processed (the queue)."""
    time_to_first_token: str | None = None
    """Histogram (base name) of the time to the first token, in seconds."""
    time_per_output_token: str | None = None
    """Histogram (base name) of the time between output tokens, in seconds."""
    cache_usage: str | None = None
    """Gauge of the KV cache (or decode slots) in use, 0 to 1."""
    cache_title: str = "KV-cache use"
    """Title of the cache panel (a server may only report its decode slots)."""


@dataclass(frozen=True)
class ServingMetrics:
    """What a backend declares to be watched: its scrape targets and its serving signals."""

    scrape: Sequence[ScrapeTarget] = ()
    """Endpoints to scrape (none: the backend's components export no Prometheus metrics)."""
    signals: ServingSignals | None = None
    """The scraped serving signals (none: no serving panels, no queue or idle alerts)."""
    serves: bool = True
    """Whether the backend serves clients (a batch workload gets no not-ready alert)."""
    roles: Sequence[roles_.RoleSignals] = ()
    """Its serving roles (disaggregated prefill and decode), each with panels and alerts of its own."""
    leader_worker_sets: Sequence[str] = ()
    """Names of the LeaderWorkerSets it runs, whose group recreations are counted, charted and alerted on
    (none: it runs none; JobSets restart within a budget of their own)."""
    leader_pods: str | None = None
    """RE2 pattern of the names of the pods that take requests, for the alert on none of them Ready (None: the
    leaders of :attr:`leader_worker_sets`; a backend with neither gets no such alert)."""
    job_pods: job_alerts.JobPods | None = None
    """The pods of a JobSet-run job (a PathwaysJob), alerted on while they are not running (None: no such job)."""
    router: str | None = None
    """The endpoint picker's Deployment (and PodMonitoring), alerted on by :func:`roles_.router_alerts`."""
    http_responses: error_rate.HttpResponses | None = None
    """The serving servers' count of HTTP responses by status, for the error-rate alert (None: none counts them)."""
    probe: prober.ProbeTarget | None = None
    """The request the serving probe sends, whose Deployment and alerts the stack gets (None: no probe)."""


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


def _matchers(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


@dataclass(frozen=True)
class Scope:
    """The series of one stack: its cluster and serving namespace."""

    cluster: str
    namespace: str

    @property
    def scraped(self) -> str:
        """Matchers of series managed collection scraped (target labels ``cluster``, ``namespace``)."""
        return _matchers({"cluster": self.cluster, "namespace": self.namespace})

    @property
    def containers(self) -> str:
        """Matchers of GKE system metrics of the namespace's containers."""
        return _matchers(
            {"monitored_resource": "k8s_container", "cluster_name": self.cluster, "namespace_name": self.namespace}
        )


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


@dataclass(frozen=True)
class Alert:
    """An alert policy with one PromQL condition, and what to do when it fires."""

    key: str
    """Short name: the policy's resource name suffix; its ``alert_rule`` is the same as a label name."""
    title: str
    query: str
    minutes: int
    runbook: str
    severity: str | None = None
    """The policy's ``severity``: CRITICAL, ERROR or WARNING (pulumi-gcp 10.2.0 monitoring/alert_policy.py l.74-77),
    or None (none set)."""


def alerts(scope: Scope, metrics: ServingMetrics, settings: ObservabilitySettings) -> list[Alert]:
    """The alert policies whose signals the backend has."""
    minutes, kube = settings.no_ready_leader_minutes, (POD_NOT_READY, POD_PHASE, SHOULD_BE_READY_PHASES)
    out = []
    leaders = roles_.leader_pods(metrics.serves, metrics.leader_pods, metrics.leader_worker_sets)
    if leaders is not None:
        out.append(
            Alert(*roles_.no_ready_leader_alert(scope.cluster, scope.namespace, leaders, minutes, POD_NOT_READY))
        )
    if metrics.serves:
        out.append(
            Alert(
                "not-ready",
                "Serving pods not ready",
                roles_.namespace_not_ready_query(scope.cluster, scope.namespace, kube),
                settings.not_ready_minutes,
                f"A pod of namespace {scope.namespace} has not been ready for {settings.not_ready_minutes} minutes. "
                f"Find it (kubectl -n {scope.namespace} get pods), read its events and logs; a pending group waits "
                "for a whole slice, a failing probe for the model to load.",
            )
        )
    if metrics.job_pods is not None:
        pods, minutes = metrics.job_pods, settings.not_ready_minutes
        out.append(Alert(*job_alerts.not_running_alert(scope.cluster, scope.namespace, pods, minutes)))
    waiting, duty = metrics.signals.requests_waiting if metrics.signals else None, TPU_DUTY_CYCLE + scope.containers
    if waiting:
        backlog = f"sum({waiting}{scope.scraped})"
        out.append(
            Alert(
                "backlog",
                "Serving queue backlog high",
                f"{backlog} > {settings.backlog_threshold:g}",
                settings.backlog_minutes,
                f"More than {settings.backlog_threshold:g} requests have waited for {settings.backlog_minutes} "
                "minutes: the replicas are saturated. Add replicas (slices) or shed load; check the dashboard's "
                "time to first token.",
            )
        )
        out.append(
            Alert(
                "tpu-idle",
                "TPUs idle while requests wait",
                roles_.idle_query(duty, waiting + scope.scraped, leaders, settings, metrics.roles),
                settings.idle_minutes,
                f"Requests wait but a group's TPUs ran under {settings.idle_duty_cycle_percent:g}% of the time for "
                f"{settings.idle_minutes} minutes (label group: its leader pod): the engine is stuck (compiling, a hung "
                "Ray or Pathways worker). Read the leader's logs; restart the group (delete its leader pod).",
            )
        )
    if metrics.http_responses is not None:
        out.append(
            Alert(*error_rate.error_rate_alert(scope.cluster, scope.namespace, metrics.http_responses, settings))
        )
    out += [Alert(*a) for a in prober.probe_alerts(scope.cluster, scope.namespace, metrics.probe, settings)]
    out += [Alert(*a) for r in metrics.roles for a in roles_.alerts(scope.cluster, scope.namespace, r, settings, kube)]
    router = roles_.router_alerts(scope.cluster, scope.namespace, metrics.router, minutes, POD_NOT_READY)
    return out + [Alert(*a) for a in router]


def alert_policy_args(
    alert: Alert, stack: str, settings: ObservabilitySettings, project: str
) -> gcp.monitoring.AlertPolicyArgs:
    """One alert policy: its PromQL condition held for the alert's minutes, its runbook, its channels."""
    return gcp.monitoring.AlertPolicyArgs(
        project=project,
        display_name=f"{stack}: {alert.title}",
        combiner="OR",
        conditions=[
            gcp.monitoring.AlertPolicyConditionArgs(
                display_name=alert.title,
                condition_prometheus_query_language=gcp.monitoring.AlertPolicyConditionConditionPrometheusQueryLanguageArgs(
                    query=alert.query,
                    duration=f"{alert.minutes * 60}s",
                    evaluation_interval="60s",
                    alert_rule=label_name(alert.key),
                    rule_group=label_name(stack),
                    # Cloud Monitoring refuses a PromQL condition on a metric the project has not
                    # ingested yet (400), and a new project has none of these: the engines' and
                    # kube-state-metrics' series appear only once the workloads run and are scraped.
                    # pulumi-gcp 10.2.0 monitoring/_inputs.py: disable_metric_validation "allows
                    # alerting policies to be defined on metrics that do not yet exist".
                    disable_metric_validation=True,
                ),
            )
        ],
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(content=alert.runbook, mime_type="text/markdown"),
        notification_channels=list(settings.notification_channels),
        severity=alert.severity,
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
    """The controllers' Deployments the serving relies on (:mod:`tpu_serving.controller_alerts`)."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.validation`)."""
        return project_problems(self.project)


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
        args = check_arguments("Observability", args, ObservabilityArgs)
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
        prober.create(name, args.namespace, args.metrics.probe, args.labels, child)
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
        watched = controller_alerts.controller_alerts(args.cluster, args.controllers, args.settings)
        policies = alerts(scope, args.metrics, args.settings) + [Alert(*a) for a in watched]
        for alert in policies:
            gcp.monitoring.AlertPolicy(
                f"{name}-{alert.key}", alert_policy_args(alert, args.cluster, args.settings, args.project), opts=child
            )
        self.dashboard_name = dashboard.id
        self.alert_policies = [f"{args.cluster}: {a.title}" for a in policies]
        if groups is not None:
            self.alert_policies += self._watch_recreations(name, groups, args.settings, child)

    @staticmethod
    def _watch_recreations(
        name: str, groups: recreations.Groups, settings: ObservabilitySettings, child: pulumi.ResourceOptions
    ) -> list[str]:
        """The log-based metric of the groups' recreations, then its alert policies, whose filters name it; their names."""
        metric = gcp.logging.Metric(f"{name}-{recreations.KEY}-metric", recreations.metric_args(groups), opts=child)
        after_metric = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[metric]))
        policies = recreations.policies(groups, settings)
        for key, policy in policies.items():
            gcp.monitoring.AlertPolicy(f"{name}-{key}", policy, opts=after_metric)
        return [str(p.display_name) for p in policies.values()]
