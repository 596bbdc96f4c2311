"""The alert on a serving stack's server errors: the share of its HTTP responses that are 5xx, which
:class:`~tpu_serving.operations.observability.Observability` creates when the backend's server counts its responses by status
(:attr:`~tpu_serving.operations.observability.ServingMetrics.http_responses`).

Pods can all be Ready while every request fails (an engine that answers its health check but fails requests): no
readiness alert sees that, only the responses do. The alert reads the server's own counter, as Managed Service for
Prometheus scraped it from the stack's PodMonitorings (the ``job`` label is the PodMonitoring's name:
GoogleCloudPlatform/prometheus-engine v0.17.2 pkg/operator/apis/monitoring/v1/pod_config.go l.180-190), so it fires
on the errors the engines return. Errors the load balancer returns
itself (no healthy backend, a connection the backend closed) never reach an engine: the no-ready alerts cover the
first; the load balancer's own request count (Cloud Monitoring's ``loadbalancing.googleapis.com/https/internal/
request_count``) is not read, since its series are named after the URL map and forwarding rule GKE's Gateway
controller creates and names, which the stack does not know (docs/operate.md).

Plain data in, plain data out, like :mod:`tpu_serving.operations.alerts.job_alerts`.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from ..observability_roles import name_literal
from ..observability_settings import ObservabilitySettings

KEY = "error-rate"
TITLE = "Serving error rate high"
SEVERITY = "ERROR"
"""Clients get errors now: above the WARNING of a capacity loss (:mod:`tpu_serving.operations.group_recreations`), and ERROR,
not CRITICAL, since part of the traffic may still succeed (the no-ready alert is the page for a stack that serves
nothing)."""
WINDOW_MINUTES = 5
"""The window the share is computed over (``rate(...[5m])``): long enough that a few failed requests among a few
dozen do not swing it, short enough that a real outage shows within it, as the endpoint picker's error alert."""


@dataclass(frozen=True)
class HttpResponses:
    """A server's counter of HTTP responses by status, and the PodMonitorings that scrape it."""

    server: str
    """What answers, for the runbook (``vLLM's OpenAI-compatible server``)."""
    metric: str
    """The counter's samples' name (``http_requests_total``)."""
    status_label: str
    """Its label holding the response's status (``status``)."""
    server_errors: str
    """RE2 pattern of that label's values that are server errors (``5xx``: codes grouped by class)."""
    jobs: Sequence[str] = ()
    """Names of the PodMonitorings that scrape the servers (the ``job`` label of their series)."""


def error_rate_query(cluster: str, namespace: str, responses: HttpResponses, settings: ObservabilitySettings) -> str:
    """The share of the servers' responses over :data:`WINDOW_MINUTES` that are server errors, above
    ``observability.errorRatePercent``, while they answer at least ``observability.errorRateMinRequestsPerMinute``.
    With no traffic the share is 0/0 (NaN, which compares false) and the guard is false too, so an idle stack stays
    quiet; with no error series yet (a counter's labels exist only once counted) the ratio is empty, so quiet too."""
    jobs = "|".join(name_literal(j) for j in responses.jobs)
    where = f'cluster="{cluster}", namespace="{namespace}", job=~"{jobs}"'
    window = f"[{WINDOW_MINUTES}m]"
    total = f"sum(rate({responses.metric}{{{where}}}{window}))"
    errors = f'sum(rate({responses.metric}{{{where}, {responses.status_label}=~"{responses.server_errors}"}}{window}))'
    ratio, least = settings.error_rate_percent / 100, settings.error_rate_min_requests_per_minute
    return f"(({errors} / {total}) > {ratio:g}) and on() (({total} * 60) >= {least:g})"


def error_rate_alert(
    cluster: str, namespace: str, responses: HttpResponses, settings: ObservabilitySettings
) -> tuple[str, str, str, int, str, str]:
    """``(key, title, query, minutes, runbook, severity)`` of the alert (an
    :class:`~tpu_serving.operations.observability.Alert`)."""
    minutes, percent = settings.error_rate_minutes, settings.error_rate_percent
    jobs = "|".join(responses.jobs)
    runbook = (
        f"More than {percent:g}% of the responses of {responses.server} in namespace {namespace} were server errors "
        f"(5xx) over {WINDOW_MINUTES} minutes, for {minutes} minutes: clients get errors, though the pods may all be "
        f'Ready. Which pods: sum by (pod) (rate({responses.metric}{{namespace="{namespace}", job=~"{jobs}", '
        f'{responses.status_label}=~"{responses.server_errors}"}}[5m])) in Metrics Explorer. Read their logs '
        f"(`kubectl -n {namespace} logs <pod>`) for the engine's error; a group whose engine keeps failing is "
        "recreated by deleting its leader pod; after a rollout, roll back: restore the previous stack file and run "
        "pulumi up (docs/upgrade.md, Rolling back; with serving.canaryGroups set only the canary's groups moved, the "
        "others still serve the old revision)."
    )
    return KEY, TITLE, error_rate_query(cluster, namespace, responses, settings), minutes, runbook, SEVERITY
