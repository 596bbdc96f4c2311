"""Serving pods a controller cannot create: counted from the cluster's Kubernetes events, alerted on (SRE review 37,
M1).

A LeaderWorkerSet's groups are StatefulSets: the leaders' (named after the LeaderWorkerSet) and one per group for its
workers (``<name>-<group index>``; kubernetes-sigs/lws v0.10.0 pkg/controllers/leaderworkerset_controller.go, the
leader StatefulSet, and pod_controller.go, the worker StatefulSet named after the leader pod). When the API server
refuses a pod of one (a fail-closed webhook it cannot reach, a ResourceQuota a surge does not fit), the StatefulSet
controller records a Warning Event ``FailedCreate`` about the StatefulSet ("create Pod <pod> in StatefulSet <set>
failed error: ...": kubernetes/kubernetes pkg/controller/statefulset/stateful_pod_control.go ``recordPodEvent``,
reason ``Failed`` + the verb; seen on the e2e control plane by SRE review 37) and retries. A surge rollout stalled so
keeps the surge group serving beside the groups left, so the alerts that count Ready leaders against the minimum, the
not-ready alert (which counts pods that exist) and the controller alert (its Deployment stays Available) all stay
quiet, and ``pulumi up`` has returned.

Timing: the controller retries a failing sync with its work queue's exponential backoff, 5 ms doubling up to 1000 s
(client-go util/workqueue ``DefaultControllerRateLimiter``), and its recorder lets an Event about one object through
at least once every 300 s once a burst of 25 is spent (client-go tools/record events_cache.go, ``defaultSpamBurst``,
``defaultSpamQPS`` 1/300); each update of the Event is a log entry (:data:`tpu_serving.operations.group_recreations.EVENTS_LOG`).
So refusals that persist are logged at least every 1000 s. The alert sums them over :data:`WINDOW_SECONDS` (longer
than that gap) and fires when the sum has stayed above zero for :data:`HELD_SECONDS`: persisting refusals page after
about half an hour, and a single one (a webhook that was briefly unreachable) keeps the sum up for only 20 minutes,
which pages nobody.
"""

import pulumi_gcp as gcp

from ..common.naming import refused_pods_metric
from .alerts.page_steps import step
from .group_recreations import (
    EVENT_RESOURCE,
    EVENTS_LOG,
    USER_METRIC,
    EventCounter,
    Groups,
    count_condition,
    metric_series_filter,
)
from .observability_settings import ObservabilitySettings, Severity

FAILED_CREATE_REASON = "FailedCreate"
STATEFUL_SET = "StatefulSet"
NAME_LABEL = "statefulset"
"""The metric's label: the StatefulSet whose pod was refused."""
WINDOW_SECONDS = 1200
"""The alert sums the refusals over 20 minutes: more than the controller's longest retry interval, 1000 s."""
HELD_SECONDS = 1800
"""The sum stays above zero this long before the alert fires (longer than one refusal keeps it up)."""
KEY = "pods-refused"
"""Suffix of the alert policy's resource name (the metric's is ``<KEY>-metric``)."""
TITLE = "Serving pods refused creation"
METRIC_TITLE = "Serving pods refused creation (FailedCreate)"


def metric_type(groups: Groups) -> str:
    """The metric's type in Cloud Monitoring."""
    return USER_METRIC + refused_pods_metric(groups.cluster, groups.namespace)


def event_filter(groups: Groups) -> str:
    """The Logging query of the ``FailedCreate`` events of the stack's LeaderWorkerSets' StatefulSets (the leaders'
    and each group's workers': ``<name>`` and ``<name>-<index>``; ``=~`` is a regular expression,
    https://cloud.google.com/logging/docs/view/logging-query-language#regular-expressions)."""
    names = "|".join(groups.leader_worker_sets)
    return " AND ".join(
        [
            f'logName="projects/{groups.project}/logs/{EVENTS_LOG}"',
            f'resource.type="{EVENT_RESOURCE}"',
            f'resource.labels.cluster_name="{groups.cluster}"',
            f'jsonPayload.reason="{FAILED_CREATE_REASON}"',
            f'jsonPayload.involvedObject.kind="{STATEFUL_SET}"',
            f'jsonPayload.involvedObject.namespace="{groups.namespace}"',
            f'jsonPayload.involvedObject.name=~"^({names})(-[0-9]+)?$"',
        ]
    )


def metric_args(groups: Groups) -> gcp.logging.MetricArgs:
    """The counter of the refusals (:class:`~tpu_serving.operations.group_recreations.EventCounter`), labelled with the
    StatefulSet."""
    return EventCounter(
        refused_pods_metric(groups.cluster, groups.namespace),
        f"Serving pods the API server refused to create (StatefulSet FailedCreate events) in namespace "
        f"{groups.namespace} of cluster {groups.cluster}.",
        event_filter(groups),
        METRIC_TITLE,
        NAME_LABEL,
        "The StatefulSet whose pod was refused.",
    ).metric_args(groups.project)


def runbook(groups: Groups) -> str:
    """What to do when the alert fires."""
    ns, names = groups.namespace, ", ".join(groups.leader_worker_sets)
    return (
        f"The API server has refused pods of LeaderWorkerSet {names} in namespace {ns} for half an hour: a group "
        "that needs them (a rollout's next group, a group recreated after a failure, the HPA's next group) cannot "
        "start, though the other groups may all serve and the capacity alerts stay quiet (a surge rollout keeps "
        f"its extra group). Why: `kubectl -n {ns} get events --field-selector reason={FAILED_CREATE_REASON}` (the "
        'message after "failed error:"). A webhook the API server cannot call (`failed calling webhook`): is the '
        f"LWS controller serving ({step('kubectl -n lws-system get pods', admin=True)}), can the control plane "
        "reach the nodes on the "
        "webhook's port (a private cluster's firewall rule, docs/deploy.md), does the webhook configuration's "
        "caBundle match its certificate? A quota (`exceeded quota`): `kubectl -n "
        f"{ns} describe resourcequota` and `tenancy.quota`. Then: `kubectl -n {ns} get leaderworkersets` "
        "(`UpdateInProgress`, `Available`) and `tpu-serving verify`. Once the cause is fixed, the StatefulSet "
        "controller creates the pods at its next retry of the set, up to about 17 minutes later (its backoff reaches "
        "1000 s); the incident closes 20 minutes after the last refusal."
    )


def policy_args(groups: Groups, settings: ObservabilitySettings) -> gcp.monitoring.AlertPolicyArgs:
    """The alert: the refusals summed over :data:`WINDOW_SECONDS` above zero for :data:`HELD_SECONDS` (ERROR: the
    stack may be down to its minimum with no group to replace a lost one)."""
    return gcp.monitoring.AlertPolicyArgs(
        project=groups.project,
        display_name=f"{groups.cluster}: {TITLE}",
        combiner="OR",
        conditions=[count_condition(metric_series_filter(metric_type(groups)), TITLE, WINDOW_SECONDS, 0, HELD_SECONDS)],
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(content=runbook(groups), mime_type="text/markdown"),
        notification_channels=settings.channels(Severity.ERROR),
        severity=Severity.ERROR.value,
    )
