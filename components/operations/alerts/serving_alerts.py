"""Alerts on the pods that take requests (the leaders) beyond "none is Ready": an engine that stopped generating, a
leader whose metrics stopped arriving, and fewer Ready groups than planned.

- **Stalled engine** (ERROR): a leader with requests running or waiting whose token counter has not grown for
  ``stalledMinutes``. vLLM's ``/health`` answers 200 while its engine loop is frozen (vllm-project/vllm PR #36451,
  "/health returns 200 even when EngineCore's busy loop is completely frozen", open at vLLM 0.29), so neither
  liveness nor readiness notices; the queue gauges the endpoint picker reads freeze with it.
- **Metrics missing** (WARNING): a Ready leader none of whose engine series was ingested for
  ``metricsMissingMinutes``. The autoscaler's metric and the queue, error-rate and stalled alerts read those series:
  a broken scrape (a NetworkPolicy, a PodMonitoring, the collector) leaves them quiet, not firing.
- **Capacity reduced** (WARNING): the same count below plan for ``capacityReducedMinutes`` (10): a group lost and
  reloading, which the group-recreated alert misses when the leader pod itself went.
- **Waiting for capacity** (WARNING): with a capacity fallback, a pod of the groups unschedulable for
  ``capacityWaitMinutes``: no step of the serving's ComputeClass had a slice for its group, whose pool starts empty
  (:func:`tpu_serving.catalog.capacity.fallback`), so it waits where a fixed pool would have failed ``pulumi up``.
- **Below the planned groups** (ERROR): fewer Ready leaders than the fixed count or the autoscaling minimum for
  the not-ready window. A group whose pods cannot be created (the LWS webhook refusing them, a quota) has no pod,
  so the not-ready alert, which counts pods, does not see it; a group that reloads after a node event is back
  within the startup window, which the not-ready window exceeds.

Plain builders: each returns ``(key, title, PromQL, minutes, runbook, severity)``.
"""

from .. import observability_roles as roles_
from ..observability_settings import ObservabilitySettings
from ..serving_metrics import POD_NOT_READY, Scope, ServingMetrics
from .page_steps import step

Found = tuple[str, str, str, int, str, str]


def _engine_gauge(metrics: ServingMetrics) -> str | None:
    """The server's gauge whose series show its engine is scraped: requests running, else waiting (None: neither)."""
    s = metrics.signals
    return (s.requests_running or s.requests_waiting) if s is not None else None


def _ready_leaders(scope: Scope, leaders: str) -> str:
    """The Ready leader pods (kube-state-metrics), by namespace and pod."""
    return roles_.ready_pods(
        POD_NOT_READY, f'cluster="{scope.cluster}", namespace="{scope.namespace}", pod=~"{leaders}"'
    )


def serving_leaders(scope: Scope, leaders: str, metrics: ServingMetrics, settings: ObservabilitySettings) -> str:
    """The Ready leaders whose engine gauge was ingested within :func:`served_window` (the Ready leaders alone when the
    server exports no gauge). A VM that goes silent keeps its pod's containers ready in kube-state-metrics: the node
    lifecycle controller sets only the pod's ``Ready`` condition False (k8s.io/kubernetes v1.36.3
    pkg/controller/util/node/controller_utils.go ``MarkPodsNotReady``), and the pod then waits Terminating for a
    kubelet that never answers, its ``kube_pod_container_status_ready`` still 1, until GKE repairs the VM. Its
    collector went silent with it, so its engine series stop: counting them sees the group gone (SRE review round 44,
    M1)."""
    ready = _ready_leaders(scope, leaders)
    gauge = _engine_gauge(metrics)
    if gauge is None:
        return ready
    return roles_.ingested(ready, gauge, scope.scraped, roles_.served_window(settings))


def stalled_alert(scope: Scope, metrics: ServingMetrics, settings: ObservabilitySettings) -> Found | None:
    """The stalled-engine alert on the scraped leaders (None: the server exports no queue or no token counter)."""
    s = metrics.signals
    if s is None or not (s.requests_running and s.requests_waiting and s.generation_tokens):
        return None
    minutes = settings.stalled_minutes
    query = roles_.stalled_pods(scope.scraped, (s.requests_running, s.requests_waiting), s.generation_tokens, minutes)
    runbook = (
        f"A leader of namespace {scope.namespace} (label pod) has had requests in flight for {minutes} minutes "
        "without generating a token: its engine is wedged (a hung Ray worker or collective, a frozen engine loop) "
        "while /health still answers, and the picker may keep choosing it. Its liveness probe "
        "(serving.probes.stallSeconds) restarts it once the stall outlasts its window and failure threshold; sooner: "
        f"read its logs (`kubectl -n {scope.namespace} logs <pod>`), then recreate its group: delete the leader pod."
    )
    return "stalled", "Serving engine stalled", query, roles_.STALLED_HOLD_MINUTES, runbook, "ERROR"


def metrics_missing_alert(
    scope: Scope, leaders: str, metrics: ServingMetrics, settings: ObservabilitySettings
) -> Found | None:
    """Ready leaders (kube-state-metrics) with no series of the engine's gauge scraped (None: the server exports no
    gauge). Scraped series carry the target's ``pod`` label (PodMonitoring v0.17.2 ``targetLabels.metadata``
    default), kube-state-metrics' series the pod's name in ``pod``."""
    gauge = _engine_gauge(metrics)
    if gauge is None:
        return None
    minutes = settings.metrics_missing_minutes
    ready = _ready_leaders(scope, leaders)
    query = f"count({ready} unless on(pod) count by (pod) ({gauge}{scope.scraped})) > 0"
    runbook = (
        f"A Ready leader of namespace {scope.namespace} has had none of its engine's series ({gauge}) ingested for "
        f"{minutes} minutes: the autoscaler cannot scale on it, and the queue, error-rate and stalled alerts are "
        "blind to it. First: is its node NotReady and the pod Terminating (`kubectl get nodes`; `kubectl -n "
        f"{scope.namespace} get pods -o wide`)? Then its VM went silent, the group is lost until GKE repairs the VM, "
        "and the capacity-reduced ticket counts it. Otherwise check the PodMonitorings (`kubectl -n "
        f"{scope.namespace} get podmonitorings`, their status), the NetworkPolicy that admits the gmp-system "
        f"collectors, and the collector's logs ({step('kubectl -n gmp-system logs -l app.kubernetes.io/name=collector', admin=True)})."
    )
    return "metrics-missing", "Serving metrics missing", query, minutes, runbook, "WARNING"


def below_minimum_alert(
    scope: Scope, leaders: str, metrics: ServingMetrics, settings: ObservabilitySettings
) -> Found | None:
    """Fewer serving leaders (:func:`serving_leaders`) than :attr:`ServingMetrics.fewest_groups` for the not-ready
    window (None: one group is planned, and the no-ready alert covers losing it)."""
    fewest = metrics.fewest_groups
    if fewest <= 1:
        return None
    minutes = settings.not_ready_minutes
    query = f"(count({serving_leaders(scope, leaders, metrics, settings)}) or vector(0)) < {fewest}"
    runbook = (
        f"Fewer than {fewest} groups of namespace {scope.namespace} have had a Ready leader whose engine is scraped "
        f"for {minutes} minutes, longer than a group takes to reload: the stack serves with less capacity and less "
        f"redundancy than planned, and one more loss may stop it. Which group: `kubectl -n {scope.namespace} get pods "
        "-o wide`; a leader on a VM that went silent (`kubectl get nodes`: NotReady; its pods Terminating) waits for "
        "GKE's auto-repair of the VM (the pool's operations: gcloud container operations list); a "
        "group with no pods at all is refused by its controller (`kubectl -n "
        f"{scope.namespace} get events`; the LeaderWorkerSet's conditions; the controller alert) or waits for a "
        "slice (a stockout: the pool's events and the cluster autoscaler's)."
    )
    return "below-minimum", "Serving groups below minimum", query, minutes, runbook, "ERROR"


def capacity_reduced_alert(
    scope: Scope, leaders: str, metrics: ServingMetrics, settings: ObservabilitySettings
) -> Found | None:
    """Fewer Ready leaders than :attr:`ServingMetrics.fewest_groups` for ``capacityReducedMinutes``, a ticket (None:
    one group is planned). The group-recreated alert counts the controller's ``RecreateGroup`` events, which LWS
    records only when it deletes the leader itself: "if the leader pod is being deleted, we don't need to send
    deletion requests" returns before the event (lws v0.10.0 pkg/controllers/pod_controller.go l.254-257, the event at
    l.264, ``handleRestartPolicy``). A leader evicted, lost with its node, repaired or upgraded away, every pod of a
    single-host group, goes without one (SRE review round 43, M1); this alert sees the count of serving leaders
    (:func:`serving_leaders`) instead."""
    fewest = metrics.fewest_groups
    if fewest <= 1:
        return None
    minutes = settings.capacity_reduced_minutes
    query = f"(count({serving_leaders(scope, leaders, metrics, settings)}) or vector(0)) < {fewest}"
    runbook = (
        f"Fewer than {fewest} groups of namespace {scope.namespace} have had a Ready leader whose engine is scraped "
        f"for {minutes} minutes: a group was lost (a node, a VM gone silent and waiting for GKE's repair, TPU host "
        "maintenance, an upgrade, a recreation) and reloads, or the "
        "stack's first groups still load. The others carry its requests; one more loss may stop the service. "
        f"Which group: `kubectl -n {scope.namespace} get pods -o wide`. It pages (below minimum, ERROR) if the group "
        "is not back within the not-ready window."
    )
    return "capacity-reduced", "Serving capacity reduced", query, minutes, runbook, "WARNING"


def slow_first_token_alert(scope: Scope, metrics: ServingMetrics, settings: ObservabilitySettings) -> Found | None:
    """The 95th percentile of the time to first token, over five minutes of the scraped servers' histogram, above
    ``firstTokenSeconds`` for ``firstTokenMinutes``: a page (None: the server exports no such histogram). The queue and
    slow-probe alerts are tickets, and the below-minimum page waits for the not-ready window; clients waiting this
    long are the SLO itself (SRE review round 44, M3). With no request in the window the quantile is empty and the
    alert quiet; the readiness probes' one-token completions count among the requests."""
    s = metrics.signals
    if s is None or not s.time_to_first_token:
        return None
    limit, minutes = settings.first_token_seconds, settings.first_token_minutes
    buckets = f"{s.time_to_first_token}_bucket{scope.scraped}"
    query = f"histogram_quantile(0.95, sum by (le) (rate({buckets}[5m]))) > {limit:g}"
    runbook = (
        f"The 95th percentile of the time to first token of namespace {scope.namespace} has stayed above {limit:g} s "
        f"for {minutes} minutes: clients wait. Saturated groups (the queue backlog ticket; fewer groups than planned: "
        "the capacity-reduced ticket; the HPA at its maximum or unable to scale: the autoscaler ticket) or a slow "
        "engine (one group's TPUs idle while requests wait; a recompilation after a rollout). Add slices or shed "
        f"load; `kubectl -n {scope.namespace} get hpa,pods -o wide`."
    )
    return "slow-first-token", "Serving time to first token high", query, minutes, runbook, "ERROR"


POD_UNSCHEDULABLE = "kube_pod_status_unschedulable"
"""1 for a pod whose ``PodScheduled`` condition is False, no series otherwise (kubernetes/kube-state-metrics
internal/store/pod.go ``createPodStatusUnschedulableFamilyGenerator``, STABLE; labels ``namespace``, ``pod``, ``uid``),
a series of GKE's ``POD`` kube state metrics package (:data:`tpu_serving.operations.serving_metrics.POD_NOT_READY`'s source). The
scheduler sets the condition False, reason Unschedulable, for a pod no node fits, as every pod of a group waiting for
its slice (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-conditions)."""


CAPACITY_WAIT = "capacity-wait"
"""The capacity-wait alert's key: its policy's name suffix and, as a label name, its ``alertRule``
(:func:`tpu_serving.operations.alerts.alert_policies.alert_policy_args`), by which a plan's reader finds its wait
(:func:`tpu_serving_tools.runtime.node_pool.capacity_wait_minutes`)."""


def capacity_wait_alert(scope: Scope, metrics: ServingMetrics, settings: ObservabilitySettings) -> Found | None:
    """A pod of the groups of :attr:`ServingMetrics.leader_worker_sets` (a leader ``<lws>-<group>`` or a worker
    ``<lws>-<group>-<worker>``, :func:`tpu_serving.operations.observability_roles.leader_pods`) unschedulable for
    ``capacityWaitMinutes``: a WARNING (None: no capacity fallback). The groups' pool starts empty and GKE answers a
    stockout by the class's next step, so a pod unschedulable that long means no step had a slice; the below-minimum
    and no-ready alerts page if the groups the plan keeps are missing meanwhile."""
    if metrics.compute_class is None or not metrics.leader_worker_sets:
        return None
    names = "|".join(roles_.name_literal(n) for n in metrics.leader_worker_sets)
    pods = f"({names})-[0-9]+(-[0-9]+)?"
    minutes = settings.capacity_wait_minutes
    where = f'cluster="{scope.cluster}", namespace="{scope.namespace}", pod=~"{pods}"'
    query = f"sum({POD_UNSCHEDULABLE}{{{where}}}) > 0"
    others = (
        "the stack keeps one group, so while it waits nothing serves and the no-ready alert fires"
        if metrics.fewest_groups <= 1
        else "the groups already placed serve"
    )  # SRE review of the capacity fallback, M3: "the other groups serve" on a one-group stack
    runbook = (
        f"A pod of a serving group of namespace {scope.namespace} has been unschedulable for {minutes} minutes: no "
        f"step of ComputeClass {metrics.compute_class} had a whole slice for its group, which waits; {others}. "
        f"Why: `kubectl -n {scope.namespace} describe pod <pod>` (its FailedScheduling and the cluster "
        "autoscaler's NotTriggerScaleUp events) and the autoscaler's visibility logs in Cloud Logging "
        '(logName="projects/<project>/logs/container.googleapis.com%2Fcluster-autoscaler-visibility": noScaleUp, '
        "scale.up.error.out.of.resources, quota). It clears by itself once the zone has capacity; to serve sooner: "
        "preemptible TPU quota in the region for the Spot and flex-start steps; a step serving.fallback lacks, if GKE "
        "offers it for the shape (flex-start: single-host slices only, the preview refuses the rest). A reservation "
        "(capacity: reservation) or the slice kind in another zone is a change of the stack, whose groups are pinned "
        "to their slices' zones (docs/operate.md, 'A group on a fallback slice')."
    )
    return CAPACITY_WAIT, "Serving groups waiting for capacity", query, minutes, runbook, "WARNING"


def leader_alerts(scope: Scope, leaders: str, metrics: ServingMetrics, settings: ObservabilitySettings) -> list[Found]:
    """The alerts of this module that the backend's signals and plan allow."""
    found = (
        stalled_alert(scope, metrics, settings),
        metrics_missing_alert(scope, leaders, metrics, settings),
        capacity_reduced_alert(scope, leaders, metrics, settings),
        below_minimum_alert(scope, leaders, metrics, settings),
        capacity_wait_alert(scope, metrics, settings),
    )
    return [a for a in found if a is not None]
