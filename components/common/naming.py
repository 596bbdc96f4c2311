"""The one place where GCP and Kubernetes names are made and checked.

Every name the library derives (node pools, service accounts, buckets) is made by a function
here from the names the user chose, and checked by :func:`check_dns_name` against RFC 1123
label rules (lower-case alphanumerics and ``-``, starting with a letter, ending with an
alphanumeric) and the length limit of the kind of object being named. Names are never
silently truncated: a name that does not fit is a configuration error the user sees at
preview time, naming the key to change, because a truncated name would differ from the one
they chose.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from enum import IntEnum

from .gcp_zones import READ as ZONES_READ
from .gcp_zones import SOURCE as ZONES_SOURCE
from .gcp_zones import zones_of

NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
"""Node label GKE sets to the node pool name (the exclusive-topology key of LWS and JobSet)."""


_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

_CONTINENTS = "africa|asia|australia|europe|me|northamerica|southamerica|us"
_DIRECTIONS = "central|east|west|north|south|northeast|northwest|southeast|southwest"
REGION = re.compile(rf"^(?:{_CONTINENTS})-(?:{_DIRECTIONS})[0-9]+$")
"""A GCP region, ``<continent>-<direction><n>``, e.g. ``us-east5``: every region of the published list is named so
(https://cloud.google.com/compute/docs/regions-zones#available: africa-south1, asia-northeast3, europe-west4,
me-central2, northamerica-northeast1, southamerica-west1, us-west4, ...). A name such as ``us-westt4`` is none."""
ZONE = re.compile(rf"^((?:{_CONTINENTS})-(?:{_DIRECTIONS})[0-9]+)-[a-z]$")
"""A GCP zone, ``<region>-<letter>`` (https://cloud.google.com/compute/docs/regions-zones: zone names
are the region followed by a letter). Which letters a region has is :mod:`tpu_serving.common.gcp_zones`' table."""

REGION_PROBLEM = (
    "must be a GCP region, <continent>-<direction><n> such as us-east5 or europe-west4 "
    f"(continents: {_CONTINENTS.replace('|', ', ')}; directions: {_DIRECTIONS.replace('|', ', ')})"
)


def region_problem(region: str) -> str:
    """Why ``region`` is not a GCP region name (:data:`REGION`), or ``""``."""
    return "" if REGION.match(region) else REGION_PROBLEM


def region_problems(region: object) -> list[str]:
    """The rule of an arguments class with ``region``, as its ``problems()`` reports it."""
    if isinstance(region, str) and (problem := region_problem(region)):
        return [f"region = {region!r}: {problem}"]
    return []


def zone_choices(region: str) -> str:
    """The valid zones of ``region`` as a problem names them: the region's zones from
    :data:`tpu_serving.common.gcp_zones.REGION_ZONES`, or the form alone for a region the table does not hold."""
    zones = zones_of(region)
    if zones is not None:
        return ", ".join(zones)
    return f"zones of the form {region}-<letter>, e.g. {region}-a, {region}-b, {region}-c"


def zone_problem(zone: str, region: str) -> str:
    """Why ``zone`` is not a zone of ``region``, or ``""``. A regional cluster's node pools run only in
    zones of the cluster's region (``node_locations``: "The list of zones in which the node pool's nodes
    should be located. Nodes must be in the region of their regional cluster", terraform-provider-google
    google_container_node_pool; https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters),
    and only in a zone the region has (:mod:`tpu_serving.common.gcp_zones`: ``us-west4-z`` is none)."""
    m = ZONE.match(zone)
    if not m:
        return "must be a GCP zone such as us-east5-b"
    if m.group(1) != region:
        return f"zone is outside the region {region!r}; valid: {zone_choices(region)}"
    zones = zones_of(region)
    if zones is not None and zone not in zones:
        return f"not a zone of the region {region!r} ({ZONES_SOURCE}, read {ZONES_READ}); valid: {', '.join(zones)}"
    return ""


PROJECT_ID = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
"""A GCP project ID: 6 to 30 lower-case letters, digits or hyphens, starting with a letter and not ending with a
hyphen (https://cloud.google.com/resource-manager/docs/creating-managing-projects#identifying_projects)."""


def project_id_problem(project: str) -> str:
    """Why ``project`` is not a GCP project ID (:data:`PROJECT_ID`), or ``""``."""
    if PROJECT_ID.match(project):
        return ""
    return "must be a GCP project ID: 6 to 30 lower-case letters, digits or '-', starting with a letter"


RESERVATION = re.compile(
    r"^(?:projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/reservations/)?[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"
    r"(?:/reservationBlocks/[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)?$"
)
"""What a node pool's specific reservation affinity takes as its value: a reservation's name (1 to 63 characters,
RFC 1035: Compute Engine API v1, ``Reservation.name``), or ``projects/<owner>/reservations/<name>`` for a reservation
shared from another project (Compute Engine API v1, ``ReservationAffinity.values``: "either a name to a reservation
in the same project or projects/different-project/reservations/some-reservation-name"), either one optionally
narrowed to one of its blocks, ``<reservation>/reservationBlocks/<block>`` (block names are RFC 1035 too: Compute
Engine API v1, ``ReservationBlock.name``)."""


def reservation_problem(reservation: str | None) -> str:
    """Why ``reservation`` is not what a node pool's specific reservation affinity takes (:data:`RESERVATION`), or
    ``""``."""
    if reservation is None or RESERVATION.match(reservation):
        return ""
    return (
        "must be a Compute Engine reservation's name (1 to 63 lower-case letters, digits or '-', starting with a "
        "letter and not ending with '-'), or projects/<project>/reservations/<name> for one shared from another "
        "project, optionally followed by /reservationBlocks/<block>"
    )


def service_account_id_problem(account_id: str) -> str:
    """Why ``account_id`` is not the ``account_id`` of a GCP service account (6 to 30 characters, DNS-1123), or ``""``."""
    return check_dns_name(account_id, limit=NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)


def project_problems(project: object) -> list[str]:
    """The rule of an arguments class with ``project``, as its ``problems()`` reports it (a field that is not a
    string is the type check's to report)."""
    if isinstance(project, str) and (problem := project_id_problem(project)):
        return [f"project = {project!r}: {problem}"]
    return []


def zone_problems(zone: object, region: object) -> list[str]:
    """The rule of an arguments class with ``zone`` and ``region``, as its ``problems()`` reports it: nothing
    while either is not a string (the type check reports that)."""
    if isinstance(region, str) and region_problem(region):
        return region_problems(region)
    if isinstance(zone, str) and isinstance(region, str) and (problem := zone_problem(zone, region)):
        return [f"zone = {zone!r}: {problem}"]
    return []


GCP_LABELS_MAX = 64
"""Labels one GCP resource may carry ("Each resource can have up to 64 labels",
https://cloud.google.com/resource-manager/docs/labels-overview#requirements)."""
LIBRARY_LABEL_KEYS = ("app", "deployment", "managed-by")
"""The GCP labels the deployment puts on every labelled resource, besides the stack's ``labels``."""


class NameLimit(IntEnum):
    """Length limits of the names the library makes, by kind of object."""

    GKE_CLUSTER = 40
    """GKE cluster names."""
    GKE_NODE_POOL = 40
    """GKE node pool names."""
    GCP_SERVICE_ACCOUNT_ID = 30
    """The ``account_id`` of a GCP service account (at least 6 characters)."""
    GCS_BUCKET = 63
    """GCS bucket names (without dots)."""
    K8S_LABEL = 63
    """Kubernetes namespaces, Services, label values and other DNS-1123 labels."""
    GCP_RESOURCE = 63
    """Compute Engine resource names, e.g. the URL maps and backend services GKE makes for a Gateway (1 to 63
    characters, ``[a-z]([-a-z0-9]*[a-z0-9])?``: Compute Engine's resource naming convention)."""


class NameError_(ValueError):
    """A name that breaks DNS-1123 rules or a length limit."""


def dns_name(*parts: str, limit: NameLimit = NameLimit.K8S_LABEL, min_length: int = 1) -> str:
    """Join ``parts`` with ``-`` and check the result against DNS-1123 rules and ``limit``.

    >>> dns_name("llama405b", "tpu", "v6e16")
    'llama405b-tpu-v6e16'
    """
    name = "-".join(p for p in parts if p)
    problems = check_dns_name(name, limit=limit, min_length=min_length)
    if problems:
        raise NameError_(f"{name!r}: {problems}")
    return name


def check_dns_name(name: str, *, limit: NameLimit = NameLimit.K8S_LABEL, min_length: int = 1) -> str:
    """Return why ``name`` is not a valid name of this kind, or ``""`` if it is."""
    if not min_length <= len(name) <= int(limit):
        # no kind in the message: limits of equal length are one member of the IntEnum (GKE_NODE_POOL is
        # GKE_CLUSTER, K8S_LABEL and GCP_RESOURCE are GCS_BUCKET), so its name would name another kind
        return f"must be {min_length} to {int(limit)} characters, got {len(name)}"
    if not _LABEL.match(name):
        return "must consist of lower-case letters, digits and '-', start with a letter and end with a letter or digit"
    return ""


def gateway_name(service: str) -> str:
    """The Gateway, HTTPRoute and InferencePool in front of the Service ``service`` (one name for all three)."""
    return f"{service}-gateway"


URL_MAP_FIXED = len("gkegw1-xxxx-") + len("-") + len("-xxxxxxxxxxxx")
"""The characters of the URL map name GKE's Gateway controller gives Gateway ``<namespace>/<name>``,
``gkegw1-<4>-<namespace>-<name>-<12>``, beside the namespace and the name. A Compute Engine name holds 63 characters,
and GKE cuts longer ones (observed: its backend service ``gkegw1-jgyx-kalchem-access-advisor-middleware-8000-
78qnvyiusmha``, 63 characters, namespace ``kalchemy`` cut to ``kalchem``; GKE review round 68, m1)."""


def gateway_url_map_problem(namespace: str, gateway: str) -> str:
    """Why the URL map of Gateway ``namespace/gateway`` would be cut, so that the Gateway alerts, which match its
    whole name (:func:`tpu_serving.operations.alerts.gateway_alerts.url_map_pattern`), read nothing; or ``""``."""
    length = URL_MAP_FIXED + len(namespace) + len(gateway)
    if length <= int(NameLimit.GCP_RESOURCE):
        return ""
    return (
        f"GKE names the Gateway's URL map gkegw1-<4>-{namespace}-{gateway}-<12>, {length} characters; it cuts names to "
        f"{int(NameLimit.GCP_RESOURCE)}, and the Gateway's error-rate and near-timeout alerts, which match the whole "
        f"name, would read nothing: keep the namespace and the Gateway's name within "
        f"{int(NameLimit.GCP_RESOURCE) - URL_MAP_FIXED} characters together"
    )


SERVING_PRIORITY = "tpu-serving-online"
"""PriorityClass of serving workloads (:mod:`tpu_serving.tenancy.tenant` creates it)."""


def prober_name(service: str) -> str:
    """The serving probe's Deployment, ConfigMap and PodMonitoring in front of the Service ``service``."""
    return f"{service}-prober"


def gateway_prober_name(service: str) -> str:
    """The serving probe's PodMonitoring (and ``job``) through the Gateway of Service ``service``."""
    return f"{prober_name(service)}-gateway"


def pool_name(cluster: str, pool: str) -> str:
    """The GKE node pool of slice pool ``pool``: ``<cluster>-<pool>``."""
    return f"{cluster}-{pool}"


def pool_resource_name(pool: str) -> str:
    """The Pulumi name of the ``NodePool`` of GKE node pool ``pool``: the GKE name itself, unique in its cluster, so
    adding, removing or reordering a pool leaves the other pools' URNs as they were (library review, M5)."""
    return pool


def legacy_pool_resource_name(component: str, index: int, count: int) -> str:
    """The Pulumi name of pool ``index`` of ``count`` of a ``TpuNodePool`` ``component`` before
    :func:`pool_resource_name` (for the aliases): ``<component>-pool`` for one, ``<component>-<index>`` of several."""
    return f"{component}-pool" if count == 1 else f"{component}-{index}"


def cpu_pool_name(cluster: str) -> str:
    """The cluster's CPU node pool: ``<cluster>-cpu``."""
    return f"{cluster}-cpu"


def nat_router_name(cluster: str) -> str:
    """The Cloud Router of a private cluster's NAT: ``<cluster>-nat-router``."""
    return f"{nat_name(cluster)}-router"


def nat_name(cluster: str) -> str:
    """The Cloud NAT of a private cluster: ``<cluster>-nat``."""
    return f"{cluster}-nat"


def head_pool_name(cluster: str) -> str:
    """The Pathways head's CPU node pool: ``<cluster>-head``."""
    return f"{cluster}-head"


def bucket_name(project: str, cluster: str, purpose: str, chosen: str | None = None) -> str:
    """A bucket's name: the one chosen, or ``<project>-<cluster>-<purpose>``."""
    return chosen or f"{project}-{cluster}-{purpose}"


def workload_service_account_id(cluster: str, chosen: str | None = None) -> str:
    """The workloads' GCP service account id: the one chosen, or ``<cluster>-wl``."""
    return chosen or f"{cluster}-wl"


def node_service_account_id(cluster: str, slice_name: str) -> str:
    """The node service account id of a slice kind's pools: ``<cluster>-<slice name>``."""
    return f"{cluster}-{slice_name}"


def compute_class_name(namespace: str) -> str:
    """The (cluster-scoped) ComputeClass of the serving in ``namespace``, one per namespace (SRE review m3): ``<ns>-serving``."""
    return f"{namespace}-serving"


def workload_policy_name(cluster: str, slice_name: str) -> str:
    """The workload policy that places a slice kind's pools (multi-host TPU7x): ``<cluster>-<slice name>-placement``."""
    return f"{cluster}-{slice_name}-placement"


def cpu_service_account_id(cluster: str) -> str:
    """The CPU pool's node service account id: ``<cluster>-nodes``."""
    return f"{cluster}-nodes"


def head_service_account_id(cluster: str) -> str:
    """The Pathways head pool's node service account id: ``<cluster>-head``."""
    return f"{cluster}-head"


def proxy_only_subnet_name(cluster: str) -> str:
    """The proxy-only subnet a cluster's gateway creates: ``<cluster>-proxy-only``."""
    return f"{cluster}-proxy-only"


def gateway_address_name(cluster: str, gateway: str) -> str:
    """The regional internal address a cluster's Gateway ``gateway`` is given: ``<cluster>-<gateway>``, one per
    project, region and name (the cluster's name keeps two stacks of a project and region apart)."""
    return f"{cluster}-{gateway}"


def mirror_repository_id(cluster: str, upstream: str) -> str:
    """The Artifact Registry remote repository a cluster's images of ``upstream`` are pulled through:
    ``<cluster>-<upstream>`` (``dockerhub``, ``ghcr``). One per project, location and id: the cluster's name keeps
    two stacks of a project and region apart."""
    return f"{cluster}-{upstream}"


def service_account_email(account_id: str, project: str) -> str:
    """A user-managed service account's email: ``<account id>@<project>.iam.gserviceaccount.com``."""
    return f"{account_id}@{project}.iam.gserviceaccount.com"


def deployer_grant_name(component: str, member: str) -> str:
    """The Pulumi name of a model deployer's grant on the node account: ``<component>-deployer-<member>``, the member
    with each run of characters other than letters, digits, ``@._-`` as one ``-`` (a URN holds no ``::``)."""
    return f"{component}-deployer-{re.sub(r'[^A-Za-z0-9@._-]+', '-', member)}"


def group_recreations_metric(cluster: str, namespace: str) -> str:
    """The log-based metric counting the leader-worker group recreations of a cluster's serving namespace:
    ``<cluster>-<ns>-lws-group-recreations`` (:func:`namespaced_metric`). One per namespace: a log-based metric's name
    is unique in its project, and two namespaces' ``Observability`` on one cluster each create theirs (library review
    3, B1)."""
    return namespaced_metric(cluster, namespace, "lws-group-recreations")


def refused_pods_metric(cluster: str, namespace: str) -> str:
    """The log-based metric counting the serving StatefulSets' refused pod creations of a cluster's namespace:
    ``<cluster>-<ns>-lws-pods-refused`` (:func:`namespaced_metric`)."""
    return namespaced_metric(cluster, namespace, "lws-pods-refused")


MAINTENANCE_GATE = "host-maintenance-gate"
"""The host-maintenance gate's CronJob, ServiceAccount, ConfigMap, Role and container in the serving namespace
(:mod:`tpu_serving.operations.maintenance.host_maintenance_job`)."""


MAINTENANCE_GATE_STATE = f"{MAINTENANCE_GATE}-state"
"""The gate's ConfigMap of what it remembers between runs (the maintenance windows GKE announced on its nodes)."""


def maintenance_gate_cluster_name(namespace: str) -> str:
    """The gate's cluster-scoped objects (ClusterRole, ValidatingAdmissionPolicy and their bindings), one per serving
    namespace: ``<ns>-host-maintenance-gate``."""
    return f"{namespace}-{MAINTENANCE_GATE}"


OPERATOR = "tpu-serving-operator"
"""The operators' Role and RoleBinding in the serving namespace (:mod:`tpu_serving.tenancy.operator_access`)."""


def operator_nodes_name(namespace: str) -> str:
    """The operators' ClusterRole and ClusterRoleBinding for the nodes the runbooks cordon, drain, taint and label,
    one per serving namespace: ``<ns>-tpu-serving-operator``."""
    return f"{namespace}-{OPERATOR}"


LOG_METRIC_NAME_MAX = 100
"""A log-based metric's name: "Metric identifiers are limited to 100 characters" (pulumi-gcp 10.2.0
logging/metric.py l.64, ``name``)."""


def namespaced_metric(cluster: str, namespace: str, what: str) -> str:
    """A log-based metric of a cluster's namespace: ``<cluster>-<ns>-<what>``, the namespace replaced by the first 8
    hex digits of its sha256 when the name would pass :data:`LOG_METRIC_NAME_MAX`."""
    name = f"{cluster}-{namespace}-{what}"
    if len(name) <= LOG_METRIC_NAME_MAX:
        return name
    return f"{cluster}-{hashlib.sha256(namespace.encode()).hexdigest()[:8]}-{what}"


def maintenance_gate_metric(cluster: str, namespace: str) -> str:
    """The log-based metric counting the gate's runs: ``<cluster>-<ns>-maintenance-gate-runs``
    (:func:`namespaced_metric`)."""
    return namespaced_metric(cluster, namespace, "maintenance-gate-runs")


RESERVED_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "gmp-system", "gmp-public")
"""Namespaces a workload must not use. ``kube-*``: Kubernetes' own ("Avoid creating namespaces with the prefix
``kube-``, since it is reserved for Kubernetes system namespaces",
https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/#initial-namespaces); in GKE, writes to
``kube-system`` are denied by GKE Warden ("the namespace "kube-system" is managed and the request's verb "create" is
denied", the error quoted in gitlab-org/charts/gitlab issue 5007). ``gmp-system`` and ``gmp-public``: Managed Service
for Prometheus creates both when managed collection is on, "Don't modify or deploy anything in" ``gmp-system``, and
``gmp-public`` holds its OperatorConfig
(https://cloud.google.com/kubernetes-engine/multi-cloud/docs/azure/how-to/managed-service-prometheus; the same setup
on GKE: https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed); a stack that creates either
namespace collides with the one GKE made. ``gke-managed-*``: the prefix of the namespaces GKE makes for its managed
components; the GKE documentation searched for this rule does not list them, so it rests on that naming."""
RESERVED_NAMESPACE_PREFIXES = ("kube-", "gke-managed-")
"""Prefixes of the reserved namespaces (:data:`RESERVED_NAMESPACES`)."""


DEFAULT_NAMESPACE = "default"
"""The namespace every cluster has (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/
#initial-namespaces): pulumi-kubernetes creates an object with a client-side create, which the API server refuses
for one that exists (AlreadyExists: pulumi/pulumi-kubernetes PR #4278, "Use client-side create to prevent silent
upsert of existing objects", merged 2026-04-13), and a tenancy there would confine every other workload of it
(new-user review 16, M1; library review 7, m1)."""


def namespace_problem(namespace: str) -> str:
    """Why ``namespace`` cannot be a workload's namespace (not a DNS-1123 label, or a namespace Kubernetes or GKE
    reserves: :data:`RESERVED_NAMESPACES`), or ``""``."""
    if problem := check_dns_name(namespace):
        return problem
    if namespace == DEFAULT_NAMESPACE:
        return (
            f"{namespace!r} is every cluster's own namespace: the stack would declare it (the first pulumi up fails: "
            "it already exists) and put its quota and NetworkPolicies on everything else there; valid: a namespace of "
            "the serving's own, any other DNS-1123 label"
        )
    if namespace in RESERVED_NAMESPACES or namespace.startswith(RESERVED_NAMESPACE_PREFIXES):
        return (
            f"{namespace!r} is a namespace Kubernetes or GKE reserves for its own components; valid: any other "
            f"DNS-1123 label (not {', '.join(RESERVED_NAMESPACES)}, nor kube-* or gke-managed-*)"
        )
    return ""


EMAIL = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
"""An email address, as GKE names a Google account or a Google Group in an RBAC subject: "the user's email address"
(kind User) and "the Google Group's email address" (kind Group; the group must be a member of
gke-security-groups@<domain>): https://cloud.google.com/kubernetes-engine/docs/how-to/role-based-access-control and
https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac."""


def email_problem(address: str) -> str:
    """Why ``address`` is not an email address (:data:`EMAIL`), or ``""``."""
    if EMAIL.match(address):
        return ""
    return "must be an email address such as alice@example.com (GKE maps Google accounts and Google Groups by email)"


_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
"""GCP label keys and values: lower-case letters, digits, ``_`` and ``-``, at most 63 characters; a key starts with a
lower-case letter, a value may be empty (https://cloud.google.com/compute/docs/labeling-resources#requirements)."""


def labels_problem(labels: object) -> str:
    """Why ``labels`` are not GCP labels (:data:`_LABEL_KEY`, :data:`_LABEL_VALUE`, :data:`GCP_LABELS_MAX` with the
    deployment's own :data:`LIBRARY_LABEL_KEYS`), or ``""``: the rule of the stack's ``labels`` and the components'."""
    if not isinstance(labels, Mapping):
        return ""  # the type check's to report
    bad = [k for k in labels if not (isinstance(k, str) and _LABEL_KEY.match(k))] + [
        v for v in labels.values() if not (isinstance(v, str) and _LABEL_VALUE.match(v))
    ]
    if bad:
        return (
            "GCP labels must be lower-case letters, digits, '_' or '-' (at most 63; a key starts with a letter); "
            f"bad: {', '.join(map(str, bad))}"
        )
    own = [k for k in LIBRARY_LABEL_KEYS if k not in labels]
    if len(labels) + len(own) > GCP_LABELS_MAX:
        return (
            f"{len(labels)} labels and the deployment's own {len(own)} ({', '.join(own)}) make "
            f"{len(labels) + len(own)}; a GCP resource carries at most {GCP_LABELS_MAX}"
        )
    return ""


PROMETHEUS_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
"""A Prometheus label name (https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels): Cloud Monitoring
takes a PromQL condition's ``alertRule`` only as one ("If this field is not empty, then it must be a valid Prometheus
label name", pulumi-gcp 10.2.0 monitoring/_inputs.py
AlertPolicyConditionConditionPrometheusQueryLanguageArgs.alert_rule), and ``ruleGroup`` alike."""


def label_name(text: str) -> str:
    """``text`` as a Prometheus label name: every other character becomes ``_``, and a leading digit gets one."""
    name = re.sub(r"[^a-zA-Z0-9_]", "_", text)
    return name if PROMETHEUS_LABEL_NAME.match(name) else f"_{name}"


def zones_problems(key: str, zones: object, region: object) -> list[str]:
    """The rule of a list of zones (``key``, e.g. ``cpu_pool_zones``) in ``region``: each a zone of the region
    (:func:`zone_problem`), none twice; nothing while either is not what its type says (the type check reports it)."""
    if not isinstance(zones, (list, tuple)) or not isinstance(region, str) or region_problem(region):
        return []
    found = [
        f"{key}[{i}] = {z!r}: {problem}"
        for i, z in enumerate(zones)
        if isinstance(z, str) and (problem := zone_problem(z, region))
    ]
    found += [f"{key}[{i}] = {z!r}: named twice" for i, z in enumerate(zones) if z in zones[:i]]
    return found
