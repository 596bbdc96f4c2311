"""The alert on the controllers a serving stack relies on: no available replica of a controller's Deployment.

A LeaderWorkerSet or JobSet whose controller is down keeps its running groups, but nothing recreates a failed group,
rolls out or scales, and the controller's webhooks, which fail closed, refuse every new pod of a group (LWS's pod
webhook ``mpod.kb.io``, JobSet's: :class:`tpu_serving.platform.controllers.Availability`). The serving alerts see that only
once pods are gone. The condition reads kube state metrics' ``kube_deployment_status_replicas_available`` (the GKE
package ``DEPLOYMENT``, :data:`tpu_serving.platform.cluster.MONITORING_COMPONENTS`; the metric as kube-state-metrics names it,
kubernetes/kube-state-metrics v2.13.0 docs/metrics/workload/deployment-metrics.md; GKE writes the open-source names,
https://cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics, "Metric format"). A Deployment that was
deleted has no series and is not seen: its absence shows in the stack's own pods.

Plain data in, plain data out, like :mod:`tpu_serving.operations.alerts.error_rate`.
"""

from collections.abc import Sequence

from ...platform.controllers import WatchedDeployment
from ..observability_roles import name_literal
from ..observability_settings import ObservabilitySettings
from .page_steps import step

KEY = "controller-unavailable"
TITLE = "Serving controller unavailable"
SEVERITY = "ERROR"
"""Serving goes on, but a lost group is not recreated and no rollout or scale proceeds: an error to act on now,
below the CRITICAL of a stack that serves nothing (the no-ready alert)."""
METRIC = "kube_deployment_status_replicas_available"


def controller_query(cluster: str, deployments: Sequence[WatchedDeployment]) -> str:
    """Each watched Deployment's available replicas, below one; or its series missing (the Deployment deleted, or not
    reported), which would otherwise leave the condition with nothing to compare (SRE review round 40, m7). ``absent``
    answers 1 with its selector's equality labels (Prometheus "Query functions", absent())."""
    selectors = [
        f'{METRIC}{{cluster="{cluster}", namespace="{name_literal(d.namespace)}", deployment="{name_literal(d.name)}"}}'
        for d in deployments
    ]
    missing = " or ".join(f"absent({s})" for s in selectors)
    return f"max by (namespace, deployment) ({' or '.join(selectors)}) < 1 or {missing}"


def controller_alert(
    cluster: str, deployments: Sequence[WatchedDeployment], minutes: int
) -> tuple[str, str, str, int, str, str]:
    """``(key, title, query, minutes, runbook, severity)`` of the alert (an
    :class:`~tpu_serving.operations.observability.Alert`)."""
    names = ", ".join(f"{d.controller} ({d.namespace}/{d.name})" for d in deployments)
    steps = "; ".join(
        f"{step(f'kubectl -n {d.namespace} describe deployment {d.name}', admin=True)}, "
        f"{step(f'kubectl -n {d.namespace} describe pods', admin=True)}"
        for d in deployments
    )
    runbook = (
        f"No replica of a controller the serving relies on has been available for {minutes} minutes: {names}. "
        "Running groups keep serving, but a failed group is not recreated, a rollout or a scale does not proceed, "
        "and the controller's webhooks refuse the new pods of a group. Look at its Deployment's conditions and its "
        f"pods' events (a node drain, an image pull, a crash): {steps}."
    )
    return KEY, TITLE, controller_query(cluster, deployments), minutes, runbook, SEVERITY


def controller_alerts(
    cluster: str, deployments: Sequence[WatchedDeployment], settings: ObservabilitySettings
) -> list[tuple[str, str, str, int, str, str]]:
    """The controller alert, held ``observability.controllerUnavailableMinutes``, when the stack relies on any
    controller's Deployment (none otherwise)."""
    minutes = settings.controller_unavailable_minutes
    return [controller_alert(cluster, deployments, minutes)] if deployments else []
