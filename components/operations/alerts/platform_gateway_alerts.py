"""A model stack's alerts on its platform's Gateway: the load balancer that is the model's front door (SRE review:
on the platform layout a Gateway or load-balancer outage paged nobody, and the engines' error rate, which counts only
requests reaching them, read a dead front door as no traffic).

The alerts are :mod:`tpu_serving.operations.alerts.gateway_alerts`' own (the load balancer's 5xx share, the requests near the
timeout), on the Gateway the platform's ``platform`` output names (``gateway.namespace``/``gateway.name``, read
through the model stack's StackReference: an Output, so only the queries and runbooks wait for it), paging the model
stack's own channels under its own titles (``<cluster>/<namespace>: <title>``, :func:`tpu_serving.operations.observability._paged`).
Without a probe through the Gateway (the model stack's probe goes to its Service), there is no ticket on an unread
error rate.

The whole Gateway, not the model's own traffic: the load balancer's series are selected by the URL map's name
(:func:`tpu_serving.operations.alerts.gateway_alerts.url_map_pattern`), and the URL map is the Gateway's, shared by every model
stack's route on it. Selecting one model's backend service instead (a ``backend_target_name`` label, and the name
GKE's Gateway controller gives a route's backend service) was not verified: the searched references (Cloud Load
Balancing's metrics page, https://docs.cloud.google.com/load-balancing/docs/metrics; GKE's "Configure Gateway
resources using Policies", https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources) list
neither the labels of ``loadbalancing.googleapis.com/https/internal/request_count`` nor the backend services'
names, so the alert is shared, and its runbook says so: every model stack on the platform pages its own on-call on
the same outage. The near-timeout ticket holds the whole Gateway's latency to this model's
``gateway.requestTimeoutSeconds``: another model's longer requests on the same Gateway can open it.

Plain data in (and one Output of the Gateway's ``namespace/name``), policy arguments out; no resource here.
"""

import functools
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_gcp as gcp

from ..observability_settings import ObservabilitySettings, Severity
from . import gateway_alerts
from .alert_policies import Alert, alert_policy_args

SHARED = (
    "This alert watches the platform's whole Gateway {gateway}, shared by every model stack's route on it: its "
    "load balancer's series carry the Gateway's URL map, not one model's backend, so every model stack on the "
    "platform fires on the same outage. The Gateway is the platform stack's: its owners fix it, and the platform's "
    "own alert on it pages them (docs/platform.md, Alerts).\n\n"
)
"""What the runbook of each alert says first."""

Found = list[tuple[str, str, str, int, str, str]]


def found(cluster: str, namespace: str, gateway: str, settings: ObservabilitySettings, timeout_seconds: int) -> Found:
    """``(key, title, query, minutes, runbook, severity)`` of the alerts on Gateway ``namespace/gateway`` (no probe
    through it: no unread-rate ticket)."""
    return [
        *gateway_alerts.gateway_alerts(cluster, namespace, gateway, None, settings),
        gateway_alerts.near_timeout_alert(namespace, gateway, timeout_seconds),
    ]


def _split(gateway: str) -> tuple[str, str]:
    namespace, _, name = gateway.partition("/")
    return namespace, name


def _field(i: int, at: int, alerts: Found) -> str:
    return str(alerts[i][at])


def _runbook(i: int, page: Callable[[str], str], resolved: list[Any]) -> str:
    alerts, gateway = resolved
    return page(SHARED.format(gateway=gateway) + _field(i, 4, alerts))


def policies(
    project: str,
    cluster: str,
    gateway: pulumi.Input[str],
    settings: ObservabilitySettings,
    timeout_seconds: int,
    page: Callable[[str], str],
) -> list[tuple[str, gcp.monitoring.AlertPolicyArgs]]:
    """``(key, policy)`` of the alerts on the platform's Gateway ``gateway`` (``<namespace>/<name>``, an Output
    through the StackReference), each runbook first saying the alert is shared, then passed through ``page`` (the
    shared cluster's marks). Keys, titles, durations and severities do not depend on the Gateway's name: read from
    the builders with a stand-in name, so the policies exist before the Output resolves."""
    out: list[tuple[str, gcp.monitoring.AlertPolicyArgs]] = []
    resolved = pulumi.Output.from_input(gateway).apply(lambda g: found(cluster, *_split(g), settings, timeout_seconds))
    named = pulumi.Output.from_input(gateway)
    for i, stand_in in enumerate(found(cluster, "namespace", "gateway", settings, timeout_seconds)):
        alert = Alert(*stand_in[:5], severity=Severity(stand_in[5]))
        policy = alert_policy_args(alert, cluster, settings, project)
        condition = policy.conditions[0].condition_prometheus_query_language
        assert condition is not None  # alert_policy_args' one PromQL condition
        condition.query = resolved.apply(functools.partial(_field, i, 2))
        runbook = pulumi.Output.all(resolved, named).apply(functools.partial(_runbook, i, page))
        policy.documentation = gcp.monitoring.AlertPolicyDocumentationArgs(content=runbook, mime_type="text/markdown")
        out.append((f"platform-{alert.key}", policy))
    return out
