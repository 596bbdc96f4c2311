"""The ticket for a cluster whose node upgrades are held: GKE's notice that its version nears the end of support, or
that a security bulletin concerns it.

A stack that holds node upgrades back (a maintenance exclusion of scope ``NO_MINOR_OR_NODE_UPGRADES`` or
``NO_UPGRADES`` until the end of support, so that GKE never upgrades a slice under a group that reloads for an hour:
docs/upgrade.md) patches its nodes only when someone runs the manual, pool-by-pool upgrade. At the end of support GKE
upgrades anyway, on its schedule, honouring a disruption budget for an hour at most; a security bulletin may want the
patch sooner. Nothing said either was coming (SRE review round 44, M4).

GKE sends cluster notifications to Cloud Logging by default: "Cluster notifications are sent to Cloud Logging by
default. You can use all the capabilities of Cloud Logging, including querying and viewing logs, and configuring
log-based alerting policies"; among them, "You are notified when your cluster is running a GKE minor version that is
at or near the end of support" (GKE "Cluster notifications",
https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-notifications). The notification types are the
API's ``NotificationConfig.EventType`` (``SECURITY_BULLETIN_EVENT``, ``UPGRADE_INFO_EVENT``, which carries the end of
support: https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/UpgradeInfoEvent). The entries' log id
(``container.googleapis.com/notifications``), their ``@type`` and the ``END_OF_SUPPORT`` event type are as exported
Cloud Monitoring policies in public configurations match them ("GKE Version Nearing End of Support", on
``resource.type=("gke_cluster" OR "gke_nodepool")``); the stored copies of GKE's page stop before its Logging
query. Not seen on a real cluster here.

Plain data in, plain data out, like :mod:`tpu_serving.operations.maintenance.host_maintenance`.
"""

import pulumi_gcp as gcp

from ..observability_settings import ObservabilitySettings, Severity
from .alert_policies import log_match_policy_args

KEY = "cluster-notices"
TITLE = "GKE end of support or security bulletin"
SEVERITY = Severity.WARNING
"""A ticket: the end of support is announced ahead, and a bulletin asks for a planned upgrade."""
LOG_ID = "container.googleapis.com/notifications"
TYPES = "type.googleapis.com/google.container.v1beta1"
RATE_LIMIT_SECONDS = 86400
"""At most one notification a day: the notices repeat as the date nears."""
RUNBOOK = 'docs/upgrade.md, "Node drains and upgrades: one group at a time"'


def notices_filter(cluster: str) -> str:
    """The Logging filter of the cluster's end-of-support and security-bulletin notifications."""
    end_of_support = f'(jsonPayload.@type="{TYPES}.UpgradeInfoEvent" AND jsonPayload.eventType="END_OF_SUPPORT")'
    bulletin = f'jsonPayload.@type="{TYPES}.SecurityBulletinEvent"'
    return (
        f'resource.type=("gke_cluster" OR "gke_nodepool") AND resource.labels.cluster_name="{cluster}" AND '
        f'log_id("{LOG_ID}") AND ({end_of_support} OR {bulletin})'
    )


def runbook(cluster: str) -> str:
    return (
        f"GKE says cluster {cluster}'s version nears the end of support, or a security bulletin concerns it "
        "(the log entry's jsonPayload: description, standardSupportEndTime; bulletinUri). This stack holds node "
        "upgrades back, so nothing patches the nodes until you upgrade them; at the end of support GKE upgrades "
        "them on its own schedule, honouring the groups' disruption budget for an hour at most, and a group "
        "reloads for about as long. Upgrade the node pools yourself before then, one TPU pool at a time, the next "
        f"once its group serves again, the CPU pool too: {RUNBOOK}."
    )


def policy_args(project: str, cluster: str, settings: ObservabilitySettings) -> gcp.monitoring.AlertPolicyArgs:
    """The WARNING policy with one log-match condition on :func:`notices_filter`, to the ticket channels."""
    return log_match_policy_args(
        project,
        f"{cluster}: {TITLE}",
        notices_filter(cluster),
        RATE_LIMIT_SECONDS,
        runbook(cluster),
        SEVERITY,
        settings.channels(SEVERITY),
    )
