"""The alerts on what clients of a stack's Gateway get: the load balancer's own server errors, which no engine counts.

The engines' error-rate alert (:mod:`tpu_serving.operations.alerts.error_rate`) reads the servers' own counter, so it never sees an
error the load balancer returns itself: a 504 when ``gateway.requestTimeoutSeconds`` cuts a completion that had not
started answering (the engine sees a client disconnect), a 502 on a keepalive race, a 503 with no healthy backend.
A streamed completion cut at the timeout is not one of them: the load balancer (Envoy) has sent its ``200`` and
cannot change it (envoyproxy/envoy issue 9242; SRE review round 18, M1), so no status count sees it. The serving probe
through the Gateway cannot see the 504 either: it asks for one token and gives up after 50 s (SRE review round 16,
M1). The load balancer counts every request it answers, by response class: Cloud Monitoring's
``loadbalancing.googleapis.com/https/internal/request_count`` (GA, DELTA, on the monitored resource
``internal_http_lb_rule``; its labels ``response_code`` and ``response_code_class``, 200/300/400/500 or 0; Cloud
Monitoring's Google Cloud metrics list, "loadbalancing"), read here in PromQL
(``loadbalancing_googleapis_com:https_internal_request_count``, ``monitored_resource="internal_http_lb_rule"``: the
mapping Cloud Monitoring's PromQL gives every metric type).

Its series are named after the URL map GKE's Gateway controller creates, which the stack does not create:
``gkegw1-<4 characters>-<namespace>-<gateway>-<hash>`` (GKE writes it on the Gateway as the
``networking.gke.io/url-maps`` annotation; public ``kubectl describe gateway`` outputs show
``gkegw1-nv9e-exercises-log-ping-app-gateway-z33kukono48t`` for Gateway ``exercises/log-ping-app-gateway``, and an
older ``gkegw-`` prefix). The alert matches that form (:func:`url_map_pattern`). Since a name form can change, a
second alert opens a ticket when the pattern selects no series while the serving probe through the Gateway succeeds:
the probe's own requests go through that load balancer, so it must have counted them.

Plain data in, plain data out, like :mod:`tpu_serving.operations.alerts.error_rate`.
"""

from ...common.naming import gateway_prober_name
from ..observability_settings import ObservabilitySettings
from ..prober import PROBE_INTERVAL_SECONDS, PROBER_REPLICAS
from .error_rate import WINDOW_MINUTES

ERRORS_KEY, ERRORS_TITLE = "gateway-errors", "Gateway error rate high"
MISSING_KEY, MISSING_TITLE = "gateway-errors-unread", "Gateway error rate unread"
NEAR_KEY, NEAR_TITLE = "gateway-near-timeout", "Requests near the Gateway timeout"
NEAR_SHARE, NEAR_FRACTION, NEAR_WINDOW_MINUTES, NEAR_MINUTES = 0.99, 0.9, 30, 5
"""More than 1% of the load balancer's requests over 30 minutes took 90% of its request timeout or more (their 99th
percentile above it), held 5 minutes: a ticket."""
LATENCIES = "loadbalancing_googleapis_com:https_internal_total_latencies_bucket"
"""The load balancer's latency from a request's arrival to the client's ACK of its last byte, in ms: Cloud
Monitoring's ``loadbalancing.googleapis.com/https/internal/total_latencies`` (GA, DELTA, DISTRIBUTION, ms, on
``internal_http_lb_rule``; Cloud Monitoring's Google Cloud metrics list), whose buckets Cloud Monitoring's PromQL
reads as a histogram's (``_bucket``, ``le``). A streamed completion cut at the timeout is counted here at the
timeout, whatever status it kept."""
MISSING_MINUTES = 30
"""The window in which the Gateway probe succeeded while the load balancer's series stayed absent."""
METRIC = "loadbalancing_googleapis_com:https_internal_request_count"
RESOURCE = 'monitored_resource="internal_http_lb_rule"'


def url_map_pattern(namespace: str, gateway: str) -> str:
    """RE2 pattern of the URL map GKE creates for Gateway ``namespace/gateway``."""
    return f"gkegw1?-[a-z0-9]+-{namespace}-{gateway}-[a-z0-9]+"


def _series(namespace: str, gateway: str, extra: str = "") -> str:
    return f'{METRIC}{{{RESOURCE}, url_map_name=~"{url_map_pattern(namespace, gateway)}"{extra}}}'


PROBES_PER_MINUTE = PROBER_REPLICAS * 60 // PROBE_INTERVAL_SECONDS
"""The Gateway probe's own requests through the load balancer: at idle they are its whole traffic."""


def least_per_minute(settings: ObservabilitySettings) -> float:
    """The traffic below which the alert is quiet: ``observability.errorRateMinRequestsPerMinute``, and more than the
    Gateway probe's own requests, so two failed probes at idle (two of ten in five minutes) page nobody (SRE review
    round 18, m1: at the engines' 1 a minute, they did)."""
    return max(settings.error_rate_min_requests_per_minute, 2 * PROBES_PER_MINUTE + 1)


def errors_query(namespace: str, gateway: str, settings: ObservabilitySettings) -> str:
    """The share of the load balancer's responses over :data:`~tpu_serving.operations.alerts.error_rate.WINDOW_MINUTES` that are
    server errors, above ``observability.errorRatePercent``, while it answers at least :func:`least_per_minute`:
    the engines' alert's rule, on what clients get."""
    window = f"[{WINDOW_MINUTES}m]"
    total = f"sum(rate({_series(namespace, gateway)}{window}))"
    server_errors = _series(namespace, gateway, ', response_code_class="500"')
    errors = f"sum(rate({server_errors}{window}))"
    ratio, least = settings.error_rate_percent / 100, least_per_minute(settings)
    return f"(({errors} / {total}) > {ratio:g}) and on() (({total} * 60) >= {least:g})"


def missing_query(cluster: str, namespace: str, gateway: str, service: str) -> str:
    """The load balancer's series absent for :data:`MISSING_MINUTES` while the probe through the Gateway
    succeeded in that time."""
    window = f"[{MISSING_MINUTES}m]"
    probe = f'probe_success{{cluster="{cluster}", namespace="{namespace}", job="{gateway_prober_name(service)}"}}'
    return (
        f"absent_over_time({_series(namespace, gateway)}{window}) and on() (max(max_over_time({probe}{window})) >= 1)"
    )


def gateway_alerts(
    cluster: str, namespace: str, gateway: str, service: str | None, settings: ObservabilitySettings
) -> list[tuple[str, str, str, int, str, str]]:
    """``(key, title, query, minutes, runbook, severity)`` of the alerts (an
    :class:`~tpu_serving.operations.observability.Alert`): the error rate, and, with the serving probe through the Gateway
    (``service``: the probed Service's name; None: no probe), the ticket when the error rate reads nothing."""
    minutes, percent = settings.error_rate_minutes, settings.error_rate_percent
    pattern = url_map_pattern(namespace, gateway)
    errors = [
        (
            ERRORS_KEY,
            ERRORS_TITLE,
            errors_query(namespace, gateway, settings),
            minutes,
            f"More than {percent:g}% of the responses the load balancer of Gateway {namespace}/{gateway} sent to "
            f"clients over {WINDOW_MINUTES} minutes were server errors (5xx), for {minutes} minutes. The engines "
            "may count none of them: a 504 at the request timeout (gateway.requestTimeoutSeconds: a non-streamed "
            "completion too long for it; cap max_tokens or raise the timeout; a streamed one keeps its 200), a 502 "
            "or 503 from the load balancer (no healthy backend, the endpoint picker). Which codes: the load balancer's request logs (resource.type="
            f'"internal_http_lb_rule", httpRequest.status>=500, jsonPayload.statusDetails); the series: {METRIC}'
            f'{{url_map_name=~"{pattern}"}} by response_code in Metrics Explorer.',
            "ERROR",
        ),
    ]
    if service is None:
        return errors
    return [
        *errors,
        (
            MISSING_KEY,
            MISSING_TITLE,
            missing_query(cluster, namespace, gateway, service),
            1,
            f"The serving probe through Gateway {namespace}/{gateway} succeeded in the last {MISSING_MINUTES} "
            f'minutes, but no load balancer request count matched url_map_name=~"{pattern}": the Gateway error '
            "rate alert reads nothing. Read the URL map's name on the Gateway (`kubectl -n "
            f"{namespace} get gateway {gateway} -o jsonpath='{{.metadata.annotations.networking\\.gke\\.io/url-maps}}'`)"
            " and report the form it has (components/operations/alerts/gateway_alerts.py, url_map_pattern).",
            "WARNING",
        ),
    ]


def near_timeout_query(namespace: str, gateway: str, timeout_seconds: int) -> str:
    """The 99th percentile of the load balancer's total latency over :data:`NEAR_WINDOW_MINUTES`, above
    :data:`NEAR_FRACTION` of the request timeout (in ms)."""
    selector = f'{RESOURCE}, url_map_name=~"{url_map_pattern(namespace, gateway)}"'
    rate = f"sum by (le) (rate({LATENCIES}{{{selector}}}[{NEAR_WINDOW_MINUTES}m]))"
    return f"histogram_quantile({NEAR_SHARE:g}, {rate}) > {NEAR_FRACTION * timeout_seconds * 1000:g}"


def near_timeout_alert(namespace: str, gateway: str, timeout_seconds: int) -> tuple[str, str, str, int, str, str]:
    """``(key, title, query, minutes, runbook, severity)`` of the ticket on requests that run up to the timeout: a
    streamed completion cut there keeps the ``200`` it sent (the load balancer, Envoy, cannot change a status once
    sent: envoyproxy/envoy issue 9242), so no error count sees it, and vLLM records no metric of a request its client
    dropped (0.29.0 ``vllm/v1/engine/output_processor.py`` ``abort_requests``); the load balancer's latency does
    (SRE review round 18, M1; round 19, M1)."""
    return (
        NEAR_KEY,
        NEAR_TITLE,
        near_timeout_query(namespace, gateway, timeout_seconds),
        NEAR_MINUTES,
        f"More than {1 - NEAR_SHARE:.0%} of the requests through Gateway {namespace}/{gateway} over "
        f"{NEAR_WINDOW_MINUTES} minutes took {NEAR_FRACTION:.0%} of its {timeout_seconds} s request timeout or more: "
        "completions that long are cut at the timeout, a streamed one with the 200 it already sent, so clients get "
        "truncated answers that no error alert counts. Cap clients' max_tokens, or raise gateway.requestTimeoutSeconds "
        "(it also sets the engines' drain: docs/upgrade.md). Which requests: the load balancer's request logs "
        '(resource.type="internal_http_lb_rule", httpRequest.latency).',
        "WARNING",
    )
