"""The TPU node pools phase of :class:`~tpu_serving.deployment.TpuServingDeployment` (:func:`build_pools`): the
slices' node pools on the stack's own cluster, on a platform stack's cluster, or the existing cluster's pools."""

from collections.abc import Mapping

import pulumi

from ..common.naming import compute_class_name, node_service_account_id, workload_policy_name
from ..config.models import TpuSliceConfig
from ..config.slice_capacity import scale_from_zero, scale_to_zero
from ..phases import Context, PlatformParts, PoolParts
from ..platform.existing import ExistingCluster, ExistingTpuNodePool, ExistingTpuNodePoolArgs
from ..platform.node_identity import BucketGrant
from ..platform.platform_cluster import cluster_id, shared_account
from .compute_class import Fallback, TpuComputeClass, TpuComputeClassArgs
from .nodepool import TpuNodePool, TpuNodePoolArgs


def build_pools(ctx: Context, platform: PlatformParts) -> PoolParts:
    """A :class:`TpuNodePool` per slice kind; the serving slices' node accounts get the bucket roles of the
    backend's host-network pods, and read the shared buckets when the backend has such pods. On an existing cluster
    an :class:`ExistingTpuNodePool` per slice kind instead: its pools (``existingNodePools``, else the names the stack
    would give) exist, and their node account must hold those roles. On a platform stack's cluster (``platform``) a
    :class:`TpuNodePool` per slice kind, on that cluster, its nodes running as the platform's node account, or an
    :class:`ExistingTpuNodePool` for a slice kind whose pools it names (``existingNodePools``)."""
    cfg, from_zero, to_zero = ctx.cfg, scale_from_zero(ctx.cfg), scale_to_zero(ctx.cfg)
    host_network = ctx.backend.host_network_buckets(cfg.serving) if ctx.backend else {}
    fallback = tuple(ctx.backend.fallback(cfg.serving)) if ctx.backend else ()
    classed = compute_class_name(cfg.workload_identity.namespace) if fallback else None
    slices: dict[str, TpuNodePool | ExistingTpuNodePool] = {}
    for s in cfg.tpu_slices:
        names = cfg.node_pool_names(s)
        grants = platform.node_grants(host_network if cfg.serving and s.name in cfg.serving.slices else {})
        named = dict(zip(s.pool_names, names, strict=True))
        empty, idle = (tuple(named[p] for p in s.pool_names if p in c) for c in (from_zero, to_zero))
        if isinstance(platform.cluster, ExistingCluster) or s.existing_node_pools is not None:
            slices[s.name] = ExistingTpuNodePool(
                f"{ctx.name}-{s.name}",
                ExistingTpuNodePoolArgs(
                    s.shape,
                    names,
                    cfg.zone_of(s),
                    cfg.region,
                    empty,
                    grants,
                    disk_size_gb=s.disk_size_gb,
                    compute_class=classed if cfg.serving and s.name in cfg.serving.slices else None,
                ),
                opts=pulumi.ResourceOptions(parent=ctx.parent),
            )
            continue
        lead = class_account(ctx, slices, s.name) if classed is not None else None
        account, grants, waits = node_account(ctx, platform, lead, grants)
        slices[s.name] = TpuNodePool(
            f"{ctx.name}-{s.name}",
            TpuNodePoolArgs(
                project=cfg.project,
                region=cfg.region,
                zone=cfg.zone_of(s),
                cluster=cluster_id(platform.cluster),
                service_account_id=node_service_account_id(cfg.cluster.name, s.name),
                node_service_account=account,
                shape=s.shape,
                pool_names=names,
                capacity=s.capacity,
                spot=s.spot,
                reservation=s.reservation,
                max_run_duration_hours=s.max_run_duration_hours,
                disk_size_gb=s.disk_size_gb,
                image_cache_disk=s.image_cache_disk,
                image_streaming=cfg.cluster.image_streaming,
                labels=ctx.labels,
                node_grants=grants,
                scale_from_zero=empty,
                scale_to_zero=idle,
                workload_policy_name=workload_policy_name(cfg.cluster.name, s.name)
                if s.shape.workload_policy
                else None,
                compute_class=classed if cfg.serving and s.name in cfg.serving.slices else None,
            ),
            opts=pulumi.ResourceOptions.merge(platform.gcp_options(ctx), pulumi.ResourceOptions(depends_on=waits)),
        )
    made = serving_class(ctx, platform, classed, fallback, slices) if classed is not None else None
    return PoolParts(slices, frozenset(from_zero), made)


def node_account(
    ctx: Context,
    platform: PlatformParts,
    lead: TpuNodePool | None,
    grants: list[BucketGrant],
) -> tuple[pulumi.Input[str] | None, list[BucketGrant], list[pulumi.Resource]]:
    """The account a slice kind's pools run as (None: their own), the bucket grants they make and what they wait
    for: a platform's account (pools moved from a self-contained stack keep their own: ``platform.movedFrom``), else
    the account of ``lead``, the pools whose account it shares under a capacity fallback (:func:`class_account`),
    which holds the same grants, and whose project roles the pools wait for as ``lead``'s do (second GKE review,
    m2)."""
    cfg = ctx.cfg
    moved, cluster = bool(cfg.platform and cfg.platform.moved_from), platform.cluster
    account = None if moved or isinstance(cluster, ExistingCluster) else shared_account(cluster)
    if account is None and lead is not None:
        return lead.node_email, [], lead.node_roles()
    return account, grants, []


def class_account(
    ctx: Context, slices: Mapping[str, TpuNodePool | ExistingTpuNodePool], kind: str
) -> TpuNodePool | None:
    """The pools whose node account a serving slice kind after the first runs as under a capacity fallback: the first
    serving kind's, when the stack made them. The ComputeClass names one ``nodePoolConfig.serviceAccount``, and GKE
    matches an existing pool with the class "only if their configuration match this field" (the ComputeClass CRD,
    ``spec.nodePoolConfig``: reference/crds/gke-computeclass-v1.schema.json, from datreeio/CRDs-catalog
    ``cloud.google.com/computeclass_v1.json``), so a kind with its own account would take no group of the class (GKE
    review of the capacity fallback, Blocker). The caller asks only under a fallback. None: the kind's own account
    (the first kind, or not a serving kind)."""
    serving = _serving_kinds(ctx)
    first = slices.get(serving[0].name) if serving else None
    return first if kind in [k.name for k in serving[1:]] and isinstance(first, TpuNodePool) else None


def _serving_kinds(ctx: Context) -> list[TpuSliceConfig]:
    """The stack's serving slice kinds, in ``tpuSlices`` order (the first one's pools lead the class)."""
    serving = ctx.cfg.serving
    return [s for s in ctx.cfg.tpu_slices if serving is not None and s.name in serving.slices]


def serving_class(
    ctx: Context,
    platform: PlatformParts,
    name: str,
    fallback: tuple[Fallback, ...],
    slices: dict[str, TpuNodePool | ExistingTpuNodePool],
) -> TpuComputeClass:
    """The ComputeClass of the serving slices (``fallback``): their pools first, GKE's own pools of the shape after, in
    the serving slices' zones, running as the first serving slice kind's node account, which the other serving kinds
    share (:func:`class_account`; pools the stack makes; on existing pools, GKE's default, the cluster owner's)."""
    cfg = ctx.cfg
    kinds = _serving_kinds(ctx)
    first = slices[kinds[0].name]
    made = isinstance(first, TpuNodePool)
    return TpuComputeClass(
        name,
        TpuComputeClassArgs(
            shape=kinds[0].shape,
            node_pools=[p for k in kinds for p in cfg.node_pool_names(k)],
            zones=sorted({cfg.zone_of(k) for k in kinds}),
            service_account=first.node_email if isinstance(first, TpuNodePool) else None,
            fallback=fallback,
            disk_size_gb=max(k.disk_size_gb for k in kinds),
            image_streaming=cfg.cluster.image_streaming,
            labels=ctx.k8s_labels,
        ),
        opts=pulumi.ResourceOptions(
            parent=ctx.parent, providers=platform.kubernetes, depends_on=[first] if made else []
        ),
    )
