"""The alert policies of a serving stack: which alerts its signals allow, each with a severity, and the Cloud
Monitoring policy of each, notifying the channels of its severity.

Every alert has a PromQL condition (Cloud Monitoring's ``conditionPrometheusQueryLanguage``) and a severity
(:class:`~tpu_serving.operations.observability_settings.Severity`): CRITICAL and ERROR page (``notificationChannels``),
WARNING goes to ``ticketChannels``. The builders of each family live in their own modules (the roles', the
controllers', the job's, the error rate's, :mod:`tpu_serving.operations.alerts.serving_alerts`); this module picks them for a stack.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi_gcp as gcp

from ...common.naming import label_name
from ...platform.controllers import WatchedDeployment
from .. import observability_roles as roles_
from .. import prober
from ..observability_settings import ObservabilitySettings, Severity
from ..serving_metrics import (
    POD_NOT_READY,
    POD_PHASE,
    SHOULD_BE_READY_PHASES,
    TPU_DUTY_CYCLE,
    Scope,
    ServingMetrics,
)
from . import autoscaler_alerts, controller_alerts, error_rate, gateway_alerts, job_alerts, serving_alerts

KUBE = (POD_NOT_READY, POD_PHASE, SHOULD_BE_READY_PHASES)
"""kube-state-metrics' readiness and phase series, and the phases that should become ready."""


@dataclass(frozen=True)
class Alert:
    """An alert policy with one PromQL condition, what to do when it fires, and how loud it is."""

    key: str
    """Short name: the policy's resource name suffix; its ``alert_rule`` is the same as a label name."""
    title: str
    query: str
    minutes: int
    runbook: str
    severity: Severity
    """The policy's ``severity`` (pulumi-gcp 10.2.0 monitoring/alert_policy.py l.74-80), which also picks its
    channels (:meth:`ObservabilitySettings.channels`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))


def _alert(found: tuple[str, str, str, int, str, str]) -> Alert:
    return Alert(*found[:5], severity=Severity(found[5]))


def _not_ready(scope: Scope, settings: ObservabilitySettings) -> Alert:
    minutes = settings.not_ready_minutes
    return Alert(
        "not-ready",
        "Serving pods not ready",
        roles_.namespace_not_ready_query(scope.cluster, scope.namespace, KUBE),
        minutes,
        f"A pod of namespace {scope.namespace} has not been ready for {minutes} minutes. Find it (`kubectl -n "
        f"{scope.namespace} get pods`), read its events and logs; a pending group waits for a whole slice, a failing "
        "probe for the model to load.",
        Severity.WARNING,
    )


def _queue_alerts(
    scope: Scope, metrics: ServingMetrics, settings: ObservabilitySettings, leaders: str | None
) -> list[Alert]:
    """The backlog (WARNING) and TPUs-idle-while-requests-wait (ERROR) alerts, on a server's queue gauge."""
    waiting = metrics.signals.requests_waiting if metrics.signals else None
    if not waiting:
        return []
    duty = TPU_DUTY_CYCLE + scope.containers
    threshold, minutes = settings.backlog_threshold, settings.backlog_minutes
    return [
        Alert(
            "backlog",
            "Serving queue backlog high",
            f"sum({waiting}{scope.scraped}) > {threshold:g}",
            minutes,
            f"More than {threshold:g} requests have waited for {minutes} minutes: the replicas are saturated. Add "
            "replicas (slices) or shed load; check the dashboard's time to first token.",
            Severity.WARNING,
        ),
        Alert(
            "tpu-idle",
            "TPUs idle while requests wait",
            roles_.idle_query(duty, waiting + scope.scraped, leaders, settings, metrics.roles),
            settings.idle_minutes,
            f"Requests wait but a group's TPUs ran under {settings.idle_duty_cycle_percent:g}% of the time for "
            f"{settings.idle_minutes} minutes (label group: its leader pod): the engine is stuck (compiling, a hung "
            "Ray or Pathways worker). Read the leader's logs; restart the group (delete its leader pod).",
            Severity.ERROR,
        ),
    ]


def alerts(scope: Scope, metrics: ServingMetrics, settings: ObservabilitySettings) -> list[Alert]:
    """The alert policies whose signals the backend has."""
    cluster, namespace = scope.cluster, scope.namespace
    leaders = roles_.leader_pods(metrics.serves, metrics.leader_pods, metrics.leader_worker_sets)
    found: list[tuple[str, str, str, int, str, str]] = []
    if leaders is not None:
        minutes = settings.no_ready_leader_minutes
        found.append(roles_.no_ready_leader_alert(cluster, namespace, leaders, minutes, POD_NOT_READY))
        found += serving_alerts.leader_alerts(scope, leaders, metrics, settings)
    if stuck := autoscaler_alerts.autoscaler_alert(cluster, namespace, metrics.autoscalers, settings):
        found.append(stuck)
    out = [_alert(a) for a in found]
    if metrics.serves:
        out.append(_not_ready(scope, settings))
    if metrics.job_pods is not None:
        out.append(
            _alert(job_alerts.not_running_alert(cluster, namespace, metrics.job_pods, settings.not_ready_minutes))
        )
    out += _queue_alerts(scope, metrics, settings, leaders)
    if slow := serving_alerts.slow_first_token_alert(scope, metrics, settings):
        out.append(_alert(slow))
    if metrics.http_responses is not None:
        out.append(_alert(error_rate.error_rate_alert(cluster, namespace, metrics.http_responses, settings)))
    out += [_alert(a) for a in prober.probe_alerts(cluster, namespace, metrics.probe, settings, metrics.gateway_probe)]
    if metrics.gateway is not None:
        service = metrics.probe.service if metrics.probe is not None else None
        found_gateway = gateway_alerts.gateway_alerts(cluster, namespace, metrics.gateway, service, settings)
        found_gateway.append(
            gateway_alerts.near_timeout_alert(namespace, metrics.gateway, metrics.gateway_timeout_seconds)
        )
        out += [_alert(a) for a in found_gateway]
    out += [_alert(a) for r in metrics.roles for a in roles_.alerts(cluster, namespace, r, settings, KUBE)]
    minutes = settings.no_ready_leader_minutes
    router = roles_.router_alerts(
        cluster, namespace, metrics.router, minutes, POD_NOT_READY, metrics.router_fails_closed
    )
    return out + [_alert(a) for a in router]


def controller_policies(
    cluster: str, controllers: tuple[WatchedDeployment, ...], settings: ObservabilitySettings
) -> list[Alert]:
    """The alert on the controllers the serving relies on (:mod:`tpu_serving.operations.alerts.controller_alerts`)."""
    return [_alert(a) for a in controller_alerts.controller_alerts(cluster, controllers, settings)]


def alert_policy_args(
    alert: Alert, stack: str, settings: ObservabilitySettings, project: str
) -> gcp.monitoring.AlertPolicyArgs:
    """One alert policy: its PromQL condition held for the alert's minutes, its runbook, its severity and the
    channels of its severity."""
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
        notification_channels=settings.channels(alert.severity),
        severity=alert.severity.value,
    )


def log_match_policy_args(
    project: str,
    display_name: str,
    log_filter: str,
    rate_limit_seconds: int,
    runbook: str,
    severity: Severity,
    channels: list[str],
    labels: Mapping[str, str] | None = None,
) -> gcp.monitoring.AlertPolicyArgs:
    """A policy with one log-match condition on ``log_filter`` (a Logging filter, not PromQL), named ``display_name``
    (``<stack>: <title>``, the condition takes the title), notified at most once per ``rate_limit_seconds``, which
    Cloud Monitoring requires of such a policy (pulumi-gcp 10.2.0 monitoring/_inputs.py,
    ``AlertPolicyAlertStrategyArgs.notification_rate_limit``: "Required for alert policies with a LogMatch
    condition")."""
    return gcp.monitoring.AlertPolicyArgs(
        project=project,
        display_name=display_name,
        combiner="OR",
        conditions=[
            gcp.monitoring.AlertPolicyConditionArgs(
                display_name=display_name.split(": ", 1)[-1],
                condition_matched_log=gcp.monitoring.AlertPolicyConditionConditionMatchedLogArgs(filter=log_filter),
            )
        ],
        alert_strategy=gcp.monitoring.AlertPolicyAlertStrategyArgs(
            notification_rate_limit=gcp.monitoring.AlertPolicyAlertStrategyNotificationRateLimitArgs(
                period=f"{rate_limit_seconds}s"
            )
        ),
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(content=runbook, mime_type="text/markdown"),
        notification_channels=channels,
        severity=severity.value,
        user_labels=dict(labels) if labels else None,
    )
