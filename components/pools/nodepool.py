"""``TpuNodePool``: TPU slice node pools, one slice per pool, N identical pools from one config.

Machine type and node count come from the catalog (node count = VMs in the slice), never
from the user, so a pool can only be created in a shape GKE accepts. The node selector
that workloads use to land on the slice is derived here too, so pods and pools agree.

Each component has its own node service account (see :mod:`components.node_identity`):
host-network pods on these slices act as it, so it holds exactly the bucket roles they need.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
from pulumi_gcp import compute, container, serviceaccount

from ..catalog import SliceShape, node_selector
from ..catalog import capacity as capacity_rules
from ..catalog.capacity import Capacity
from ..common.naming import (
    NameLimit,
    check_dns_name,
    labels_problem,
    legacy_pool_resource_name,
    pool_resource_name,
    project_problems,
    reservation_problem,
    zone_problems,
)
from ..common.options import child_options
from ..common.settings import described
from ..common.validation import check_arguments
from ..platform.cluster import CPU_POOL_IGNORE_CHANGES, node_config
from ..platform.node_identity import BucketGrant, node_service_account
from . import compute_class

TPU_RESOURCE = "google.com/tpu"
"""Extended resource (and NoSchedule taint key) of TPU nodes."""
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
IMAGE_CACHE_DISK_PATTERN = r"^(projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/)?global/images/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
"""A Compute Engine disk image path, as ``secondary_boot_disks[].disk_image`` takes it."""
IMAGE_CACHE_MODE = "CONTAINER_IMAGE_CACHE"
"""Secondary boot disk mode that serves container images from the disk (GKE "Use secondary boot
disks to preload data or container images": the disk image is built with the gke-disk-image-builder,
and image streaming (``gcfs_config``) must be on; pulumi-gcp 10.2.0 ``NodePoolNodeConfigSecondaryBootDisk``:
"`gcfs_config` must be `enabled=true` for this feature to work"; GKE "Starting in GKE version
1.28.3-gke.1067000 in Standard clusters", https://cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading)."""


def service_account_id_problem(account_id: str) -> str:
    """Why ``account_id`` is not a GCP service account id (6 to 30 characters), or ``""``."""
    return check_dns_name(account_id, limit=NameLimit.GCP_SERVICE_ACCOUNT_ID, min_length=6)


def workload_policy_name_problem(name: str | None) -> str:
    """Why ``name`` is not a Compute Engine resource policy name (1 to 63 characters, RFC 1035), or ``""``."""
    return "" if name is None else check_dns_name(name, limit=NameLimit.GCP_RESOURCE)


@dataclass(frozen=True)
class TpuNodePoolArgs:
    """Arguments of :class:`TpuNodePool`."""

    project: str
    """GCP project ID."""
    region: str
    """Region of the (regional) cluster."""
    zone: str
    """The one zone that holds every VM of the slice."""
    cluster: pulumi.Input[str]
    """The cluster's ID (wiring from :class:`~components.cluster.TpuCluster`)."""
    service_account_id: str = field(metadata={"check": service_account_id_problem})
    """``account_id`` of the slices' own node service account (6 to 30 characters)."""
    shape: SliceShape
    """The slice shape from the catalog."""
    pool_names: Sequence[str]
    """GKE node pool names, one per slice; their number is the number of slices."""
    capacity: Capacity = described(
        "How the slice's VMs are obtained: `on-demand`, `spot`, `reservation` (the one named by "
        "`reservation`), `any-reservation`, `flex-start` (Dynamic Workload Scheduler: the pool scales "
        "from zero and its VMs run at most `maxRunDurationHours`). GKE's queued provisioning is refused: it is "
        "documented for GPU node pools only.",
        default=Capacity.ON_DEMAND,
    )
    spot: bool = described("Run the slice on Spot VMs (older spelling of `capacity: spot`).", default=False)
    reservation: str | None = described(
        "Name of the specific Compute Engine reservation the slice consumes (with `capacity: reservation`; "
        "alone, it implies it): its name, or projects/<project>/reservations/<name> for one shared from another "
        "project.",
        default=None,
        check=reservation_problem,
    )
    max_run_duration_hours: int | None = described(
        "Flex-start only: hours each VM may run before GKE deletes it (at most 7 days).",
        default=None,
        ge=1,
        le=capacity_rules.FLEX_START_MAX_HOURS,
    )
    disk_size_gb: int = described("Boot disk size of each TPU VM, in GB.", default=200, ge=50, le=4000)
    image_cache_disk: str | None = described(
        "Disk image preloaded with container images (`global/images/<name>` or "
        "`projects/<project>/global/images/<name>`), attached to every VM as a secondary boot disk in "
        "CONTAINER_IMAGE_CACHE mode so the serving image starts without a pull; needs image streaming.",
        default=None,
        pattern=IMAGE_CACHE_DISK_PATTERN,
    )
    image_streaming: bool = True
    """GKE image streaming on the pool."""
    labels: Mapping[str, str] = field(default_factory=dict, metadata={"check": labels_problem})
    """GCP labels of the VMs (lower-case keys and values: :func:`~tpu_serving.common.naming.labels_problem`)."""
    node_grants: Sequence[BucketGrant] = ()
    """Bucket roles of the node service account, for the host-network pods on these slices."""
    scale_from_zero: Sequence[str] = ()
    """Pools (of ``pool_names``) that start empty and autoscale to the whole slice when a pod needs it
    (the slices of replicas above an autoscaled workload's minimum)."""
    scale_to_zero: Sequence[str] = ()
    """Pools (of ``pool_names``, none of ``scale_from_zero``) that start with their whole slice and autoscale down to
    zero once no pod uses it: the kept slices of a shape that also has pools starting empty, which a group may leave
    for good after a repair or a rollout (:func:`tpu_serving.config.slice_capacity.scale_to_zero`). With
    ``compute_class`` they are created empty instead (``nodeCount`` 0), and their standing groups bring the slice: a
    stockout leaves the groups waiting, not ``pulumi up`` failing; name a capacity fallback's pools here, not in
    ``scale_from_zero``."""
    workload_policy_name: str | None = described(
        "Name of the workload policy (a regional Compute Engine resource policy of type HIGH_THROUGHPUT carrying the "
        "slice topology) the component creates for a multi-host slice of a generation placed by one (TPU7x); one "
        "policy serves every pool of the component. Needed for such a slice; unused otherwise.",
        default=None,
        check=workload_policy_name_problem,
    )
    compute_class: str | None = described(
        "Name of the ComputeClass (:class:`~tpu_serving.pools.compute_class.TpuComputeClass`) whose first priority these "
        "pools are: each carries its node label and taint `cloud.google.com/compute-class=<name>`, as GKE requires of a "
        "pool made by hand that takes part in a class, and a pool of `scale_to_zero` is created empty (the class's "
        "pods bring its slice, or one of the class's later steps: `pulumi up` waits on no TPU capacity). None: no class.",
        default=None,
        check=compute_class.name_problem,
    )
    node_service_account: pulumi.Input[str] | None = None
    """Email of a node service account that exists (a platform stack's, :mod:`tpu_serving.platform.platform_outputs`): the
    pools run as it and the component creates none (``service_account_id`` is then unused); None: the slices' own."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`)."""
        found = [] if self.pool_names else ["pool_names = (): at least one node pool (one slice) is needed"]
        found += project_problems(self.project) + zone_problems(self.zone, self.region)
        found += [
            f"pool_names[{i}] = {p!r}: {problem}"
            for i, p in enumerate(self.pool_names)
            if isinstance(p, str) and (problem := check_dns_name(p, limit=NameLimit.GKE_NODE_POOL))
        ]
        found += capacity_rules.problems(self.capacity, self.spot, self.reservation, self.max_run_duration_hours)
        found += [
            f"scale_from_zero[{i}] = {p!r}: not one of pool_names {list(self.pool_names)!r}"
            for i, p in enumerate(self.scale_from_zero)
            if p not in self.pool_names
        ]
        found += [
            f"scale_to_zero[{i}] = {p!r}: "
            + (
                "also in scale_from_zero (a pool starts empty or whole)"
                if p in self.pool_names
                else f"not one of pool_names {list(self.pool_names)!r}"
            )
            for i, p in enumerate(self.scale_to_zero)
            if p not in self.pool_names or p in self.scale_from_zero
        ]
        if self.shape.workload_policy and self.workload_policy_name is None:
            found.append(
                f"workload_policy_name = None: a multi-host {self.shape.generation.name} slice "
                f"({self.shape.describe()}) is placed by a workload policy, which the component creates under this "
                "name (1 to 63 characters, [a-z]([-a-z0-9]*[a-z0-9])?)"
            )
        if self.image_cache_disk and not self.image_streaming:
            found.append("image_cache_disk: a secondary boot disk of container images needs image_streaming")
        if self.node_service_account is not None and self.node_grants:
            found.append(
                "node_grants: the pools run as node_service_account, which other stacks' pools share: a bucket role "
                "granted to it would reach their host-network pods too; grant it on the slices' own account "
                "(node_service_account = None)"
            )
        return found

    @property
    def effective_capacity(self) -> Capacity:
        """The capacity type, with ``spot`` / ``reservation`` alone honoured as before ``capacity`` existed."""
        return capacity_rules.effective(self.capacity, self.spot, self.reservation)


NODE_COUNT = "node_count"
"""The pool field the cluster autoscaler owns once a pool that starts with its slice autoscales (ignore_changes takes
the Python name; the SDK translates it to the provider's ``nodeCount``)."""


def starts_empty(args: TpuNodePoolArgs, pool_name: str) -> bool:
    """Whether pool ``pool_name`` starts empty and autoscales to its whole slice (flex-start, or a replica's
    slice above an autoscaled workload's minimum)."""
    return capacity_rules.scales_from_zero(args.effective_capacity) or pool_name in args.scale_from_zero


def autoscaled(args: TpuNodePoolArgs, pool_name: str) -> bool:
    """Whether the cluster autoscaler sizes pool ``pool_name`` (whole slice or none): it starts empty, or it starts
    with its slice and may go down to zero (``scale_to_zero``)."""
    return starts_empty(args, pool_name) or pool_name in args.scale_to_zero


PLACEMENT_TYPE = "placementPolicy.type"
"""The placement type of a pool placed by a workload policy, which ``pulumi up`` leaves as the pool has it: the
provider's ``placement_policy`` block is ForceNew and its read copies back the type GKE reports
(terraform-provider-google e03b7622 resource_container_node_pool.go l.364-390, l.1565-1572); GKE stores none for such
a pool (vllm-project/ci-infra PR 547), the empty type sent, but a different answer would otherwise replace the slice on
every later ``up``."""


def pool_ignore_changes(args: TpuNodePoolArgs, pool_name: str) -> list[str] | None:
    """What ``pulumi up`` leaves as pool ``pool_name`` has it: to the cluster autoscaler, the initial size of a pool that
    starts empty, the node count of one that starts with its slice and may go down to zero; to GKE, the placement type
    of a pool placed by a workload policy (:data:`PLACEMENT_TYPE`)."""
    if starts_empty(args, pool_name):
        ignored = list(CPU_POOL_IGNORE_CHANGES)
    else:
        ignored = [NODE_COUNT] if pool_name in args.scale_to_zero else []
    ignored += [PLACEMENT_TYPE] if args.shape.workload_policy else []
    return ignored or None


WORKLOAD_POLICY_TYPE = "HIGH_THROUGHPUT"
"""The workload policy type of a TPU7x slice: "Ironwood (TPU7x) supports the High throughput workload policy" (GKE
"About Ironwood (TPU7x) in GKE"); pulumi-gcp 10.2.0 ``ResourcePolicyWorkloadPolicyArgs.type``: HIGH_AVAILABILITY or
HIGH_THROUGHPUT."""


def workload_policy_args(args: TpuNodePoolArgs) -> compute.ResourcePolicyArgs:
    """The workload policy of a slice placed by one: regional ("The resource policy must be in the same project and
    region as the node pool", GKE API ``NodePool.PlacementPolicy.policy_name``), of type HIGH_THROUGHPUT with the
    slice topology as its accelerator topology (``gcloud compute resource-policies create workload-policy
    --type=HIGH_THROUGHPUT --accelerator-topology``, as xpk 367c8382 src/xpk/core/nodepool.py l.691-724 creates it)."""
    return compute.ResourcePolicyArgs(
        name=args.workload_policy_name,
        project=args.project,
        region=args.region,
        # one text per shape, not the pools' names: a pool added or removed leaves the policy as it is
        description=f"Places tpu-serving's TPU slices of {args.shape.describe()}",
        workload_policy=compute.ResourcePolicyWorkloadPolicyArgs(
            type=WORKLOAD_POLICY_TYPE, accelerator_topology=args.shape.topology
        ),
    )


def placement_policy(
    shape: SliceShape, workload_policy: pulumi.Input[str] | None
) -> container.NodePoolPlacementPolicyArgsDict | None:
    """A pool's placement: none for a single-host slice (GKE: "TPU topology can't be specified with single-host TPU
    slice pool", AI-Hypercomputer/xpk PR 825); COMPACT with the topology for a multi-host one; the workload policy
    ``workload_policy`` with the topology and no type for one placed by a workload policy.

    A TPU7x pool with COMPACT placement and no policy of its own fails ("Creation of a managed instance group with
    tpu7x-standard-4t machine type with placement policy is not supported. Use workload policy instead.",
    vllm-project/ci-infra PR 547). With the policy named, Google's sources differ on the rest: xpk passes the policy
    alone (no --tpu-topology, no --placement-type: src/xpk/core/nodepool.py l.358-365); cluster-toolkit sends COMPACT
    with the policy and the topology (modules/compute/resource-policy/outputs.tf); ci-infra PR 547 reports that GKE
    stores ``policyName`` and ``tpuTopology`` with no ``type`` for a pool it probed. This follows that report: the
    topology is kept (the provider's ``tpu_topology`` is not computed, so leaving it out would diff against what GKE
    stores), and the type, which the provider's schema requires (pulumi-gcp 10.2.0
    ``NodePoolPlacementPolicyArgs.type``), is empty and ignored on later updates (:data:`PLACEMENT_TYPE`). No
    live API was reached here."""
    if not shape.multi_host:
        return None
    if shape.workload_policy:
        return {"type": "", "policy_name": workload_policy or "", "tpu_topology": shape.topology}
    return {"type": "COMPACT", "tpu_topology": shape.topology}


def node_pool_args(
    args: TpuNodePoolArgs,
    pool_name: str,
    service_account: pulumi.Input[str],
    workload_policy: pulumi.Input[str] | None = None,
) -> container.NodePoolArgs:
    """Arguments of one slice's ``gcp.container.NodePool``, its nodes running as ``service_account``, placed by the
    workload policy named ``workload_policy`` where its shape takes one."""
    shape = args.shape
    cfg = node_config(
        service_account,
        machine_type=shape.machine_type.name,
        disk_size_gb=args.disk_size_gb,
        image_streaming=args.image_streaming,
        labels=args.labels,
    )
    # Both change in place on a pool that exists: neither field forces a new pool (terraform-provider-google 00b984c6
    # google/services/container/node_config.go, ``labels`` and ``taint`` without ForceNew), so a fallback added later
    # updates the serving's pools rather than recreating their slices (but for the node account, which the serving
    # kinds after the first change to the first's: tpu_serving.pools.pool_phase.class_account).
    if args.compute_class is not None:
        cfg["labels"] = compute_class.node_labels(args.compute_class)
        cfg["taints"] = compute_class.node_taints(args.compute_class)
    capacity = args.effective_capacity
    _capacity_fields(cfg, capacity, args.reservation, args.max_run_duration_hours)
    if args.image_cache_disk is not None:
        cfg["secondary_boot_disks"] = [{"disk_image": args.image_cache_disk, "mode": IMAGE_CACHE_MODE}]
    flex = capacity_rules.scales_from_zero(capacity)
    # A pool of a replica above an autoscaled workload's minimum starts empty too. GKE treats the VMs of
    # a multi-host slice pool as one atomic unit: "If GKE is unable to deploy one node in the slice, no
    # nodes in the TPU slice node are deployed", and scaling acts on the whole set of nodes
    # (https://cloud.google.com/kubernetes-engine/docs/concepts/tpus, "Atomicity" and "Multi-host TPU slice
    # node pools"), so the autoscaler adds a whole slice, never part of one.
    from_zero = starts_empty(args, pool_name)
    # A pool that starts with its slice and may go down to zero keeps node_count for its creation (the provider
    # creates the pool with node_count nodes when initial_node_count is unset; initial_node_count forces a new pool,
    # so an existing fixed pool takes autoscaling in place) and ignores node_count afterwards (the autoscaler's).
    sized = autoscaled(args, pool_name)
    # A pool of a capacity fallback that may go down to zero is created with none of its slice: the pods that select
    # the class bring the slice, or GKE makes one of the class's later steps, so a stockout leaves them Pending instead
    # of failing `pulumi up` (issue 37, item 2). node_count 0, not initial_node_count 0: the provider sends
    # InitialNodeCount 0 either way (`d.GetOk("node_count")` is false for 0: terraform-provider-google
    # e03b7622 resource_container_node_pool.go expandNodePool l.1231-1240; node_count IntAtLeast(0) l.536-542), but
    # initial_node_count forces a new pool, and a pool that already holds its slice keeps it (node_count ignored).
    waits = args.compute_class is not None and pool_name in args.scale_to_zero
    return container.NodePoolArgs(
        name=pool_name,
        project=args.project,
        cluster=args.cluster,
        location=args.region,
        node_locations=[args.zone],
        # A multi-host slice is one unit: placed by its topology (placement_policy), fixed size. A
        # flex-start slice starts empty and the autoscaler adds all its VMs at once (GKE's
        # flex-start TPU guide: --enable-autoscaling --num-nodes=0 --max-nodes=<VMs>).
        node_count=None if from_zero else 0 if waits else shape.vms,
        initial_node_count=0 if from_zero else None,
        autoscaling=(
            {"total_min_node_count": 0, "total_max_node_count": shape.vms, "location_policy": "ANY"} if sized else None
        ),
        placement_policy=placement_policy(shape, workload_policy),
        # Flex-start pools run without auto-repair (xpk: --no-enable-autorepair): a repaired VM
        # would be a new flex-start request.
        management={"auto_repair": not flex, "auto_upgrade": True},
        upgrade_settings=_upgrade_settings(capacity),
        node_config=cfg,
    )


RESERVED_UPGRADE = container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=0, max_unavailable=1)
"""How a pool a specific reservation holds is upgraded: the old node goes before its new one comes. GKE's default surge
upgrade first adds a node, and "all nodes that GKE creates, including nodes used for upgrades, are subject to ...
reservation capacity, for node pools with specific reservation affinity"; with no extra node to be had, "the upgrade
fails" and GKE retries until it succeeds (GKE, "Ensure resources for node upgrades",
https://cloud.google.com/kubernetes-engine/docs/how-to/node-upgrades-quota, "Resources for surge upgrades"). A
reservation sized to the stack's slices has no VM to spare, so the slice's group goes down for its upgrade, as it does
for a repair, and another group serves (GKE and SRE reviews round 42, M3)."""


def _upgrade_settings(capacity: Capacity) -> container.NodePoolUpgradeSettingsArgs | None:
    """:data:`RESERVED_UPGRADE` for a specific reservation's pool; else GKE's default (surge of one node)."""
    return RESERVED_UPGRADE if capacity is Capacity.RESERVATION else None


def _capacity_fields(
    cfg: container.NodePoolNodeConfigArgsDict,
    capacity: Capacity,
    reservation: str | None,
    max_run_duration_hours: int | None,
) -> None:
    """Set the ``node_config`` fields of ``capacity`` (pulumi-gcp 10.x ``NodePoolNodeConfigArgs``)."""
    if capacity is Capacity.SPOT:
        cfg["spot"] = True
    elif capacity is Capacity.RESERVATION:
        cfg["reservation_affinity"] = {
            "consume_reservation_type": "SPECIFIC_RESERVATION",
            "key": RESERVATION_KEY,
            "values": [reservation or ""],
        }
    elif capacity is Capacity.ANY_RESERVATION:
        cfg["reservation_affinity"] = {"consume_reservation_type": "ANY_RESERVATION"}
    elif capacity is Capacity.FLEX_START:
        cfg["flex_start"] = True
        cfg["reservation_affinity"] = {"consume_reservation_type": "NO_RESERVATION"}
        if max_run_duration_hours is not None:
            cfg["max_run_duration"] = f"{max_run_duration_hours * 3600}s"


def pool_aliases(component: str, pool_names: Sequence[str], index: int) -> list[pulumi.Input[str | pulumi.Alias]]:
    """The alias of pool ``pool_names[index]``'s resource: the name the scheme before
    :func:`~tpu_serving.common.naming.pool_resource_name` gave it for this same list
    (:func:`~tpu_serving.common.naming.legacy_pool_resource_name`). None when that is the name of a pool of the list: its
    own (pools named ``<component>-<i>`` in order keep their URNs), or another's, whose resource the alias would take
    (the engine refuses two resources of one URN). An alias matches only a resource in the stack's state, so a stack
    upgraded with its list unchanged keeps every pool; one whose list changes in the same ``up`` does not, and an
    index name may then be another pool's old resource (see :class:`TpuNodePool`)."""
    old = legacy_pool_resource_name(component, index, len(pool_names))
    return [] if old in map(pool_resource_name, pool_names) else [pulumi.Alias(name=old)]


class TpuNodePool(pulumi.ComponentResource):
    """One or more identical TPU slices, each its own GKE node pool in one zone.

    Multi-host slices get placement policy COMPACT with ``tpu_topology``, or, on a generation that takes one
    (TPU7x), a workload policy the component creates; single-host ones none. Nodes use the GKE metadata server
    (workload identity) and shielded VMs.

    Each pool's resource is named after its GKE pool name (:func:`~tpu_serving.common.naming.pool_resource_name`), so
    adding, removing or reordering pools never renames another pool's resource. Before, the name was the
    component's and the pool's place in the list (``<name>-pool`` for one pool, ``<name>-<i>`` for several), and
    each pool has that old name for the current list as an alias (:func:`pool_aliases`). Pulumi matches an alias
    only against the stack's state, so upgrade a deployed stack with its pool list unchanged first (each pool keeps
    its resource; nothing is replaced), and change the list in a later ``up``. Upgrading and changing the list in
    one ``up`` is not safe: the pools' old names no longer match (a pool added beside a single one looks for
    ``<name>-0``, not ``<name>-pool``), so pools are recreated under the names GKE already has (a 409), and an alias
    ``<name>-<i>`` can capture another pool's old resource (the pool now at index ``i`` takes over, and replaces,
    the one that was there).
    """

    shape: SliceShape
    """The shape of every slice in this component."""
    node_pools: list[container.NodePool]
    """The GKE node pools, one per slice."""
    pool_names: Sequence[str]
    """Their GKE names (the ``cloud.google.com/gke-nodepool`` label values)."""
    node_selector: dict[str, str]
    """Node selector for pods that must run on these slices."""
    node_service_account: serviceaccount.Account | None
    """The slices' own node service account; None when they run as ``args.node_service_account``."""
    workload_policy: compute.ResourcePolicy | None
    """The workload policy that places the slices (a multi-host TPU7x shape); None for the others."""
    node_email: pulumi.Input[str]
    """The email of the account the slices' nodes run as (their own, or ``args.node_service_account``)."""

    def __init__(self, name: str, args: TpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"TpuNodePool {name!r}", args, TpuNodePoolArgs)
        super().__init__("tpu-serving:index:TpuNodePool", name, None, opts)
        child = child_options(self, opts)
        self.shape = args.shape
        self.pool_names = args.pool_names
        self.node_selector = node_selector(args.shape)
        email, roles = self._node_account(name, args, child)
        self.node_email, self._roles = email, tuple(roles)
        # Its name is fixed and each of its fields forces a new policy: the old one goes first (with the pools that
        # name it, which a new topology replaces anyway), or the new one would collide with it.
        self.workload_policy = (
            compute.ResourcePolicy(
                f"{name}-placement",
                workload_policy_args(args),
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(delete_before_replace=True)),
            )
            if args.shape.workload_policy
            else None
        )
        policy_name = self.workload_policy.name if self.workload_policy else None
        pool_opts = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=roles))
        self.node_pools = [
            container.NodePool(
                pool_resource_name(pool),
                node_pool_args(args, pool, email, policy_name),
                opts=pulumi.ResourceOptions.merge(
                    pool_opts,
                    # An autoscaled pool's initial size matters only at creation (as for the CPU pool); the
                    # autoscaler sets the node count of one that starts with its slice.
                    pulumi.ResourceOptions(
                        ignore_changes=pool_ignore_changes(args, pool),
                        aliases=pool_aliases(name, args.pool_names, i),
                    ),
                ),
            )
            for i, pool in enumerate(args.pool_names)
        ]
        self.register_outputs({"poolNames": list(args.pool_names), "slice": args.shape.describe()})

    def node_roles(self) -> list[pulumi.Resource]:
        """The project roles of the slices' own account, which their pools wait for; none when they run as
        ``args.node_service_account``."""
        return list(self._roles)

    def _node_account(
        self, name: str, args: TpuNodePoolArgs, child: pulumi.ResourceOptions
    ) -> tuple[pulumi.Input[str], list[pulumi.Resource]]:
        """The email the pools run as, and what they wait for: the slices' own account and its roles, or the account
        named in ``args.node_service_account`` (nothing to wait for)."""
        if args.node_service_account is not None:
            self.node_service_account = None
            return args.node_service_account, []
        self.node_service_account, roles = node_service_account(
            f"{name}-nodes",
            project=args.project,
            account_id=args.service_account_id,
            display_name=f"GKE TPU nodes of {', '.join(args.pool_names)}",
            grants=args.node_grants,
            opts=child,
        )
        return self.node_service_account.email, roles
