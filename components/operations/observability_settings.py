"""``ObservabilitySettings``: the stack file's ``observability``, declared once.

How a serving stack is watched: the scrape interval, the alert thresholds and the notification
channels. :mod:`tpu_serving.operations.observability` builds the scraping, the dashboard and the PromQL alerts
from them, :mod:`tpu_serving.operations.group_recreations` the leader-worker group recreation alert.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..common.settings import CreateOrExisting, described
from ..common.validation import Choice

CHANNEL = re.compile(r"^projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/notificationChannels/[0-9]+$")
"""A notification channel's resource name (``projects/<project>/notificationChannels/<id>``,
https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.notificationChannels)."""


def channels_problem(channels: Sequence[str]) -> str:
    """Why ``channels`` are not notification channel resource names, or ``""``."""
    bad = [c for c in channels if not isinstance(c, str) or not CHANNEL.match(c)]
    if not bad:
        return ""
    return (
        f"{', '.join(map(repr, bad))}: each must be a notification channel resource name "
        "projects/<project>/notificationChannels/<numeric id> (gcloud beta monitoring channels list)"
    )


class Severity(Choice):
    """An alert policy's ``severity`` (pulumi-gcp 10.2.0 monitoring/alert_policy.py l.74-80: CRITICAL, ERROR or
    WARNING; Cloud Monitoring shows it on the incident and passes it to the channel). Every policy of a stack sets
    one: CRITICAL, the stack serves nothing (or nothing correct); ERROR, it serves less than it should, or cannot
    heal; WARNING, it runs with less margin than planned and is expected to heal."""

    CRITICAL = "CRITICAL"
    ERROR = "ERROR"
    WARNING = "WARNING"


PAGES = (Severity.CRITICAL, Severity.ERROR)
"""The severities that page (``notificationChannels``); WARNING alerts go to ``ticketChannels``."""


@dataclass(frozen=True)
class ObservabilitySettings:
    """How a serving stack is watched: scraping, the dashboard and the alerts."""

    enabled: bool = described(
        "Scrape the serving pods (PodMonitoring) and create the stack's dashboard and alert policies; "
        "needs `cluster.managedPrometheus`.",
        default=True,
    )
    cloud_resources: CreateOrExisting = described(
        "`create`: the stack's Cloud Monitoring dashboard, alert policies and log-based metric; `existing`: they "
        "are managed elsewhere (e.g. with the cluster's Terraform) and the stack creates none of them (the "
        "PodMonitorings are still applied: the scraping is the cluster's).",
        default=CreateOrExisting.CREATE,
    )
    scrape_interval_seconds: int = described(
        "How often managed collection scrapes each server's metrics.", default=15, ge=5, le=300
    )
    notification_channels: Sequence[str] = described(
        "Notification channels the pages notify (the CRITICAL and ERROR alerts: nothing or less served, a wedged "
        "engine, errors), each `projects/<project>/notificationChannels/<id>`; a serving stack that creates its "
        "alert policies names at least one, or sets `unpaged: true`.",
        default=(),
        check=channels_problem,
    )
    ticket_channels: Sequence[str] = described(
        "Notification channels of the WARNING alerts (a group recreated, a lasting backlog, a pod not ready, "
        "metrics missing), each `projects/<project>/notificationChannels/<id>`: what can wait for working hours. "
        "Empty: they notify `notificationChannels` with the pages, and tickets wake the pager: `production: true` "
        "refuses that, and a ticket channel that is also a page channel, when the stack pages.",
        default=(),
        check=channels_problem,
    )
    unpaged: bool = described(
        "`true`: the stack's alert policies notify nobody (no `notificationChannels`): they show only in "
        "Cloud Monitoring, and an outage is seen only by someone looking. Required for a serving stack that "
        "creates its alert policies and names no channel; `false` refuses such a stack.",
        default=False,
    )
    not_ready_minutes: int = described(
        "Minutes a pod of the serving namespace may stay not ready before the not-ready alert fires; must exceed "
        "the serving pods' startup window (`serving.probes.maxStartupSeconds`), or every cold start pages.",
        default=75,
        ge=1,
        le=1440,
    )
    no_ready_leader_minutes: int = described(
        "Minutes no pod that takes requests (a leader, a Saxml slice's first host) may be Ready before the "
        "no-ready alert fires: the fast page for an outage, which the not-ready alert, held past the startup "
        "window, is not.",
        default=5,
        ge=1,
        le=1440,
    )
    backlog_threshold: float = described(
        "Requests waiting, summed over the serving replicas, above which the queue-backlog alert counts.",
        default=20,
        gt=0,
        le=1000000,
    )
    backlog_minutes: int = described(
        "Minutes the backlog must stay above the threshold before the alert fires.", default=5, ge=1, le=1440
    )
    idle_duty_cycle_percent: float = described(
        "Average TPU duty cycle of the serving containers, in percent, below which the TPUs count as idle.",
        default=10,
        gt=0,
        le=100,
    )
    idle_minutes: int = described(
        "Minutes the TPUs must stay idle while requests wait before the idle alert fires.",
        default=10,
        ge=1,
        le=1440,
    )
    # SRE review (no alert on 5xx): 5% of the responses failing is far past what a serving SLO of 99% or better
    # spends in a few minutes, yet above the odd failed request of a healthy server; five minutes above it (over a
    # five-minute window) pages an outage within about ten minutes, as fast as the no-ready alert, without paging a
    # blip. The guard of one request a minute keeps an idle or nearly idle stack, where one failed request of three is
    # 33%, quiet.
    error_rate_percent: float = described(
        "Share of the serving HTTP responses, in percent over five minutes, that are server errors (5xx) above "
        "which the error-rate alert counts (backends whose server counts its responses by status: vLLM).",
        default=5,
        gt=0,
        le=100,
    )
    controller_unavailable_minutes: int = described(
        "Minutes a controller the serving relies on (LeaderWorkerSet, JobSet) may have no available replica before "
        "the controller alert fires; its pod reschedules in a minute or two after a node drain.",
        default=5,
        ge=1,
        le=1440,
    )
    error_rate_minutes: int = described(
        "Minutes the share of server errors must stay above `errorRatePercent` before the error-rate alert fires.",
        default=5,
        ge=1,
        le=1440,
    )
    error_rate_min_requests_per_minute: float = described(
        "Requests a minute (over five minutes) the servers must answer for the error-rate alert to count: below it "
        "the share is not judged, so an idle stack, or one failed request among a handful, does not page.",
        default=1,
        gt=0,
        le=1000000,
    )
    stalled_minutes: int = described(
        "Minutes a vLLM leader (of either role, when disaggregated) may have requests running or waiting without "
        "generating a token before the stalled-engine alert fires (a wedged engine still answers its health check).",
        default=10,
        ge=1,
        le=1440,
    )
    capacity_reduced_minutes: int = described(
        "Minutes fewer leaders than planned (the fixed count or the autoscaling minimum) may be Ready before the "
        "capacity-reduced ticket (WARNING) opens: a group lost to a node, a repair, host maintenance or an upgrade, "
        "which LWS records no event for when the leader pod itself goes. It also opens while the first groups load.",
        default=10,
        ge=1,
        le=1440,
    )
    capacity_wait_minutes: int = described(
        "Minutes a pod of a serving with a capacity fallback (`serving.fallback`) may stay unschedulable before the "
        "capacity-wait ticket (WARNING) opens: no step of the ComputeClass had a slice for its group, which waits. "
        "Above the time GKE takes to make a slice, which is not published: a fallback that succeeds (the pool's "
        "scale-up failing, then GKE creating a pool of the next step and its VMs) may come near it.",
        default=30,
        ge=5,
        le=1440,
    )
    first_token_seconds: float = described(
        "Time to first token, in seconds, that the 95th percentile of the serving requests (over five minutes) may "
        "not exceed for `firstTokenMinutes` before the slow-first-token alert pages (ERROR): saturated groups, as "
        "after a group's loss, or a slow engine. Set it from your SLO.",
        default=10,
        gt=0,
        le=3600,
    )
    first_token_minutes: int = described(
        "Minutes the time to first token must stay above `firstTokenSeconds` before the slow-first-token alert pages.",
        default=10,
        ge=1,
        le=1440,
    )
    autoscaler_stuck_minutes: int = described(
        "Minutes a serving HorizontalPodAutoscaler may be unable to scale (no metric read, no scale reached, or its "
        "condition not reported) before the autoscaler ticket (WARNING) opens; it holds the group count meanwhile. "
        "The metrics adapter's pods reschedule in a minute or two after a node drain.",
        default=15,
        ge=1,
        le=1440,
    )
    metrics_missing_minutes: int = described(
        "Minutes a Ready serving leader may go unscraped (none of its engine's series ingested) before the "
        "metrics-missing alert fires: the autoscaler and the queue, error-rate and stalled alerts read those series, "
        "so without them they stay quiet.",
        default=10,
        ge=1,
        le=1440,
    )
    group_recreations_per_hour: int = described(
        "Leader-worker group recreations of one LeaderWorkerSet within an hour above which the restart-storm "
        "alert fires (vLLM and JetStream backends). One or two an hour follow a node repair or a preemption; a "
        "pod that keeps failing recreates its group for ever, since LWS has no restart budget.",
        default=2,
        ge=1,
        le=1000,
    )
    group_recreations_per_day: int = described(
        "Leader-worker group recreations of one LeaderWorkerSet within 24 hours above which the slow-loop alert "
        "fires: a group that fails again each time it has loaded (a startup probe shorter than the load, an engine "
        "that crashes on its first requests) is recreated once per startup window, too slowly for the hourly "
        "threshold; with the default a loop of one recreation every 6 hours or faster fires.",
        default=3,
        ge=1,
        le=1000,
    )
    # SRE review B2, M7: a hung engine behind a Ready pod is seen by no readiness, error or queue alert; only a real
    # request is. Five minutes of failed probes (five requests, one a minute) page as fast as the no-ready alert; a
    # 1-token completion of a short prompt takes well under a second on a healthy engine, so ten seconds held for a
    # quarter of an hour is a queue or a degraded engine, not a blip.
    serving_probe: bool = described(
        "Send a 1-token completion of the served model to the serving Service every minute (a Prometheus blackbox "
        "exporter Deployment in the namespace, scraped by Managed Prometheus) and alert when it fails or is slow "
        "(backends whose server takes HTTP completions: vLLM, JetStream); on Saxml, one generation of the first "
        "published model through sax-http every 75 s (up to the model's decode limit, 128 steps for the seed's "
        "175B model; sax-http takes no option that bounds it), alerted on when it fails. It reaches the Service, "
        "not a Gateway or a load balancer: it does not see their errors.",
        default=True,
    )
    probe_failing_minutes: int = described(
        "Minutes the serving probe may fail (no 200 answer holding a completion within its timeout: 50 s, Saxml's "
        "60 s) before the probe-failing alert (CRITICAL) fires.",
        default=5,
        ge=1,
        le=1440,
    )
    probe_slow_seconds: float = described(
        "Seconds a successful probe may take (a 1-token completion) above which the probe-slow alert counts; below "
        "the probe's 50 s timeout, past which the probe fails instead.",
        default=10,
        gt=0,
        le=45,
    )
    probe_slow_minutes: int = described(
        "Minutes the serving probe must stay slower than `probeSlowSeconds` before the probe-slow alert (WARNING) "
        "fires.",
        default=15,
        ge=1,
        le=1440,
    )

    def channels(self, severity: Severity) -> list[str]:
        """The channels an alert of ``severity`` notifies: the pages' for CRITICAL and ERROR, the tickets' for
        WARNING (the pages' when no ticket channel is named)."""
        if severity in PAGES or not self.ticket_channels:
            return list(self.notification_channels)
        return list(self.ticket_channels)
