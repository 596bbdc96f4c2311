"""GKE node and Kubernetes/controller behaviour facts the runtime model relies on: LeaderWorkerSet v0.10.0, JobSet
v0.12.0, PathwaysJob v0.1.4, identity, GCS FUSE, vLLM on Ray.

Their values and sources are in ``data/kubernetes.json`` (:mod:`.sourced`); this module gives each its Python name
and type.
"""

from __future__ import annotations

from tpu_serving_tools.runtime import sourced as _sourced

# Machine shapes and GKE's node allocatable are the model's own table too: .machine_facts (data/machines.json).

GIB = 1024**3
MIB = 1024**2
GB = 1000**3

_T = _sourced.table("kubernetes")

# --------------------------------------------------------------------------- GKE node labels and taints

NODEPOOL_LABEL = _T.text("NODEPOOL_LABEL")
HOSTNAME_LABEL = _T.text("HOSTNAME_LABEL")
TPU_ACCELERATOR_LABEL = _T.text("TPU_ACCELERATOR_LABEL")
TPU_TOPOLOGY_LABEL = _T.text("TPU_TOPOLOGY_LABEL")
SPOT_LABEL = _T.text("SPOT_LABEL")

TPU_RESOURCE = _T.text("TPU_RESOURCE")
TPU_TAINT: tuple[str, str, str] = _T.get("TPU_TAINT", tuple[str, str, str])

COMPUTE_CLASS_LABEL = _T.text("COMPUTE_CLASS_LABEL")

EXTENDED_RESOURCE_TOLERATION = _T.get("EXTENDED_RESOURCE_TOLERATION", bool)

NODE_TAINT_EFFECTS: dict[str, str] = _T.get("NODE_TAINT_EFFECTS", dict[str, str])

# --------------------------------------------------------------------------- Kubernetes behaviour

# A container that sets a limit but no request for a resource gets request = limit.
# Source: https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
#   ("If you specify a limit for a resource, but do not specify any request, and no admission-time
#   mechanism has applied a default request for that resource, then Kubernetes copies the limit you
#   specified and uses it as the requested value").
# A LimitRange of type Container fills missing limits from `default` and missing requests from
# `defaultRequest`. Source: https://kubernetes.io/docs/concepts/policy/limit-range/
# Effective pod request = max(sum of app containers + sum of sidecars, for each init container
# its request + the sidecars started before it). Source:
#   https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/#resource-sharing-within-containers
# A ResourceQuota on requests.cpu / requests.memory rejects pods whose containers do not all set
# that request. Source: https://kubernetes.io/docs/concepts/policy/resource-quotas/#requests-vs-limits
# Pods that are terminating (within their grace period) still count against the quota.
# Source: kubernetes/kubernetes@v1.31.0:pkg/quota/v1/evaluator/core/pods.go (QuotaV1Pod).
# Two pods that both use hostNetwork and the same containerPort cannot share a node (NodePorts
# filter). Source: https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/#filtering
# and kubernetes/kubernetes@v1.31.0:pkg/scheduler/framework/plugins/nodeports/node_ports.go
# (hostNetwork pods' containerPorts are host ports:
#  https://kubernetes.io/docs/concepts/services-networking/#the-kubernetes-network-model).
SIDECAR_RESTART_POLICY = _T.text("SIDECAR_RESTART_POLICY")
DEPLOYMENT_DEFAULT_MAX_SURGE = _T.get("DEPLOYMENT_DEFAULT_MAX_SURGE", float)

# --------------------------------------------------------------------------- LeaderWorkerSet v0.10.0

LWS_NAME_LABEL = _T.text("LWS_NAME_LABEL")
LWS_WORKER_INDEX_LABEL = _T.text("LWS_WORKER_INDEX_LABEL")
LWS_GROUP_INDEX_LABEL = _T.text("LWS_GROUP_INDEX_LABEL")
ZONE_LABEL = _T.text("ZONE_LABEL")
LWS_EXCLUSIVE_ANNOTATION = _T.text("LWS_EXCLUSIVE_ANNOTATION")
LWS_SUBGROUP_EXCLUSIVE_ANNOTATION = _T.text("LWS_SUBGROUP_EXCLUSIVE_ANNOTATION")
LWS_ENV_LEADER_ADDRESS = _T.text("LWS_ENV_LEADER_ADDRESS")
LWS_ENV_GROUP_SIZE = _T.text("LWS_ENV_GROUP_SIZE")
LWS_ENV_WORKER_INDEX = _T.text("LWS_ENV_WORKER_INDEX")
LWS_TPU_PROCESS_DEFAULT_PORT = _T.integer("LWS_TPU_PROCESS_DEFAULT_PORT")
LWS_DEFAULT_MAX_UNAVAILABLE = _T.integer("LWS_DEFAULT_MAX_UNAVAILABLE")
LWS_DEFAULT_MAX_SURGE = _T.integer("LWS_DEFAULT_MAX_SURGE")
# Sub-groups: a worker's sub-group is (index-1)//size when the leader is an extra pod
# ((size-1) % subGroupSize == 0 and size % subGroupSize != 0), else index//size; the leader is
# always in sub-group 0 (unless subGroupPolicy.type LeaderExcluded).
# Source: kubernetes-sigs/lws@v0.10.0:pkg/webhooks/pod_webhook.go:125-133,249-255.

# --------------------------------------------------------------------------- JobSet v0.12.0

JOBSET_EXCLUSIVE_ANNOTATION = _T.text("JOBSET_EXCLUSIVE_ANNOTATION")
JOBSET_NAME_LABEL = _T.text("JOBSET_NAME_LABEL")
JOBSET_REPLICATED_JOB_LABEL = _T.text("JOBSET_REPLICATED_JOB_LABEL")

# --------------------------------------------------------------------------- PathwaysJob v0.1.4

PW_PROXY_PORT = _T.integer("PW_PROXY_PORT")
PW_RM_PORT = _T.integer("PW_RM_PORT")
PW_WORKER_PORT = _T.integer("PW_WORKER_PORT")
PW_HEAD_JOB_NAME = _T.text("PW_HEAD_JOB_NAME")
PW_WORKER_JOB_NAME = _T.text("PW_WORKER_JOB_NAME")
PW_RM_AND_WORKER_IMAGE = _T.text("PW_RM_AND_WORKER_IMAGE")
PW_PROXY_IMAGE = _T.text("PW_PROXY_IMAGE")
PW_RM_LIMITS: dict[str, str] = _T.get("PW_RM_LIMITS", dict[str, str])
PW_RM_EXTRA_PORT = _T.integer("PW_RM_EXTRA_PORT")
PW_PROXY_LIMITS: dict[str, str] = _T.get("PW_PROXY_LIMITS", dict[str, str])
PW_WORKER_PORTS: tuple[int, ...] = _T.get("PW_WORKER_PORTS", tuple[int, ...])
# Source of the two below: google/pathways-job@v0.1.4:internal/controller/pathwaysjob_controller.go
# (read at ../shared/reference/upstream/pathways-job-v0.1.4-pathwaysjob_controller.go).
PW_WORKER_EXCLUSIVE_TOPOLOGY = NODEPOOL_LABEL  # :696 (pod template annotation)
PW_HEAD_DEFAULT_EXCLUSIVE_TOPOLOGY = HOSTNAME_LABEL  # :917-920 (deploymentMode default only)
PW_CHIPS_PER_VM: dict[str, int] = _T.get("PW_CHIPS_PER_VM", dict[str, int])
PW_DEFAULT_CHIPS_PER_VM = _T.integer("PW_DEFAULT_CHIPS_PER_VM")
PW_GKE_ACCELERATOR: dict[str, str] = _T.get("PW_GKE_ACCELERATOR", dict[str, str])
PW_TPU_VERSION: dict[str, str] = _T.get("PW_TPU_VERSION", dict[str, str])
PW_DEFAULT_MAIN_CONTAINER = _T.text("PW_DEFAULT_MAIN_CONTAINER")
PW_COLOCATE_MODE = _T.text("PW_COLOCATE_MODE")
# What the controller generates (google/pathways-job@v0.1.4:internal/controller/pathwaysjob_controller.go):
# Head: hostNetwork true + dnsPolicy ClusterFirstWithHostNet in both modes (:862-863, :873-874);
# with a user pod template, RM and proxy become init containers with restartPolicy Always (:858-864)
# and JAX_PLATFORMS=proxy / JAX_BACKEND_TARGET=grpc://$(PATHWAYS_HEAD):29000 go to the main
# container (:889-907); headless (no template): RM and proxy are the main containers (:869-876).
# Workers: numSlices jobs x VMs pods, hostNetwork (:775), nodeSelector accelerator+topology (:763,
# :506-514), limits google.com/tpu = chips per VM (:759), hostPath /tmp volume (:764-773).

# --------------------------------------------------------------------------- identity

HOST_NETWORK_USES_NODE_SA = _T.get("HOST_NETWORK_USES_NODE_SA", bool)
WI_ANNOTATION = _T.text("WI_ANNOTATION")
WI_USER_ROLE = _T.text("WI_USER_ROLE")

READ = "read"
READ_WRITE = "read/write"

STORAGE_ROLE_ACCESS: dict[str, str] = _T.get("STORAGE_ROLE_ACCESS", dict[str, str])


# How containers use gs:// locations is each backend's fact: BUCKET_USES in .backend_facts.

GCS_FUSE_CSI_DRIVER = _T.text("GCS_FUSE_CSI_DRIVER")
GCS_FUSE_INJECT_ANNOTATION = _T.text("GCS_FUSE_INJECT_ANNOTATION")
GCS_FUSE_SIDECAR = _T.text("GCS_FUSE_SIDECAR")
GCS_FUSE_SIDECAR_REQUESTS: dict[str, str] = _T.get("GCS_FUSE_SIDECAR_REQUESTS", dict[str, str])
GCS_FUSE_REQUEST_ANNOTATIONS: dict[str, str] = _T.get("GCS_FUSE_REQUEST_ANNOTATIONS", dict[str, str])
GCS_FUSE_PREFETCH_SIDECAR = _T.text("GCS_FUSE_PREFETCH_SIDECAR")
GCS_FUSE_PREFETCH_ATTRIBUTE = _T.text("GCS_FUSE_PREFETCH_ATTRIBUTE")
GCS_FUSE_PREFETCH_REQUESTS: dict[str, str] = _T.get("GCS_FUSE_PREFETCH_REQUESTS", dict[str, str])
GCS_FUSE_CACHE_VOLUME = _T.text("GCS_FUSE_CACHE_VOLUME")
GCS_FUSE_FILE_CACHE_OPTION = _T.text("GCS_FUSE_FILE_CACHE_OPTION")
DEFAULT_DISK_SIZE_GB = _T.integer("DEFAULT_DISK_SIZE_GB")

# --------------------------------------------------------------------------- vLLM on Ray

RAY_WORKER_ARG = _T.text("RAY_WORKER_ARG")
