"""Fact tables for the ``network`` and ``prerequisites`` checks, each fact with its source."""

from __future__ import annotations

from dataclasses import dataclass

# --------------------------------------------------------------------------- Dataplane V2 (Cilium)

DPV2_IPBLOCK_MATCHES_NODES = False
"""Whether an ``ipBlock`` peer matches node addresses (hostNetwork pods, kubelet) on GKE Dataplane V2.

cilium/cilium@30a4939a5cea655a834eb886456e9225ee11ccb8:Documentation/security/policy/language.rst
("Selecting nodes with CIDR / ipBlock"): "By default, CIDR-based selectors do not match in-cluster
entities (pods or nodes)"; matching nodes needs ``--policy-cidr-match-mode=nodes`` (beta, default
empty). GKE (https://cloud.google.com/kubernetes-engine/docs/concepts/dataplane-v2) documents no
way to set it. Node sources carry the reserved ``host``/``remote-node`` identities
(https://github.com/cilium/cilium/issues/46571, /16308, /10405).
"""

DPV2_LOCAL_HOST_ALLOWED = True
"""Traffic from a pod's own node (kubelet probes) reaches a policy-isolated pod.

Cilium ``--allow-localhost`` default ``auto`` (https://github.com/cilium/cilium/pull/754): the
local host may reach local endpoints unless host-policy enforcement is on.
"""

METADATA_SERVER = ("169.254.169.254", 80)
"""Pod egress to the GKE metadata server as NetworkPolicy sees it on Dataplane V2.

https://cloud.google.com/kubernetes-engine/docs/concepts/workload-identity: "Allow egress to
169.254.169.252/32 on port 988. For clusters running GKE Dataplane V2, ensure that you allowed
egress to 169.254.169.254/32 on port 80." (The server itself runs on the node, port 988.)
"""

KUBE_DNS = ("kube-system", {"k8s-app": "kube-dns"}, 53)
"""kube-dns pods: namespace, pod labels, port (UDP and TCP).

GKE kube-dns Deployment labels ``k8s-app: kube-dns`` in ``kube-system``
(https://cloud.google.com/kubernetes-engine/docs/how-to/kube-dns).
"""

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Label the API server sets on every Namespace to its name (Kubernetes >= 1.22,
https://kubernetes.io/docs/concepts/services-networking/network-policies/#targeting-a-namespace-by-its-name)."""


@dataclass(frozen=True)
class FirewallRule:
    """An ingress VPC firewall rule GKE creates for every cluster."""

    name: str
    sources: str
    targets: str
    allows: str


GKE_CLUSTER_FIREWALL: tuple[FirewallRule, ...] = (
    # https://cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules ("GKE cluster firewall rules")
    FirewallRule(
        "gke-<cluster>-<hash>-vms",
        "node CIDR (10.128.0.0/9 on auto-mode networks)",
        "node tag",
        "TCP 1-65535, UDP 1-65535, ICMP",
    ),
    FirewallRule("gke-<cluster>-<hash>-all", "Pod CIDR", "node tag", "TCP, UDP, SCTP, ICMP, ESP, AH"),
)
"""Node-to-node, node-to-pod and pod-to-anything in the cluster are open at the VPC firewall."""

AUTO_MODE_SUBNETS: dict[str, str] = {
    # Primary range of the `default` (auto mode) subnet per region; /20s inside 10.128.0.0/9.
    # https://cloud.google.com/vpc/docs/subnets ("Auto mode IPv4 ranges"); us-east5 per the release
    # note "Expanded Auto mode VPC network IP ranges by adding a new 10.202.0.0/20 subnet in the
    # us-east5 (Columbus) region".
    "us-central1": "10.128.0.0/20",
    "us-east1": "10.142.0.0/20",
    "us-east4": "10.150.0.0/20",
    "us-east5": "10.202.0.0/20",
    "us-west1": "10.138.0.0/20",
    "us-west4": "10.182.0.0/20",
    "europe-west4": "10.164.0.0/20",
}

# --------------------------------------------------------------------------- controller-added pod labels

# --------------------------------------------------------------------------- APIs per resource type


@dataclass(frozen=True)
class ApiNeed:
    """A service API a resource (or a feature of it) needs enabled in the project."""

    api: str
    source: str


_GKE = "https://cloud.google.com/kubernetes-engine/docs/how-to/creating-a-regional-cluster"
_NAT = "https://cloud.google.com/nat/docs/set-up-manage-network-address-translation"
_VPC = "https://cloud.google.com/vpc/docs/create-modify-vpc-networks"
_IAM_SA = "https://cloud.google.com/iam/docs/service-accounts-create"
_GCS = "https://cloud.google.com/storage/docs/creating-buckets"
_CRM = "https://cloud.google.com/resource-manager/reference/rest/v1/projects/setIamPolicy"
_DASHBOARDS = "https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards (Cloud Monitoring API)"
_ALERTS = "https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies (Cloud Monitoring API)"

API_BY_TYPE: dict[str, tuple[ApiNeed, ...]] = {
    "gcp:container/cluster:Cluster": (
        ApiNeed("container.googleapis.com", f"{_GKE} (Before you begin: enable the Google Kubernetes Engine API)"),
        ApiNeed("compute.googleapis.com", f"{_GKE} (GKE nodes are Compute Engine VMs)"),
    ),
    "gcp:container/nodePool:NodePool": (
        ApiNeed("container.googleapis.com", "https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools"),
    ),
    "gcp:compute/router:Router": (ApiNeed("compute.googleapis.com", _NAT),),
    "gcp:compute/routerNat:RouterNat": (ApiNeed("compute.googleapis.com", _NAT),),
    "gcp:compute/network:Network": (ApiNeed("compute.googleapis.com", _VPC),),
    "gcp:compute/subnetwork:Subnetwork": (ApiNeed("compute.googleapis.com", _VPC),),
    "gcp:serviceaccount/account:Account": (ApiNeed("iam.googleapis.com", _IAM_SA),),
    "gcp:serviceaccount/iAMMember:IAMMember": (ApiNeed("iam.googleapis.com", _IAM_SA),),
    "gcp:storage/bucket:Bucket": (ApiNeed("storage.googleapis.com", _GCS),),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (ApiNeed("storage.googleapis.com", _GCS),),
    "gcp:projects/iAMMember:IAMMember": (ApiNeed("cloudresourcemanager.googleapis.com", _CRM),),
    "gcp:monitoring/dashboard:Dashboard": (ApiNeed("monitoring.googleapis.com", _DASHBOARDS),),
    "gcp:monitoring/alertPolicy:AlertPolicy": (ApiNeed("monitoring.googleapis.com", _ALERTS),),
}
"""API each GCP resource type needs (the REST API that serves it)."""


@dataclass(frozen=True)
class FeatureApi:
    """An API a cluster/node-pool feature needs when an input path is true."""

    path: tuple[str, ...]
    api: str
    source: str


FEATURE_APIS: tuple[FeatureApi, ...] = (
    FeatureApi(
        ("nodeConfig", "gcfsConfig", "enabled"),
        "containerfilesystem.googleapis.com",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming"
        " (Requirements: enable the Container File System API)",
    ),
    FeatureApi(
        ("nodePoolDefaults", "nodeConfigDefaults", "gcfsConfig", "enabled"),
        "containerfilesystem.googleapis.com",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming",
    ),
    FeatureApi(
        ("monitoringConfig", "managedPrometheus", "enabled"),
        "monitoring.googleapis.com",
        "https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed (Cloud Monitoring API)",
    ),
    FeatureApi(
        ("loggingConfig", "enableComponents"),
        "logging.googleapis.com",
        "https://cloud.google.com/kubernetes-engine/docs/concepts/about-logs (Cloud Logging API)",
    ),
)

SERVICE_TYPE = "gcp:projects/service:Service"
"""How a stack enables an API (pulumi-gcp ``gcp.projects.Service``, inputs ``service``, ``disableOnDestroy``)."""

GROUPS_FOR_RBAC = "https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac"
"""Google Groups for RBAC: the cluster needs ``authenticatorGroupsConfig.securityGroup`` =
``gke-security-groups@<domain>`` for Group subjects to be recognised."""

CLOUD_NAT_FOR_PRIVATE_NODES = "https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters#docker_hub"
"""Private nodes have no external IP: pulling images from outside Google (e.g. docker.io) needs Cloud NAT."""
