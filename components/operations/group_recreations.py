"""Leader-worker group recreations: counted from the cluster's Kubernetes events, charted, alerted on.

The LWS controller recreates a whole group (it deletes the leader pod, and the group's workers go
with it) when a pod of the group fails or a container restarts; with ``RecreateGroupAfterStart``
(:func:`tpu_serving.platform.lws.restart_policy`) only once every pod of the group has left Pending. LWS
has no restart budget (kubernetes-sigs/lws issues #877 and #1048): a pod that keeps failing
recreates its group again and again, and each time the group reloads the model on a whole slice.
The stack watches for that storm with three pieces, built here from :class:`Groups`:

- a log-based counter metric (:func:`metric_args`) of the controller's ``RecreateGroup`` events
  about the stack's LeaderWorkerSets, as GKE sends them to Cloud Logging, labelled with the
  LeaderWorkerSet's name;
- an alert policy (:func:`alert_policy_args`) on that counter summed over an hour, above
  ``observability.groupRecreationsPerHour``, or over 24 hours, above ``observability.groupRecreationsPerDay`` (a
  slow loop: one recreation per startup window);
- a dashboard chart's query (:func:`dashboard_query`): the same hourly sums.

JobSets (the Saxml and PathwaysJob backends) are not watched here: their controller restarts
within a budget of its own (``failurePolicy.maxRestarts``).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi_gcp as gcp

from ..common.naming import group_recreations_metric
from ..platform import lws
from .observability_settings import ObservabilitySettings, Severity

# --------------------------------------------------------------------------- facts

RECREATE_GROUP_REASON = "RecreateGroup"
"""The reason of the Event the LWS controller records when it recreates a group: kubernetes-sigs/lws
v0.10.0 (and v0.9.0, the same line) pkg/controllers/pod_controller.go:264, ``handleRestartPolicy``:
``r.Record.Eventf(&leaderWorkerSet, &leader, corev1.EventTypeNormal, "RecreateGroup", Delete, "Worker pod
%s failed, deleted leader pod %s to recreate group %s")``. The recorder is client-go's events.k8s.io/v1
one (``mgr.GetEventRecorder``, cmd/main.go:228): the Event is *regarding* the LeaderWorkerSet, *related* to
the leader pod, in the LeaderWorkerSet's namespace. Read as a core/v1 Event, ``regarding`` is
``involvedObject`` (kubernetes/kubernetes pkg/apis/events/v1/conversion.go ``Convert_v1_Event_To_core_Event``)."""

EVENTS_LOG = "events"
"""The log GKE writes the cluster's Kubernetes events to, ``projects/<project>/logs/events``: "For events,
GKE uses a deployment in the kube-system namespace which automatically collects events and sends them to
Logging" (https://cloud.google.com/kubernetes-engine/docs/concepts/about-logs), the event exporter of
GoogleCloudPlatform/k8s-stackdriver (event-exporter-v0.5.9 event-exporter/sinks/stackdriver/sink_config.go:34
and :57). It writes one entry per Event created or updated (sinks/stackdriver/sink.go:70-82), the Event as
``jsonPayload`` (log_entry_factory.go ``FromEvent``). The cluster logs system components
(:class:`tpu_serving.platform.cluster.TpuCluster`, ``loggingConfig`` ``SYSTEM_COMPONENTS``).

client-go's events.k8s.io recorder folds an Event identical to one it recorded minutes before (same
object, related object, reason, action and note) into a series: the second occurrence updates the Event,
later ones reach it only when the series is refreshed (every 30 minutes) or ends (6 minutes without a
repeat; tools/events/event_broadcaster.go ``recordToSink``, ``finishSeries``). A group recreated again and
again for the same worker pod within minutes is so logged fewer times than it happened (at least twice in
its first half hour); recreations further apart than the recorder remembers, as a reload of a large model
is, are each logged."""

EVENT_RESOURCE = "k8s_cluster"
"""The monitored resource of the log entry of an Event about anything but a Pod or a Node, a
LeaderWorkerSet among them: event-exporter-v0.5.9 event-exporter/sinks/stackdriver/monitored_resource_factory.go:68-84
``resourceFromEvent`` (Pod: ``k8s_pod``, Node: ``k8s_node``, any other kind: the default resource,
``k8s_cluster`` with labels ``project_id``, ``location`` and ``cluster_name``, :46-57). The metric's time
series carry that resource, which the alert's filter names."""

USER_METRIC = "logging.googleapis.com/user/"
"""Prefix of a user-defined log-based metric's type in Cloud Monitoring
(https://cloud.google.com/logging/docs/logs-based-metrics#user-metrics)."""

NAME_LABEL = "leaderworkerset"
"""The metric's label: the name of the LeaderWorkerSet whose group was recreated."""

WINDOW_SECONDS = 3600
"""The alert and the chart count recreations per hour."""

SLOW_LOOP_WINDOW_SECONDS = 86400
"""The alert's second condition counts recreations per 24 hours: longer than any startup window the stacks set (the
405B JetStream stack's 10,900 s), so a group recreated once per load is seen, and within the longest alignment
period an alerting policy takes ("The maximum value of the alignment_period is 104 weeks (2 years) for charts, and
90,000 seconds (25 hours) for alerting policies", google.monitoring.v3.Aggregation.alignment_period,
https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies#Aggregation)."""

ALIGNER = "ALIGN_SUM"
"""Per-series aligner of the hourly counts. The metric is DELTA (each point counts the matching entries of its
interval), so the recreations of an hour are the sum of its points: ``ALIGN_SUM`` sums the values of each
alignment period and is valid for GAUGE and DELTA metrics. ``ALIGN_DELTA`` is valid for DELTA too, but "If the
selected alignment period results in periods with no data, then the aligned value for such a period is created
by interpolation": an hour without a recreation would get one made up (google.monitoring.v3.Aggregation.Aligner,
https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies#Aligner)."""

KEY = "group-recreations"
"""Suffix of the alert policy's resource name (the metric's is ``<KEY>-metric``)."""
TITLE = "Leader-worker groups recreated repeatedly"
"""The alert's title, and its hourly condition's."""
SLOW_LOOP_TITLE = "Leader-worker groups recreated in a slow loop"
"""The title of its 24-hour condition."""
RELOAD_KEY = "group-reloading"
"""Suffix of the capacity alert's resource name."""
RELOAD_TITLE = "Serving group recreated: capacity reduced while it reloads"
"""The capacity alert's title, and its condition's."""
RELOAD_WINDOW_SECONDS = 300
"""The capacity alert counts recreations over five minutes: it opens within minutes of a recreation, where the
not-ready alert, held past the startup window so that a cold start does not page, waits an hour or more."""
METRIC_TITLE = "Leader-worker group recreations"
PANEL_TITLE = f"{METRIC_TITLE} per hour"


@dataclass(frozen=True)
class Groups:
    """The leader-worker groups of a stack: where their LeaderWorkerSets run, and their names."""

    project: str
    cluster: str
    namespace: str
    leader_worker_sets: Sequence[str]

    @property
    def metric_type(self) -> str:
        """The metric's type in Cloud Monitoring."""
        return USER_METRIC + group_recreations_metric(self.cluster, self.namespace)


# --------------------------------------------------------------------------- builders


def event_filter(groups: Groups) -> str:
    """The Logging query of the ``RecreateGroup`` events of the stack's LeaderWorkerSets (the events log, this
    cluster, this namespace; https://cloud.google.com/logging/docs/view/logging-query-language)."""
    names = " OR ".join(f'jsonPayload.involvedObject.name="{n}"' for n in groups.leader_worker_sets)
    return " AND ".join(
        [
            f'logName="projects/{groups.project}/logs/{EVENTS_LOG}"',
            f'resource.type="{EVENT_RESOURCE}"',
            f'resource.labels.cluster_name="{groups.cluster}"',
            f'jsonPayload.reason="{RECREATE_GROUP_REASON}"',
            f'jsonPayload.involvedObject.kind="{lws.KIND}"',
            f'jsonPayload.involvedObject.namespace="{groups.namespace}"',
            f"({names})",
        ]
    )


@dataclass(frozen=True)
class EventCounter:
    """A log-based counter of Kubernetes events: one point per matching log entry (DELTA, INT64, unit ``1``),
    labelled with the name of the object the event is about."""

    name: str
    description: str
    filter: str
    title: str
    label: str
    label_description: str

    def metric_args(self, project: str) -> gcp.logging.MetricArgs:
        return gcp.logging.MetricArgs(
            project=project,
            name=self.name,
            description=self.description,
            filter=self.filter,
            metric_descriptor=gcp.logging.MetricMetricDescriptorArgs(
                metric_kind="DELTA",
                value_type="INT64",
                unit="1",
                display_name=self.title,
                labels=[
                    gcp.logging.MetricMetricDescriptorLabelArgs(
                        key=self.label, value_type="STRING", description=self.label_description
                    )
                ],
            ),
            label_extractors={self.label: "EXTRACT(jsonPayload.involvedObject.name)"},
        )


def metric_args(groups: Groups) -> gcp.logging.MetricArgs:
    """The counter of the recreations (:class:`EventCounter`), labelled with the LeaderWorkerSet's name, which the
    filter already restricts to the stack's own."""
    return EventCounter(
        group_recreations_metric(groups.cluster, groups.namespace),
        f"Leader-worker group recreations (LWS RecreateGroup events) in namespace {groups.namespace} "
        f"of cluster {groups.cluster}.",
        event_filter(groups),
        METRIC_TITLE,
        NAME_LABEL,
        "The LeaderWorkerSet whose group was recreated.",
    ).metric_args(groups.project)


def series_filter(groups: Groups) -> str:
    """The Monitoring filter of the metric's time series (:func:`metric_series_filter`)."""
    return metric_series_filter(groups.metric_type)


def metric_series_filter(metric_type: str) -> str:
    """The Monitoring filter of a log-based event counter's time series. A threshold condition's filter must name the
    resource type as well as the metric type: the API refuses it otherwise ('must specify a restriction on
    "resource.type" in the filter', hashicorp/terraform-provider-google#4165 and #7179)."""
    return f'metric.type="{metric_type}" AND resource.type="{EVENT_RESOURCE}"'


def _summed(seconds: int) -> gcp.monitoring.AlertPolicyConditionConditionThresholdAggregationArgs:
    return gcp.monitoring.AlertPolicyConditionConditionThresholdAggregationArgs(
        alignment_period=f"{seconds}s", per_series_aligner=ALIGNER
    )


def _condition(groups: Groups, title: str, seconds: int, threshold: int) -> gcp.monitoring.AlertPolicyConditionArgs:
    """The count of a LeaderWorkerSet's recreations over ``seconds`` above ``threshold``."""
    return count_condition(series_filter(groups), title, seconds, threshold)


def count_condition(
    series: str, title: str, seconds: int, threshold: int, held_seconds: int = 60
) -> gcp.monitoring.AlertPolicyConditionArgs:
    """An event counter's count over ``seconds`` (``series``: :func:`metric_series_filter`) above ``threshold`` for
    ``held_seconds``."""
    return gcp.monitoring.AlertPolicyConditionArgs(
        display_name=title,
        condition_threshold=gcp.monitoring.AlertPolicyConditionConditionThresholdArgs(
            filter=series,
            aggregations=[_summed(seconds)],
            # The API takes only COMPARISON_GT and COMPARISON_LT for a metric threshold
            # (pulumi-gcp 10.2.0 monitoring/_inputs.py AlertPolicyConditionConditionThresholdArgs.comparison).
            comparison="COMPARISON_GT",
            threshold_value=float(threshold),
            # A window without an event has no point: the condition then counts as false, which
            # closes the incident; the API takes this control only with a duration of 60s or more
            # (google.monitoring.v3 AlertPolicy.Condition.MetricThreshold.evaluation_missing_data).
            evaluation_missing_data="EVALUATION_MISSING_DATA_INACTIVE",
            duration=f"{held_seconds}s",
        ),
    )


def runbook(groups: Groups, settings: ObservabilitySettings) -> str:
    """What to do when the alert fires."""
    ns, names = groups.namespace, ", ".join(groups.leader_worker_sets)
    return (
        f"The groups of LeaderWorkerSet {names} in namespace {ns} were recreated more than "
        f"{settings.group_recreations_per_hour} times within an hour, or more than "
        f"{settings.group_recreations_per_day} times within 24 hours (a slow loop: a group that fails each time it "
        "has loaded is recreated once per startup window): a pod keeps failing, and LWS has no restart "
        "budget, so its group is recreated until the cause is fixed. Each recreation names the worker pod that "
        f"failed: `kubectl -n {ns} get events --field-selector reason={RECREATE_GROUP_REASON}` (the cluster keeps "
        f'events an hour; Logs Explorer longer: `logName="projects/{groups.project}/logs/{EVENTS_LOG}" '
        f'jsonPayload.reason="{RECREATE_GROUP_REASON}"`). Read that pod\'s previous logs '
        f"(`kubectl -n {ns} logs <pod> --previous`) and the leader's: an out-of-memory kill, a TPU or network error, "
        "an engine crash. A startup probe that kills a model still loading recreates the group too: compare the "
        "time to ready with `serving.probes.maxStartupSeconds`. With `serving.lwsVersion` v0.9.0 or later the "
        "restart policy is RecreateGroupAfterStart: a group whose pods are still Pending is not recreated."
    )


def alert_policy_args(groups: Groups, settings: ObservabilitySettings) -> gcp.monitoring.AlertPolicyArgs:
    """The restart-storm alert: the hourly count of a LeaderWorkerSet's recreations above its threshold, or the
    24-hour count above its own (either condition opens an incident: ``combiner`` OR).

    Unlike the PromQL alerts, the condition reads a metric the stack itself creates, so the policy must be
    created after the metric (the caller passes it in ``depends_on``). Even then, Cloud Monitoring may refuse
    a policy on a log-based metric created moments before (404 "Cannot find metric(s) that match type ... it
    could take up to 10 minutes to become available", hashicorp/terraform-provider-google#11102, open): a
    first ``pulumi up`` that fails so succeeds when run again.
    """
    return gcp.monitoring.AlertPolicyArgs(
        project=groups.project,
        display_name=f"{groups.cluster}: {TITLE}",
        combiner="OR",
        conditions=[
            _condition(groups, TITLE, WINDOW_SECONDS, settings.group_recreations_per_hour),
            _condition(groups, SLOW_LOOP_TITLE, SLOW_LOOP_WINDOW_SECONDS, settings.group_recreations_per_day),
        ],
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
            content=runbook(groups, settings), mime_type="text/markdown"
        ),
        # ERROR: a group that keeps failing never serves again by itself (LWS has no restart budget)
        notification_channels=settings.channels(Severity.ERROR),
        severity=Severity.ERROR.value,
    )


def reload_runbook(groups: Groups) -> str:
    """What the capacity alert means, and what to do."""
    ns, names = groups.namespace, ", ".join(groups.leader_worker_sets)
    return (
        f"The LWS controller recreated a group of LeaderWorkerSet {names} in namespace {ns} (a worker pod failed or "
        "was lost, a container restarted; a leader that went itself, evicted or with its node, is not counted here: "
        "the capacity-reduced alert sees that): until its new pods have loaded the model, up to the "
        "startup window (`serving.probes.maxStartupSeconds`), the stack serves with one group less, and the "
        "others take its requests. With one group left, the no-ready alert fires too. Which pod failed: "
        f"`kubectl -n {ns} get events --field-selector reason={RECREATE_GROUP_REASON}`; whether the group "
        f"came back: `kubectl -n {ns} get pods -l leaderworkerset.sigs.k8s.io/name -o wide`. The incident closes "
        "by itself five minutes after the last recreation; repeated recreations open the restart-storm alert."
    )


def reload_policy_args(groups: Groups, settings: ObservabilitySettings) -> gcp.monitoring.AlertPolicyArgs:
    """The capacity alert (SRE review M7): any recreation of a LeaderWorkerSet's group within five minutes, at
    severity WARNING (the no-ready alert is the page for an outage). Losing one of two groups was otherwise silent
    for the not-ready alert's window, 75 minutes by default. ``severity`` is the AlertPolicy's own field (pulumi-gcp
    10.2.0 monitoring/alert_policy.py l.33, l.74-80: CRITICAL, ERROR or WARNING)."""
    return gcp.monitoring.AlertPolicyArgs(
        project=groups.project,
        display_name=f"{groups.cluster}: {RELOAD_TITLE}",
        combiner="OR",
        conditions=[_condition(groups, RELOAD_TITLE, RELOAD_WINDOW_SECONDS, 0)],
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
            content=reload_runbook(groups), mime_type="text/markdown"
        ),
        notification_channels=settings.channels(Severity.WARNING),
        severity=Severity.WARNING.value,
    )


def policies(groups: Groups, settings: ObservabilitySettings) -> dict[str, gcp.monitoring.AlertPolicyArgs]:
    """The alert policies on the recreations, by resource-name suffix: the restart storm and the capacity alert."""
    return {KEY: alert_policy_args(groups, settings), RELOAD_KEY: reload_policy_args(groups, settings)}


def dashboard_query(groups: Groups) -> dict[str, Any]:
    """A dashboard chart's ``TimeSeriesQuery``: the recreations per hour, one line per LeaderWorkerSet
    (``timeSeriesFilter`` with its aggregation,
    https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards#timeseriesfilter)."""
    aggregation = {"alignmentPeriod": f"{WINDOW_SECONDS}s", "perSeriesAligner": ALIGNER}
    return {"timeSeriesFilter": {"filter": series_filter(groups), "aggregation": aggregation}}
