"""Fact tables for the ``network`` and ``prerequisites`` checks, each fact with its source."""

from __future__ import annotations

import re
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
_LOG_METRICS = "https://cloud.google.com/logging/docs/reference/v2/rest/v2/projects.metrics (Cloud Logging API)"

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
    "gcp:logging/metric:Metric": (ApiNeed("logging.googleapis.com", _LOG_METRICS),),
    "gcp:artifactregistry/repository:Repository": (
        ApiNeed(
            "artifactregistry.googleapis.com",
            "https://cloud.google.com/artifact-registry/docs/repositories/remote-repo (Before you begin: enable the "
            "Artifact Registry API)",
        ),
    ),
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
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
"""How a stack enables an API (pulumi-gcp ``gcp.projects.Service``, inputs ``service``, ``disableOnDestroy``)."""

GROUPS_FOR_RBAC = "https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac"
"""Google Groups for RBAC: the cluster needs ``authenticatorGroupsConfig.securityGroup`` =
``gke-security-groups@<domain>`` for Group subjects to be recognised."""

NAT_PER_SUBNET_RANGE = (
    "https://cloud.google.com/python/docs/reference/compute/latest/google.cloud.compute_v1.types.RouterNat."
    "SourceSubnetworkIpRangesToNat"
)
"""A Cloud NAT that serves every subnet range of its network and region (``ALL_SUBNETWORKS_ALL_IP_RANGES``)
must be the only one there: "if this field contains ALL_SUBNETWORKS_ALL_IP_RANGES then there should not be any
other Router.Nat section in any Router for this network in this region" (Compute API ``RouterNat``)."""

CLOUD_NAT_FOR_PRIVATE_NODES = "https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters#docker_hub"
"""Private nodes have no external IP: pulling images from outside Google (e.g. docker.io) needs Cloud NAT."""

# --------------------------------------------------------------------------- admission rules of the cloud APIs

_PG = "pulumi-gcp 10.2.0 (the pinned provider's API documentation, bridged from terraform-provider-google)"

GKE_NODE_POOL_LOCATION = (
    "GKE API projects.locations.clusters.nodePools.create: the node pool is created under its cluster's "
    "parent 'projects/*/locations/*/clusters/*' (https://cloud.google.com/kubernetes-engine/docs/reference/rest/"
    "v1/projects.locations.clusters.nodePools/create); a pool's location other than its cluster's names no "
    "cluster (terraform-provider-google google_container_node_pool 'location: The location (region or zone) of "
    "the cluster')"
)
GKE_NAMES = (
    "GKE API Cluster.name: 'up to 40 characters: lowercase letters, numbers, and hyphens only; must start "
    "with a letter; must end with a number or a letter' (google-cloud-container container_v1.types.Cluster; "
    "node pool names alike, https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools)"
)
RELEASE_CHANNELS = frozenset({"UNSPECIFIED", "RAPID", "REGULAR", "STABLE", "EXTENDED"})
GKE_RELEASE_CHANNEL = f"{_PG} pulumi_gcp/container/_inputs.py:22931-22935 (ClusterReleaseChannel.channel)"
AR_REPOSITORY_MODES = frozenset({"STANDARD_REPOSITORY", "VIRTUAL_REPOSITORY", "REMOTE_REPOSITORY"})
AR_REPOSITORY_MODE = f"{_PG} pulumi_gcp/artifactregistry/repository.py:87-89 (Repository.mode)"
AR_PUBLIC_REPOSITORIES = frozenset({"DOCKER_HUB"})
AR_PUBLIC_REPOSITORY = (
    f"{_PG} pulumi_gcp/artifactregistry/_inputs.py:983-991 "
    "(RepositoryRemoteRepositoryConfigDockerRepositoryArgs.public_repository)"
)
GKE_TPU_PLACEMENT = (
    "GKE API NodePool.PlacementPolicy.Type: TYPE_UNSPECIFIED or COMPACT; a TPU topology needs COMPACT "
    "(https://cloud.google.com/kubernetes-engine/docs/how-to/tpus, multi-host TPU slice node pools)"
)
TPU7X_WORKLOAD_POLICY = (
    "GKE 'About Ironwood (TPU7x) in GKE' (https://docs.cloud.google.com/kubernetes-engine/docs/concepts/"
    "tpu-ironwood): a multi-host TPU7x pool takes a workload policy by --placement-policy, which replaces "
    "--tpu-topology; a compact one without it fails the pool: 'Creation of a managed instance group with "
    "tpu7x-standard-4t machine type with placement policy is not supported. Use workload policy instead.' "
    "(vllm-project/ci-infra PR 547, a pool against the live API); cluster-toolkit sends type COMPACT beside the "
    "policy name (modules/compute/resource-policy/outputs.tf), xpk no type (src/xpk/core/nodepool.py l.358-365)"
)
TPU7X_MIN_GKE = (
    "GKE 'About Ironwood (TPU7x) in GKE' (https://docs.cloud.google.com/kubernetes-engine/docs/concepts/"
    "tpu-ironwood): 'Ironwood (TPU7x) is available in GKE Standard clusters that run version 1.34.0-gke.2201000 and "
    "later'"
)
WORKLOAD_POLICY_TYPES = frozenset({"HIGH_AVAILABILITY", "HIGH_THROUGHPUT"})
WORKLOAD_POLICY_TYPE = f"{_PG} pulumi_gcp/compute/_inputs.py:70694-70729 (ResourcePolicyWorkloadPolicyArgs.type)"
WORKLOAD_POLICY_PLACES = (
    "GKE API NodePool.PlacementPolicy.policy_name: 'The resource policy must be in the same project and region as "
    "the node pool'; TPU7x supports the High throughput workload policy, whose accelerator topology is the slice's "
    "(GKE 'About Ironwood (TPU7x) in GKE'; xpk 367c8382 src/xpk/core/nodepool.py l.691-724 creates it with "
    "--type=HIGH_THROUGHPUT --accelerator-topology=<the pool's topology>)"
)
GCS_BUCKET_NAMES = (
    "https://cloud.google.com/storage/docs/buckets#naming: 3-63 characters (up to 222 with dots, each "
    "dot-separated part up to 63); lowercase letters, numbers, dashes, underscores and dots; start and end "
    "with a number or letter; not beginning with 'goog' nor containing 'google'"
)
LOG_METRIC_NAMES = (
    "Cloud Logging API v2 CreateLogMetricRequest.metric: 'The new logs-based metric, which must not have an "
    "identifier that already exists' in the project named by parent (https://cloud.google.com/logging/docs/reference/"
    "v2/rest/v2/projects.metrics/create; Google.Cloud.Logging.V2 CreateLogMetricRequest)"
)
GCS_STORAGE_CLASSES = frozenset({"STANDARD", "MULTI_REGIONAL", "REGIONAL", "NEARLINE", "COLDLINE", "ARCHIVE"})
GCS_STORAGE_CLASS_DOC = f"{_PG} pulumi_gcp/storage/bucket.py:81 (storage_class: supported values)"
IAM_ACCOUNT_ID = (
    "https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create (accountId: "
    "'must be 6-30 characters long, and match the regular expression [a-z]([-a-z0-9]*[a-z0-9])')"
)
SERVICE_USAGE = (
    "https://cloud.google.com/service-usage/docs/reference/rest/v1/services (service names: <api>.googleapis.com)"
)
IAM_POLICY = (
    "https://cloud.google.com/iam/docs/reference/rest/v1/Policy#Binding (role: roles/<name> or a custom role "
    "path; member: user:, serviceAccount:, group:, domain:, principal:, principalSet:, deleted:...; a "
    "condition has a title and an expression, https://cloud.google.com/iam/docs/conditions-overview)"
)
IAM_MEMBER_PREFIXES = frozenset({"user", "serviceAccount", "group", "domain", "principal", "principalSet", "deleted"})
COMPUTE_NAMES = (
    "https://cloud.google.com/compute/docs/naming-resources: 1-63 characters, RFC 1035, [a-z]([-a-z0-9]*[a-z0-9])?"
)
ADDRESS_TYPES = frozenset({"INTERNAL", "EXTERNAL"})
ADDRESS_PURPOSES = frozenset(
    {"GCE_ENDPOINT", "SHARED_LOADBALANCER_VIP", "VPC_PEERING", "IPSEC_INTERCONNECT", "PRIVATE_SERVICE_CONNECT"}
)
COMPUTE_ADDRESS = (
    f"{_PG} pulumi_gcp/compute/address.py:44-47 (address_type: INTERNAL, EXTERNAL), :90-104 (purpose: GCE_ENDPOINT, "
    "SHARED_LOADBALANCER_VIP, VPC_PEERING, IPSEC_INTERCONNECT, PRIVATE_SERVICE_CONNECT; 'only be set when using an "
    "Internal address')"
)
PROXY_ONLY_PURPOSES = frozenset({"REGIONAL_MANAGED_PROXY", "GLOBAL_MANAGED_PROXY"})
PROXY_ONLY_MAX_PREFIX = 26
PROXY_ONLY_SUBNETS = (
    "https://cloud.google.com/load-balancing/docs/proxy-only-subnets ('A proxy-only subnet must provide 64 "
    "or more IP addresses. This corresponds to a prefix length of /26 or shorter'; 'In a given VPC network "
    f"and region, only a single proxy-only subnet with purpose REGIONAL_MANAGED_PROXY can be active'); {_PG} "
    "pulumi_gcp/compute/subnetwork.py:122-127 (role: 'only used when purpose is REGIONAL_MANAGED_PROXY', "
    "ACTIVE or BACKUP)"
)
SUBNET_RANGES_UNIQUE = (
    "Compute Engine API v1, Subnetwork.ipCidrRange and SubnetworkSecondaryRange.ipCidrRange ('Ranges must be unique "
    "and non-overlapping with all primary and secondary IP ranges within a network'; "
    "https://cloud.google.com/compute/docs/reference/rest/v1/subnetworks); a VPC network is global, so the ranges of "
    "its subnets in every region count (https://cloud.google.com/vpc/docs/subnets)"
)
ALERT_POLICY_API = (
    f"{_PG} pulumi_gcp/monitoring/alert_policy.py (combiner: AND, OR, AND_WITH_MATCHING_RESOURCE; severity: "
    "CRITICAL, ERROR, WARNING); https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies "
    "(displayName required; 'A policy can have from one to six conditions')"
)
ALERT_RULE_NAMES = (
    f"{_PG} pulumi_gcp/monitoring/_inputs.py:1496-1504 (alertRule: 'If this field is not empty, then it must be a "
    "valid Prometheus label name'; ruleGroup alike, :1575); Prometheus label names match [a-zA-Z_][a-zA-Z0-9_]* "
    "(https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels)"
)
ALERT_METRIC_VALIDATION = (
    f"{_PG} pulumi_gcp/monitoring/_inputs.py:1505-1510 (disableMetricValidation: 'allows alerting policies to be "
    "defined on metrics that do not yet exist'); without it the API validates that every metric of the query "
    "exists in the project and refuses the policy otherwise (https://cloud.google.com/monitoring/promql/create-promql-alerts-console)"
)
ALERT_PROMQL_FIELDS = (
    f"{_PG} pulumi_gcp/monitoring/_inputs.py:1493-1517 (query 'must not be empty'; duration 'must be zero or "
    "positive'; evaluationInterval 'must be a positive multiple of 30 seconds or missing')"
)
ALERT_THRESHOLD_FILTER = (
    f"{_PG} pulumi_gcp/monitoring/_inputs.py:2430-2441 (AlertPolicyConditionConditionThresholdArgs.filter: 'must "
    "specify the metric type'; 'may not exceed 2048 Unicode characters'); the API also refuses a threshold filter "
    "that names no resource type: 'must specify a restriction on \"resource.type\" in the filter' "
    "(hashicorp/terraform-provider-google#4165, #7179)"
)
ALERT_THRESHOLD_FIELDS = (
    f"{_PG} pulumi_gcp/monitoring/_inputs.py:2352-2371 (comparison: 'The Cloud Monitoring API only supports "
    "COMPARISON_LT and COMPARISON_GT for metric-threshold conditions'; duration: 'only values that are a multiple "
    "of a minute'), :2789-2803 (aggregations[].alignmentPeriod: 'must be at least 60 seconds', required when "
    "perSeriesAligner is set and not ALIGN_NONE); evaluationMissingData: 'To use this control, the value of the "
    "duration field must be greater than or equal to 60 seconds' (Cloud Monitoring API MetricThreshold, "
    "https://cloud.google.com/monitoring/api/ref_v3/rest/v3/projects.alertPolicies#MetricThreshold)"
)
THRESHOLD_COMPARISONS = frozenset({"COMPARISON_GT", "COMPARISON_LT"})
LOG_METRIC_NAME = (
    f"{_PG} pulumi_gcp/logging/metric.py:63-67 (MetricArgs.name: 'limited to 100 characters and can include only "
    "the following characters A-Z, a-z, 0-9, and the special characters _-.,+!*',()%/ ... (/) ... cannot be the "
    "first character of the name')"
)
LOG_METRIC_DESCRIPTOR = (
    f"{_PG} pulumi_gcp/logging/_inputs.py:1158-1173 (MetricMetricDescriptorArgs: metricKind DELTA, GAUGE, "
    "CUMULATIVE; valueType BOOL, INT64, DOUBLE, STRING, DISTRIBUTION, MONEY), :1287-1297 (labels[].valueType BOOL, "
    "INT64, STRING), logging/metric.py:54-57 (labelExtractors: 'Each label key specified in the LabelDescriptor "
    "must have an associated extractor expression in this map'); filter is required (MetricArgs.filter)"
)
METRIC_KINDS = frozenset({"DELTA", "GAUGE", "CUMULATIVE"})
METRIC_VALUE_TYPES = frozenset({"BOOL", "INT64", "DOUBLE", "STRING", "DISTRIBUTION", "MONEY"})
LABEL_VALUE_TYPES = frozenset({"BOOL", "INT64", "STRING"})
LOG_METRIC_BEFORE_POLICY = (
    "a condition on a user-defined log-based metric (logging.googleapis.com/user/<name>) is refused while the "
    "metric does not exist (404 'The metric referenced by the provided filter is unknown', "
    "hashicorp/terraform-provider-google#10325), so the plan must create the metric before the policy; even then "
    "a metric created moments before may be refused for up to 10 minutes ('Cannot find metric(s) that match "
    "type ... it could take up to 10 minutes to become available', #11102), which no plan shows"
)
WORKLOAD_POOL_BEFORE_BINDING = (
    "a binding to serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>] is refused (400 'Identity Pool does not "
    "exist') until a cluster with Workload Identity has created the project's pool "
    "(terraform-google-modules/terraform-google-kubernetes-engine#916; googleforgames/global-multiplayer-demo#39), "
    "so in a project that has none the binding must wait for the cluster"
)
WORKLOAD_POOL_MEMBER = re.compile(r"^serviceAccount:([^\[]+\.svc\.id\.goog)\[")
"""A Workload Identity principal and its pool (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity)."""
USER_METRIC_PREFIX = "logging.googleapis.com/user/"
"""Type prefix of a user-defined log-based metric in Cloud Monitoring
(https://cloud.google.com/logging/docs/logs-based-metrics#user-metrics)."""
DASHBOARD_API = (
    "https://cloud.google.com/monitoring/api/ref_v3/rest/v1/projects.dashboards (displayName required; "
    "MosaicLayout.columns 1 to 48, default 12; a tile lies within the columns)"
)
LABEL_RULES = (
    "https://cloud.google.com/resource-manager/docs/labels-overview#requirements (at most 64 labels; keys 1-63 "
    "characters, starting with a lowercase letter, of lowercase letters, digits, _ and -; values up to 63 of "
    "the same characters)"
)

PROMQL_BUILTIN_DOMAINS = frozenset({"kubernetes_io", "compute_googleapis_com", "tpu_googleapis_com"})
"""Cloud Monitoring built-in metrics as PromQL reads them: ``<domain with _ for .>:<path with _ for />``, e.g.
``kubernetes_io:container_accelerator_duty_cycle`` for kubernetes.io/container/accelerator/duty_cycle
(https://cloud.google.com/monitoring/promql/promql-mapping, "Mapping Cloud Monitoring metric names to PromQL").
Their descriptors exist in every project; any other name is a Prometheus metric
(prometheus.googleapis.com/<name>/<kind>) that exists only once Managed Prometheus has ingested it."""

GKE_KUBE_STATE_METRICS = frozenset(
    {
        "kube_pod_container_status_ready",
        "kube_pod_container_status_waiting_reason",
        "kube_pod_status_phase",
        "kube_pod_status_unschedulable",
        "kube_deployment_spec_replicas",
        "kube_deployment_status_replicas_available",
        "kube_deployment_status_replicas_updated",
        "kube_statefulset_replicas",
        "kube_statefulset_status_replicas_ready",
        "kube_statefulset_status_replicas_updated",
        "kube_daemonset_status_desired_number_scheduled",
        "kube_daemonset_status_number_misscheduled",
        "kube_daemonset_status_number_ready",
        "kube_daemonset_status_updated_number_scheduled",
        "kube_horizontalpodautoscaler_spec_max_replicas",
        "kube_horizontalpodautoscaler_spec_min_replicas",
        "kube_horizontalpodautoscaler_spec_target_metric",
        "kube_horizontalpodautoscaler_status_condition",
        "kube_horizontalpodautoscaler_status_current_replicas",
        "kube_horizontalpodautoscaler_status_desired_replicas",
        "kube_persistentvolume_capacity_bytes",
        "kube_persistentvolume_claim_ref",
        "kube_persistentvolume_info",
        "kube_persistentvolume_status_phase",
        "kube_persistentvolumeclaim_info",
        "kube_persistentvolumeclaim_resource_requests_storage_bytes",
        "kube_persistentvolumeclaim_status_phase",
    }
)
"""The ``kube_*`` series GKE's managed kube state metrics packages send (PromQL names), from the tables of "Use
kube state metrics" (https://cloud.google.com/stackdriver/docs/solutions/gke/kube-state-metrics: storage, Pod,
Deployment, StatefulSet and DaemonSet metrics, read 2026-11-28; the "Table of HPA metrics", read 2026-11-29 from the
copy last updated 2026-04-10; the JobSet package's are left out, which no stack reads). Open-source kube-state-metrics has many more (``kube_pod_status_ready`` among them) that GKE does not
send: a query on one reads no series, ever."""
KUBE_STATE_METRICS_PACKAGES = (
    "https://cloud.google.com/stackdriver/docs/solutions/gke/kube-state-metrics (the tables of metrics per package; "
    "a series outside them is not sent by GKE's managed kube state metrics)"
)

KIND_APIS: dict[str, tuple[ApiNeed, ...]] = {
    "InferencePool": (
        ApiNeed(
            "networkservices.googleapis.com",
            "https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway (Before you begin: "
            "'Enable the Compute Engine API, the Network Services API, and the Model Armor API if needed'; GKE "
            "programs the endpoint picker as a Service Extension, a Network Services resource)",
        ),
    ),
    "Gateway": (
        ApiNeed(
            "compute.googleapis.com",
            "https://cloud.google.com/kubernetes-engine/docs/how-to/deploying-gateways (the GKE Gateway controller "
            "creates Compute Engine load balancers)",
        ),
    ),
    "PodMonitoring": (
        ApiNeed(
            "monitoring.googleapis.com",
            "https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed (Managed Prometheus writes "
            "to Cloud Monitoring)",
        ),
    ),
}
"""APIs a Kubernetes kind needs on GKE: GKE's controllers act on the project when the object exists."""
