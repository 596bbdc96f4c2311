"""For each pod that uses a bucket: which identity it really acts as, and does it hold the role?

Host-network pods act as the node service account of every pool they may land on; other pods
act as the GSA their Kubernetes service account is mapped to by Workload Identity (annotation AND
``roles/iam.workloadIdentityUser`` binding), or have no Google identity at all. The access a use
needs (read, read/write) comes from :data:`tools.runtime.backend_facts.BUCKET_USES` (each backend's ``runtime_facts.json``).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.gcp_types import CLUSTER
from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.backend_facts import BUCKET_USES
from tpu_serving_tools.runtime.existing import existing_accounts, existing_cluster
from tpu_serving_tools.runtime.node_pool import NodePool
from tpu_serving_tools.runtime.planview import UNKNOWN, PlanView
from tpu_serving_tools.runtime.pods import Container, Pod, gs_uris, pods_of
from tpu_serving_tools.runtime.result import CategoryResult, Finding
from tpu_serving_tools.runtime.scheduling import ACCOUNT_TYPE, landing_pools, node_pools

BUCKET_IAM_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
BUCKET_IAM_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
BUCKET_TYPE = "gcp:storage/bucket:Bucket"
PROJECT_IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
SA_IAM_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"
KSA_TYPE = "kubernetes:core/v1:ServiceAccount"


@dataclass(frozen=True)
class BucketNeed:
    """A bucket a pod uses and the access that use needs."""

    bucket: str
    access: str
    how: str


@dataclass(frozen=True)
class Identity:
    """Who a pod acts as: an Account URN (or email), with how that was decided; urn None = no Google identity."""

    urn: str | None
    description: str
    declared: Mapping[str, tuple[str, ...]] | None = None
    """An existing node account's roles as the plan declares them (bucket -> accesses); None: read the plan's IAM."""


def _bucket_of(uri: str) -> str:
    return uri[len("gs://") :].split("/", 1)[0]


def _use_access(kind: str, key: str, container: str) -> tuple[str, str]:
    """The access a use needs and its source (first match of :data:`backend_facts.BUCKET_USES`)."""
    for use in BUCKET_USES:
        if use.kind != kind or use.container not in ("*", container):
            continue
        if (kind == "arg" and key.startswith(use.key)) or (kind == "env" and key == use.key):
            return use.access, use.source
    return F.READ, "unclassified use: read assumed"


def container_needs(c: Container) -> Iterator[BucketNeed]:
    """The buckets a container's args and env name, with the access each use needs."""
    for arg in c.args + c.command:
        for uri in gs_uris([arg]):
            access, _ = _use_access("arg", arg, c.name)
            yield BucketNeed(_bucket_of(uri), access, f"{c.name} arg {arg.split('=', 1)[0]}")
    for name, value in c.env.items():
        uris = list(gs_uris([value]))
        if uris:
            for uri in uris:
                yield BucketNeed(_bucket_of(uri), _use_access("env", name, c.name)[0], f"{c.name} env {name}")
        elif any(u.kind == "env" and u.key == name and u.container in ("*", c.name) for u in BUCKET_USES) and value:
            yield BucketNeed(value, _use_access("env", name, c.name)[0], f"{c.name} env {name}")


def pod_needs(pod: Pod) -> list[BucketNeed]:
    """Every bucket need of a pod (containers and GCS FUSE volumes), strongest access per bucket."""
    needs: dict[str, BucketNeed] = {}
    found = [n for c in pod.all_containers for n in container_needs(c)]
    for v in pod.volumes:
        if v.gcs_bucket:
            ro = v.read_only or all(v.name in c.read_only_mounts for c in pod.all_containers)
            found.append(BucketNeed(v.gcs_bucket, F.READ if ro else F.READ_WRITE, f"volume {v.name} (gcsfuse)"))
    for n in found:
        prev = needs.get(n.bucket)
        if prev is None or (prev.access == F.READ and n.access != F.READ):
            needs[n.bucket] = n
    return list(needs.values())


# --------------------------------------------------------------------------- identities


def _account_label(view: PlanView, urn: str) -> str:
    try:
        return f"GSA {view.by_urn(urn)['inputs'].get('accountId', urn)}"
    except StopIteration:
        return urn


def _workload_pool(view: PlanView) -> str | None:
    for c in view.of_type(CLUSTER):
        pool = (c["inputs"].get("workloadIdentityConfig") or {}).get("workloadPool")
        if pool:
            return str(pool)
    existing = existing_cluster(view)
    return str(existing["workloadPool"]) if existing and existing.get("workloadPool") else None


def _ksa_resource(view: PlanView, ns: str, name: str) -> Mapping[str, Any] | None:
    for r in view.of_type(KSA_TYPE):
        meta = r["inputs"].get("metadata") or {}
        if meta.get("name") == name and meta.get("namespace", "default") == ns:
            return r
    return None


def resolve_account(view: PlanView, resource: Mapping[str, Any], prop: str, value: str) -> str | None:
    """The Account URN behind ``value`` (an email, or <unknown> resolved through propertyDependencies)."""
    sources = [r for r in view.input_source(resource, prop) if r["type"] == ACCOUNT_TYPE]
    if sources:
        return str(sources[0]["urn"])
    if value and value != UNKNOWN:
        email = value.split(":", 1)[-1]
        for acc in view.of_type(ACCOUNT_TYPE):
            if email.startswith(f"{acc['inputs'].get('accountId')}@"):
                return str(acc["urn"])
        return email
    return None


def ksa_identity(view: PlanView, ns: str, ksa: str) -> Identity:
    """The GSA a KSA is mapped to by Workload Identity, or why it has none."""
    r = _ksa_resource(view, ns, ksa)
    if r is None:
        return Identity(None, f"KSA {ns}/{ksa} is not in the plan (no Workload Identity mapping)")
    annotation = ((r["inputs"].get("metadata") or {}).get("annotations") or {}).get(F.WI_ANNOTATION)
    if not annotation:
        return Identity(None, f"KSA {ns}/{ksa} has no {F.WI_ANNOTATION} annotation: no Google identity")
    gsa = resolve_account(view, r, "metadata", str(annotation))
    if gsa is None:
        return Identity(None, f"KSA {ns}/{ksa}: annotation {annotation} resolves to no service account")
    member = f"serviceAccount:{_workload_pool(view)}[{ns}/{ksa}]"
    declared = existing_accounts(view).get(gsa)
    if declared is not None and declared[0] == member:
        return Identity(
            gsa, f"KSA {ns}/{ksa} -> existing GSA {gsa} (its binding and roles as the stack declares them)", declared[1]
        )
    for b in view.of_type(SA_IAM_MEMBER):
        i = b["inputs"]
        if (
            i.get("role") == F.WI_USER_ROLE
            and i.get("member") == member
            and (resolve_account(view, b, "serviceAccountId", str(i.get("serviceAccountId", ""))) == gsa)
        ):
            return Identity(gsa, f"KSA {ns}/{ksa} -> {_account_label(view, gsa)} (Workload Identity)")
    return Identity(
        None,
        f"KSA {ns}/{ksa} is annotated for {_account_label(view, gsa)} but {member} lacks "
        f"{F.WI_USER_ROLE} on it: no Google identity",
    )


def pod_identities(view: PlanView, pod: Pod, pools: Sequence[NodePool]) -> list[Identity]:
    """Every identity the pod may act as: for host-network pods, the node SA of every pool it could land on."""
    if pod.host_network and F.HOST_NETWORK_USES_NODE_SA:
        candidates = landing_pools(pod, pools)
        if not candidates:
            return [Identity(None, "host network, but no node pool admits the pod (see scheduling)")]
        return [
            Identity(
                p.service_account_urn,
                f"host network: node SA of pool {p.name} "
                f"({_account_label(view, p.service_account_urn) if p.service_account_urn else 'Compute Engine default SA'})",
            )
            if p.declared_grants is None
            else Identity(
                p.service_account_urn,
                f"host network: node SA of existing pool {p.name}, holding the roles the stack declares for it",
                p.declared_grants,
            )
            for p in candidates
        ]
    return [ksa_identity(view, pod.namespace, pod.service_account)]


# --------------------------------------------------------------------------- roles


def _bucket_matches(view: PlanView, binding: Mapping[str, Any], bucket: str) -> bool:
    if str(binding["inputs"].get("bucket", "")) == bucket:
        return True
    return any(
        str(b["inputs"].get("name")) == bucket for b in view.input_source(binding, "bucket") if b["type"] == BUCKET_TYPE
    )


def _member_is(view: PlanView, binding: Mapping[str, Any], prop: str, value: str, urn: str) -> bool:
    return resolve_account(view, binding, prop, value) == urn


_STARTS_WITH = re.compile(r'^resource\.name\.startsWith\(\s*"([^"]+)"\s*\)$')
_BEFORE = re.compile(r'^request\.time\s*<\s*timestamp\(\s*"([^"]+)"\s*\)$')


def condition_admits(binding: Mapping[str, Any], bucket: str, now: datetime.datetime | None = None) -> bool:
    """Whether a binding's IAM condition lets its role act on every object of ``bucket`` (no condition: yes).

    The model evaluates the forms a bucket grant takes and refuses the rest, so that a condition it cannot
    read never counts as access (https://cloud.google.com/iam/docs/conditions-overview; Cloud Storage resource
    names ``projects/_/buckets/<bucket>/objects/<object>``,
    https://cloud.google.com/iam/docs/conditions-resource-attributes#resource-name):
    ``resource.name.startsWith("projects/_/buckets/<bucket>")`` (optionally with ``/``) admits the bucket's
    objects; a prefix inside ``/objects/`` admits only some objects (and listing, checked on the bucket, fails);
    ``request.time < timestamp("...")`` admits until then
    (https://cloud.google.com/iam/docs/conditions-attribute-reference#request-time); ``&&`` of these admits
    when each does."""
    condition = binding["inputs"].get("condition")
    if not isinstance(condition, Mapping):
        return True
    now = now or datetime.datetime.now(datetime.UTC)
    for term in str(condition.get("expression", "")).split("&&"):
        term = term.strip()
        if term.startswith("(") and term.endswith(")") and term.count("(") == term.count(")"):
            term = term[1:-1].strip()
        if m := _STARTS_WITH.match(term):
            if m.group(1).rstrip("/") != f"projects/_/buckets/{bucket}":
                return False
        elif m := _BEFORE.match(term):
            until = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
            if now >= until:
                return False
        else:
            return False
    return True


def granted_access(view: PlanView, urn: str, bucket: str) -> set[str]:
    """The accesses ``urn`` holds on ``bucket`` (bucket-level and project-level storage roles whose
    conditions, if any, admit the whole bucket)."""
    out: set[str] = set()
    for b in view.of_type(BUCKET_IAM_MEMBER):
        role = str(b["inputs"].get("role"))
        if (
            role in F.STORAGE_ROLE_ACCESS
            and _bucket_matches(view, b, bucket)
            and _member_is(view, b, "member", str(b["inputs"].get("member", "")), urn)
            and condition_admits(b, bucket)
        ):
            out.add(F.STORAGE_ROLE_ACCESS[role])
    for b in view.of_type(BUCKET_IAM_BINDING):
        role = str(b["inputs"].get("role"))
        members = [str(m) for m in b["inputs"].get("members") or ()]
        if (
            role in F.STORAGE_ROLE_ACCESS
            and _bucket_matches(view, b, bucket)
            and any(_member_is(view, b, "members", m, urn) for m in members)
            and condition_admits(b, bucket)
        ):
            out.add(F.STORAGE_ROLE_ACCESS[role])
    for b in view.of_type(PROJECT_IAM_MEMBER):
        role = str(b["inputs"].get("role"))
        if (
            role in F.STORAGE_ROLE_ACCESS
            and _member_is(view, b, "member", str(b["inputs"].get("member", "")), urn)
            and condition_admits(b, bucket)
        ):
            out.add(F.STORAGE_ROLE_ACCESS[role])
    return out


def satisfies(granted: set[str], needed: str) -> bool:
    if needed == F.READ:
        return bool(granted & {F.READ, F.READ_WRITE})
    return F.READ_WRITE in granted or {F.READ, "write"} <= granted


# --------------------------------------------------------------------------- check


def ray_worker_needs(pod: Pod, pods: Sequence[Pod]) -> list[BucketNeed]:
    """What a Ray worker pod reads for its group's engine: the ``gs://`` locations its leader's
    engine arguments name (:data:`facts.RAY_WORKER_ARG`)."""
    if not any(F.RAY_WORKER_ARG in a for c in pod.all_containers for a in c.args + c.command):
        return []
    leader = next((p for p in pods if p.group == pod.group and p.role == "leader"), None)
    if leader is None:
        return []
    return [
        BucketNeed(n.bucket, n.access, f"Ray worker of {leader.name}: {n.how}")
        for c in leader.all_containers
        for n in container_needs(c)
    ]


def shared_needs(view: PlanView, pod: Pod) -> list[BucketNeed]:
    """Read access to each shared bucket the stack file declares (``sharedBuckets``), for every pod that holds
    TPU chips: the model servers are what such a bucket is declared for."""
    if not any("tpu" in c.requested for c in pod.containers):
        return []
    declared = view.setting("sharedBuckets") or []
    return [BucketNeed(str(b["name"]), "read", "declared shared bucket (sharedBuckets)") for b in declared]


def check(view: PlanView) -> CategoryResult:
    """One finding per (pod role, bucket, access), deduplicated across identical pods."""
    pools = node_pools(view)
    findings: dict[str, Finding] = {}
    pods = pods_of(view)
    for pod in pods:
        for need in pod_needs(pod) + ray_worker_needs(pod, pods) + shared_needs(view, pod):
            subject = f"pod-role {pod.namespace}/{pod.owner.split('/', 1)[1]} {pod.role} -> gs://{need.bucket} ({need.access})"
            if subject in findings:
                continue
            problems, ok_how = [], []
            for ident in pod_identities(view, pod, pools):
                if ident.urn is None:
                    problems.append(ident.description)
                    continue
                granted = (
                    set(ident.declared.get(need.bucket, ()))
                    if ident.declared is not None
                    else granted_access(view, ident.urn, need.bucket)
                )
                if satisfies(granted, need.access):
                    ok_how.append(ident.description)
                else:
                    held = ", ".join(sorted(granted)) or "no storage role"
                    problems.append(f"{ident.description} holds {held} on gs://{need.bucket}")
            reason = "; ".join(problems) if problems else "; ".join(ok_how)
            findings[subject] = Finding(subject, not problems, f"{reason} [{need.how}]")
    return CategoryResult("identity", list(findings.values()))
