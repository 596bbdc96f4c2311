"""``HostMaintenanceGate``: the CronJob that starts the serving pools' TPU host maintenance one pool at a time.

With two or more standing LeaderWorkerSet groups in different pools (and zones), two pools' maintenance windows can
overlap and take every group down at once; a ticket (:mod:`tpu_serving.operations.maintenance.host_maintenance`) leaves that to whoever
reads it. The gate (:mod:`tpu_serving.operations.maintenance.maintenance_gate`, the program) runs every 5 minutes in the serving
namespace and starts the pending maintenance of the pool whose window opens first, only while every standing group
serves and no pool is in maintenance, NotReady or cordoned.

Least privilege: a Role to list the namespace's pods and read and patch its HPAs, by name (the cover of a lost
group: :mod:`tpu_serving.operations.maintenance.group_cover`), a ClusterRole to list and patch nodes, and a
ValidatingAdmissionPolicy that refuses any node update by the gate's ServiceAccount but adding
``cloud.google.com/perform-maintenance=true``, on nodes of the stack's serving pools only (Kubernetes
"Validating Admission Policy", kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/: GA and
on by default from 1.30; ``object`` and ``oldObject`` in CEL, ``matchConditions`` on ``request.userInfo``; a
merge patch reaches admission as an UPDATE of the node).

The stack file's ``hostMaintenance`` (:class:`HostMaintenanceSettings`) says whether the gate runs (``start``, the
default) or only the ticket is opened (``ticket``). On pools for which Cloud TPU lists no manual start (GKE
single-host v5e or v6e, TPU7x) the gate starts nothing: it watches the serving nodes and pages a lost one, with a
ClusterRole that lists nodes and no admission policy (:attr:`HostMaintenanceGateArgs.starts`); its Role also reads
the LeaderWorkerSets, by name, for the groups they ask for (``spec.replicas``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import pulumi
import pulumi_kubernetes as k8s

from ...catalog.versions import PINS
from ...common.naming import (
    MAINTENANCE_GATE,
    MAINTENANCE_GATE_STATE,
    check_dns_name,
    maintenance_gate_cluster_name,
    namespace_problem,
)
from ...common.options import child_options
from ...common.podspec import container_security, pod_security, requests
from ...common.quota import ContainerRequests, PodSet, PodShape
from ...common.settings import described, settings_model
from ...common.validation import Choice, check_arguments
from . import gate_fallback, gate_memory, gate_run, group_cover
from . import maintenance_gate as program
from .host_maintenance import GATE_MINUTES
from .node_admission import cel_list, node_update_policy, policy_binding

GATE_IMAGE = PINS["python"].value
SCHEDULE = f"*/{GATE_MINUTES} * * * *"
"""Every :data:`~tpu_serving.operations.maintenance.host_maintenance.GATE_MINUTES` minutes (a CronJob's ``schedule`` in cron syntax,
kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#schedule-syntax)."""
GATE_USER = 65532
"""The distroless ``nonroot`` user (GoogleContainerTools/distroless common/variables.bzl, ``NONROOT = 65532``)."""
GATE_CPU, GATE_MEMORY = "50m", "64Mi"
"""The gate's requests (memory also its limit): three API reads and a few patches a run. This library's choice."""
CODE_DIR, PACKAGE = "/gate", "tpu_serving"
"""The ConfigMap's files are laid out as ``/gate/tpu_serving/<file>``, a namespace package (no ``__init__.py``:
PEP 420), so that the program's relative import of its sibling works as it does in the library."""
PROGRAM_MODULES = (gate_run, program, gate_memory, group_cover, gate_fallback)
"""The program's files, the first its entry point (``python -m tpu_serving.gate_run``, in the gate's pod)."""
DEADLINE_SECONDS = 240
"""A run that has not finished in 4 minutes is stopped (the Job's ``activeDeadlineSeconds``), before the next."""
LOST_SECONDS = 600
MAINTENANCE_SECONDS = 21600
"""A node holding a serving pod NotReady for 10 minutes pages, unless it is in maintenance, for up to 6 hours:
a larger slice's maintenance "might result in slice unavailability of up to a few hours" (cloud.google.com/tpu/docs/
manually-start-maintenance, "Limitations")."""


class GateMode(Choice):
    """What the stack does about a serving pool's scheduled TPU host maintenance."""

    START = "start"
    TICKET = "ticket"


@dataclass(frozen=True)
class HostMaintenanceSettings:
    """TPU host maintenance of the serving pools (the stack file's ``hostMaintenance``)."""

    mode: GateMode = described(
        "`start`: on a stack whose serving keeps two or more standing LeaderWorkerSet groups, a CronJob (the "
        "host-maintenance gate) runs every 5 minutes and pages a node that holds a serving pod NotReady for 10 "
        "minutes. On slices whose GKE node pools take a manual start (Cloud TPU lists multi-host v5e and v6e pools of "
        "2x4 or larger, and any v4 or v5p), it also starts a serving pool's pending host maintenance, one pool at a "
        "time, the pool whose window opens first, only while every standing group is Ready and no serving pool is in "
        "maintenance, NotReady or cordoned (GKE's `cloud.google.com/perform-maintenance=true` node label); on others "
        "(single-host v5e or v6e, TPU7x) it only watches, and the maintenance comes at its window. `ticket`: no "
        "gate; only the ticket is opened, and you start the maintenance (docs/operate.md).",
        default=GateMode.START,
    )
    due_hours: int = described(
        "A hold of the gate this close to a pool's maintenance window pages (ERROR) instead of warning.",
        default=24,
        ge=1,
        le=168,
    )


if TYPE_CHECKING:
    HostMaintenanceConfig: TypeAlias = HostMaintenanceSettings
else:
    HostMaintenanceConfig = settings_model(HostMaintenanceSettings, "HostMaintenanceConfig")
"""The stack file's ``hostMaintenance`` (:class:`HostMaintenanceSettings`, declared once there)."""


@dataclass(frozen=True)
class HostMaintenanceGateArgs:
    """Arguments of :class:`HostMaintenanceGate`."""

    namespace: str = field(metadata={"check": namespace_problem})
    """The serving namespace: the CronJob's, the serving pods'."""
    pools: Sequence[str] = ()
    """The GKE node pools of the serving slices: every pool its groups may run on, those that start empty (scale from
    zero, a spare a group moves to after a repair) too; the gate reads no node outside them."""
    leader_worker_sets: Sequence[str] = ()
    """The serving LeaderWorkerSets, whose pods must all be Ready."""
    fewest_groups: int = 2
    """The standing groups: the HPA's minimum, else the fixed count."""
    autoscalers: Sequence[str] = ()
    """The HPAs of the groups: a starting gate with no surge goes ahead above the standing groups only while each
    holds its scale-down; every gate raises their minimum while a serving node is lost (:mod:`tpu_serving.operations.maintenance.group_cover`)."""
    autoscaler_bounds: Mapping[str, Sequence[int]] = field(default_factory=dict)
    """The stack's own ``[minReplicas, maxReplicas]`` (a list: the component provider's schema has no tuples) of each HPA of :attr:`autoscalers`, as its
    :class:`tpu_serving.ServingAutoscaler` declares them (:func:`tpu_serving.operations.autoscaling.declared_bounds` of the same
    settings): the gate gives these back once the lost groups serve again, and counts a minimum above them as a cover
    already made (by hand, the runbook's path with the gate silent), never the bounds it found when its cover began
    (SRE review round 29, M3). An HPA left out: the bounds the gate found at the start of its cover stand in."""
    due_hours: int = 24
    """``hostMaintenance.dueHours``."""
    surge_groups: int = 0
    """``maxSurge`` of the LeaderWorkerSets' rollouts. With one or more, LWS keeps a group above a lower count while a
    lower group is not Ready (lws v0.9.0 ``leaderworkerset_controller.go`` l.356-361, l.685-696), so the HPA's
    scale-down by one group during a pool's maintenance removes no serving group, and the gate does not hold for it
    (SRE review round 17, m2); with 0 it goes ahead above the standing groups only while each HPA
    holds its scale-down."""
    reload_seconds: int = 3600
    """How long a group takes to load after its slice's maintenance (the serving's startup window): two serving
    pools' windows closer than the maintenance (:data:`MAINTENANCE_SECONDS`) and this page on a watching gate."""
    compute_class: str = ""
    """The serving's ComputeClass (:class:`tpu_serving.TpuComputeClass`), if it has one: the gate also watches the
    nodes GKE labels with it, in pools GKE made for the class (a Spot step's slice), as it watches its own pools; it
    starts maintenance only on ``pools``."""
    starts: bool = True
    """The gate starts the maintenance; False: it only watches the serving nodes and pages a lost one, on pools for
    which Cloud TPU lists no manual start (:func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`). A watching gate
    has no node patch permission and no admission policy; it reads its LeaderWorkerSets' ``spec.replicas``
    (the groups asked for, so that a surge rollout's extra group does not count as running)."""
    priority_class_name: str | None = None
    """PriorityClass of the gate's pod; None: the cluster's default. A stack file's deployment passes the serving one,
    ``tpu-serving-online``, which :class:`tpu_serving.Tenancy` creates; a program passes that only beside ``Tenancy``,
    or one its cluster has. A name no PriorityClass has makes the API server refuse every run's pod (the Priority
    admission plugin: "no PriorityClass with name ... was found", kubernetes/kubernetes
    plugin/pkg/admission/priority/admission.go), and ``make check`` fails it (library review 2, M5)."""
    labels: Mapping[str, str] = field(default_factory=dict)

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`)."""
        found = [] if self.pools else [f"pools = {list(self.pools)!r}: at least one serving node pool"]
        lws = self.leader_worker_sets
        found += [] if lws else [f"leader_worker_sets = {list(lws)!r}: at least one LeaderWorkerSet"]
        found += [] if self.reload_seconds >= 0 else [f"reload_seconds = {self.reload_seconds!r}: 0 or more"]
        found += [
            f"autoscaler_bounds: {name!r} is not one of autoscalers"
            for name in self.autoscaler_bounds
            if name not in self.autoscalers
        ]
        found += [
            f"autoscaler_bounds[{name!r}] = {list(bounds)!r}: [minimum, maximum], a minimum of 1 or more, at most the "
            "maximum"
            for name, bounds in self.autoscaler_bounds.items()
            if len(bounds) != 2 or not 1 <= bounds[0] <= bounds[1]
        ]
        named = check_dns_name(self.compute_class) if self.compute_class else ""
        found += [f"compute_class = {self.compute_class!r}: a ComputeClass's name {named}"] if named else []
        return found + ([] if self.fewest_groups >= 1 else [f"fewest_groups = {self.fewest_groups!r}: at least 1"])


def program_files() -> dict[str, str]:
    """The gate's program, as the ConfigMap holds it: each module's file by its file name."""
    return {Path(str(m.__file__)).name: Path(str(m.__file__)).read_text(encoding="utf-8") for m in PROGRAM_MODULES}


def entry_module() -> str:
    """The module the container runs (``-m``)."""
    return f"{PACKAGE}.{Path(str(PROGRAM_MODULES[0].__file__)).stem}"


def gate_env(args: HostMaintenanceGateArgs) -> dict[str, str]:
    """The program's settings (:func:`tpu_serving.operations.maintenance.maintenance_gate.gate_from`)."""
    return {
        "POOLS": ",".join(args.pools),
        "NAMESPACE": args.namespace,
        "LEADER_WORKER_SETS": ",".join(args.leader_worker_sets),
        "FEWEST_GROUPS": str(args.fewest_groups),
        "DUE_SECONDS": str(args.due_hours * 3600),
        "LOST_SECONDS": str(LOST_SECONDS),
        "MAINTENANCE_SECONDS": str(MAINTENANCE_SECONDS),
        "AUTOSCALERS": ",".join(args.autoscalers),
        "AUTOSCALER_BOUNDS": ",".join(
            f"{name}={args.autoscaler_bounds[name][0]}..{args.autoscaler_bounds[name][1]}"
            for name in args.autoscalers
            if name in args.autoscaler_bounds
        ),
        "SURGE": str(args.surge_groups),
        "CLOSE_SECONDS": str(MAINTENANCE_SECONDS + args.reload_seconds),
        "STARTS": "true" if args.starts else "false",
        **({"COMPUTE_CLASS": args.compute_class} if args.compute_class else {}),
        "STATE": MAINTENANCE_GATE_STATE,
        "SERVICE_ACCOUNT_DIR": program.SERVICE_ACCOUNT_DIR,
        "PYTHONPATH": CODE_DIR,
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def gate_pods() -> PodSet:
    """The gate's pod in the serving namespace, for the quota: one at a time (``concurrencyPolicy: Replace`` deletes
    a run still active at the next start before it creates the next)."""
    container = ContainerRequests(MAINTENANCE_GATE, GATE_CPU, GATE_MEMORY)
    return PodSet("CronJob of the host-maintenance gate", (PodShape("gate", 1, (container,)),), 1, restart_groups=0)


def _meta(
    args: HostMaintenanceGateArgs, name: str = MAINTENANCE_GATE, cluster: bool = False
) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(
        name=name, namespace=None if cluster else args.namespace, labels=dict(args.labels)
    )


def state_config_map(args: HostMaintenanceGateArgs) -> k8s.core.v1.ConfigMapInitArgs:
    """The gate's state: the maintenance windows it remembers (:func:`tpu_serving.operations.maintenance.gate_memory.remember_windows`),
    none at first."""
    return k8s.core.v1.ConfigMapInitArgs(
        metadata=_meta(args, MAINTENANCE_GATE_STATE), data={gate_run.WINDOWS_KEY: "{}"}
    )


def cron_job(args: HostMaintenanceGateArgs) -> k8s.batch.v1.CronJobInitArgs:
    """The CronJob: every 5 minutes, one run at a time, at the serving priority, hardened (a fixed non-root user,
    read-only root filesystem, no privilege escalation, no capability), its program from the ConfigMap."""
    container = k8s.core.v1.ContainerArgs(
        name=MAINTENANCE_GATE,
        image=GATE_IMAGE,
        args=["-m", entry_module()],  # the image's entrypoint is the interpreter (distroless python3 README)
        env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in gate_env(args).items()],
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="program", mount_path=CODE_DIR, read_only=True)],
        resources=requests(GATE_CPU, GATE_MEMORY, memory_limit=True),
        security_context=container_security(run_as_user=GATE_USER, read_only_root=True),
    )
    pod = k8s.core.v1.PodSpecArgs(
        service_account_name=MAINTENANCE_GATE,
        restart_policy="Never",
        security_context=pod_security(),
        priority_class_name=args.priority_class_name,
        containers=[container],
        volumes=[
            k8s.core.v1.VolumeArgs(
                name="program",
                config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(
                    name=MAINTENANCE_GATE,
                    items=[k8s.core.v1.KeyToPathArgs(key=f, path=f"{PACKAGE}/{f}") for f in program_files()],
                ),
            )
        ],
    )
    return k8s.batch.v1.CronJobInitArgs(
        metadata=_meta(args),
        spec=k8s.batch.v1.CronJobSpecArgs(
            schedule=SCHEDULE,
            # Replace, not Forbid (SRE review 34, m3): a run whose pod sits on a node that went silent never ends
            # (the Job stays at FailureTarget while its pod is terminating), and Forbid would skip every later run;
            # Replace deletes it at the next start (kubernetes v1.36.3 pkg/controller/cronjob/cronjob_controllerv2.go
            # l.573-600). A healthy run ends within DEADLINE_SECONDS, before the next start.
            concurrency_policy="Replace",
            job_template=k8s.batch.v1.JobTemplateSpecArgs(
                spec=k8s.batch.v1.JobSpecArgs(
                    backoff_limit=0,
                    active_deadline_seconds=DEADLINE_SECONDS,
                    template=k8s.core.v1.PodTemplateSpecArgs(
                        metadata=k8s.meta.v1.ObjectMetaArgs(labels={**args.labels, "app": MAINTENANCE_GATE}),
                        spec=pod,
                    ),
                )
            ),
        ),
    )


def role(args: HostMaintenanceGateArgs) -> k8s.rbac.v1.RoleInitArgs:
    """List the namespace's pods; read and patch its state ConfigMap (the windows it remembers), and its HPAs, by name (none without autoscaling): their scale-down
    holds, and the cover of a lost group (:mod:`tpu_serving.operations.maintenance.group_cover`); for a gate that only watches, read its
    LeaderWorkerSets, by name."""
    hpas = k8s.rbac.v1.PolicyRuleArgs(
        api_groups=["autoscaling"],
        resources=["horizontalpodautoscalers"],
        verbs=["get", "patch"],
        resource_names=list(args.autoscalers),
    )
    pods = k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["pods"], verbs=["list"])
    state = k8s.rbac.v1.PolicyRuleArgs(
        api_groups=[""], resources=["configmaps"], verbs=["get", "patch"], resource_names=[MAINTENANCE_GATE_STATE]
    )
    rules = [pods, state, *([hpas] if args.autoscalers else [])]
    if not args.starts:  # a watching gate reads the groups the LeaderWorkerSets ask for (spec.replicas), by name
        sets = k8s.rbac.v1.PolicyRuleArgs(
            api_groups=["leaderworkerset.x-k8s.io"],
            resources=["leaderworkersets"],
            verbs=["get"],
            resource_names=list(args.leader_worker_sets),
        )
        rules.append(sets)
    return k8s.rbac.v1.RoleInitArgs(metadata=_meta(args), rules=rules)


def cluster_role(args: HostMaintenanceGateArgs) -> k8s.rbac.v1.ClusterRoleInitArgs:
    """List and patch nodes (which the admission policy narrows to one label on the serving pools); list only, for
    a gate that watches."""
    verbs = ["list", "patch"] if args.starts else ["list"]
    return k8s.rbac.v1.ClusterRoleInitArgs(
        metadata=_meta(args, maintenance_gate_cluster_name(args.namespace), cluster=True),
        rules=[k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["nodes"], verbs=verbs)],
    )


def _subject(args: HostMaintenanceGateArgs) -> k8s.rbac.v1.SubjectArgs:
    return k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=MAINTENANCE_GATE, namespace=args.namespace)


def role_binding(args: HostMaintenanceGateArgs) -> k8s.rbac.v1.RoleBindingInitArgs:
    ref = k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=MAINTENANCE_GATE)
    return k8s.rbac.v1.RoleBindingInitArgs(metadata=_meta(args), role_ref=ref, subjects=[_subject(args)])


def cluster_role_binding(args: HostMaintenanceGateArgs) -> k8s.rbac.v1.ClusterRoleBindingInitArgs:
    name = maintenance_gate_cluster_name(args.namespace)
    ref = k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=name)
    return k8s.rbac.v1.ClusterRoleBindingInitArgs(
        metadata=_meta(args, name, cluster=True), role_ref=ref, subjects=[_subject(args)]
    )


def validations(args: HostMaintenanceGateArgs) -> list[tuple[str, str]]:
    """``(expression, message)`` of the admission policy: the node is a serving pool's, the only label change is the
    perform label added as ``true``, and nothing else of the node (its spec, its annotations) changes."""
    pool, perform = f"'{program.POOL_LABEL}'", f"'{program.PERFORM_LABEL}'"
    old, new = "oldObject.metadata.labels", "object.metadata.labels"
    same = "has(object.{0}) == has(oldObject.{0}) && (!has(object.{0}) || object.{0} == oldObject.{0})"
    return [
        (
            f"has(oldObject.metadata.labels) && {pool} in {old} && {old}[{pool}] in {cel_list(args.pools)}",
            f"the host-maintenance gate of namespace {args.namespace} labels only nodes of its serving pools",
        ),
        (
            f"has(object.metadata.labels) && {perform} in {new} && {new}[{perform}] == 'true' && "
            f"{new}.all(k, k == {perform} || (k in {old} && {old}[k] == {new}[k])) && "
            f"{old}.all(k, k in {new})",
            f"the host-maintenance gate may only add the label {program.PERFORM_LABEL}=true",
        ),
        (
            f"{same.format('spec')} && {same.format('metadata.annotations')}",
            "the host-maintenance gate may not change a node's spec or annotations",
        ),
    ]


def admission_policy(args: HostMaintenanceGateArgs) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicyInitArgs:
    """The policy on node updates by the gate's ServiceAccount (:func:`validations`)."""
    user = f"system:serviceaccount:{args.namespace}:{MAINTENANCE_GATE}"
    meta = _meta(args, maintenance_gate_cluster_name(args.namespace), cluster=True)
    return node_update_policy(meta, ("the-gate", f"request.userInfo.username == '{user}'"), validations(args))


def admission_binding(
    args: HostMaintenanceGateArgs,
) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicyBindingInitArgs:
    name = maintenance_gate_cluster_name(args.namespace)
    return policy_binding(_meta(args, name, cluster=True), name)


class HostMaintenanceGate(pulumi.ComponentResource):
    """The host-maintenance gate of a serving namespace: its ServiceAccount, program, RBAC, admission policy and
    CronJob. Pass the cluster's Kubernetes provider in ``opts.providers``."""

    cron_job: str
    """The CronJob's name."""

    def __init__(self, name: str, args: HostMaintenanceGateArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"HostMaintenanceGate {name!r}", args, HostMaintenanceGateArgs)
        super().__init__("tpu-serving:index:HostMaintenanceGate", name, None, opts)
        child = child_options(self, opts)
        account = k8s.core.v1.ServiceAccount(f"{name}-sa", metadata=_meta(args), opts=child)
        narrowed: list[pulumi.Resource] = [account]
        if args.starts:
            policy = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
                f"{name}-policy", admission_policy(args), opts=child
            )
            narrowed.append(
                k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
                    f"{name}-policy-binding",
                    admission_binding(args),
                    opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[policy])),
                )
            )
        k8s.core.v1.ConfigMap(f"{name}-program", metadata=_meta(args), data=program_files(), opts=child)
        # what the gate remembers between runs: the gate writes it, Pulumi only creates it
        remembers = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(ignore_changes=["data"]))
        k8s.core.v1.ConfigMap(f"{name}-state", state_config_map(args), opts=remembers)
        k8s.rbac.v1.Role(f"{name}-role", role(args), opts=child)
        k8s.rbac.v1.RoleBinding(f"{name}-role-binding", role_binding(args), opts=child)
        k8s.rbac.v1.ClusterRole(f"{name}-cluster-role", cluster_role(args), opts=child)
        # the node permission only once the policy that narrows it is bound
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=narrowed))
        k8s.rbac.v1.ClusterRoleBinding(f"{name}-cluster-role-binding", cluster_role_binding(args), opts=after)
        k8s.batch.v1.CronJob(f"{name}-cron", cron_job(args), opts=after)
        self.cron_job = MAINTENANCE_GATE
        self.register_outputs({"cronJob": self.cron_job})
