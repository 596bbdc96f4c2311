"""``Tenancy``: what makes a stack's namespace a tenant of the cluster.

- a ResourceQuota sized to the stack's slices (``requests.google.com/tpu`` = its chips) and
  CPU/memory, with a LimitRange that gives default requests to pods that name none (such
  as the ones controllers create), so the quota never rejects them;
- NetworkPolicies: every pod accepts traffic from its own namespace (leader-worker,
  Pathways and Sax traffic keep working); the serving pods also accept their serving
  ports from the configured namespaces and CIDR blocks, and their metrics ports from Managed
  Prometheus' collectors; nothing else gets in;
- PriorityClasses: serving above batch, so batch work never preempts a serving group;
- RBAC: what the team that operates the variant may do, bound to its groups and users
  (:mod:`tpu_serving.tenancy.operator_access`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..common.naming import SERVING_PRIORITY as SERVING_PRIORITY  # its module before the serving probe
from ..common.naming import check_dns_name, email_problem, namespace_problem
from ..common.options import child_options
from ..common.quota import PodSet, QuotaNeed, derive, quota_problems
from ..common.settings import cidr_list_problem, described, ports_problem
from ..common.validation import check_arguments
from ..operations.observability import GMP_COLLECTOR_LABELS, GMP_COLLECTOR_NAMESPACE, ScrapeTarget
from ..pools.nodepool import TPU_RESOURCE
from . import operator_access

BATCH_PRIORITY = "tpu-serving-batch"
"""PriorityClass of batch workloads (never preempts)."""
PRIORITIES: dict[str, tuple[int, str, str]] = {
    SERVING_PRIORITY: (100000, "PreemptLowerPriority", "Online model serving: above batch work."),
    BATCH_PRIORITY: (10000, "Never", "Batch and interactive TPU jobs: below serving, never preempts."),
}


@dataclass(frozen=True)
class PortRange:
    """A TCP port, or with ``end_port`` the range ``port``..``end_port`` (NetworkPolicy ``endPort``, GA in
    Kubernetes 1.25)."""

    port: int = described("First (or only) port.", ge=1, le=65535)
    end_port: int | None = described("Last port of the range; unset: `port` alone.", default=None, ge=1, le=65535)


@dataclass(frozen=True)
class PodFlow:
    """Traffic one set of the namespace's pods accepts from another: one NetworkPolicy."""

    name: str = described("Name of the NetworkPolicy.", check=check_dns_name)
    pods: Mapping[str, str] = described("Labels of the pods that accept the traffic.")
    sources: Mapping[str, str] | None = described(
        "Labels of the namespace's pods it comes from; unset: every pod of the namespace outside the isolated set.",
        default=None,
    )
    ports: Sequence[PortRange] = described("Ports it may reach; empty: every port.", default=())


@dataclass(frozen=True)
class IsolatedPods:
    """Pods left out of the blanket ``same-namespace`` policy: they accept only their own :class:`PodFlow` s (and
    the serving, scrape and load balancer policies), so each flow between them is stated, and can be blocked."""

    label: str = described("Label key that marks the isolated pods.")
    value: str = described("Its value on them.")
    flows: Sequence[PodFlow] = described("What the isolated pods accept from the namespace.", default=())


QUOTA_SETTINGS: tuple[str, ...] = ("cpu", "memory")
"""The arguments a stack file sets as ``tenancy.quota`` (the TPU quota is derived from the slices)."""

DEFAULT_CPU_REQUEST, DEFAULT_MEMORY_REQUEST = "250m", "512Mi"
"""The LimitRange's default requests: what a container that names none requests (LimitRanger admission sets them)."""

UNPLANNED_CPU, UNPLANNED_MEMORY = "256", "2048Gi"
"""The CPU and memory quota of a namespace where the plan puts no pod (``pods`` empty: no ``serving``), for what its
users run there themselves."""


@dataclass(frozen=True)
class TenancyArgs:
    """Arguments of :class:`Tenancy`."""

    namespace: str = field(metadata={"check": namespace_problem})
    """The stack's namespace (created elsewhere; not one Kubernetes or GKE reserves, :func:`~tpu_serving.common.naming.namespace_problem`)."""
    tpu_chips: int = described("The chips of the stack's slices.", ge=0)
    tpu_headroom_chips: int = described(
        "Extra `requests.google.com/tpu` quota for a restart: the chips of the largest unit that restarts at once "
        "(its old and new pods briefly hold their TPU requests together).",
        default=0,
        ge=0,
    )
    cpu: str | None = described(
        "`requests.cpu` quota, e.g. 400; unset: what the plan's pods need at their peak (every workload at its "
        "maximum replicas, one rollout's surge, one restart unit held twice, the sidecars and the endpoint picker). "
        "A figure below that is refused.",
        default=None,
        pattern=r"^\d+(\.\d+)?m?$",
    )
    memory: str | None = described(
        "`requests.memory` quota, e.g. 2048Gi; unset: what the plan's pods need at their peak, as for `cpu`. A "
        "figure below that is refused.",
        default=None,
        pattern=r"^\d+(Ki|Mi|Gi|Ti)?$",
    )
    pods: Sequence[PodSet] = ()
    """The pods the plan puts in the namespace (:mod:`tpu_serving.common.quota`): the CPU and memory quota's derived
    figure, and the floor of a given one (none: no pod planned, and the quota is 256 CPU and 2048Gi unless given)."""
    default_cpu_request: str = DEFAULT_CPU_REQUEST
    """CPU request given to containers that name none."""
    default_memory_request: str = DEFAULT_MEMORY_REQUEST
    """Memory request given to containers that name none."""
    serving_pods: Mapping[str, str] = field(default_factory=dict)
    """Labels of the pods that serve clients outside the namespace (none: no such pods)."""
    serving_ports: Sequence[int] = described("Their serving ports.", default=(), check=ports_problem)
    allowed_namespaces: Sequence[str] = ()
    """Namespaces whose pods may reach the serving ports."""
    allowed_cidrs: Sequence[str] = described(
        "CIDR blocks that may reach the serving ports (load balancer clients).", default=(), check=cidr_list_problem
    )
    scrape_targets: Sequence[ScrapeTarget] = ()
    """Metrics endpoints that Managed Prometheus' collectors (in ``gmp-system``) may reach."""
    isolated: IsolatedPods | None = None
    """Pods outside the ``same-namespace`` policy, and the flows they accept (none: every pod is inside it)."""
    load_balancer_cidrs: Sequence[str] = described(
        "Sources of a proxy load balancer in front of the serving ports: its proxy-only subnet and its health check "
        "ranges (:mod:`tpu_serving.traffic.gateway`).",
        default=(),
        check=cidr_list_problem,
    )
    operator_groups: Sequence[str] = ()
    """Groups (e.g. Google Groups for RBAC) that operate the variant."""
    operator_users: Sequence[str] = ()
    """Users that operate the variant."""
    serving_preempts: bool = True
    """Whether the serving PriorityClass preempts lower-priority pods (``PreemptLowerPriority``); False: it never does
    (``Never``: its pods go ahead of lower-priority ones in the scheduling queue but evict none), as on an existing
    cluster, whose other tenants' pods the stack must not evict."""
    shared_cluster: bool = False
    """The cluster is shared with other tenants' stacks (an existing cluster), or with the program's other namespaces:
    the PriorityClasses, cluster-scoped and applied alike by every tenant, are server-side applied
    (``PriorityClassPatch``: created when absent, shared by every declaration with the same fields, where a second
    plain create fails with AlreadyExists) and kept on ``pulumi destroy`` (``retainOnDelete``), so one tenant's destroy
    does not delete the class another tenant's pods name (SRE review M5; :func:`priority_class`)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on every object."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`): operators are named by
        email (fields the stack file sets elsewhere are None here), and a given quota holds the plan's peak."""
        return (
            operator_problems(self.operator_groups, "operator_groups")
            + operator_problems(self.operator_users, "operator_users")
            + given_quota_problems(self, ("cpu", "memory"))
        )

    @property
    def need(self) -> QuotaNeed:
        """What the namespace's planned pods need at their peak."""
        return derive(self.pods)

    @property
    def quota_cpu(self) -> str:
        """The quota's ``requests.cpu``: the given figure, else the derived one."""
        return self.cpu or (self.need.total.cpu_text if self.pods else UNPLANNED_CPU)

    @property
    def quota_memory(self) -> str:
        """The quota's ``requests.memory``: the given figure, else the derived one."""
        return self.memory or (self.need.total.memory_text if self.pods else UNPLANNED_MEMORY)


def given_quota_problems(args: object, keys: tuple[str, str]) -> list[str]:
    """A given CPU or memory quota of ``args`` (TenancyArgs, or the arguments as the component provider passes
    them) below what its pods need, at ``keys`` (the key paths of cpu and memory)."""
    pods, cpu, memory = (getattr(args, k, None) for k in ("pods", "cpu", "memory"))
    if not isinstance(pods, (list, tuple)) or not all(isinstance(p, PodSet) for p in pods):
        return []
    given = [v if isinstance(v, str) else None for v in (cpu, memory)]
    try:
        return quota_problems(derive(pods), given[0], given[1], keys)
    except ValueError:  # a malformed quantity: the field's pattern reports it
        return []


def operator_problems(subjects: object, key: str) -> list[str]:
    """The operators of ``key`` (groups or users) that are not email addresses, one problem each: a GKE RBAC subject
    names a Google account or a Google Group by its email address (:data:`tpu_serving.common.naming.EMAIL`)."""
    if not isinstance(subjects, (list, tuple)):
        return []
    return [
        f"{key}[{i}] = {s!r}: {problem}"
        for i, s in enumerate(subjects)
        if isinstance(s, str) and (problem := email_problem(s))
    ]


def _meta(args: TenancyArgs, name: str, namespaced: bool = True) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(
        name=name, namespace=args.namespace if namespaced else None, labels=dict(args.labels)
    )


def quota_args(args: TenancyArgs) -> k8s.core.v1.ResourceQuotaInitArgs:
    """The namespace's quota: TPU chips of its slices, CPU and memory."""
    return k8s.core.v1.ResourceQuotaInitArgs(
        metadata=_meta(args, "tpu-serving-quota"),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(
            hard={
                f"requests.{TPU_RESOURCE}": str(args.tpu_chips + args.tpu_headroom_chips),
                "requests.cpu": args.quota_cpu,
                "requests.memory": args.quota_memory,
            }
        ),
    )


def quota_output(args: TenancyArgs) -> dict[str, str]:
    """The quota's figures and one line on what they cover (the stack output ``quota``, the preview's ``Quota:``)."""
    need = args.need
    given = [k for k, v in (("cpu", args.cpu), ("memory", args.memory)) if v is not None]
    covers = need.summary() if args.pods else "no pod planned in the namespace"
    if given:
        covers += f"; {' and '.join(given)} given by the stack"
    return {
        "cpu": args.quota_cpu,
        "memory": args.quota_memory,
        "tpu": str(args.tpu_chips + args.tpu_headroom_chips),
        "summary": f"requests.cpu {args.quota_cpu}, requests.memory {args.quota_memory}, "
        f"requests.{TPU_RESOURCE} {args.tpu_chips + args.tpu_headroom_chips}, for {covers}",
    }


def limit_range_args(args: TenancyArgs) -> k8s.core.v1.LimitRangeInitArgs:
    """Default requests for containers that name none."""
    return k8s.core.v1.LimitRangeInitArgs(
        metadata=_meta(args, "tpu-serving-defaults"),
        spec=k8s.core.v1.LimitRangeSpecArgs(
            limits=[
                k8s.core.v1.LimitRangeItemArgs(
                    type="Container",
                    default_request={"cpu": args.default_cpu_request, "memory": args.default_memory_request},
                )
            ]
        ),
    )


def network_policies(args: TenancyArgs) -> list[k8s.networking.v1.NetworkPolicyInitArgs]:
    """Same-namespace traffic for every pod; serving ports from the allowed sources only."""
    same_namespace = k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=_meta(args, "same-namespace"),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=_outside(args.isolated),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[k8s.networking.v1.NetworkPolicyPeerArgs(pod_selector=k8s.meta.v1.LabelSelectorArgs())]
                )
            ],
        ),
    )
    policies = [same_namespace, *(flow_policy(args, f) for f in (args.isolated.flows if args.isolated else ()))]
    peers = [
        k8s.networking.v1.NetworkPolicyPeerArgs(
            namespace_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"kubernetes.io/metadata.name": ns})
        )
        for ns in args.allowed_namespaces
    ] + [
        k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=c))
        for c in (*args.allowed_cidrs, *args.load_balancer_cidrs)
    ]
    policies += [scrape_policy(args, t) for t in args.scrape_targets]
    if args.serving_pods and args.serving_ports and peers:
        policies.append(
            k8s.networking.v1.NetworkPolicyInitArgs(
                metadata=_meta(args, "serving-ingress"),
                spec=k8s.networking.v1.NetworkPolicySpecArgs(
                    pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(args.serving_pods)),
                    policy_types=["Ingress"],
                    ingress=[
                        k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                            from_=peers,
                            ports=[
                                k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=p)
                                for p in args.serving_ports
                            ],
                        )
                    ],
                ),
            )
        )
    return policies


def _outside(isolated: IsolatedPods | None) -> k8s.meta.v1.LabelSelectorArgs:
    """Every pod but the isolated ones (``NotIn`` also selects pods without the label)."""
    if isolated is None:
        return k8s.meta.v1.LabelSelectorArgs()
    return k8s.meta.v1.LabelSelectorArgs(
        match_expressions=[
            k8s.meta.v1.LabelSelectorRequirementArgs(key=isolated.label, operator="NotIn", values=[isolated.value])
        ]
    )


def flow_policy(args: TenancyArgs, flow: PodFlow) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """The pods of ``flow`` accept its ports from its sources in the namespace (a pod selector alone selects in the
    policy's own namespace)."""
    source = (
        k8s.meta.v1.LabelSelectorArgs(match_labels=dict(flow.sources))
        if flow.sources is not None
        else _outside(args.isolated)
    )
    return k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=_meta(args, flow.name),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(flow.pods)),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[k8s.networking.v1.NetworkPolicyPeerArgs(pod_selector=source)],
                    ports=[
                        k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=p.port, end_port=p.end_port)
                        for p in flow.ports
                    ]
                    or None,
                )
            ],
        ),
    )


def scrape_policy(args: TenancyArgs, target: ScrapeTarget) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """The scraped pods accept their metrics port from the managed collectors' pods in ``gmp-system``
    (pod-network pods, so a namespace and pod selector admits them)."""
    collectors = k8s.networking.v1.NetworkPolicyPeerArgs(
        namespace_selector=k8s.meta.v1.LabelSelectorArgs(
            match_labels={"kubernetes.io/metadata.name": GMP_COLLECTOR_NAMESPACE}
        ),
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(GMP_COLLECTOR_LABELS)),
    )
    return k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=_meta(args, f"scrape-{target.name}"),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(target.pods)),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[collectors],
                    ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=target.port)],
                )
            ],
        ),
    )


def preemption_policy(args: TenancyArgs, priority_class: str, policy: str) -> str:
    """The ``preemptionPolicy`` of ``priority_class`` (``policy`` from :data:`PRIORITIES`): ``Never`` for the serving
    class when it must not preempt (``serving_preempts``). A class with ``preemptionPolicy: Never`` is a
    non-preempting one: its pods are queued ahead of lower-priority pods but never evict them (Kubernetes v1.34,
    https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/#non-preempting-priority-class)."""
    return "Never" if priority_class == SERVING_PRIORITY and not args.serving_preempts else policy


def priority_class(
    resource_name: str, args: TenancyArgs, pc: str, child: pulumi.ResourceOptions
) -> k8s.scheduling.v1.PriorityClass | k8s.scheduling.v1.PriorityClassPatch:
    """The PriorityClass ``pc`` of :data:`PRIORITIES`: a resource the stack owns, or on a shared cluster a server-side
    apply of it that any number of declarations share and none deletes.

    On a shared cluster every tenant stack, and every namespace's ``Tenancy`` of one program, declares the same two
    cluster-scoped objects with the same fields (serving_preempts is False there, so preemptionPolicy is Never in each;
    Kubernetes refuses a change of it: k8s.io/kubernetes pkg/apis/scheduling/validation/validation.go
    ValidatePriorityClassUpdate, "preemptionPolicy is immutable"). A plain ``PriorityClass`` cannot be declared twice:
    pulumi-kubernetes v4.29.0 and later (pulumi/pulumi-kubernetes#4278, provider/pkg/await/await.go ``Creation``,
    read at commit 94977969d, after v4.32.0) create an object with a client-side create, which the API server refuses
    with AlreadyExists when another declaration made it first, unless the provider sets ``upsertExistingObjects`` (the
    user's provider, not the component's to set). A ``PriorityClassPatch`` is created with a server-side apply instead
    (the same ``Creation``: ``kinds.IsPatchResource`` takes the ``client.Patch(..., types.ApplyPatchType, ...)``
    path), which creates the object when it is absent and, under the resource's own field manager
    (``pulumi-kubernetes-<random>``, provider.go ``fieldManagerName``), shares the fields another declaration applied
    with the same values; a different value is a conflict the apply reports (no ``pulumi.com/patchForce``). Its delete
    relinquishes its fields (provider/pkg/ssa/actions.go ``Relinquish``: an apply of the name alone), which leaves the
    object to the other declarations' managers and, for the last one, is refused (the class's value and
    preemptionPolicy would fall back to their defaults, and both are immutable; provider.go ``Delete`` suggests
    ``retainOnDelete``): retained on delete, no destroy touches the object, so one tenant's destroy leaves the classes
    the others' pods name, and admission refuses a pod naming a missing class (SRE review M5). Per-stack names would
    also isolate them, but would change the priorityClassName of every deployed existing-cluster pod template (a
    recreation of every group) for objects whose every field is the same in each tenant. Patch resources need the
    provider's server-side apply mode (``enableServerSideApply``, on by default; provider.go ``Check`` refuses them
    otherwise). tests/e2e/test_e2e_shared_tenancy.py shows both cases with the real engine and provider."""
    value, policy, text = PRIORITIES[pc]
    preempts = preemption_policy(args, pc, policy)
    if not args.shared_cluster:
        return k8s.scheduling.v1.PriorityClass(
            resource_name,
            metadata=_meta(args, pc, namespaced=False),
            value=value,
            preemption_policy=preempts,
            global_default=False,
            description=text,
            # retained too (new-user review 17, M1): a program that grows to a second namespace moves the classes to
            # shared_cluster's Patch resources, a new type, so pulumi up applies the Patch and then deletes the old
            # resource, which without retention deletes the very object the Patch applied
            # (pulumi/pulumi-kubernetes#4522); the classes outlive a destroy, as the shared ones do.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=True)),
        )
    return k8s.scheduling.v1.PriorityClassPatch(
        resource_name,
        metadata=k8s.meta.v1.ObjectMetaPatchArgs(name=pc, labels=shared_labels(args.labels)),
        value=value,
        preemption_policy=preempts,
        global_default=False,
        description=text,
        opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=True)),
    )


class Tenancy(pulumi.ComponentResource):
    """Quota, default requests, network policies, priority classes and operator RBAC of a namespace.

    Pass the cluster's Kubernetes provider in ``opts.providers`` and the namespace in
    ``opts.depends_on``. Workloads take :attr:`priority_classes` and :attr:`priority_class_patches` in their
    dependencies.
    """

    priority_classes: list[k8s.scheduling.v1.PriorityClass]
    """The serving and batch PriorityClasses the stack owns (none with ``shared_cluster``)."""
    priority_class_patches: list[k8s.scheduling.v1.PriorityClassPatch]
    """With ``shared_cluster``, the same classes applied as retained Patch resources (none otherwise): the component
    provider's schema takes no union of resource types, so the two kinds are two outputs."""
    quota: k8s.core.v1.ResourceQuota
    """The namespace's quota."""
    summary: dict[str, str]
    """Its figures and what they cover (the stack output ``quota``)."""

    def __init__(self, name: str, args: TenancyArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"Tenancy {name!r}", args, TenancyArgs)
        super().__init__("tpu-serving:index:Tenancy", name, None, opts)
        # Its children wait for what the component waits for (the namespace): the engine does not pass a
        # component's depends_on on, and a namespaced object applied before its namespace exists fails.
        child = child_options(self, opts)
        classes = [priority_class(f"{name}-{pc}", args, pc, child) for pc in PRIORITIES]
        self.priority_classes = [c for c in classes if isinstance(c, k8s.scheduling.v1.PriorityClass)]
        self.priority_class_patches = [c for c in classes if isinstance(c, k8s.scheduling.v1.PriorityClassPatch)]
        self.quota = k8s.core.v1.ResourceQuota(f"{name}-quota", quota_args(args), opts=child)
        k8s.core.v1.LimitRange(f"{name}-defaults", limit_range_args(args), opts=child)
        for policy in network_policies(args):
            # network_policies builds each metadata as ObjectMetaArgs (never an Output or None).
            assert isinstance(policy.metadata, k8s.meta.v1.ObjectMetaArgs)
            k8s.networking.v1.NetworkPolicy(f"{name}-{policy.metadata.name}", policy, opts=child)
        meta = (args.namespace, dict(args.labels))
        k8s.rbac.v1.Role(f"{name}-operator", operator_access.role(*meta), opts=child)
        subjects = operator_access.subjects(args.operator_groups, args.operator_users)
        if subjects:
            k8s.rbac.v1.RoleBinding(f"{name}-operator-binding", operator_access.binding(*meta, subjects), opts=child)
        if subjects and not args.shared_cluster:  # the runbooks' node steps, on a cluster the stack owns
            k8s.rbac.v1.ClusterRole(f"{name}-operator-nodes", operator_access.node_role(*meta), opts=child)
            k8s.rbac.v1.ClusterRoleBinding(
                f"{name}-operator-nodes-binding", operator_access.node_binding(*meta, subjects), opts=child
            )
        self.summary = quota_output(args)
        self.register_outputs({"tpuQuota": args.tpu_chips + args.tpu_headroom_chips, "quota": self.summary})


SHARED_LABEL_KEYS = ("app.kubernetes.io/part-of",)
"""The labels every tenant of a shared cluster gives the PriorityClasses they all patch: one tenant's own labels
(``app.kubernetes.io/instance``) would be a field two server-side-apply managers set to different values, which the
API server refuses as a conflict at the second tenant's apply (https://kubernetes.io/docs/reference/using-api/
server-side-apply/#conflicts; GKE review: the second model stack's pulumi up failed)."""


def shared_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """``labels`` but those one tenant sets to its own value: what a patch of a shared object may apply."""
    return {k: v for k, v in labels.items() if k in SHARED_LABEL_KEYS}
