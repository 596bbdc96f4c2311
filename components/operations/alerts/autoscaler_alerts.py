"""The alert on a serving autoscaler that cannot scale: a HorizontalPodAutoscaler whose controller can read no metric
or cannot reach its target's scale.

The HPA controller writes ``currentReplicas`` whether or not it can read a metric; while it cannot, it holds the
group count where it is (k8s.io/kubernetes v1.36.3 pkg/controller/podautoscaler/horizontal.go: ``ScalingActive``
False with ``FailedGet<Type>Metric`` l.480-587 and l.1143-1150, ``AbleToScale`` False with ``FailedGetScale``). A
broken link anywhere on the metric's way (the engine's gauge, the PodMonitoring, Managed Prometheus, the Custom
Metrics Stackdriver Adapter, its Workload Identity grant) leaves the stack at its minimum under any load, silently:
the queue alert sees the load only once it has piled up, and nothing says why (GKE review round 43, M2).

The condition reads kube-state-metrics' ``kube_horizontalpodautoscaler_status_condition`` (labels ``namespace``,
``horizontalpodautoscaler``, ``condition``, ``status``; one series per condition and status, 1 for the status the
condition has: kubernetes/kube-state-metrics internal/store/horizontalpodautoscaler.go ``hpaMetricFamilies`` and
``wrapHPAFunc``), which GKE sends with the ``HPA`` kube state metrics package
(:data:`tpu_serving.platform.cluster.MONITORING_COMPONENTS`): GKE "Collect and view kube state metrics"
(https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics, last updated 2026-04-10), "Table of HPA
metrics": ``kube_horizontalpodautoscaler_status_condition``, labels ``condition``, ``horizontalpodautoscaler``,
``namespace``, ``status``; its sample queries: "The condition AbleToScale and a status of false indicates that the HPA
is encountering issues fetching or updating scales", "The condition ScalingActive and a status of false indicates
that the HPA is disabled or is unable to calculate a new scale". An HPA whose ``ScalingActive`` series is missing fires it too (``absent``): a cluster that does not
send the package (an existing cluster's platform may not) leaves the autoscaler unwatched, which is said, not hidden.

Plain data in, plain data out, like :mod:`tpu_serving.operations.alerts.controller_alerts`.
"""

from collections.abc import Sequence

from ..observability_roles import name_literal
from ..observability_settings import ObservabilitySettings
from .page_steps import step

KEY = "autoscaler-stuck"
TITLE = "Serving autoscaler cannot scale"
SEVERITY = "WARNING"
"""The groups keep serving at their current count, which the below-minimum and backlog alerts watch: a ticket to
mend the metric's way before the load needs the next group."""
METRIC = "kube_horizontalpodautoscaler_status_condition"
CONDITIONS = ("ScalingActive", "AbleToScale")
"""The HPA conditions whose ``False`` means it cannot scale: no metric read (``ScalingActive``), no scale reached
(``AbleToScale``). ``ScalingLimited`` True is the bounds at work, not a fault."""


def autoscaler_query(cluster: str, namespace: str, autoscalers: Sequence[str]) -> str:
    """Each HPA's ``ScalingActive`` or ``AbleToScale`` condition False, or its ``ScalingActive`` series missing."""
    names = "|".join(name_literal(n) for n in autoscalers)
    where = f'cluster="{cluster}", namespace="{namespace}", horizontalpodautoscaler=~"{names}"'
    conditions = "|".join(CONDITIONS)
    failing = f'max by (horizontalpodautoscaler) ({METRIC}{{{where}, condition=~"{conditions}", status="false"}}) > 0'
    missing = " or ".join(
        f'absent({METRIC}{{cluster="{cluster}", namespace="{namespace}", horizontalpodautoscaler="{name_literal(n)}", '
        'condition="ScalingActive"})'
        for n in autoscalers
    )
    return f"{failing} or {missing}"


def autoscaler_alert(
    cluster: str, namespace: str, autoscalers: Sequence[str], settings: ObservabilitySettings
) -> tuple[str, str, str, int, str, str] | None:
    """``(key, title, query, minutes, runbook, severity)`` of the alert (an
    :class:`~tpu_serving.operations.alerts.alert_policies.Alert`), held ``observability.autoscalerStuckMinutes``; None without an
    autoscaler."""
    if not autoscalers:
        return None
    minutes = settings.autoscaler_stuck_minutes
    names = ", ".join(autoscalers)
    runbook = (
        f"A HorizontalPodAutoscaler of namespace {namespace} ({names}) has not been able to scale for {minutes} "
        "minutes: it reads no metric (condition ScalingActive False) or cannot reach its target's scale "
        "(AbleToScale False), or its condition is not reported at all (the cluster's HPA kube state metrics "
        "package is off). It holds the group count where it is, whatever the load. Read why: `kubectl -n "
        f"{namespace} describe hpa` (the conditions' reason and message). FailedGetPodsMetric: check that the "
        "engine's gauge is scraped (the metrics-missing alert, the PodMonitorings), that the metrics adapter runs "
        f"({step('kubectl -n custom-metrics get pods', admin=True)}; "
        f"{step('kubectl get apiservice v1beta1.custom.metrics.k8s.io', admin=True)}) and that its "
        "Kubernetes service account still holds roles/monitoring.viewer through Workload Identity."
    )
    query = autoscaler_query(cluster, namespace, autoscalers)
    return KEY, TITLE, query, minutes, runbook, SEVERITY
