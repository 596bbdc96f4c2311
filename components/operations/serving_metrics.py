"""What a serving stack is watched by: the metrics a backend declares (:class:`ServingMetrics`), the series of one
stack (:class:`Scope`), and the GKE and kube-state-metrics series the alerts read.

Plain data: :mod:`tpu_serving.operations.alerts.alert_policies` builds the alerts from it, :mod:`tpu_serving.operations.observability` the
scraping and the dashboard.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pulumi import Input

from ..common.naming import gateway_prober_name
from ..common.validation import ArgumentsError
from ..traffic.epp import EPP_METRICS_PORT
from ..traffic.gateway import failure_mode
from ..traffic.gateway_settings import ServingGatewayArgs
from . import observability_roles as roles_
from . import prober
from .alerts import error_rate, job_alerts

# --------------------------------------------------------------------------- facts

TPU_DUTY_CYCLE = "kubernetes_io:container_accelerator_duty_cycle"
TPU_MEMORY_USED = "kubernetes_io:container_accelerator_memory_used"
TPU_MEMORY_TOTAL = "kubernetes_io:container_accelerator_memory_total"
"""The accelerator metrics GKE system metrics export per container holding accelerators
(``kubernetes.io/container/accelerator/duty_cycle``: percent of the sample period the accelerator was processing;
``.../memory_used`` and ``.../memory_total``: bytes; https://cloud.google.com/monitoring/api/metrics_kubernetes; the
kubelet's AcceleratorStats ``dutyCycle``, ``memoryUsed``, ``memoryTotal``,
kubernetes.io/docs/reference/kubelet-api/stats.v1alpha1). Their PromQL names follow "replace the first / with :, every
other special character with _" (https://cloud.google.com/monitoring/promql/promql-mapping); their labels are the
``k8s_container`` resource's (``cluster_name``, ``namespace_name``, ``pod_name``)."""

POD_NOT_READY = "kube_pod_container_status_ready"
"""Per-container readiness (1: its check passed), the only pod readiness series of GKE's ``POD`` kube state metrics
package (its table: this, ``..._waiting_reason``, ``kube_pod_status_phase``, ``kube_pod_status_unschedulable``;
https://cloud.google.com/stackdriver/docs/solutions/gke/kube-state-metrics, turned on by
:data:`tpu_serving.platform.cluster.MONITORING_COMPONENTS`); ``kube_pod_status_ready`` is not sent. A pod is Ready when every
container is (:func:`~tpu_serving.operations.observability_roles.ready_pods`); one never scheduled has no series, so the alerts
count live pods (:data:`POD_PHASE`) *unless* Ready: a stockout's Pending pod counts."""

POD_PHASE = "kube_pod_status_phase"
"""kube-state-metrics' pod phase, 1 for the pod's current ``phase`` (Pending, Running, Succeeded, Failed, Unknown;
kubernetes/kube-state-metrics docs/metrics/workload/pod-metrics.md, STABLE). A finished pod (Succeeded, Failed: a
completed Job's) keeps Ready=False for as long as it exists, so the not-ready alert counts only pods that should
become ready: those Pending or Running
(https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase)."""

SHOULD_BE_READY_PHASES = "Pending|Running"


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
    generation_tokens: str | None = None
    """Counter (its samples' name, ``..._total``) of the tokens the engine generated, for the stalled-engine alert."""


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
    router_fails_closed: bool = False
    """Whether the pool refuses every request while no picker is Ready (``FailClose``,
    :func:`tpu_serving.traffic.gateway.failure_mode`): its not-ready alert is CRITICAL then, ERROR for a ``FailOpen`` pool,
    whose requests still reach the leaders, unpicked."""
    http_responses: error_rate.HttpResponses | None = None
    """The serving servers' count of HTTP responses by status, for the error-rate alert (None: none counts them)."""
    probe: prober.ProbeTarget | None = None
    """The request the serving probe sends, whose Deployment and alerts the stack gets (None: no probe)."""
    gateway_probe: str | None = None
    """The name of the Gateway's address the probe also goes through (:func:`.prober.through_gateway`; None: it
    does not)."""
    gateway: str | None = None
    """The Gateway's name, whose load balancer's responses the Gateway error-rate alert reads
    (:mod:`tpu_serving.operations.alerts.gateway_alerts`; None: no Gateway)."""
    gateway_timeout_seconds: int = 0
    """The Gateway's request timeout, which the alert on requests near it reads (0: no Gateway)."""
    autoscalers: Sequence[str] = ()
    """Names of the HorizontalPodAutoscalers that set its group counts, whose conditions the autoscaler alert reads
    (:mod:`tpu_serving.operations.alerts.autoscaler_alerts`; none: its groups are fixed)."""
    compute_class: str | None = None
    """The ComputeClass the groups of :attr:`leader_worker_sets` select (a capacity fallback,
    :class:`tpu_serving.pools.compute_class.TpuComputeClass`): their pods unschedulable for ``capacityWaitMinutes`` open the
    capacity-wait ticket (:func:`tpu_serving.operations.alerts.serving_alerts.capacity_wait_alert`; None: no class, no such alert)."""
    fewest_groups: int = 1
    """Groups that take requests the stack is planned to keep Ready (the fixed count, or the autoscaling minimum):
    fewer for longer than the not-ready window fires the below-minimum alert (1: the no-ready alert covers it)."""


# --------------------------------------------------------------------------- one stack


def label_matchers(labels: Mapping[str, str]) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


@dataclass(frozen=True)
class Scope:
    """The series of one stack: its cluster and serving namespace."""

    cluster: str
    namespace: str

    @property
    def scraped(self) -> str:
        """Matchers of series managed collection scraped (target labels ``cluster``, ``namespace``)."""
        return label_matchers({"cluster": self.cluster, "namespace": self.namespace})

    @property
    def containers(self) -> str:
        """Matchers of GKE system metrics of the namespace's containers."""
        return label_matchers(
            {"monitored_resource": "k8s_container", "cluster_name": self.cluster, "namespace_name": self.namespace}
        )


class GatewayAddress(Protocol):
    """The Gateway's address, its name and IP, and the Gateway's own name (a
    :class:`~tpu_serving.traffic.gateway.ServingGateway`)."""

    @property
    def address_name(self) -> str: ...

    @property
    def address(self) -> Input[str]: ...

    @property
    def gateway_name(self) -> str: ...

    @property
    def request_timeout_seconds(self) -> int: ...

    @property
    def listener_port(self) -> int: ...


def through_gateway(metrics: ServingMetrics, gateway: GatewayAddress, port: int | None = None) -> ServingMetrics:
    """``metrics`` with a second serving probe of the same request through the Gateway's address (``gateway``, at its
    listener's port): a PodMonitoring of its own on the prober's pod, whose ``job``
    (:func:`~tpu_serving.common.naming.gateway_prober_name`) keeps its series apart, and its alert
    (:func:`.prober.probe_alerts`); without a probe, only the Gateway's name (its load-balancer alert). ``port``,
    given, must be the listener's (library review 9, M1: the serving port given here pointed the probe where the
    Gateway does not listen, and its CRITICAL page fired on a healthy stack)."""
    if port is not None and port != gateway.listener_port:
        raise ArgumentsError(
            "through_gateway",
            [
                f"port = {port}: the Gateway {gateway.gateway_name} listens on {gateway.listener_port}, where clients "
                "and the probe reach it (the serving port is the pods'); leave port out"
            ],
        )
    port = gateway.listener_port
    probe = metrics.probe
    if probe is None:
        return dataclasses.replace(
            metrics, gateway=gateway.gateway_name, gateway_timeout_seconds=gateway.request_timeout_seconds
        )
    endpoint = prober.scrape_endpoint(probe, prober.gateway_url(probe, gateway.address, port))
    target = ScrapeTarget(
        gateway_prober_name(probe.service), prober.prober_labels(probe), prober.PROBER_PORT, prober.PROBE_PATH, endpoint
    )
    return dataclasses.replace(
        metrics,
        scrape=[*metrics.scrape, target],
        gateway_probe=gateway.address_name,
        gateway=gateway.gateway_name,
        gateway_timeout_seconds=gateway.request_timeout_seconds,
    )


def routed(metrics: ServingMetrics, gateway: ServingGatewayArgs) -> ServingMetrics:
    """``metrics`` with the endpoint picker of ``gateway``'s InferencePool (none: ``metrics`` unchanged): a
    PodMonitoring of its metrics port (a scrape target, which ``Tenancy`` opens to the collectors) and its alerts
    (:func:`.observability_roles.router_alerts`), which read that scrape's ``job`` (library review 7, M1: a router
    named by hand, without its scrape target, was never scraped). Known from the arguments, before the gateway
    exists, so that ``Tenancy`` gets the target too."""
    return with_router(metrics, gateway.epp, gateway.disaggregated) if gateway.settings.inference_pool else metrics


def with_router(metrics: ServingMetrics, epp: str, disaggregated: bool) -> ServingMetrics:
    """``metrics`` with the endpoint picker Deployment ``epp`` (its pods labelled ``app: <epp>``) of a
    ``disaggregated`` pool or not: the one builder of :func:`routed` and of a stack file's watched metrics."""
    target = ScrapeTarget(epp, {"app": epp}, EPP_METRICS_PORT)
    closed = failure_mode(disaggregated) == "FailClose"
    return dataclasses.replace(metrics, scrape=[*metrics.scrape, target], router=epp, router_fails_closed=closed)
