"""The tpu-serving policy rules: plain Python over a resource's type and inputs.

The same rules run in two places: in Pulumi CrossGuard (``pulumi preview --policy-pack
policy``, through ``policy/__main__.py``) and offline over the plans of the offline
preview (``make policy``, through ``tools/policy_check.py``). Nothing here imports Pulumi.

A rule is either per resource (``check``) or over the whole stack (``stack_check``); it
yields one message per violation. ``mandatory`` violations fail; ``advisory`` ones are
reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

Enforcement = Literal["mandatory", "advisory"]

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_IAM = ("gcp:storage/bucketIAMMember:BucketIAMMember", "gcp:storage/bucketIAMBinding:BucketIAMBinding")
PROJECT_IAM = ("gcp:projects/iAMMember:IAMMember", "gcp:projects/iAMBinding:IAMBinding")
BASIC_ROLES = frozenset({"roles/owner", "roles/editor", "roles/viewer"})
NODE_ROLES = frozenset(
    {
        "roles/logging.logWriter",
        "roles/monitoring.metricWriter",
        "roles/monitoring.viewer",
        "roles/stackdriver.resourceMetadata.writer",
        "roles/artifactregistry.reader",
    }
)
HOST_ROLES = frozenset({"roles/container.hostServiceAgentUser", "roles/compute.networkUser"})
HOST_AGENTS = ("@container-engine-robot.iam.gserviceaccount.com", "@cloudservices.gserviceaccount.com")
"""The only project roles a stack grants: its node service account's, and (Shared VPC) the host project's to the
stack project's GKE and Google APIs agents (tpu_serving.platform.shared_vpc)."""

ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_RESOURCE = "google.com/tpu"
INTERNAL_LB_ANNOTATIONS = {
    "networking.gke.io/load-balancer-type": "Internal",
    "cloud.google.com/load-balancer-type": "Internal",
}
SERVING_KINDS = frozenset({"Deployment", "StatefulSet", "LeaderWorkerSet", "JobSet"})
"""Kinds whose containers serve: each needs probes and resource requests."""

if TYPE_CHECKING or __package__:  # tpu_serving_policy.rules (the tests, mypy, the offline check)
    from .allowlist import ALLOWLIST as ALLOWLIST
    from .allowlist import ALLOWLIST_FILE as ALLOWLIST_FILE
    from .allowlist import allowed as _allowed
    from .allowlist import backend_folders as backend_folders
    from .allowlist import load_allowlist as load_allowlist
else:  # rules, beside the pack's __main__.py in CrossGuard
    from allowlist import allowed as _allowed


@dataclass(frozen=True)
class Resource:
    """What a rule sees of a resource (from a plan record or a CrossGuard resource)."""

    type: str
    name: str
    inputs: Mapping[str, Any]
    urn: str = ""
    protect: bool = False
    dependencies: Sequence[str] = ()


@dataclass(frozen=True)
class Rule:
    """One policy."""

    name: str
    description: str
    enforcement: Enforcement
    check: Callable[[Resource], Iterable[str]] | None = None
    stack_check: Callable[[Sequence[Resource]], Iterable[str]] | None = None


@dataclass(frozen=True)
class Violation:
    """A rule's finding on a resource (or the stack)."""

    rule: str
    enforcement: Enforcement
    resource: str
    message: str


def _get(d: Any, *path: str, default: Any = None) -> Any:
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return default
        d = d[p]
    return d


# --------------------------------------------------------------------------- Kubernetes helpers


def is_kubernetes(r: Resource) -> bool:
    return r.type.startswith("kubernetes:") and "kind" in r.inputs


def pod_specs(obj: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every pod spec inside a workload object (Deployment, Job, LWS, JobSet, PathwaysJob)."""

    def walk(v: Any) -> Iterator[Mapping[str, Any]]:
        if isinstance(v, Mapping):
            if isinstance(v.get("containers"), list):
                yield v
            for x in v.values():
                yield from walk(x)
        elif isinstance(v, list):
            for x in v:
                yield from walk(x)

    yield from walk(obj.get("spec", {}))


def _containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(pod.get("containers") or []) + list(pod.get("initContainers") or [])


# --------------------------------------------------------------------------- GKE


def _gke_workload_identity(r: Resource) -> Iterator[str]:
    if r.type == CLUSTER and not str(_get(r.inputs, "workloadIdentityConfig", "workloadPool", default="")).endswith(
        ".svc.id.goog"
    ):
        yield "workload identity is off: set workloadIdentityConfig.workloadPool to <project>.svc.id.goog"


def _node_configs(r: Resource) -> Iterator[Mapping[str, Any]]:
    if r.type in (CLUSTER, NODE_POOL) and isinstance(r.inputs.get("nodeConfig"), Mapping):
        yield r.inputs["nodeConfig"]


def _gke_metadata(r: Resource) -> Iterator[str]:
    for cfg in _node_configs(r):
        if _get(cfg, "workloadMetadataConfig", "mode") != "GKE_METADATA":
            yield "nodes do not use the GKE metadata server (workloadMetadataConfig.mode GKE_METADATA)"
    if r.type == NODE_POOL and "nodeConfig" not in r.inputs:
        yield "node pool without nodeConfig: its nodes would use the Compute Engine metadata server"


def _gke_shielded(r: Resource) -> Iterator[str]:
    if r.type == CLUSTER and r.inputs.get("enableShieldedNodes") is not True:
        yield "shielded nodes are off (enableShieldedNodes)"
    for cfg in _node_configs(r):
        if _get(cfg, "shieldedInstanceConfig", "enableSecureBoot") is not True:
            yield "secure boot is off (nodeConfig.shieldedInstanceConfig.enableSecureBoot)"


def _gke_node_sa(r: Resource) -> Iterator[str]:
    for cfg in _node_configs(r):
        sa = cfg.get("serviceAccount")
        if not sa or sa == "default" or str(sa).endswith("-compute@developer.gserviceaccount.com"):
            yield f"nodes run as the Compute Engine default service account ({sa or 'unset'}); use a dedicated one"


def _project_roles(resources: Sequence[Resource]) -> Iterator[str]:
    for r in resources:
        host = r.inputs.get("role") in HOST_ROLES and str(r.inputs.get("member", "")).endswith(HOST_AGENTS)
        if r.type in PROJECT_IAM and r.inputs.get("role") not in NODE_ROLES and not host:
            yield f"{r.name}: project role {r.inputs.get('role')} is outside the node roles ({', '.join(sorted(NODE_ROLES))})"


def _gke_deletion_protection(r: Resource) -> Iterator[str]:
    if r.type == CLUSTER and r.inputs.get("deletionProtection") is False:
        yield "deletion protection is off"


def _gke_private_nodes(r: Resource) -> Iterator[str]:
    if r.type == CLUSTER and _get(r.inputs, "privateClusterConfig", "enablePrivateNodes") is not True:
        yield "nodes have external IPs (cluster.privateNodes is false)"


def _gke_authorized_networks(r: Resource) -> Iterator[str]:
    # A private endpoint: "access through the public endpoint is disabled" (pulumi-gcp 10.2.0 enable_private_endpoint)
    private = _get(r.inputs, "privateClusterConfig", "enablePrivateEndpoint")
    if r.type == CLUSTER and not private and not _get(r.inputs, "masterAuthorizedNetworksConfig", "cidrBlocks"):
        yield "the control plane's IP endpoint accepts any network; consider cluster.controlPlaneEndpoint: dns"


# --------------------------------------------------------------------------- IAM & GCS


def _iam_basic_roles(r: Resource) -> Iterator[str]:
    if r.type.startswith("gcp:") and r.inputs.get("role") in BASIC_ROLES:
        yield f"basic role {r.inputs['role']} granted"


def _iam_project_storage(r: Resource) -> Iterator[str]:
    if r.type in PROJECT_IAM and str(r.inputs.get("role", "")).startswith("roles/storage."):
        yield f"project-wide storage role {r.inputs['role']}; grant it on the stack's buckets instead"


SHARED_BUCKETS = "tpu-serving:index:SharedBuckets"  # declares existing buckets a stack reads (input bucketNames)
STACK_BUCKETS = "tpu-serving:index:Buckets"  # the stack's buckets; those that exist already: input existingBucketNames
SHARED_READ_ROLE = "roles/storage.objectViewer"
PUBLIC_PRINCIPALS = frozenset({"allUsers", "allAuthenticatedUsers"})


def _iam_stack_buckets(resources: Sequence[Resource]) -> Iterator[str]:
    buckets = {r.inputs.get("name") for r in resources if r.type == BUCKET} | {
        n for r in resources if r.type == STACK_BUCKETS for n in r.inputs.get("existingBucketNames") or ()
    }
    shared = {n for r in resources if r.type == SHARED_BUCKETS for n in r.inputs.get("bucketNames") or ()}
    for r in (r for r in resources if r.type in BUCKET_IAM):
        bucket, role = r.inputs.get("bucket"), r.inputs.get("role")
        members = [r.inputs.get("member"), *(r.inputs.get("members") or ())]
        if PUBLIC_PRINCIPALS & set(members):
            yield f"{r.name}: bucket {bucket!r} granted to the public ({', '.join(sorted(PUBLIC_PRINCIPALS & set(members)))})"
        if bucket in shared and bucket not in buckets and role != SHARED_READ_ROLE:
            yield f"{r.name}: {role} on the shared bucket {bucket!r}; a declared shared bucket is read only ({SHARED_READ_ROLE})"
        elif bucket not in buckets | shared:
            yield (
                f"{r.name}: storage role on bucket {bucket!r}, which is neither one of the stack's buckets nor a "
                "declared shared bucket (sharedBuckets in the stack file, or a SharedBuckets component)"
            )


def _gcs_ubla(r: Resource) -> Iterator[str]:
    if r.type == BUCKET and r.inputs.get("uniformBucketLevelAccess") is not True:
        yield "uniform bucket-level access is off"


def _gcs_pap(r: Resource) -> Iterator[str]:
    if r.type == BUCKET and r.inputs.get("publicAccessPrevention") != "enforced":
        yield "public access prevention is not enforced"


def _gcs_checkpoints_protected(r: Resource) -> Iterator[str]:
    if r.type == BUCKET and _get(r.inputs, "labels", "purpose") == "checkpoints":
        if not r.protect:
            yield "the checkpoint bucket is not protected from deletion (protect)"
        if r.inputs.get("forceDestroy") is True:
            yield "the checkpoint bucket may be force-destroyed with its objects"


# --------------------------------------------------------------------------- Kubernetes


def _k8s_open_lb(r: Resource) -> Iterator[str]:
    if not is_kubernetes(r) or r.inputs.get("kind") != "Service":
        return
    spec, annotations = r.inputs.get("spec", {}), _get(r.inputs, "metadata", "annotations", default={}) or {}
    internal = any(annotations.get(k) == v for k, v in INTERNAL_LB_ANNOTATIONS.items())
    if spec.get("type") == "LoadBalancer" and not internal and not spec.get("loadBalancerSourceRanges"):
        yield "LoadBalancer reachable from the internet without loadBalancerSourceRanges"


def _k8s_privileges(r: Resource) -> Iterator[str]:
    if not is_kubernetes(r):
        return
    kind, name = r.inputs["kind"], _get(r.inputs, "metadata", "name", default="")
    for pod in pod_specs(r.inputs):
        findings = ["hostNetwork"] if pod.get("hostNetwork") else []
        for c in _containers(pod):
            sc = c.get("securityContext") or {}
            if sc.get("privileged"):
                findings.append(f"privileged:{c.get('name')}")
            findings += [
                f"capability:{c.get('name')}:{cap}" for cap in _get(sc, "capabilities", "add", default=[]) or []
            ]
        for finding in findings:
            if not _allowed(kind, name, finding):
                yield f"{finding} is not in the allowlist"


def _k8s_tpu_selectors(r: Resource) -> Iterator[str]:
    if not is_kubernetes(r):
        return
    for pod in pod_specs(r.inputs):
        selector = pod.get("nodeSelector") or {}
        wants_tpu = any(
            TPU_RESOURCE in (_get(c, "resources", "limits", default={}) or {})
            or TPU_RESOURCE in (_get(c, "resources", "requests", default={}) or {})
            for c in _containers(pod)
        )
        if (wants_tpu or ACCELERATOR_LABEL in selector) and not {ACCELERATOR_LABEL, TOPOLOGY_LABEL} <= set(selector):
            yield "a TPU pod must select both the accelerator and the topology of its slice"


def _k8s_probes_requests(r: Resource) -> Iterator[str]:
    if not is_kubernetes(r) or r.inputs["kind"] not in SERVING_KINDS:
        return
    for pod in pod_specs(r.inputs):
        for c in pod.get("containers") or []:
            if not (c.get("readinessProbe") or c.get("startupProbe")):
                yield f"container {c.get('name')} has no readiness probe"
            if not _get(c, "resources", "requests"):
                yield f"container {c.get('name')} has no resource requests"


SECCOMP_CONFINED = frozenset({"RuntimeDefault", "Localhost"})  # Unconfined and unset do not, on GKE Standard


def _k8s_hardened_pods(r: Resource) -> Iterator[str]:
    """Pods: seccomp, no token unless allowlisted; unprivileged containers: no escalation, drop ALL."""
    if not is_kubernetes(r):
        return
    kind, name = r.inputs["kind"], _get(r.inputs, "metadata", "name", default="")
    for pod in pod_specs(r.inputs):
        if _get(pod, "securityContext", "seccompProfile", "type") not in SECCOMP_CONFINED:
            yield "pod without seccompProfile RuntimeDefault"
        containers = _containers(pod)
        if pod.get("automountServiceAccountToken") is not False and not any(
            _allowed(kind, name, f"serviceAccountToken:{c.get('name')}") for c in containers
        ):
            yield "pod mounts a service account token (automountServiceAccountToken is not false) it is not allowed"
        for c in containers:
            sc = c.get("securityContext") or {}
            if sc.get("privileged"):
                continue
            if sc.get("allowPrivilegeEscalation") is not False:
                yield f"container {c.get('name')}: allowPrivilegeEscalation is not false"
            if "ALL" not in (_get(sc, "capabilities", "drop", default=[]) or []):
                yield f"container {c.get('name')}: capabilities are not dropped (drop: [ALL])"


def _cpu_pods(r: Resource) -> Iterator[Mapping[str, Any]]:
    """The pods of ``r`` that neither hold TPU chips nor select a TPU node: they share the CPU pool's nodes."""
    for pod in pod_specs(r.inputs) if is_kubernetes(r) else ():
        tpu = any(TPU_RESOURCE in (_get(c, "resources", "limits", default={}) or {}) for c in _containers(pod))
        if not tpu and ACCELERATOR_LABEL not in (pod.get("nodeSelector") or {}):
            yield pod


def _k8s_cpu_pool_memory_limits(r: Resource) -> Iterator[str]:
    kind, name = r.inputs.get("kind", ""), _get(r.inputs, "metadata", "name", default="")
    for pod in _cpu_pods(r):
        for c in _containers(pod):
            if not _get(c, "resources", "limits", "memory") and not _allowed(
                kind, name, f"memoryLimit:{c.get('name')}"
            ):
                yield f"container {c.get('name')} on the CPU pool has no memory limit"


def _k8s_cpu_pool_non_root(r: Resource) -> Iterator[str]:
    for pod in _cpu_pods(r):
        yield from (
            f"container {c.get('name')} on the CPU pool may run as root (runAsNonRoot is not set)"
            for c in _containers(pod)
            if not (_get(c, "securityContext", "runAsNonRoot") or _get(pod, "securityContext", "runAsNonRoot"))
        )


CREDENTIAL_ENV = re.compile(r"(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY)($|_)")
"""Environment variable names that hold credentials (HF_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD...)."""


def _k8s_no_literal_credentials(r: Resource) -> Iterator[str]:
    if not is_kubernetes(r):
        return
    for pod in pod_specs(r.inputs):
        for c in _containers(pod):
            for e in c.get("env") or []:
                if CREDENTIAL_ENV.search(str(e.get("name", ""))) and e.get("value"):
                    yield f"container {c.get('name')} sets {e.get('name')} to a literal value; reference a Secret"


def _k8s_mutable_tags(r: Resource) -> Iterator[str]:
    if not is_kubernetes(r):
        return
    for pod in pod_specs(r.inputs):
        for c in _containers(pod):
            image = str(c.get("image", ""))
            tail = image.rsplit("/", 1)[-1]
            if "@sha256:" not in image and (":" not in tail or tail.endswith(":latest")):
                yield f"container {c.get('name')} uses the mutable image {image}"


RULES: tuple[Rule, ...] = (
    Rule("gke-workload-identity", "GKE clusters have workload identity on.", "mandatory", _gke_workload_identity),
    Rule(
        "gke-metadata-server",
        "Every node pool uses the GKE metadata server (GKE_METADATA).",
        "mandatory",
        _gke_metadata,
    ),
    Rule("gke-shielded-nodes", "Shielded nodes with secure boot.", "mandatory", _gke_shielded),
    Rule(
        "gke-node-service-account",
        "Nodes run as a dedicated service account, never the Compute Engine default.",
        "mandatory",
        _gke_node_sa,
    ),
    Rule(
        "gke-node-roles-only",
        "The only project roles are the node service account's logging, monitoring and Artifact Registry reader roles.",
        "mandatory",
        stack_check=_project_roles,
    ),
    Rule("gke-deletion-protection", "Clusters have deletion protection.", "mandatory", _gke_deletion_protection),
    Rule("gke-private-nodes", "Nodes without external IPs.", "mandatory", _gke_private_nodes),
    Rule("gke-authorized-networks", "No control-plane IP endpoint open to all.", "advisory", _gke_authorized_networks),
    Rule("iam-no-basic-roles", "No owner, editor or viewer grants.", "mandatory", _iam_basic_roles),
    Rule("iam-no-project-storage-roles", "No project-wide storage roles.", "mandatory", _iam_project_storage),
    Rule(
        "iam-storage-on-stack-buckets",
        "Storage roles only on the stack's own buckets.",
        "mandatory",
        stack_check=_iam_stack_buckets,
    ),
    Rule("gcs-uniform-access", "Buckets use uniform bucket-level access.", "mandatory", _gcs_ubla),
    Rule("gcs-public-access-prevention", "Buckets enforce public access prevention.", "mandatory", _gcs_pap),
    Rule(
        "gcs-checkpoints-protected",
        "The checkpoint bucket is protected from deletion.",
        "mandatory",
        _gcs_checkpoints_protected,
    ),
    Rule(
        "k8s-no-open-load-balancer",
        "No internet-facing LoadBalancer without loadBalancerSourceRanges.",
        "mandatory",
        _k8s_open_lb,
    ),
    Rule(
        "k8s-privileges-allowlisted",
        "No privileged container, host network or added capability outside the allowlist.",
        "mandatory",
        _k8s_privileges,
    ),
    Rule(
        "k8s-tpu-pod-selects-slice",
        "Every TPU pod selects an accelerator and a topology.",
        "mandatory",
        _k8s_tpu_selectors,
    ),
    Rule(
        "k8s-serving-probes-requests",
        "Every serving container has a readiness probe and resource requests.",
        "mandatory",
        _k8s_probes_requests,
    ),
    Rule(
        "k8s-no-literal-credentials",
        "Credentials (tokens, secrets, passwords) come from Secrets, never literal env values.",
        "mandatory",
        _k8s_no_literal_credentials,
    ),
    Rule(
        "k8s-hardened-pods",
        "Pods confined by seccomp RuntimeDefault, with no service account token unless allowlisted; containers "
        "without privilege escalation and with every capability dropped (added back only as allowlisted).",
        "mandatory",
        _k8s_hardened_pods,
    ),
    Rule("k8s-cpu-pool-memory-limits", "CPU-pool pods have memory limits.", "mandatory", _k8s_cpu_pool_memory_limits),
    Rule("k8s-cpu-pool-non-root", "CPU-pool pods run as non-root users.", "advisory", _k8s_cpu_pool_non_root),
    Rule("k8s-mutable-image-tags", "Images are pinned, not `latest` or untagged.", "advisory", _k8s_mutable_tags),
)


def evaluate(resources: Sequence[Resource], rules: Sequence[Rule] = RULES) -> list[Violation]:
    """Every violation of ``rules`` in ``resources``."""
    found = []
    for rule in rules:
        if rule.check is not None:
            for r in resources:
                found += [Violation(rule.name, rule.enforcement, r.urn or r.name, m) for m in rule.check(r)]
        if rule.stack_check is not None:
            found += [
                Violation(rule.name, rule.enforcement, stack_label(resources), m) for m in rule.stack_check(resources)
            ]
    return found


def stack_label(resources: Sequence[Resource]) -> str:
    """``stack <name>``, read off the resources' URNs (``urn:pulumi:<stack>::<project>::...``), for the
    findings of a rule over the whole stack."""
    for r in resources:
        if r.urn and r.urn.startswith("urn:pulumi:"):
            return f"stack {r.urn.removeprefix('urn:pulumi:').split('::', 1)[0]}"
    return "the stack"


def from_plan(plan: Mapping[str, Any]) -> list[Resource]:
    """The resources of an offline plan (``build/<stack>/plan.json``): the custom ones, and the components declaring
    shared or existing buckets (CrossGuard's stack policies see components: pulumi/pulumi-policy#364)."""
    return [
        Resource(
            type=r["type"],
            name=r["name"],
            inputs=r["inputs"],
            urn=r["urn"],
            protect=bool(r.get("protect")),
            dependencies=tuple(r.get("dependencies", ())),
        )
        for r in plan["resources"]
        if r.get("custom") or r["type"] in (SHARED_BUCKETS, STACK_BUCKETS)
    ]
