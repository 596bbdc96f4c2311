"""A GKE cluster and node pools the deployment did not make and never changes (existing-cluster mode).

Platform teams whose cluster comes from Terraform (or any other owner) give the program the cluster, and the
program creates only the in-cluster half on it. The program reaches the cluster in one of two ways:

- a kubeconfig file (and optionally one of its contexts): the Kubernetes provider gets the path as written and reads
  the file when it deploys, expanding a leading ``~/`` itself (pulumi/pulumi-kubernetes
  provider/pkg/provider/util.go ``parseKubeconfigString``: "Handle the '~' character if it is set in the config
  string"), so a plan holds no one's home folder. No GCP call is made for the cluster;
- a GKE cluster by name and location, read with the GCP provider's data source (``gcp.container.getCluster``, the
  provider's ``google_container_cluster`` data source), with a kubeconfig built as :class:`~tpu_serving.platform.cluster.TpuCluster`
  builds one (``gke-gcloud-auth-plugin``; it holds no credential).

Nothing here creates a cloud resource. :class:`ExistingCluster` makes the Kubernetes provider of the cluster;
:class:`ExistingTpuNodePool` and :class:`ExistingCpuNodePool` stand for node pools that must exist, with the names
and shapes the workloads are built for. Each records what the deployment assumes of the cluster or pools as its
inputs, so readers of the plan (the preview, ``make check``) see them as a created pool is seen.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..catalog import SliceShape, node_selector
from ..common.gcp_zones import per_zone_minimum
from ..common.naming import (
    NameLimit,
    check_dns_name,
    project_id_problem,
    zone_problems,
)
from ..common.options import child_options
from ..common.settings import CreateOrExisting, described
from ..common.validation import check_arguments
from .cluster import CpuPoolArgs, cluster_name_problem
from .kubeconfig import cluster_identifier, existing_server, kubeconfig
from .node_identity import BUCKET_ROLES, BucketGrant, node_service_account_problem


@dataclass(frozen=True)
class CloudResource:
    """A cloud resource the in-cluster half needs: created by the stack, or existing (named by the stack file, never
    created nor changed), with what an existing one must be or hold. The preview lists them."""

    kind: str
    """What it is: ``cluster``, ``TPU node pools``, ``bucket``, ``GCP service account``..."""
    name: str
    """Its name (or names)."""
    status: CreateOrExisting
    """``create``: the stack creates it; ``existing``: it must exist already."""
    key: str
    """The stack file's key that decides it."""
    needs: Sequence[str] = ()
    """What an existing one must be or hold (its shape, its roles), or what a created one comes with."""

    def output(self) -> dict[str, object]:
        """The entry of the ``cloudResources`` stack output."""
        status = "created" if self.status == CreateOrExisting.CREATE else "existing"
        return {"kind": self.kind, "name": self.name, "status": status, "key": self.key, "needs": list(self.needs)}


def kubeconfig_path_problem(path: str | None) -> str:
    """Why ``path`` cannot name a kubeconfig file for the Kubernetes provider, or ``""``."""
    if path is None:
        return ""
    if not path.strip() or "\n" in path or path.lstrip().startswith(("{", "apiVersion")):
        return "must be the path of a kubeconfig file (not its contents)"
    if path.startswith("~") and not path.startswith("~/"):
        return (
            "the Kubernetes provider expands a leading ~/ only (not ~ alone or ~user): write ~/... or an absolute path"
        )
    return ""


def location_problem(location: str | None) -> str:
    """Why ``location`` is not a GCP region or zone, or ``""``."""
    if location is None:
        return ""
    from ..common.naming import REGION, ZONE

    return (
        "" if REGION.match(location) or ZONE.match(location) else "must be a GCP region (us-east5) or zone (us-east5-b)"
    )


@dataclass(frozen=True)
class GkeCluster:
    """An existing GKE cluster by name and location, read with the GCP provider's ``container.getCluster``."""

    name: str | None = described(
        "Name of the existing GKE cluster; unset: `cluster.name`.", default=None, check=cluster_name_problem
    )
    location: str | None = described(
        "Its location, a region (regional cluster) or a zone; unset: the stack's region (`gcp:region`).",
        default=None,
        check=location_problem,
    )


EXISTING_ARGS_FROM_THE_STACK: tuple[str, ...] = ("project", "name", "region", "cpu_pool", "security_group")
"""Arguments a stack file sets outside ``cluster.existing`` (``gcp:project``, ``cluster.name``, ``gcp:region``,
``cluster.cpuPool``, ``cluster.securityGroup``)."""
PLATFORM_EXISTING_ARGS: tuple[str, ...] = ("node_service_account",)
"""Arguments of ``cluster.existing`` only a platform stack file sets (required there): a model stack's own
``cluster.existing`` has none of them, its TPU pools being the cluster's own."""


@dataclass(frozen=True)
class ExistingClusterArgs:
    """Arguments of :class:`ExistingCluster`: the cluster, and how the program reaches it (one of ``kubeconfig`` and
    ``gke``)."""

    project: str = described(
        "GCP project of the cluster (its workload identity pool is `<project>.svc.id.goog`).", check=project_id_problem
    )
    name: str = described(
        "The cluster's name in the deployment: the prefix of the names it derives, and the GKE cluster read with "
        "`gke` unless that names another.",
        check=cluster_name_problem,
    )
    region: str = described("The deployment's region: the cluster's location unless `gke` names another.")
    kubeconfig: str | None = described(
        "Path of a kubeconfig file that reaches the cluster, read by the Kubernetes provider when it deploys (a "
        "leading `~/` is expanded); no GCP call is made for the cluster.",
        default=None,
        check=kubeconfig_path_problem,
    )
    context: str | None = described(
        "With `kubeconfig`: the context to use; unset: the file's current-context.", default=None, min_length=1
    )
    gke: GkeCluster | None = described(
        "Instead of `kubeconfig`: the GKE cluster by name and location, read with the GCP provider's data source "
        "(`container.getCluster`) and reached with gke-gcloud-auth-plugin.",
        default=None,
    )
    cpu_pool: CpuPoolArgs = described(
        "The cluster's CPU nodes that run the deployment's CPU pods (controllers, endpoint picker): recorded for "
        "the checks and the cost estimate; nothing is created.",
        default_factory=CpuPoolArgs,
    )
    security_group: str | None = described(
        "The cluster's `gke-security-groups@<domain>` (Google Groups for RBAC), when it has one: recorded for the "
        "checks.",
        default=None,
    )
    node_upgrades_held: bool = described(
        "Whether the cluster's owner holds GKE's node upgrades back (a maintenance exclusion of scope "
        "`NO_MINOR_OR_NODE_UPGRADES` or `NO_UPGRADES`) and upgrades the TPU pools one at a time: the stack cannot "
        "read it. A production stack of several groups that each reload for an hour or more says `true`.",
        default=False,
    )

    node_service_account: str | None = described(
        "The email of the GCP service account the model stacks' TPU node pools run as on this cluster, which the "
        "platform exports (`platform.nodeServiceAccount`) and grants `sharedPlatform.modelDeployers` the use of: an "
        "account the cluster's owner made, `<account id>@<project id>.iam.gserviceaccount.com`, or the Compute "
        "Engine default `<project number>-compute@developer.gserviceaccount.com`. A platform stack's; required there.",
        default=None,
        check=node_service_account_problem,
    )

    def problems(self) -> list[str]:
        """One way to reach the cluster: ``kubeconfig`` (with an optional ``context``) or ``gke``."""
        if (self.kubeconfig is None) == (self.gke is None):
            return [
                "give either kubeconfig (a file path) or gke (the cluster's name and location), not both or neither"
            ]
        if self.context is not None and self.kubeconfig is None:
            return ["context names a context of the kubeconfig file: it needs kubeconfig"]
        return []

    @property
    def workload_pool(self) -> str:
        """The cluster's workload identity pool, ``<project>.svc.id.goog``."""
        return f"{self.project}.svc.id.goog"

    @property
    def gke_name(self) -> str:
        """The GKE cluster read with ``gke``: its own name, else :attr:`name`."""
        return (self.gke.name if self.gke else None) or self.name

    @property
    def location(self) -> str:
        """The cluster's location: ``gke``'s, else the region."""
        return (self.gke.location if self.gke else None) or self.region


def _plan_inputs(args: ExistingClusterArgs) -> dict[str, Any]:
    """What the deployment assumes of the existing cluster, as the component's inputs in the plan."""
    pool = args.cpu_pool
    return {
        "clusterName": args.gke_name,
        "location": args.location,
        "kubeconfig": args.kubeconfig,
        "context": args.context,
        "readWith": "kubeconfig" if args.kubeconfig is not None else "gke",
        "workloadPool": args.workload_pool,
        "cpuPool": {
            "machineType": pool.machine_type,
            "minNodes": per_zone_minimum(pool.min_nodes, 1),
            "maxNodes": pool.max_nodes,
        },
        "securityGroup": args.security_group,
        **({"nodeServiceAccount": args.node_service_account} if args.node_service_account is not None else {}),
    }


NETWORK_POLICY_ENFORCEMENT = (
    "network policy enforcement (GKE Dataplane V2, or the NetworkPolicy add-on with network policy enabled): without "
    "it the stack's NetworkPolicies are admitted and enforced by nothing, and every pod of every tenant reaches the "
    "serving ports"
)
"""What an existing cluster needs for the namespace's NetworkPolicies to hold (GKE review 67, M1): "By default, all
Pods within a cluster can communicate with each other freely", and a NetworkPolicy takes effect only on a cluster that
enforces them, built into GKE Dataplane V2 or enabled with the network policy add-on (GKE, "Control communication
between Pods and Services using network policies", https://cloud.google.com/kubernetes-engine/docs/how-to/
network-policy, read 2026-12-01). A cluster the stack creates uses Dataplane V2 (:mod:`.cluster`)."""
LEGACY_DATAPATHS = frozenset({"", "DATAPATH_PROVIDER_UNSPECIFIED", "LEGACY_DATAPATH", "MIGRATE_TO_LEGACY_DATAPATH"})
"""The ``networkConfig.datapathProvider`` values of a cluster whose new nodes do not run Dataplane V2 (GKE API v1
``DatapathProvider``: ``DATAPATH_PROVIDER_UNSPECIFIED`` "Default value", ``LEGACY_DATAPATH`` "the IPTables
implementation based on kube-proxy", ``MIGRATE_TO_LEGACY_DATAPATH``; ``ADVANCED_DATAPATH`` is Dataplane V2,
https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/DatapathProvider, read 2026-12-01), and unset."""


def network_policy_problem(datapath_provider: str | None, policy_enabled: bool) -> str:
    """What an existing cluster read with ``container.getCluster`` lacks to enforce NetworkPolicies: neither Dataplane
    V2 (``datapathProvider: ADVANCED_DATAPATH``) nor ``networkPolicy.enabled`` (pulumi-gcp ``GetClusterResult
    .datapath_provider`` and ``.network_policies[].enabled``); "" when it enforces them."""
    if policy_enabled or (datapath_provider or "") not in LEGACY_DATAPATHS:
        return ""  # Dataplane V2, network policy on, or a value the API does not document: not judged
    return (
        f"the cluster's datapathProvider is {datapath_provider or 'unset'} and networkPolicy is not enabled: it lacks "
        f"{NETWORK_POLICY_ENFORCEMENT}; enable Dataplane V2 or network policy on the cluster (enabling network policy "
        "recreates its nodes), or accept that the tenancy's NetworkPolicies isolate nothing"
    )


class ExistingCluster(pulumi.ComponentResource):
    """A GKE cluster the deployment did not make: its Kubernetes provider, and nothing else.

    With ``kubeconfig`` no GCP call is made; with ``gke`` the cluster is read with ``gcp.container.getCluster`` (a
    missing cluster stops the program there). Pass :attr:`provider` to the in-cluster components.
    """

    provider: k8s.Provider
    """A Kubernetes provider for the cluster."""
    kubeconfig: pulumi.Output[str] | None
    """With ``gke``: a kubeconfig using ``gke-gcloud-auth-plugin`` (holds no credential); None with a kubeconfig file."""
    name: str
    """The GKE cluster's name."""
    workload_pool: str
    """The cluster's workload identity pool."""

    def __init__(self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ExistingCluster {name!r}", args, ExistingClusterArgs)
        super().__init__("tpu-serving:index:ExistingCluster", name, _plan_inputs(args), opts)
        child = child_options(self, opts)
        self.name, self.workload_pool = args.gke_name, args.workload_pool
        self.kubeconfig = None
        if args.gke is not None:
            from pulumi_gcp import container

            found = container.get_cluster_output(
                name=args.gke_name,
                location=args.location,
                project=args.project,
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            context = f"gke_{args.project}_{args.location}_{args.gke_name}"
            found.apply(self._warn_of_unenforced_network_policies)
            self.kubeconfig = found.apply(lambda c: kubeconfig(context, *existing_server(c)))
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig if self.kubeconfig is not None else args.kubeconfig,
            context=args.context,
            cluster_identifier=(
                cluster_identifier(args.project, args.location, args.gke_name) if self.kubeconfig is not None else None
            ),
            enable_server_side_apply=True,
            opts=child,
        )
        self.register_outputs({"clusterName": args.gke_name, "readWith": "gke" if args.gke else "kubeconfig"})

    def _warn_of_unenforced_network_policies(self, found: Any) -> None:
        """A warning on ``pulumi up`` when the cluster read enforces no NetworkPolicy (:func:`network_policy_problem`);
        a kubeconfig's cluster is not read, and the preview lists the need."""
        enabled = any(bool(p.enabled) for p in found.network_policies or ())
        problem = network_policy_problem(found.datapath_provider, enabled)
        if problem:
            pulumi.log.warn(f"ExistingCluster {self.name}: {problem}", resource=self)


def node_pool_name_problem(name: str) -> str:
    """Why ``name`` is not a GKE node pool name, or ``""``."""
    return check_dns_name(name, limit=NameLimit.GKE_NODE_POOL)


def pool_names_problems(pool_names: Sequence[str]) -> list[str]:
    """Each name a GKE node pool name, at least one."""
    found = [] if pool_names else ["pool_names = (): at least one node pool is needed"]
    return found + [
        f"pool_names[{i}] = {p!r}: {problem}"
        for i, p in enumerate(pool_names)
        if isinstance(p, str) and (problem := check_dns_name(p, limit=NameLimit.GKE_NODE_POOL))
    ]


def _grants(grants: Sequence[BucketGrant]) -> list[dict[str, Any]]:
    return [{"bucket": g.bucket, "role": BUCKET_ROLES[g.access]} for g in grants]


@dataclass(frozen=True)
class ExistingTpuNodePoolArgs:
    """Arguments of :class:`ExistingTpuNodePool`: TPU slice node pools that exist, one slice each."""

    shape: SliceShape
    """The slice shape of every pool (the workloads' node selector and chips follow from it)."""
    pool_names: Sequence[str]
    """The existing GKE node pools, one per slice."""
    zone: str
    """Their zone."""
    region: str
    """The cluster's region."""
    scale_from_zero: Sequence[str] = ()
    """Pools (of ``pool_names``) the workloads expect to start empty and autoscale to the whole slice."""
    node_grants: Sequence[BucketGrant] = ()
    """Bucket roles the pools' node service account must already hold, for host-network pods (none is granted)."""
    disk_size_gb: int | None = None
    """The boot disk of each of their VMs, in GB, as the pools have it (``tpu-serving check`` sizes a file cache on
    it); None: not declared, and a cache on the boot disk fails the check."""
    compute_class: str | None = None
    """The ComputeClass whose first priority the pools are (``serving.fallback``): each carries its node label and taint
    ``cloud.google.com/compute-class=<name>``, which their owner adds (the preview's Fallback: line says how); None."""

    def problems(self) -> list[str]:
        """Pool names, a zone of the region, ``scale_from_zero`` among the pools."""
        found = pool_names_problems(self.pool_names) + zone_problems(self.zone, self.region)
        return found + [
            f"scale_from_zero[{i}] = {p!r}: not one of pool_names"
            for i, p in enumerate(self.scale_from_zero)
            if p not in self.pool_names
        ]


class ExistingTpuNodePool(pulumi.ComponentResource):
    """Existing TPU slice node pools: nothing is created; the workloads select them as they select created ones.

    Its inputs in the plan say what the workloads expect of each pool: the machine type and topology, the VMs, the
    zone, which pools scale from zero, the bucket roles of its node account.
    """

    shape: SliceShape
    """The shape of every slice."""
    pool_names: Sequence[str]
    """The GKE node pools (the ``cloud.google.com/gke-nodepool`` label values)."""
    node_selector: dict[str, str]
    """Node selector for pods that must run on these slices."""

    def __init__(self, name: str, args: ExistingTpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ExistingTpuNodePool {name!r}", args, ExistingTpuNodePoolArgs)
        props = {
            "poolNames": list(args.pool_names),
            "machineType": args.shape.machine_type.name,
            "topology": args.shape.topology,
            "vms": args.shape.vms,
            "zone": args.zone,
            "scaleFromZero": list(args.scale_from_zero),
            "nodeGrants": _grants(args.node_grants),
            **({"diskSizeGb": args.disk_size_gb} if args.disk_size_gb is not None else {}),
            **({"computeClass": args.compute_class} if args.compute_class is not None else {}),
        }
        super().__init__("tpu-serving:index:ExistingTpuNodePool", name, props, opts)
        self.shape, self.pool_names = args.shape, tuple(args.pool_names)
        self.node_pools: list[pulumi.Resource] = []
        """No pool resource: empty (``TpuNodePool.node_pools`` holds the created ones)."""
        self.node_selector = node_selector(args.shape)
        self.register_outputs({"poolNames": list(args.pool_names), "slice": args.shape.describe()})


@dataclass(frozen=True)
class ExistingCpuNodePoolArgs:
    """Arguments of :class:`ExistingCpuNodePool`: a CPU node pool that exists."""

    pool_name: str = field(metadata={"check": node_pool_name_problem})
    """The existing GKE node pool."""
    pool: CpuPoolArgs
    """What the workloads expect of it: machine type and autoscaling bounds."""
    zone: str
    """Its zone."""
    node_grants: Sequence[BucketGrant] = ()
    """Bucket roles its node service account must already hold (none is granted)."""


class ExistingCpuNodePool(pulumi.ComponentResource):
    """An existing CPU node pool that pods are pinned to by name (the Pathways head's): nothing is created."""

    pool_name: str
    """The GKE node pool name."""

    def __init__(self, name: str, args: ExistingCpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ExistingCpuNodePool {name!r}", args, ExistingCpuNodePoolArgs)
        props = {
            "poolName": args.pool_name,
            "machineType": args.pool.machine_type,
            "minNodes": per_zone_minimum(args.pool.min_nodes, 1),
            "maxNodes": args.pool.max_nodes,
            "zone": args.zone,
            "nodeGrants": _grants(args.node_grants),
        }
        super().__init__("tpu-serving:index:ExistingCpuNodePool", name, props, opts)
        self.pool_name = args.pool_name
        self.register_outputs({"poolName": args.pool_name})
