"""TPU host maintenance: the ticket before it comes, and what one zonal wave of it can take.

TPU VMs do not live-migrate, and a host event on one VM of a slice interrupts the whole slice; host events bypass
GKE's maintenance windows and exclusions (:data:`tpu_serving.backends.rollout.HOST_MAINTENANCE` cites GKE). GKE
marks a node whose VM has maintenance scheduled with a label, and lets an operator start it, a pool at a time
(docs/operate.md, "TPU host maintenance", with the commands). This module holds:

- the WARNING alert policy on the signal an alert can read: Compute Engine's upcoming-maintenance notification,
  a system-event audit log entry (:func:`upcoming_filter`). The node label is not one: GKE's managed kube state
  metrics have no node package (pulumi-gcp 10.2.0 container/_inputs.py l.9679, ``monitoringConfig.enableComponents``:
  ``STORAGE``, ``HPA``, ``POD``, ``DAEMONSET``, ``DEPLOYMENT``, ``STATEFULSET``, ``JOBSET`` besides the system
  components), so no ``kube_node_labels`` series reaches Cloud Monitoring;
- the host-maintenance gate's pages (the preview's ``Maintenance:`` line is :mod:`tpu_serving.operations.maintenance.maintenance_line`'s).

Plain data in, plain data out, like :mod:`tpu_serving.operations.alerts.error_rate`.
"""

from collections.abc import Iterable, Sequence

import pulumi_gcp as gcp

from ...catalog import SliceShape
from ...catalog.capacity import FLEX_START_MAX_HOURS
from ...common.naming import MAINTENANCE_GATE, maintenance_gate_metric
from ...platform.lws import NAME_LABEL
from ..alerts.alert_policies import Alert, log_match_policy_args
from ..observability_settings import ObservabilitySettings, Severity
from . import gate_fallback

SCHEDULED_LABEL = "cloud.google.com/scheduled-maintenance-time"
"""The node label GKE sets while a VM has upcoming maintenance, its start in Unix epoch seconds. GKE "Monitor
maintenance events" (cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events): "When an upcoming
maintenance is scheduled by the VM but isn't active, GKE adds scheduled-maintenance-time to the node label"; machine
types with GPUs or TPUs attached from :data:`LABELS_SINCE`; ``kubectl get nodes -l
cloud.google.com/scheduled-maintenance-time -L cloud.google.com/scheduled-maintenance-time``, "the
SCHEDULED-MAINTENANCE-TIME column represents seconds, displayed in Unix epoch time format"."""
PERFORM_LABEL = "cloud.google.com/perform-maintenance"
"""The node label that starts the pending maintenance now. GKE "Perform host maintenance for nodes running training
and inference workloads" (cloud.google.com/kubernetes-engine/docs/how-to/perform-host-maintenance-accelerators):
"Use the rolling strategy for the nodes of workloads where you can have batches of downtime while maintaining
availability of the majority of resources, such as for the nodes of inference workloads"; its command, ``kubectl
label nodes -l cloud.google.com/gke-nodepool=NODE_POOL_NAME cloud.google.com/perform-maintenance=true
--overwrite``, and that GKE removes the label once the maintenance completes and that it can take a few hours,
read in the page's zh-CN copy (documentation.s3ns.fr/kubernetes-engine/docs/how-to/perform-host-maintenance-
accelerators?hl=zh-cn, translated here: the stored English copy stops before those steps)."""
LABELS_SINCE = "1.31.1-gke.2008000"
"""The GKE version from which GPU and TPU nodes carry :data:`SCHEDULED_LABEL` (view-maintenance-events, table
"Machine types with GPUs or TPUs attached"; cloud.google.com/ai-hypercomputer/docs/manage/manage-gke-clusters, "For
clusters running GKE version 1.31.1-gke.2008000 or later")."""

MANUAL_START_ANY = ("v4", "v5p")
"""TPU generations whose VMs take a manual start of host maintenance whatever their shape."""
MANUAL_START_MULTI_HOST = ("v5e", "v6e")
"""TPU generations whose GKE node pools take a manual start only as multi-host pools of 2x4 or larger. Cloud TPU
"Manually start a host maintenance event" (cloud.google.com/tpu/docs/manually-start-maintenance), *Limitations*:
"Any TPU v4 or v5p VMs"; "TPU v5e or v6e VMs with the 2x4 topology configuration ... or larger" (in the Cloud TPU
API); "GKE v5e or v6e multi-host node pools with TPU VMs that are 2x4 or larger" (stored copies of the page
disagree: this project's searches of 2026-11-30 found the three entries in a cloud.google.com en copy and in de, es,
it, ja, ko and pt-BR copies, and the v6e entries only in other en, id, de and it copies, SRE review rounds 26 and 27;
which is newer cannot be told, so the v5e start is unproven: the gate pages a start GKE does not act on within 30
minutes, :func:`tpu_serving.operations.maintenance.gate_memory.ignored_starts`, and ``hostMaintenance.mode: ticket`` is the way out). A
GKE single-host v5e or v6e pool (the ``ct6e-standard-8t`` 2x4 of one VM among them) is not listed, so GKE may not
act on the perform label there; TPU7x is not listed either."""


def manual_start_listed(shape: SliceShape) -> bool:
    """Whether Cloud TPU lists a manual start of host maintenance for a GKE node pool of ``shape``
    (:data:`MANUAL_START_ANY`, :data:`MANUAL_START_MULTI_HOST`): only there does the host-maintenance gate start it."""
    name = shape.generation.name
    return name in MANUAL_START_ANY or (name in MANUAL_START_MULTI_HOST and shape.multi_host)


MANUAL_START_KINDS = "multi-host v5e or v6e, v4, v5p"
MANUAL_START_LABEL = "tpu-serving-manual-start"
"""The maintenance policies' user label: what they tell on-call of a manual start, ``all``, ``none`` or ``some`` of
the pools in their zones (:func:`manual_start_value`), which ``tpu-serving check`` compares with the plan's pools
(library review 8, M4). A policy's ``user_labels``: pulumi-gcp 10.2.0 monitoring/alert_policy.py l.78-81."""


def manual_start_value(startable: bool | None) -> str:
    return "some" if startable is None else "all" if startable else "none"


def all_startable(shapes: Iterable[SliceShape]) -> bool | None:
    """Whether the pools of ``shapes`` take a manual start (:func:`manual_start_listed`): True all, False none, None
    some (``ObservabilityArgs.maintenance_startable``)."""
    kinds = {manual_start_listed(s) for s in shapes}
    return None if len(kinds) > 1 else kinds != {False}


KEY = "host-maintenance"
TITLE = "TPU host maintenance scheduled"
SEVERITY = Severity.WARNING
"""A ticket: nothing is down yet, and the notice comes ahead ("SCHEDULED: Maintenance will get seven days notice",
cloud.google.com/tpu/docs/view-maintenance-notifications, "Maintenance notification fields")."""
RUNBOOK = 'docs/operate.md, "TPU host maintenance"'

UPCOMING_METHOD = "compute.instances.upcomingMaintenance"
SYSTEM_EVENT_LOG = "cloudaudit.googleapis.com%2Fsystem_event"
PENDING = "PENDING"
"""Compute Engine's upcoming-maintenance notification as Cloud Logging holds it: a system-event audit log entry of
method ``compute.instances.upcomingMaintenance`` whose ``metadata`` carries ``type``, ``windowStartTime``,
``windowEndTime``, ``canReschedule`` and ``maintenanceStatus`` (``PENDING`` until it starts, then ``ONGOING``):
the example entry of cloud.google.com/tpu/docs/view-maintenance-notifications ("You can also view upcoming
maintenance events in Cloud Logging"; logName ``.../logs/cloudaudit.googleapis.com%2Fsystem_event``, resourceName
``projects/<p>/zones/<z>/instances/<vm>``). NVIDIA/NVSentinel reads the same entries for the nodes of a GKE cluster
(health-monitors/csp-health-monitor/pkg/event/gcp_normalizer.go: ``GCPMethodUpcomingMaintenance``, l.31-33;
``buildBaseEvent`` keeps only resource type ``gce_instance``; ``initializeEventFromLogEntry`` reads its
``instance_id`` and ``zone`` labels). The entry names the VM, not its node pool or cluster, so the filter can hold
it to the project and the serving slices' zones only; the runbook maps a VM to its pool."""
RATE_LIMIT_SECONDS = 3600
"""At most one notification an hour: a wave of maintenance logs one entry per VM, several per slice. Cloud
Monitoring requires the limit on a policy with a log-match condition (pulumi-gcp 10.2.0 monitoring/_inputs.py,
``AlertPolicyAlertStrategyArgs.notification_rate_limit``: "Required for alert policies with a LogMatch
condition")."""


UNSCHEDULED = "UNSCHEDULED"
"""The notice's ``metadata.type`` of emergency maintenance: Compute Engine API ``UpcomingMaintenance.type``,
``SCHEDULED`` ("Scheduled maintenance (e.g. maintenance after uptime guarantee is complete)") or ``UNSCHEDULED``
("Unscheduled maintenance (e.g. emergency maintenance during uptime guarantee)"; Google.Cloud.Compute.V1
``UpcomingMaintenance.Types.Type`` and ``ComputeEnumConstants.UpcomingMaintenance.Type``: ``"UNSCHEDULED"``,
cloud.google.com/dotnet/docs/reference/Google.Cloud.Compute.V1/latest). It comes without the seven days' notice,
so no ticket and no gate has time for it: it pages, on every stack with serving slices."""
UNSCHEDULED_KEY = "host-maintenance-unscheduled"
UNSCHEDULED_TITLE = "Unscheduled TPU host maintenance"


def upcoming_filter(project: str, zones: Sequence[str], unscheduled: bool = False) -> str:
    """The Logging filter of the pending upcoming-maintenance notifications of the project's VMs in ``zones``
    (:data:`PENDING` cites the entry): the unscheduled ones (:data:`UNSCHEDULED`), or all the others."""
    where = " OR ".join(f'resource.labels.zone="{z}"' for z in sorted(set(zones)))
    kind = f'protoPayload.metadata.type="{UNSCHEDULED}"'
    return (
        f'logName="projects/{project}/logs/{SYSTEM_EVENT_LOG}" AND resource.type="gce_instance" AND '
        f'protoPayload.methodName="{UPCOMING_METHOD}" AND protoPayload.metadata.maintenanceStatus="{PENDING}" AND '
        f"{kind if unscheduled else f'NOT {kind}'} AND ({where})"
    )


def runbook(
    zones: Sequence[str], gated: bool = False, startable: bool | None = True, watched: bool = False, whole: bool = False
) -> str:
    """What the ticket asks: find the nodes, then what to do (:data:`RUNBOOK`): on a stack whose host-maintenance gate
    starts it (``gated``, :mod:`tpu_serving.operations.maintenance.host_maintenance_job`), to watch the gate; on pools that take a manual
    start (``startable`` True), to start it a pool at a time; on others (False), that it comes at its window, and
    when to move a group (``watched``: the gate pages close windows); None: the zones hold pools of both kinds."""
    if gated:
        then = (
            "The stack's host-maintenance gate starts it, one serving pool at a time, while every standing group "
            "serves: its ERROR log lines page if it holds within hostMaintenance.dueHours of the window (its "
            "page says where to read them). Nothing to do unless it pages; a pool that "
            f"is not a serving pool is yours to start ({RUNBOOK})."
        )
    elif startable and whole:  # SRE review 30, M2: a disruption of any slice restarts the workload
        then = (
            "Then start it yourself on every serving pool with maintenance pending at once: a disruption of any "
            "slice restarts the whole workload, so one window costs one restart; wait until every node is Ready "
            f"again since you labelled them and the workload serves again ({RUNBOOK})."
        )
    elif startable is None:  # library review 8, M1: namespaces whose slices share a zone, one policy for both
        then = (
            f"Then, on a pool that takes a manual start ({MANUAL_START_KINDS}), start it yourself (or its namespace's "
            "host-maintenance gate does, where one starts it), one node pool at a time, the next once every node of "
            "the last one is Ready again and the groups serve again; on the others (single-host v5e or v6e, TPU7x) "
            "Cloud TPU lists no manual start: it comes at its window and costs that slice's group a reload "
            f"({RUNBOOK})."
        )
    elif startable:
        then = (
            "Then start it yourself, one node pool at a time, the next once every node of the last one is Ready "
            "again since you labelled it and the groups serve again "
            f"(these pools take a manual start: multi-host v5e or v6e, v4, v5p) ({RUNBOOK})."
        )
    else:
        close = (
            "the stack's host-maintenance gate tickets that, naming the group"
            if watched
            else "compare the nodes' labels"
        )
        then = (
            "Cloud TPU lists no manual start for these pools (single-host v5e or v6e, TPU7x): it comes at its window, "
            "and costs the group on that slice a reload. Nothing to do unless two pools that hold serving groups have "
            f"windows closer than a maintenance and a reload (7 hours) ({close}): then, before the first window, add "
            "a group and move the first pool's (docs/operate.md, 'Moving a group before its window'; tpu-serving "
            "runbook --stack <your stack>)."
        )
    return (
        f"Compute Engine scheduled host maintenance for a VM in {', '.join(sorted(set(zones)))}, where the serving "
        "slices run: when it comes, it interrupts the VM's whole slice, and a zonal wave can take every slice of "
        f"the zone at once. Find the nodes: `kubectl get nodes -l {SCHEDULED_LABEL} -L {SCHEDULED_LABEL}` (Unix "
        f"epoch seconds; GKE {LABELS_SINCE} or later). {then}"
    )


def policy_args(
    project: str,
    stack: str,
    zones: Sequence[str],
    settings: ObservabilitySettings,
    watched: bool = False,
    startable: bool | None = True,
    whole: bool = False,
) -> gcp.monitoring.AlertPolicyArgs:
    """The WARNING policy with one log-match condition on :func:`upcoming_filter`, to the ticket channels; ``watched``:
    the stack runs the host-maintenance gate, which starts the maintenance where the pools are ``startable``."""
    return log_match_policy_args(
        project,
        f"{stack}: {TITLE}",
        upcoming_filter(project, zones),
        RATE_LIMIT_SECONDS,
        runbook(zones, watched and startable is True, startable, watched, whole),
        SEVERITY,
        settings.channels(SEVERITY),
        {MANUAL_START_LABEL: manual_start_value(startable)},
    )


DRAIN_FLAGS = "--ignore-daemonsets --delete-emptydir-data"
"""A TPU node's drain: its DaemonSet pods stay, and the serving pods' emptyDir volumes (their caches) do not stop
it; without ``--delete-emptydir-data`` kubectl refuses a pod with an emptyDir volume and leaves the node cordoned
with the group on it (kubectl reference, kubectl drain: "--delete-emptydir-data: Continue even if there are pods
using emptyDir (local data that will be deleted when the node is drained)", kubernetes.io/docs/reference/kubectl/
generated/kubectl_drain/; GKE review round 50, M1)."""


_WHOLE = (
    "tell the serving's clients: the serving has no other group to keep answering, so the maintenance stops it until "
    "the slice is back and the model has reloaded (the preview's Maintenance: line says how long). Where the notice's "
    "canReschedule allows it, start it at the least harmful time rather than at the window "
    f"(cloud.google.com/tpu/docs/view-maintenance-notifications; {RUNBOOK})."
)


def unscheduled_policy_args(
    project: str,
    stack: str,
    zones: Sequence[str],
    settings: ObservabilitySettings,
    startable: bool | None = True,
    whole: bool = False,
    workloads: Sequence[str] = (),
) -> gcp.monitoring.AlertPolicyArgs:
    """The ERROR page on an unscheduled maintenance notice of a VM in the serving slices' zones; ``startable`` and
    ``whole`` (the serving has no other group: SRE reviews 31 m3, 32 m2, 33 m2): as :func:`runbook`; ``workloads``:
    the LeaderWorkerSets whose pods the drain it gives evicts, as the runbook's does (SRE review 33, m1: a drain of
    every pod of the node stops Forbidden at another namespace's pod under the operators' RBAC)."""
    selector = f" --pod-selector '{NAME_LABEL} in ({','.join(workloads)})'" if workloads else ""
    start = "start it now on a pool whose group can go, rather than at the window (the notice's canReschedule says "
    start += "whether it can be started: cloud.google.com/tpu/docs/view-maintenance-notifications)"
    at_window = (
        "so it comes at its window and costs that slice's group a reload: nothing to do while the other groups "
        "serve, unless another serving pool's window opens within 7 hours of it; then add a group and move this one "
        f"before its window (docs/operate.md, 'Moving a group before its window': the drain is `kubectl drain <node> "
        f"{DRAIN_FLAGS}{selector}`; tpu-serving runbook --stack <your stack> prints it in the stack's names)"
    )
    if startable is None:  # library review 8, M1
        act = (
            f"if the node's pool takes a manual start ({MANUAL_START_KINDS}), {start}; if not (single-host v5e or "
            f"v6e, TPU7x), Cloud TPU lists no manual start for it, {at_window}"
        )
    elif startable:
        act = start
    else:
        act = f"Cloud TPU lists no manual start for these pools (GKE single-host v5e or v6e, or TPU7x), {at_window}"
    text = (
        f"Compute Engine announced UNSCHEDULED (emergency) host maintenance for a VM in "
        f"{', '.join(sorted(set(zones)))}: it comes with less notice than scheduled maintenance, and interrupts the "
        f"VM's whole slice. Find the node (`kubectl get nodes -l {SCHEDULED_LABEL} -L {SCHEDULED_LABEL}`) and "
        + (_WHOLE if whole else f"check that the other groups serve; {act} ({RUNBOOK}).")
    )
    return log_match_policy_args(
        project,
        f"{stack}: {UNSCHEDULED_TITLE}",
        upcoming_filter(project, zones, unscheduled=True),
        RATE_LIMIT_SECONDS,
        text,
        Severity.ERROR,
        settings.channels(Severity.ERROR),
        {MANUAL_START_LABEL: manual_start_value(startable)},
    )


GATE_MINUTES = 5
"""How often the host-maintenance gate runs (its CronJob's schedule): a lost serving node, NotReady for 10 minutes,
pages within 15 (GKE review round 53, m4: every 10 minutes, it paged 10 to 20 minutes after the node went)."""
GATE_KEY, GATE_TITLE = "maintenance-gate", "Serving group lost or TPU host maintenance held"
SILENT_KEY, SILENT_TITLE = "maintenance-gate-silent", "Host-maintenance gate silent"
SILENT_WINDOW_MINUTES = 20
"""No run line for 20 minutes: four runs of the 5-minute CronJob missed (:data:`GATE_MINUTES`). It pages (ERROR): the
gate is the stack's fast signal of a lost serving VM, which otherwise pages only as *below minimum*, after 75 minutes
(SRE review round 21, M2)."""
GATE_RATE_LIMIT_SECONDS = 1800
"""At most one notification per half hour: a lost node or a hold logs an ERROR line every run (5 minutes)."""
USER_METRIC = "logging.googleapis.com/user/"
"""Prefix of a user-defined log-based metric's type (cloud.google.com/logging/docs/logs-based-metrics)."""


def gate_filter(cluster: str, namespace: str, errors: bool = False) -> str:
    """The Logging filter of the gate's run lines (one JSON line per run, ``jsonPayload.gate``), ERROR and above
    with ``errors``: the container's entries on GKE's ``k8s_container`` resource, whose labels name the cluster,
    namespace and container (cloud.google.com/logging/docs/api/v2/resource-list, ``k8s_container``); the
    line's ``severity`` is the entry's (:mod:`tpu_serving.operations.maintenance.maintenance_gate` cites structured logging)."""
    return (
        f'resource.type="k8s_container" AND resource.labels.cluster_name="{cluster}" AND '
        f'resource.labels.namespace_name="{namespace}" AND resource.labels.container_name="{MAINTENANCE_GATE}" AND '
        f'jsonPayload.gate="host-maintenance"' + (" AND severity>=ERROR" if errors else "")
    )


WATCH_TITLE = "Serving group lost, or a second one going to maintenance"
"""The page of a gate that only watches (it holds nothing, so its title does not say held)."""
CLOSE_KEY, CLOSE_TITLE = "maintenance-windows-close", "TPU host maintenance windows close"


def close_policy_args(
    project: str, stack: str, namespace: str, settings: ObservabilitySettings
) -> gcp.monitoring.AlertPolicyArgs:
    """The ticket (WARNING, the ticket channels) on a watching gate's WARNING lines: two pools holding serving pods
    whose windows open within a maintenance and a reload of each other, the first within hostMaintenance.dueHours.
    The notice comes days ahead (:data:`TITLE`), so this is work for working hours, not a page."""
    text = (
        f"The host-maintenance gate of namespace {namespace} found two pools that hold serving groups whose TPU host "
        "maintenance windows open closer than a maintenance and a reload: both groups could be down at once. Its "
        f"line names the pools and the group to move (`kubectl -n {namespace} logs job/<the last {MAINTENANCE_GATE} "
        "job>`). Before the first window, add a group, then move that one: docs/operate.md, 'Pools with no manual "
        "start' (tpu-serving runbook --stack <your stack> prints the commands in the stack's names)."
    )
    return log_match_policy_args(
        project,
        f"{stack}: {CLOSE_TITLE}",
        gate_filter(stack, namespace) + ' AND jsonPayload.decision="watch" AND severity=WARNING',
        RATE_LIMIT_SECONDS,
        text,
        Severity.WARNING,
        settings.channels(Severity.WARNING),
    )


def gate_policy_args(
    project: str, stack: str, namespace: str, settings: ObservabilitySettings, starts: bool = True
) -> gcp.monitoring.AlertPolicyArgs:
    """The ERROR page on the gate's ERROR lines: a serving node lost, a hold near a window (``starts``), a second
    group going to maintenance while one is down (a watching gate), the API refusing it."""
    text = _gate_page_text(namespace) if starts else _watch_page_text(namespace)
    return log_match_policy_args(
        project,
        f"{stack}: {GATE_TITLE if starts else WATCH_TITLE}",
        gate_filter(stack, namespace, errors=True),
        GATE_RATE_LIMIT_SECONDS,
        text,
        Severity.ERROR,
        settings.channels(Severity.ERROR),
    )


def _watch_page_text(namespace: str) -> str:
    return (
        f"The host-maintenance gate of namespace {namespace} (watching: Cloud TPU lists no manual start for these "
        "pools) logged an ERROR: a node holding a serving pod has been NotReady for 10 minutes (a node in maintenance "
        "by GKE's signals or a window the gate remembers: 6 hours from its window or from its going NotReady, its "
        "group covered meanwhile), or the maintenance windows that open (or have opened on a node that still serves) "
        "within 2 hours would leave fewer than all but one of the running groups serving, "
        "whatever took the others (the line names the pools and groups), or the API refused the gate (403: its "
        f"RBAC). `kubectl -n {namespace} logs job/<the last {MAINTENANCE_GATE} job>`. A lost node: the gate raises "
        "the HPA's minimum to cover its group (its line: 'raising HPA ...'; no such line: the refusal or no HPA, "
        "patch it by hand), and gives it back once the group serves again; docs/operate.md, 'A VM that goes silent' "
        "(the out-of-service taint), and 'A zone outage' when a zone's nodes are lost. A second "
        "group going: add a group now (docs/operate.md, 'Pools with no manual start'; tpu-serving runbook --stack "
        "<your stack> prints the commands)."
    )


def _gate_page_text(namespace: str) -> str:
    return (
        f"The host-maintenance gate of namespace {namespace} logged an ERROR: a node holding a serving pod has been "
        "NotReady for 10 minutes (or a node in maintenance for 6 hours), a pool's maintenance is held within "
        "hostMaintenance.dueHours of its window (read why: a pool cordoned or NotReady, an HPA above its minimum "
        "whose scale-down is not held), or within 2 hours of it when the hold passes by itself (another pool in "
        "maintenance, a group reloading or rolling out), or the API refused the gate (403, 422: its RBAC or "
        "admission policy). "
        f"`kubectl -n {namespace} logs job/<the last {MAINTENANCE_GATE} job>`. A lost node: the gate raises the HPA's "
        "minimum to cover its group (its line: 'raising HPA ...'; no such line: the refusal or no HPA, patch it by "
        "hand), and gives it back once the group serves again; docs/operate.md, 'A VM that goes silent' (the "
        "out-of-service taint), and 'A zone outage' when a zone's nodes are lost. Never start a pool "
        "by hand while another is in maintenance or a group is not Ready: that takes a second group. Clear the hold "
        f"(the group not Ready, the cordon, the HPA's scale-down), or move a group off the held pool before its window "
        f"({RUNBOOK})."
    )


def gate_metric_args(project: str, cluster: str, namespace: str) -> gcp.logging.MetricArgs:
    """The counter of the gate's completed runs (DELTA, INT64), which the silent alert reads: its run lines less
    those of a run that failed (``decision: error``: the API unreachable or refusing, an HPA gone), so that a gate
    that fails on every run goes silent and pages (SRE review round 22, M1: its WARNING lines counted as runs)."""
    return gcp.logging.MetricArgs(
        project=project,
        name=maintenance_gate_metric(cluster, namespace),
        description=f"Completed runs of the host-maintenance gate in namespace {namespace} of cluster {cluster}.",
        filter=gate_filter(cluster, namespace) + ' AND NOT jsonPayload.decision="error"',
        metric_descriptor=gcp.logging.MetricMetricDescriptorArgs(
            metric_kind="DELTA", value_type="INT64", unit="1", display_name="Host-maintenance gate runs"
        ),
    )


def promql_name(metric_type: str) -> str:
    """A Cloud Monitoring metric type as PromQL names it: the first ``/`` becomes ``:``, every other special
    character ``_`` ("Mapping Cloud Monitoring metrics to PromQL", cloud.google.com/monitoring/promql/promql-mapping:
    ``logging.googleapis.com/log_entry_count`` is ``logging_googleapis_com:log_entry_count``)."""
    domain, _, path = metric_type.partition("/")
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in path)
    return "".join(c if c.isalnum() else "_" for c in domain) + ":" + clean


def silent_alert(cluster: str, namespace: str) -> Alert:
    """The ERROR alert on no completed run for :data:`SILENT_WINDOW_MINUTES`: the gate no longer runs (its CronJob
    suspended or deleted, its pod not scheduled, its image not pulled) or fails on every run, so no maintenance is
    started, no lost group pages and none is covered. A log-based metric's series names its monitored resource in the ``monitored_resource`` label (the
    same mapping page, "Specifying a monitored resource type")."""
    metric = promql_name(USER_METRIC + maintenance_gate_metric(cluster, namespace))
    where = f'{{monitored_resource="k8s_container",namespace_name="{namespace}"}}'
    return Alert(
        SILENT_KEY,
        SILENT_TITLE,
        f"absent_over_time({metric}{where}[{SILENT_WINDOW_MINUTES}m])",
        0,
        f"The host-maintenance gate of namespace {namespace} has completed no run for {SILENT_WINDOW_MINUTES} "
        "minutes: no maintenance is started, no lost group pages and none is covered. `kubectl -n "
        f"{namespace} get cronjob,jobs,pods -l app={MAINTENANCE_GATE}`; `kubectl -n {namespace} describe cronjob "
        f"{MAINTENANCE_GATE}` (suspended, a pod that is not scheduled or whose image is not pulled); `kubectl -n "
        f"{namespace} logs job/<the last {MAINTENANCE_GATE} job>` (a run that failed says why: the API unreachable "
        "or refusing it, an HPA it reads gone; runs that succeed with this page open: the cluster sends no "
        "workload logs, loggingConfig without WORKLOADS). Meanwhile a lost serving VM pages only after 75 "
        "minutes (below minimum): watch `kubectl get nodes`.",
        Severity.ERROR,
    )


FALLBACK_KEY, FALLBACK_TITLE = "fallback-slice", "Serving group on a capacity fallback slice"


FALLBACK_RATE_LIMIT_SECONDS = 86400
"""At most one notification a day for the fallback ticket: the gate logs its line on every run (5 minutes) while a
group stays on a fallback slice, which may be days, so an hourly limit renotified a ticket 24 times a day (SRE review
of the capacity fallback, m5)."""


def fallback_policy_args(
    project: str, stack: str, namespace: str, settings: ObservabilitySettings
) -> gcp.monitoring.AlertPolicyArgs:
    """The ticket (WARNING, the ticket channels) on a gate's run line that names a group serving from a slice of the
    capacity fallback's ComputeClass for an hour or more (:func:`tpu_serving.operations.maintenance.gate_fallback.away`), whatever the line's
    severity: its ``fallback`` field holds :data:`tpu_serving.operations.maintenance.gate_fallback.SAID` (the Logging query language's ``:``
    matches a substring of a string field: cloud.google.com/logging/docs/view/logging-query-language, "Comparison
    operators"). SRE review of the capacity fallback, M1: nothing said a group was there."""
    text = (
        f"The host-maintenance gate of namespace {namespace} found a serving group on a slice GKE made for the "
        "capacity fallback's ComputeClass, for an hour or more: it serves at that step's price, a Spot slice goes "
        f"whenever Compute Engine needs it, and a flex-start slice's VMs go {FLEX_START_MAX_HOURS // 24} days after "
        "they started at the latest (the class's maxRunDurationSeconds). Its line names the group, its node and pool "
        f"(`kubectl -n {namespace} logs job/<the last {MAINTENANCE_GATE} job>`). Once an own pool can take a slice, "
        "move it back: docs/operate.md, 'A group on a fallback slice' (tpu-serving runbook --stack <your stack> prints "
        "the commands)."
    )
    return log_match_policy_args(
        project,
        f"{stack}: {FALLBACK_TITLE}",
        gate_filter(stack, namespace) + f' AND jsonPayload.fallback:"{gate_fallback.SAID}"',
        FALLBACK_RATE_LIMIT_SECONDS,
        text,
        Severity.WARNING,
        settings.channels(Severity.WARNING),
    )
