"""Facts the runtime model relies on, each with its source.

Everything here is a statement about the world outside this repository (Compute Engine
machine shapes, GKE node behaviour, what a controller generates), never about what our own
components intend. Each fact cites where it was read: a documentation URL, or
``owner/repo@tag:path[:line]`` for controller source.
"""

from __future__ import annotations

# Machine shapes and GKE's node allocatable live in components.machines (one table for the
# library's fit checks and this model).

GIB = 1024**3
MIB = 1024**2
GB = 1000**3

# --------------------------------------------------------------------------- GKE node labels and taints

NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
HOSTNAME_LABEL = "kubernetes.io/hostname"
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
SPOT_LABEL = "cloud.google.com/gke-spot"
# GKE sets these labels on every node it creates: the node pool name, the hostname, and for TPU
# machine types the accelerator and the slice topology (the pool's placementPolicy.tpuTopology, or
# the single-host topology of the machine type); spot pools get gke-spot=true.
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/tpus (nodeSelector on
#   cloud.google.com/gke-tpu-accelerator and cloud.google.com/gke-tpu-topology) and
#   https://cloud.google.com/kubernetes-engine/docs/how-to/spot-vms (cloud.google.com/gke-spot).

TPU_RESOURCE = "google.com/tpu"
TPU_TAINT = (TPU_RESOURCE, "present", "NoSchedule")
# GKE taints TPU slice nodes with google.com/tpu=present:NoSchedule.
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/tpus (TPU nodes carry the
#   google.com/tpu NoSchedule taint; paraphrased, the page was not retrievable offline), the same
#   convention as nvidia.com/gpu for GPU nodes.

COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
# A pool made by hand takes part in a custom ComputeClass with this node label and the NoSchedule taint of the same
# key and value (the class's name); GKE labels the nodes it creates for a class with it too.
# Source: google/skills 1af77752 skills/cloud/gke-compute-classes/SKILL.md l.63-65 ("Manual pools STILL require
#   cloud.google.com/compute-class=<NAME> as label AND taint"); GKE "About node pool auto-creation" (the label).

EXTENDED_RESOURCE_TOLERATION = True
# Pods that request an extended resource get a toleration {key: <resource>, operator: Exists,
# effect: NoSchedule} from the ExtendedResourceToleration admission controller.
# Source: kubernetes/kubernetes#55839 (plugin/pkg/admission/extendedresourcetoleration) and
#   https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#extendedresourcetoleration.
# GKE documents the injected toleration for GPUs
#   (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus); for TPUs it is INFERRED, not
#   read in GKE's docs: google/pathways-job@v0.1.4 and JobSet TPU examples request google.com/tpu
#   without any toleration and run on tainted TPU nodes. Pods that do NOT request google.com/tpu
#   (an LWS leader or a colocated Pathways head on a TPU pool) must carry the toleration themselves.

NODE_TAINT_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
"""GKE API taint effect names (nodeConfig.taints[].effect) -> Kubernetes effect names."""

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
SIDECAR_RESTART_POLICY = "Always"
DEPLOYMENT_DEFAULT_MAX_SURGE = 0.25
# Deployments roll with maxSurge 25% (rounded up) by default, so old and new pods coexist.
# Source: https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#max-surge

# --------------------------------------------------------------------------- LeaderWorkerSet v0.10.0

# Source: kubernetes-sigs/lws@v0.10.0:api/leaderworkerset/v1/leaderworkerset_types.go
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
LWS_WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
"""Labels the LeaderWorkerSet controller puts on its pods (kubernetes-sigs/lws@v0.10.0
api/leaderworkerset/v1: SetNameLabelKey, WorkerIndexLabelKey, GroupIndexLabelKey; the leader has index 0)."""
ZONE_LABEL = "topology.kubernetes.io/zone"
"""The node label of its zone, which the kubelet sets
(https://kubernetes.io/docs/reference/labels-annotations-taints/#topologykubernetesiozone)."""
LWS_EXCLUSIVE_ANNOTATION = "leaderworkerset.sigs.k8s.io/exclusive-topology"
LWS_SUBGROUP_EXCLUSIVE_ANNOTATION = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
LWS_ENV_LEADER_ADDRESS = "LWS_LEADER_ADDRESS"  # types.go:67
LWS_ENV_GROUP_SIZE = "LWS_GROUP_SIZE"  # types.go:71
LWS_ENV_WORKER_INDEX = "LWS_WORKER_INDEX"  # types.go:75
# LWS_LEADER_ADDRESS = <lws>-<group>.<subdomain>.<namespace>, subdomain = the LWS name (its
# headless Service); injected into every container and init container.
# Source: kubernetes-sigs/lws@v0.10.0:pkg/utils/pod/pod_utils.go:131-180 (AddLWSVariables).
# TPU pods get TPU_WORKER_HOSTNAMES / TPU_WORKER_ID / TPU_NAME / TPU_PROCESS_ADDRESSES /
# TPU_PROCESS_PORT (default 8476) in the first container requesting google.com/tpu; the leader is
# in the host list only when it requests TPUs itself.
# Source: kubernetes-sigs/lws@v0.10.0:pkg/utils/accelerators/tpu.go (AddTPUVariables,
# addTPUVariablesSubGroup).
LWS_TPU_PROCESS_DEFAULT_PORT = 8476
# Rollouts: with no rolloutStrategy the webhook sets maxUnavailable 1, maxSurge 0
# (kubernetes-sigs/lws@v0.10.0:pkg/webhooks/leaderworkerset_webhook.go:64-70). While it updates, the
# controller holds replicas + maxSurge groups (maxSurge capped at replicas; a percentage rounds up, of
# maxUnavailable down), the surge groups taking the next indexes with the new template; it updates the
# others from the highest index down, at most maxUnavailable + (surge groups up) at a time, and deletes the
# surge groups once the rest are updated and ready
# (pkg/controllers/leaderworkerset_controller.go:282-380 rollingUpdateParameters, :691-703
# calculateRollingUpdateReplicas).
LWS_DEFAULT_MAX_UNAVAILABLE = 1
LWS_DEFAULT_MAX_SURGE = 0
# Sub-groups: a worker's sub-group is (index-1)//size when the leader is an extra pod
# ((size-1) % subGroupSize == 0 and size % subGroupSize != 0), else index//size; the leader is
# always in sub-group 0 (unless subGroupPolicy.type LeaderExcluded).
# Source: kubernetes-sigs/lws@v0.10.0:pkg/webhooks/pod_webhook.go:125-133,249-255.

# --------------------------------------------------------------------------- JobSet v0.12.0

JOBSET_EXCLUSIVE_ANNOTATION = "alpha.jobset.sigs.k8s.io/exclusive-topology"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
"""Labels the JobSet controller puts on its pods (kubernetes-sigs/jobset api/jobset/v1alpha2,
JobSetNameKey and ReplicatedJobNameKey)."""
# On the JobSet, the replicated job's template or the pod template: each child Job gets a topology
# domain of its own (pod affinity to its job, anti-affinity to every other JobSet job's pods).
# Source: kubernetes-sigs/jobset@v0.12.0:api/jobset/v1alpha2/jobset_types.go (ExclusiveKey) and
# pkg/webhooks/pod_mutating_webhook.go (setExclusiveAffinities).

# --------------------------------------------------------------------------- PathwaysJob v0.1.4

# Source: google/pathways-job@v0.1.4:internal/controller/pathwaysjob_controller.go
# (read at ../shared/reference/upstream/pathways-job-v0.1.4-pathwaysjob_controller.go).
PW_PROXY_PORT = 29000  # :59
PW_RM_PORT = 29001  # :60
PW_WORKER_PORT = 29005  # :61
PW_HEAD_JOB_NAME = "pathways-head"  # :65
PW_WORKER_JOB_NAME = "worker"  # :733
PW_RM_AND_WORKER_IMAGE = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server"  # :66
PW_PROXY_IMAGE = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/proxy_server"  # :67
PW_RM_LIMITS = {"cpu": "8", "memory": "32000000000"}  # :605
PW_RM_EXTRA_PORT = 29002  # :604
PW_PROXY_LIMITS = {"cpu": "16", "memory": "100000000000"}  # :647
PW_WORKER_PORTS = (PW_WORKER_PORT, 29006, 8471, 8080)  # :752
PW_WORKER_EXCLUSIVE_TOPOLOGY = NODEPOOL_LABEL  # :696 (pod template annotation)
PW_HEAD_DEFAULT_EXCLUSIVE_TOPOLOGY = HOSTNAME_LABEL  # :917-920 (deploymentMode default only)
PW_CHIPS_PER_VM = {"ct6e-standard-8t": 8, "ct5lp-hightpu-8t": 8}  # :469-472; every other type: 4
PW_DEFAULT_CHIPS_PER_VM = 4
PW_GKE_ACCELERATOR = {  # :87-100
    "tpu7x-standard-4t": "tpu7x",
    "ct6e-standard-4t": "tpu-v6e-slice",
    "ct6e-standard-8t": "tpu-v6e-slice",
    "ct5p-hightpu-4t": "tpu-v5p-slice",
    "ct5lp-hightpu-4t": "tpu-v5-lite-podslice",
    "ct5lp-hightpu-8t": "tpu-v5-lite-podslice",
    "ct4p-hightpu-4t": "tpu-v4-podslice",
}
PW_TPU_VERSION = {  # :71-84
    "tpu7x-standard-4t": "tpu7x",
    "ct6e-standard-4t": "tpuv6e",
    "ct6e-standard-8t": "tpuv6e1t",
    "ct5p-hightpu-4t": "tpuv5",
    "ct5lp-hightpu-4t": "tpuv5e",
    "ct5lp-hightpu-8t": "tpuv5e1t",
    "ct4p-hightpu-4t": "tpuv4",
}
PW_DEFAULT_MAIN_CONTAINER = "main"
# spec.controller.mainContainerName defaults to "main".
# Source: google/pathways-job@v0.1.4:config/crd/bases (../shared/reference/crds/pathwaysjob-v0.1.4-crd.yaml:92-94).
PW_COLOCATE_MODE = "colocate_head_with_workers"
# Head: hostNetwork true + dnsPolicy ClusterFirstWithHostNet in both modes (:862-863, :873-874);
# with a user pod template, RM and proxy become init containers with restartPolicy Always (:858-864)
# and JAX_PLATFORMS=proxy / JAX_BACKEND_TARGET=grpc://$(PATHWAYS_HEAD):29000 go to the main
# container (:889-907); headless (no template): RM and proxy are the main containers (:869-876).
# In colocate_head_with_workers the head gets the TPU node selector (:946-951).
# Workers: numSlices jobs x VMs pods, hostNetwork (:775), nodeSelector accelerator+topology (:763,
# :506-514), limits google.com/tpu = chips per VM (:759), hostPath /tmp volume (:764-773).

# --------------------------------------------------------------------------- identity

HOST_NETWORK_USES_NODE_SA = True
# Workload Identity Federation for GKE does not apply to Pods on the host network: they reach the
# node's metadata server directly and act as the node's service account.
# Source: https://cloud.google.com/kubernetes-engine/docs/concepts/workload-identity#limitations
#   (host-network Pods are listed as unsupported; paraphrased, the page was not retrievable offline).
WI_ANNOTATION = "iam.gke.io/gcp-service-account"
WI_USER_ROLE = "roles/iam.workloadIdentityUser"
# A KSA maps to a GSA when annotated with iam.gke.io/gcp-service-account AND the GSA grants
# roles/iam.workloadIdentityUser to serviceAccount:<PROJECT>.svc.id.goog[<NS>/<KSA>].
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity#kubernetes-sa-to-iam

READ = "read"
READ_WRITE = "read/write"

STORAGE_ROLE_ACCESS: dict[str, str] = {
    "roles/storage.objectViewer": READ,
    "roles/storage.legacyObjectReader": READ,
    "roles/storage.legacyBucketReader": READ,
    "roles/storage.objectCreator": "write",
    "roles/storage.objectUser": READ_WRITE,
    "roles/storage.objectAdmin": READ_WRITE,
    "roles/storage.admin": READ_WRITE,
    "roles/storage.legacyBucketWriter": READ_WRITE,
    "roles/storage.legacyBucketOwner": READ_WRITE,
}
"""Role -> the object access it grants. Source: https://cloud.google.com/storage/docs/access-control/iam-roles"""


# How containers use gs:// locations is each backend's fact: BUCKET_USES in .backend_facts.

GCS_FUSE_CSI_DRIVER = "gcsfuse.csi.storage.gke.io"
GCS_FUSE_INJECT_ANNOTATION = "gke-gcsfuse/volumes"
GCS_FUSE_SIDECAR = "gke-gcsfuse-sidecar"
GCS_FUSE_SIDECAR_REQUESTS: dict[str, str] = {"cpu": "250m", "memory": "256Mi"}
GCS_FUSE_REQUEST_ANNOTATIONS: dict[str, str] = {
    "cpu": "gke-gcsfuse/cpu-request",
    "memory": "gke-gcsfuse/memory-request",
}
# A pod annotated gke-gcsfuse/volumes: "true" gets the driver's sidecar from GKE's mutating webhook,
# as a native sidecar (an init container with restartPolicy Always) on GKE 1.29 and later, with
# requests of 250m CPU and 256 MiB memory (5 GiB ephemeral storage) unless the pod's
# gke-gcsfuse/<resource>-request annotations say otherwise; gke-gcsfuse/<resource>-limit "0" lifts
# the limit. Source: https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/
# cloud-storage-fuse-csi-driver-sidecar ("Configure resources for the sidecar container") and
# GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook (sidecar injection).
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver
# (csi.driver gcsfuse.csi.storage.gke.io, volumeAttributes.bucketName; readOnly mounts need read).
GCS_FUSE_PREFETCH_SIDECAR = "gke-gcsfuse-metadata-prefetch"
GCS_FUSE_PREFETCH_ATTRIBUTE = "gcsfuseMetadataPrefetchOnMount"
GCS_FUSE_PREFETCH_REQUESTS: dict[str, str] = {"cpu": "10m", "memory": "10Mi"}
# A GCS FUSE volume with volumeAttributes gcsfuseMetadataPrefetchOnMount "true" also gets the metadata
# prefetch sidecar, injected the same way as the FUSE sidecar, requesting 10m CPU and 10Mi memory.
# Source: GoogleCloudPlatform/gcs-fuse-csi-driver v1.24.4 (2026-08-12) pkg/webhook/sidecar_spec.go:31, :45,
# :259 (the name, the attribute, its reading) and cmd/webhook/main.go:64-67 (the default requests).
GCS_FUSE_CACHE_VOLUME = "gke-gcsfuse-cache"
GCS_FUSE_FILE_CACHE_OPTION = "file-cache:max-size-mb:"
# gcsfuse's file cache is on for a volume whose mount option file-cache:max-size-mb is not 0 (the sidecar then
# passes cache-dir; GKE leaves it off otherwise), and it lives in the pod's volume gke-gcsfuse-cache: the webhook adds
# that volume, an emptyDir with no medium (on the node's boot disk), only when the pod declares none of that name;
# gke-gcsfuse/ephemeral-storage-limit "0" lifts the sidecar's limit, so nothing bounds it but the disk (-1: unbounded).
# Source: GoogleCloudPlatform/gcs-fuse-csi-driver v1.24.4 pkg/sidecar_mounter/sidecar_mounter_config.go l.242 and
# l.277-281 (cache-dir off by default, set when max-size-mb is not 0), pkg/webhook/sidecar_spec.go l.35 (the name),
# l.83-88 (cacheVolume: EmptyDir{}) and l.322-342 (GetSidecarContainerVolumeSpec skips it when the pod has one); an
# emptyDir with no medium is "stored on whatever medium that backs the node such as disk"
# (https://kubernetes.io/docs/concepts/storage/volumes/#emptydir).
DEFAULT_DISK_SIZE_GB = 100
# A node pool's boot disk when nodeConfig.diskSizeGb is unset: "If unspecified, the default disk size is 100GB"
# (GKE API v1 NodeConfig.diskSizeGb, https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig).

# --------------------------------------------------------------------------- vLLM on Ray

RAY_WORKER_ARG = "--ray_address="
"""A container that joins a Ray cluster (vllm examples multi-node-serving.sh ``worker --ray_address=``).
Its Ray workers run the engine the group's leader started, so they read what the leader's
engine arguments name: vllm-project/tpu-inference@v0.27.0 tpu_inference/executors/
ray_distributed_executor.py (the same passage in the tpu-inference 0.29.0 wheel the pinned image requires)
restores the ``gs://`` model URI on remote Ray workers so each "can independently ... stream the model from
GCS" with the Run:ai streamer."""
