"""``ServingAutoscaler``: a HorizontalPodAutoscaler on a LeaderWorkerSet, one replica = one whole slice.

The HPA (``autoscaling/v2``) scales the LeaderWorkerSet through its scale subresource
(LWS v0.10.0 CRD: ``subresources.scale`` with ``specReplicasPath: .spec.replicas`` and
``labelSelectorPath: .status.hpaPodSelector``, which "only select[s] the leader pods"), so
a ``Pods`` metric is averaged over the groups' leaders, where the server exports it.

The metric comes from Google Cloud Managed Service for Prometheus through the Custom Metrics
Stackdriver Adapter, installed from its pinned release manifest (:data:`METRICS_ADAPTER`):
"The Custom Metrics Stackdriver Adapter supports querying metrics from Managed Service for
Prometheus starting with version v0.13.1 of the adapter"; with Workload Identity Federation
for GKE its service account needs ``roles/monitoring.viewer``, granted to
``principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/PROJECT_ID.svc.id.goog/subject/ns/custom-metrics/sa/custom-metrics-stackdriver-adapter``
(https://cloud.google.com/stackdriver/docs/managed-prometheus/hpa, "Use the Custom Metrics
Stackdriver Adapter", steps 2 and 4). A Managed Prometheus metric is named
``prometheus.googleapis.com|<metric>|<kind>`` to the HPA
(GoogleCloudPlatform/k8s-stackdriver@cm-sd-adapter-v0.16.9
custom-metrics-stackdriver-adapter/examples/prometheus-to-sd/README.md: "in this case, it
will be ``prometheus.googleapis.com|foo|gauge``").

A new replica needs a whole slice: the node side (pools that scale from zero atomically)
is :mod:`tpu_serving.pools.nodepool`'s; this component only scales the workload.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_gcp import organizations, projects

from ..catalog.versions import PINS
from ..common.naming import namespace_problem, project_id_problem
from ..common.options import child_options
from ..common.settings import CreateOrExisting, described
from ..common.validation import Choice, check_arguments
from ..platform import lws
from ..platform.controllers import Availability, Controller

ADAPTER_DEPLOYMENT = "custom-metrics-stackdriver-adapter"
"""The adapter's Deployment in its release manifest (also its selector labels' value)."""

METRICS_ADAPTER = Controller(
    name="metrics-adapter",
    api_group="custom.metrics.k8s.io",
    # The release tag's production manifest (at cm-sd-adapter-v0.16.9: Namespace custom-metrics, its
    # ServiceAccount, RBAC, the adapter Deployment with image
    # gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.16.7-gke.0 and --use-new-resource-model=true, and
    # the custom/external metrics APIServices; v0.16.10's was not read here, see the version set).
    manifest_url="https://raw.githubusercontent.com/GoogleCloudPlatform/k8s-stackdriver/cm-sd-adapter-{version}/"
    "custom-metrics-stackdriver-adapter/deploy/production/adapter_new_resource_model.yaml",
    default_version=PINS["metrics-adapter"].value,
    min_version="v0.16.9",
    newest_version=PINS["metrics-adapter"].newest,
    # Two replicas on different nodes and a budget (SRE review m4): while no adapter serves, the custom and external
    # metrics APIServices fail and every HPA holds its size. The manifest runs one (Deployment
    # custom-metrics-stackdriver-adapter in custom-metrics, ``replicas: 1``, selector ``run`` and ``k8s-app``:
    # custom-metrics-stackdriver-adapter, deploy/production/adapter_new_resource_model.yaml). It holds no state and
    # no leader: each replica answers the aggregated API's requests behind the manifest's Service from Cloud
    # Monitoring, so more than one may run (run with two replicas: FairwindsOps/charts#191, the review of its
    # stackdriver-metrics-adapter chart, "it can work with 2 replicas"). The manifest sets no affinity and no spread
    # (cm-sd-adapter-v0.16.9, its Deployment l.69-79 and pod spec): the install's node and zone spread are the only ones.
    availability=Availability(
        deployment=ADAPTER_DEPLOYMENT,
        namespace="custom-metrics",
        selector={"run": ADAPTER_DEPLOYMENT, "k8s-app": ADAPTER_DEPLOYMENT},
    ),
    # No page when it is down (SRE review round 48, m1): the HPAs then hold their size (their ScalingActive
    # condition False, FailedGetPodsMetric) and serving goes on; the autoscaler alert tickets that
    # (tpu_serving.operations.alerts.autoscaler_alerts), where the controller alert would page for it.
    pages_when_down=False,
)
"""The Custom Metrics Stackdriver Adapter (GoogleCloudPlatform/k8s-stackdriver, tag ``cm-sd-adapter-<version>``;
the pin and its sources: :data:`tpu_serving.catalog.versions.PINS` ``metrics-adapter``). The oldest release accepted,
v0.16.9 (tag at f32cd9c), is the newest whose manifest was read here."""


def adapter_version_problem(version: str) -> str:
    """Why ``version`` is an adapter release the version set does not know (newer than its newest), or ``""``
    (its form is the field's pattern)."""
    try:
        return METRICS_ADAPTER.newer_problem(version)
    except ValueError:
        return ""  # not vMAJOR.MINOR.PATCH: the pattern says so


ADAPTER_NAMESPACE = "custom-metrics"
ADAPTER_SERVICE_ACCOUNT = "custom-metrics-stackdriver-adapter"
"""Namespace and Kubernetes service account of the adapter, as its release manifest creates them."""
MONITORING_VIEWER = "roles/monitoring.viewer"

MANAGED_PROMETHEUS_PREFIX = "prometheus.googleapis.com"
PROMETHEUS_NAME = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"
"""A Prometheus metric name: "Metric names SHOULD match the regex [a-zA-Z_:][a-zA-Z0-9_:]* for the best
experience and compatibility" (https://prometheus.io/docs/concepts/data_model/)."""


class MetricKind(Choice):
    """The type of a Prometheus metric (OpenMetrics 1.0, "Metric Types")."""

    GAUGE = "gauge"
    COUNTER = "counter"
    HISTOGRAM = "histogram"
    SUMMARY = "summary"


NOT_GAUGE_SUFFIXES: Mapping[str, tuple[MetricKind, ...]] = {
    "_total": (MetricKind.COUNTER,),
    "_created": (MetricKind.COUNTER, MetricKind.HISTOGRAM, MetricKind.SUMMARY),
    "_bucket": (MetricKind.HISTOGRAM,),
    "_count": (MetricKind.HISTOGRAM, MetricKind.SUMMARY),
    "_sum": (MetricKind.HISTOGRAM, MetricKind.SUMMARY),
}
"""The suffixes of the series that counters, histograms and summaries expose (OpenMetrics 1.0,
https://github.com/OpenObservability/OpenMetrics/blob/main/specification/OpenMetrics.md: a Counter's
MetricPoint "MUST have" a ``_total`` sample and may have ``_created``; a Histogram's ``_bucket``, ``_count``,
``_sum`` and ``_created``; a Summary's ``_count``, ``_sum`` and ``_created``; the Prometheus text format names the
same samples, https://prometheus.io/docs/instrumenting/exposition_formats/). Managed Service for Prometheus stores
each under its own kind, never ``gauge``: a counter as ``prometheus.googleapis.com/<name>/counter``, a histogram as
``<name>/histogram``, a summary's as ``<name>_sum/summary:counter``, ``<name>_count/summary`` and
``<name>/summary`` (GoogleCloudPlatform/opentelemetry-operations-go
exporter/collector/googlemanagedprometheus/naming.go, ``GetMetricName``), so the HPA's
``prometheus.googleapis.com|<name>|gauge`` finds none of them."""


def gauge_problem(metric: str | None) -> str:
    """Why ``metric`` is not a gauge the HPA can read through the adapter (its name ends like a counter's, a
    histogram's or a summary's series: :data:`NOT_GAUGE_SUFFIXES`), or ``""``."""
    suffix = next((s for s in NOT_GAUGE_SUFFIXES if metric and metric.endswith(s)), None)
    if suffix is None:
        return ""
    return (
        f"ends in {suffix}, a series of a {' or '.join(NOT_GAUGE_SUFFIXES[suffix])}; the HPA reads a gauge "
        f"({managed_prometheus_metric('<metric>')}), such as the server's gauge of waiting requests (leave metric unset)"
    )


def kind_problem(metric: str, kinds: Mapping[str, MetricKind], server: str) -> str:
    """Why ``metric`` is no gauge by ``kinds``, the table of ``server``'s metrics (a backend's facts), or ``""``."""
    kind = kinds.get(metric)
    if kind is None or kind == MetricKind.GAUGE:
        return ""
    gauges = ", ".join(sorted(m for m, k in kinds.items() if k == MetricKind.GAUGE))
    return f"{metric} is a {kind} of {server}; the HPA reads a gauge: {gauges}"


def metric_problem(metric: str | None) -> str:
    """Why ``metric`` cannot drive the HPA (:func:`gauge_problem`), or ``""``. A name the engine does not export is
    not refused here: the library holds no complete list of an engine's metrics (vLLM 0.29.0 registers some sixty,
    its connectors more), and refusing a real gauge would be worse than a typo, which the HPA shows as a metric
    it cannot read. ``tpu-serving check`` fails an HPA on a ``vllm:`` name the pinned wheel's metrics logger does not
    register (tools/conformance/engine_metrics.py, from the table the extractor reads off the wheel), which this
    layer cannot import."""
    return gauge_problem(metric)


def managed_prometheus_metric(metric: str, kind: str = "gauge") -> str:
    """The HPA's name for a Prometheus metric in Managed Service for Prometheus:
    ``prometheus.googleapis.com|<metric>|<kind>`` (see the module docstring)."""
    return f"{MANAGED_PROMETHEUS_PREFIX}|{metric}|{kind}"


def adapter_member(project: str, project_number: str) -> str:
    """The IAM principal of the adapter's Kubernetes service account (Workload Identity Federation for GKE)."""
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
        f"{project}.svc.id.goog/subject/ns/{ADAPTER_NAMESPACE}/sa/{ADAPTER_SERVICE_ACCOUNT}"
    )


def adapter_viewer(
    name: str, project: str, parent: pulumi.Resource, opts: pulumi.ResourceOptions
) -> projects.IAMMember:
    """The adapter's principal's ``roles/monitoring.viewer`` on ``project`` (a child of ``parent``, ``opts`` its
    options): made by the stack that installs the adapter, a self-contained stack's autoscaler or a platform stack."""
    number = organizations.get_project_output(project_id=project, opts=pulumi.InvokeOutputOptions(parent=parent))
    # The principal is the project's (its workload identity pool): every cluster's adapter in the project is the same
    # member, and deleting an IAMMember removes the member from the role whoever else holds it
    # (terraform-provider-google resourceIamMemberDelete -> subtractFromBindings). So the grant outlives this stack:
    # destroying one deployment does not stop another's autoscaling.
    return projects.IAMMember(
        name,
        project=project,
        role=MONITORING_VIEWER,
        member=number.number.apply(lambda n: adapter_member(project, str(n))),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True)),
    )


MAX_STABILIZATION_SECONDS = 3600
"""The longest HPA stabilization window ("less than or equal to 3600 (one hour)": k8s.io/api v0.36.3
autoscaling/v2/types.go l.195)."""
FEWEST_SCALE_DOWN_WINDOW_SECONDS = 900
"""The shortest scale-down window unless a stack sets one: a group's slice is not given back within a quarter hour
of the load that asked for it."""


def scale_down_window(seconds: int | None, startup_seconds: int | None) -> int:
    """The HPA's scale-down stabilization window: ``seconds`` (``autoscaling.scaleDownStabilizationSeconds``) when
    set, else the serving's startup window (``startup_seconds``) between :data:`FEWEST_SCALE_DOWN_WINDOW_SECONDS` and
    :data:`MAX_STABILIZATION_SECONDS`.

    With ``in-place`` rollouts (maxSurge 0) the LeaderWorkerSet removes the highest-index group, Ready or not (SRE
    review round 45, M2); with ``surge`` it keeps one group above the new count while a lower one reloads
    (:attr:`tpu_serving.backends.rollout.RolloutPlan.scale_down`), which covers a drop of one group. The HPA removes one
    only once every recommendation of the window asked for fewer ("the safest value from the stabilization window is
    chosen", HPAScalingRules, the same file l.184-187), so with the window as long as a group's start, a group that began
    reloading while the load still asked for it serves again before the scale-down. A reload that starts once the
    load has already fallen is not covered: there the minimum (``minReplicas``) is what holds."""
    if seconds is not None:
        return seconds
    return min(MAX_STABILIZATION_SECONDS, max(FEWEST_SCALE_DOWN_WINDOW_SECONDS, startup_seconds or 0))


@dataclass(frozen=True)
class AutoscalingSettings:
    """Autoscaling of the serving groups by whole slices: the HPA's bounds, metric and target."""

    max_replicas: int = described(
        "Most replicas (groups) the HPA may run; each takes one whole slice, so the serving slices must provide "
        "exactly this many.",
        ge=1,
        le=64,
    )
    min_replicas: int = described(
        "Fewest replicas; their slices keep their VMs, the others scale from zero when a replica needs one.",
        default=1,
        ge=1,
        le=64,
    )
    metric: str | None = described(
        "Prometheus gauge the leaders export, read through Managed Service for Prometheus; the HPA averages "
        "it over the leaders. Unset: the server's gauge of waiting requests (vLLM `vllm:num_requests_waiting`, "
        "JetStream `jetstream_prefill_backlog_size`).",
        default=None,
        pattern=PROMETHEUS_NAME,
        check=metric_problem,
    )
    target: float = described(
        "Average of the metric per replica above which the HPA adds a replica (HPA `averageValue`); "
        "a starting point to tune against the latency goal.",
        default=5.0,
        gt=0,
        le=100000,
    )
    scale_down_stabilization_seconds: int | None = described(
        "How long the metric must stay low before a group (and its slice) is removed. Unset: as long as a group "
        "may take to start (the serving's startup window, at least 900 and at most 3600, the API's bound), so a "
        "group that began reloading while the load asked for more serves again before one is removed.",
        default=None,
        ge=0,
        le=MAX_STABILIZATION_SECONDS,
    )
    adapter_version: str = described(
        "Release of the Custom Metrics Stackdriver Adapter installed by the stack (tag `cm-sd-adapter-<version>`).",
        default=METRICS_ADAPTER.default_version,
        pattern=r"^v\d+\.\d+\.\d+$",
        check=adapter_version_problem,
    )
    adapter_install: CreateOrExisting | None = described(
        "`create`: the stack installs the Custom Metrics Stackdriver Adapter (release `adapterVersion`); "
        "`existing`: the cluster runs one already and the stack installs none. One adapter serves a cluster: its "
        "APIServices v1beta1.custom.metrics.k8s.io and v1beta1.external.metrics.k8s.io and its namespace "
        "custom-metrics are cluster-wide, so a tenant stack that owned them would take every HPA of the cluster "
        "on those metrics down with its `pulumi destroy`. Unset: `create` on a cluster the stack creates, "
        "`existing` on an existing cluster (`cluster.existing`: the platform's adapter).",
        default=None,
    )
    adapter_iam: CreateOrExisting = described(
        "`create`: the stack grants the adapter's Workload Identity principal roles/monitoring.viewer on the "
        "project (kept when the stack is destroyed); `existing`: the grant exists already (the cluster's owner "
        "made it), and the stack makes no GCP call for it.",
        default=CreateOrExisting.CREATE,
    )

    def problems(self) -> list[str]:
        """Rules across these settings (see :mod:`tpu_serving.common.validation`)."""
        if (
            isinstance(self.min_replicas, int)
            and isinstance(self.max_replicas, int)
            and self.min_replicas > self.max_replicas
        ):
            return [f"min_replicas ({self.min_replicas}) must not exceed max_replicas ({self.max_replicas})"]
        return []


MAX_SCALING_PERIOD_SECONDS = 1800
"""The longest ``periodSeconds`` of an HPA scaling policy ("must be greater than zero and less than or equal to 1800
(30 min)", k8s.io/api v0.36.3 autoscaling/v2/types.go l.252-254)."""
DEFAULT_SCALE_DOWN_PERIOD_SECONDS = 60
"""The scale-down policy's period unless a backend asks for a slower one: one group a minute at most."""


@dataclass(frozen=True)
class ServingAutoscalerArgs:
    """Arguments of :class:`ServingAutoscaler`."""

    project: str
    """GCP project ID (the adapter's workload identity pool is ``<project>.svc.id.goog``)."""
    namespace: str = field(metadata={"check": namespace_problem})
    """Namespace of the LeaderWorkerSet."""
    target: str
    """Name of the LeaderWorkerSet to scale."""
    settings: AutoscalingSettings
    """Bounds and target (its ``metric`` is resolved into :attr:`metric`)."""
    metric: str = described(
        "Prometheus gauge the HPA averages over the leaders: `settings.metric`, or the backend's own.",
        pattern=PROMETHEUS_NAME,
        check=metric_problem,
    )
    """Prometheus gauge the HPA averages over the leaders: ``settings.metric``, or the backend's own."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the HPA."""
    target_api_version: str = lws.API_VERSION
    """API version of the scaled object (a LeaderWorkerSet unless told otherwise)."""
    target_kind: str = lws.KIND
    """Its kind: ``LeaderWorkerSet``, or a DisaggregatedSet role's ``DisaggregatedSetRoleScaler``, whose ``/scale``
    counts the role's groups by their leaders (kubernetes-sigs/lws@v0.10.0 scaler_manager.go l.177-187)."""
    scale_down_period_seconds: int = described(
        "Seconds over which the HPA removes at most one group (its scale-down policy's periodSeconds).",
        default=DEFAULT_SCALE_DOWN_PERIOD_SECONDS,
        ge=1,
        le=MAX_SCALING_PERIOD_SECONDS,
    )
    """Seconds over which the HPA removes at most one group (``behavior.scaleDown.policies[0].periodSeconds``; the API
    admits 1 to 1800, :data:`MAX_SCALING_PERIOD_SECONDS`)."""
    startup_seconds: int | None = None
    """How long a group may take to start (the backend's startup window): the scale-down waits as long, unless
    ``settings.scale_down_stabilization_seconds`` is set (:func:`scale_down_window`)."""
    grant_adapter_viewer: bool = True
    """Grant the adapter's principal ``roles/monitoring.viewer`` here (unless ``settings.adapter_iam`` names the grant
    existing): once per deployment (a second autoscaler of the same deployment passes False, or two resources would
    hold one binding), and never on a model stack, whose platform stack owns the adapter and its grant."""

    def problems(self) -> list[str]:
        """The project is a GCP project ID (its workload identity pool names the adapter's principal), and the gauge
        is said once: ``settings.metric``, when given, is :attr:`metric` (library review 7, m3: a disagreement was
        taken silently, ``metric`` winning)."""
        problem = project_id_problem(self.project)
        found = [f"project = {self.project!r}: {problem}"] if problem else []
        chosen = getattr(self.settings, "metric", None)
        if isinstance(chosen, str) and chosen and chosen != self.metric:
            found.append(
                f"metric = {self.metric!r}, but settings.metric = {chosen!r}: give the gauge once (the same value "
                "in both, or settings.metric unset)"
            )
        return found


def quantity(value: float) -> str:
    """A Kubernetes quantity for ``value``: ``5`` or ``2500m``."""
    return str(int(value)) if float(value).is_integer() else f"{round(value * 1000)}m"


def declared_bounds(settings: AutoscalingSettings) -> tuple[int, int]:
    """The HPA's ``(minReplicas, maxReplicas)`` as the stack declares them: :func:`hpa_args` sets them, and the
    host-maintenance gate gives them back after its cover of a lost group
    (:attr:`tpu_serving.HostMaintenanceGateArgs.autoscaler_bounds`)."""
    return settings.min_replicas, settings.max_replicas


def hpa_args(args: ServingAutoscalerArgs) -> k8s.autoscaling.v2.HorizontalPodAutoscalerInitArgs:
    """The HPA on the LeaderWorkerSet's scale subresource, driven by the leaders' metric."""
    s = args.settings
    low, high = declared_bounds(s)
    return k8s.autoscaling.v2.HorizontalPodAutoscalerInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.target, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.autoscaling.v2.HorizontalPodAutoscalerSpecArgs(
            scale_target_ref=k8s.autoscaling.v2.CrossVersionObjectReferenceArgs(
                api_version=args.target_api_version, kind=args.target_kind, name=args.target
            ),
            min_replicas=low,
            max_replicas=high,
            metrics=[
                k8s.autoscaling.v2.MetricSpecArgs(
                    type="Pods",
                    pods=k8s.autoscaling.v2.PodsMetricSourceArgs(
                        metric=k8s.autoscaling.v2.MetricIdentifierArgs(name=managed_prometheus_metric(args.metric)),
                        target=k8s.autoscaling.v2.MetricTargetArgs(
                            type="AverageValue", average_value=quantity(s.target)
                        ),
                    ),
                )
            ],
            behavior=k8s.autoscaling.v2.HorizontalPodAutoscalerBehaviorArgs(
                # One group (one slice) at a time: each step provisions a whole slice.
                scale_up=k8s.autoscaling.v2.HPAScalingRulesArgs(
                    policies=[k8s.autoscaling.v2.HPAScalingPolicyArgs(type="Pods", value=1, period_seconds=60)]
                ),
                scale_down=k8s.autoscaling.v2.HPAScalingRulesArgs(
                    stabilization_window_seconds=scale_down_window(
                        s.scale_down_stabilization_seconds, args.startup_seconds
                    ),
                    policies=[
                        k8s.autoscaling.v2.HPAScalingPolicyArgs(
                            type="Pods", value=1, period_seconds=args.scale_down_period_seconds
                        )
                    ],
                ),
            ),
        ),
    )


class ServingAutoscaler(pulumi.ComponentResource):
    """An HPA on a LeaderWorkerSet, and the metrics adapter's read access to Cloud Monitoring.

    Pass the cluster's Kubernetes provider in ``opts.providers`` and, in ``opts.depends_on``,
    the adapter's install (:data:`METRICS_ADAPTER`), the LeaderWorkerSet and the project's APIs.
    """

    hpa: k8s.autoscaling.v2.HorizontalPodAutoscaler
    """The HorizontalPodAutoscaler."""
    metric: str
    """The metric as the HPA names it."""
    hpa_name: str
    """The HPA's Kubernetes name, its target's (``HostMaintenanceGateArgs.autoscalers`` takes it)."""

    def __init__(self, name: str, args: ServingAutoscalerArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ServingAutoscaler {name!r}", args, ServingAutoscalerArgs)
        super().__init__("tpu-serving:index:ServingAutoscaler", name, None, opts)
        child = child_options(self, opts)
        if args.grant_adapter_viewer and args.settings.adapter_iam == CreateOrExisting.CREATE:
            adapter_viewer(f"{name}-adapter-viewer", args.project, self, child)
        self.hpa = k8s.autoscaling.v2.HorizontalPodAutoscaler(f"{name}-hpa", hpa_args(args), opts=child)
        self.metric = managed_prometheus_metric(args.metric)
        self.hpa_name = args.target
        self.register_outputs({"metric": self.metric})
