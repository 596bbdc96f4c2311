"""GCP, GKE and Dataplane V2 facts of the ``network``, ``prerequisites`` and GCP admission checks, by name and type.

Each value and its source are in ``data/gcp.json`` (read by :mod:`.sourced`); the module holds the names, the types
and the dataclasses of the tables' rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tpu_serving_tools.runtime import sourced as _sourced

_T = _sourced.table("gcp")

# --------------------------------------------------------------------------- Dataplane V2 (Cilium)

DPV2_IPBLOCK_MATCHES_NODES = _T.get("DPV2_IPBLOCK_MATCHES_NODES", bool)
DPV2_LOCAL_HOST_ALLOWED = _T.get("DPV2_LOCAL_HOST_ALLOWED", bool)
METADATA_SERVER: tuple[str, int] = _T.get("METADATA_SERVER", tuple[str, int])
KUBE_DNS: tuple[str, dict[str, str], int] = _T.get("KUBE_DNS", tuple[str, dict[str, str], int])
NAMESPACE_NAME_LABEL = _T.text("NAMESPACE_NAME_LABEL")


@dataclass(frozen=True)
class FirewallRule:
    """An ingress VPC firewall rule GKE creates for every cluster."""

    name: str
    sources: str
    targets: str
    allows: str


GKE_CLUSTER_FIREWALL: tuple[FirewallRule, ...] = _T.get("GKE_CLUSTER_FIREWALL", tuple[FirewallRule, ...])
AUTO_MODE_SUBNETS: dict[str, str] = _T.get("AUTO_MODE_SUBNETS", dict[str, str])

# --------------------------------------------------------------------------- APIs per resource type


@dataclass(frozen=True)
class ApiNeed:
    """A service API a resource (or a feature of it) needs enabled in the project."""

    api: str
    source: str


API_BY_TYPE: dict[str, tuple[ApiNeed, ...]] = _T.get("API_BY_TYPE", dict[str, tuple[ApiNeed, ...]])


@dataclass(frozen=True)
class FeatureApi:
    """An API a cluster/node-pool feature needs when an input path is true."""

    path: tuple[str, ...]
    api: str
    source: str


FEATURE_APIS: tuple[FeatureApi, ...] = _T.get("FEATURE_APIS", tuple[FeatureApi, ...])

# Pulumi type tokens the checks select resources by: the program's own names for pulumi-gcp's resources, as in the
# keys of API_BY_TYPE and admission.RULES, not facts read from a source.
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
SERVICE_TYPE = "gcp:projects/service:Service"
"""How a stack enables an API (pulumi-gcp ``gcp.projects.Service``, inputs ``service``, ``disableOnDestroy``)."""

GROUPS_FOR_RBAC = _T.text("GROUPS_FOR_RBAC")
NAT_PER_SUBNET_RANGE = _T.text("NAT_PER_SUBNET_RANGE")
CLOUD_NAT_FOR_PRIVATE_NODES = _T.text("CLOUD_NAT_FOR_PRIVATE_NODES")

# --------------------------------------------------------------------------- admission rules of the cloud APIs

GKE_NODE_POOL_LOCATION = _T.text("GKE_NODE_POOL_LOCATION")
GKE_NAMES = _T.text("GKE_NAMES")
RELEASE_CHANNELS: frozenset[str] = _T.get("RELEASE_CHANNELS", frozenset[str])
GKE_RELEASE_CHANNEL = _T.text("GKE_RELEASE_CHANNEL")
AR_REPOSITORY_MODES: frozenset[str] = _T.get("AR_REPOSITORY_MODES", frozenset[str])
AR_REPOSITORY_MODE = _T.text("AR_REPOSITORY_MODE")
AR_PUBLIC_REPOSITORIES: frozenset[str] = _T.get("AR_PUBLIC_REPOSITORIES", frozenset[str])
AR_PUBLIC_REPOSITORY = _T.text("AR_PUBLIC_REPOSITORY")
GKE_TPU_PLACEMENT = _T.text("GKE_TPU_PLACEMENT")
TPU7X_WORKLOAD_POLICY = _T.text("TPU7X_WORKLOAD_POLICY")
TPU7X_MIN_GKE = _T.text("TPU7X_MIN_GKE")
WORKLOAD_POLICY_TYPES: frozenset[str] = _T.get("WORKLOAD_POLICY_TYPES", frozenset[str])
WORKLOAD_POLICY_TYPE = _T.text("WORKLOAD_POLICY_TYPE")
WORKLOAD_POLICY_PLACES = _T.text("WORKLOAD_POLICY_PLACES")
GCS_BUCKET_NAMES = _T.text("GCS_BUCKET_NAMES")
LOG_METRIC_NAMES = _T.text("LOG_METRIC_NAMES")
GCS_STORAGE_CLASSES: frozenset[str] = _T.get("GCS_STORAGE_CLASSES", frozenset[str])
GCS_STORAGE_CLASS_DOC = _T.text("GCS_STORAGE_CLASS_DOC")
IAM_ACCOUNT_ID = _T.text("IAM_ACCOUNT_ID")
SERVICE_USAGE = _T.text("SERVICE_USAGE")
IAM_POLICY = _T.text("IAM_POLICY")
IAM_MEMBER_PREFIXES: frozenset[str] = _T.get("IAM_MEMBER_PREFIXES", frozenset[str])
COMPUTE_NAMES = _T.text("COMPUTE_NAMES")
ADDRESS_TYPES: frozenset[str] = _T.get("ADDRESS_TYPES", frozenset[str])
ADDRESS_PURPOSES: frozenset[str] = _T.get("ADDRESS_PURPOSES", frozenset[str])
COMPUTE_ADDRESS = _T.text("COMPUTE_ADDRESS")
PROXY_ONLY_PURPOSES: frozenset[str] = _T.get("PROXY_ONLY_PURPOSES", frozenset[str])
PROXY_ONLY_MAX_PREFIX = _T.integer("PROXY_ONLY_MAX_PREFIX")
PROXY_ONLY_SUBNETS = _T.text("PROXY_ONLY_SUBNETS")
SUBNET_RANGES_UNIQUE = _T.text("SUBNET_RANGES_UNIQUE")
ALERT_POLICY_API = _T.text("ALERT_POLICY_API")
ALERT_RULE_NAMES = _T.text("ALERT_RULE_NAMES")
ALERT_METRIC_VALIDATION = _T.text("ALERT_METRIC_VALIDATION")
ALERT_PROMQL_FIELDS = _T.text("ALERT_PROMQL_FIELDS")
ALERT_THRESHOLD_FILTER = _T.text("ALERT_THRESHOLD_FILTER")
ALERT_THRESHOLD_FIELDS = _T.text("ALERT_THRESHOLD_FIELDS")
THRESHOLD_COMPARISONS: frozenset[str] = _T.get("THRESHOLD_COMPARISONS", frozenset[str])
LOG_METRIC_NAME = _T.text("LOG_METRIC_NAME")
LOG_METRIC_DESCRIPTOR = _T.text("LOG_METRIC_DESCRIPTOR")
METRIC_KINDS: frozenset[str] = _T.get("METRIC_KINDS", frozenset[str])
METRIC_VALUE_TYPES: frozenset[str] = _T.get("METRIC_VALUE_TYPES", frozenset[str])
LABEL_VALUE_TYPES: frozenset[str] = _T.get("LABEL_VALUE_TYPES", frozenset[str])
LOG_METRIC_BEFORE_POLICY = _T.text("LOG_METRIC_BEFORE_POLICY")
WORKLOAD_POOL_BEFORE_BINDING = _T.text("WORKLOAD_POOL_BEFORE_BINDING")
WORKLOAD_POOL_MEMBER = re.compile(_T.text("WORKLOAD_POOL_MEMBER"))
USER_METRIC_PREFIX = _T.text("USER_METRIC_PREFIX")
DASHBOARD_API = _T.text("DASHBOARD_API")
LABEL_RULES = _T.text("LABEL_RULES")
PROMQL_BUILTIN_DOMAINS: frozenset[str] = _T.get("PROMQL_BUILTIN_DOMAINS", frozenset[str])
GKE_KUBE_STATE_METRICS: frozenset[str] = _T.get("GKE_KUBE_STATE_METRICS", frozenset[str])
KUBE_STATE_METRICS_PACKAGES = _T.text("KUBE_STATE_METRICS_PACKAGES")
KIND_APIS: dict[str, tuple[ApiNeed, ...]] = _T.get("KIND_APIS", dict[str, tuple[ApiNeed, ...]])
