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
- the preview's ``Maintenance:`` line of every serving stack (:func:`zone_line`), one builder for all backends.

Plain data in, plain data out, like :mod:`tpu_serving.error_rate`.
"""

from collections.abc import Sequence

import pulumi_gcp as gcp

from .alert_policies import log_match_policy_args
from .observability_settings import ObservabilitySettings, Severity

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


def upcoming_filter(project: str, zones: Sequence[str]) -> str:
    """The Logging filter of the pending upcoming-maintenance notifications of the project's VMs in ``zones``
    (:data:`PENDING` cites the entry)."""
    where = " OR ".join(f'resource.labels.zone="{z}"' for z in sorted(set(zones)))
    return (
        f'logName="projects/{project}/logs/{SYSTEM_EVENT_LOG}" AND resource.type="gce_instance" AND '
        f'protoPayload.methodName="{UPCOMING_METHOD}" AND protoPayload.metadata.maintenanceStatus="{PENDING}" AND '
        f"({where})"
    )


def runbook(zones: Sequence[str]) -> str:
    """What the ticket asks: find the nodes, then start the maintenance a pool at a time (:data:`RUNBOOK`)."""
    return (
        f"Compute Engine scheduled host maintenance for a VM in {', '.join(sorted(set(zones)))}, where the serving "
        "slices run: when it comes, it interrupts the VM's whole slice, and a zonal wave can take every slice of "
        f"the zone at once. Find the nodes: kubectl get nodes -l {SCHEDULED_LABEL} -L {SCHEDULED_LABEL} (Unix "
        f"epoch seconds; GKE {LABELS_SINCE} or later). Then start it yourself, one node pool at a time, the next "
        f"once the groups serve again: {RUNBOOK}."
    )


def policy_args(
    project: str, stack: str, zones: Sequence[str], settings: ObservabilitySettings
) -> gcp.monitoring.AlertPolicyArgs:
    """The WARNING policy with one log-match condition on :func:`upcoming_filter`, to the ticket channels."""
    return log_match_policy_args(
        project,
        f"{stack}: {TITLE}",
        upcoming_filter(project, zones),
        RATE_LIMIT_SECONDS,
        runbook(zones),
        SEVERITY,
        settings.channels(SEVERITY),
    )


def zone_line(pools: Sequence[tuple[str, str]]) -> str:
    """The preview's ``Maintenance:`` line: whether the serving slices' node pools (``(pool, zone)`` pairs) share a
    zone, and so whether one zonal maintenance wave can take every group; where the runbook is."""
    zones = sorted({z for _, z in pools})
    how = (
        f"GKE labels a node {SCHEDULED_LABEL} before its VM's host maintenance (GKE {LABELS_SINCE} or later); start "
        f"it one pool at a time, the next once the groups serve again ({RUNBOOK})"
    )
    if len(pools) == 1:
        return f"the only serving slice ({pools[0][0]}, {zones[0]}): its host maintenance stops the service; {how}"
    if len(zones) == 1:
        return (
            f"all {len(pools)} serving slices are in {zones[0]}: one zonal maintenance wave can take every group at "
            f"once, which more slices in the same zone do not prevent (tpuSlices[].zone spreads them); {how}"
        )
    return (
        f"the {len(pools)} serving slices span {', '.join(zones)}: a zonal maintenance wave takes only the groups "
        f"of its zone; {how}"
    )
