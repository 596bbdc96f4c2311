"""What the deployment derives from its settings alone: arguments of its parts, the slices that
scale from zero or down to zero, the allocation, the cost estimate and the stack outputs that report them.

Pure functions of the validated settings (and of built parts' names for :func:`bucket_grants`);
:mod:`tpu_serving.phases` calls them.
"""

from collections.abc import Mapping
from typing import Literal, cast

from .backends import BACKENDS, scaling
from .backends.rollout import maintenance_starts
from .catalog import capacity
from .catalog.prices import PriceOverrides
from .common.gcp_zones import per_zone_minimum
from .common.naming import (
    SERVING_PRIORITY,
    bucket_name,
    compute_class_name,
)
from .common.settings import to_settings
from .config.checks import cpu_zones
from .config.mirror import mode as mirror_mode
from .config.mirror import needed_upstreams
from .config.models import StackConfig, TpuSliceConfig
from .config.serving_facts import maintenance_gate_runs
from .config.slice_capacity import fallback_steps, has_fallback, obtained
from .cost import estimate as cost
from .cost import serve_time
from .cost.allocation import Allocation, allocation
from .operations.maintenance.host_maintenance_job import HostMaintenanceGateArgs
from .platform.buckets import Buckets, BucketsArgs, BucketSpec, Purpose
from .platform.cluster import CpuPoolArgs, TpuClusterArgs
from .platform.existing import ExistingClusterArgs
from .platform.image_mirror import MirrorMode
from .platform.lws import surge_groups
from .platform.node_identity import Access, BucketGrant
from .platform.services import required_apis
from .platform.shared_vpc import network_path, subnetwork_path
from .pools import compute_class
from .traffic.gateway_settings import GatewaySettings, address_name


def bucket_grants(
    buckets: Buckets, needs: Mapping[str, Access | Literal["none"]], *, by_name: bool = False
) -> list[BucketGrant]:
    """Bucket roles by purpose -> access (``read``, ``readWrite``; ``none`` grants nothing) on ``buckets``: a created
    bucket by its resource's name (the grant waits for it), an existing one by its name; ``by_name``: each by its
    name (roles an existing account must hold, which nothing grants)."""
    return [
        BucketGrant(
            key=purpose,
            bucket=buckets.buckets[purpose].name
            if purpose in buckets.buckets and not by_name
            else buckets.names[purpose],
            access=access,
        )
        for purpose, access in needs.items()
        if purpose in buckets.names and access != "none"
    ]


def serving_kinds(cfg: StackConfig) -> list[TpuSliceConfig]:
    """The ``tpuSlices`` entries the serving runs on, in the stack file's order."""
    return [s for s in cfg.tpu_slices if cfg.serving is not None and s.name in cfg.serving.slices]


def slice_allocation(cfg: StackConfig) -> Allocation:
    """Chips, VMs and HBM of the slices, against what the served model needs."""
    serving = serving_kinds(cfg)
    backend = BACKENDS[cfg.serving.backend] if cfg.serving is not None else None
    pools = sum(s.count for s in serving)
    spare = backend.spare_slices(cfg.serving, pools) if backend is not None else 0
    return allocation(
        [(s.shape, s.count) for s in cfg.tpu_slices],
        serving[0].shape if serving else None,
        pools - spare,
        backend.model_size(cfg.serving) if backend is not None else None,
    )


def cpu_pool_usage(cfg: StackConfig) -> list[cost.NodeUsage]:
    """The created CPU pool at its minimum, which GKE keeps in each of its zones (:class:`~tpu_serving.platform.cluster.CpuPoolArgs`):
    the stack's zone, then the nodes its other zones add (:func:`tpu_serving.cost.estimate.pool_minimum`)."""
    pool, zones = cfg.cluster.cpu_pool, cpu_zones(cfg)
    each = per_zone_minimum(pool.min_nodes, len(zones))
    return cost.pool_minimum("cpu pool", pool.machine_type, each, pool.disk_size_gb, zones)


def cost_estimate(cfg: StackConfig, sized: Allocation, autoscaled_from_zero: frozenset[str]) -> cost.CostEstimate:
    """The estimate: the slices that keep their VMs (not ``autoscaled_from_zero``, not flex-start), the CPU
    pool at its minimum, boot disks and the buckets' expected sizes; on an existing cluster, neither its CPU pool
    nor its fee (its owner's)."""
    from_zero = autoscaled_from_zero | {
        p for s in cfg.tpu_slices if capacity.scales_from_zero(s.effective_capacity) for p in s.pool_names
    }
    weights_gb = sized.model.gib * 2**30 / 1e9 if sized.model is not None else 0.0
    return cost.estimate(
        slices=[
            cost.SliceUsage(
                s.name,
                s.shape,
                s.count,
                s.effective_capacity,
                s.disk_size_gb,
                running=sum(p not in from_zero for p in s.pool_names),
            )
            for s in cfg.tpu_slices
        ],
        nodes=[
            # an existing cluster's CPU nodes are its owner's, shared by its tenants (as is its fee)
            *([] if cfg.existing else cpu_pool_usage(cfg)),
            *(BACKENDS[cfg.serving.backend].cpu_nodes(cfg.serving) if cfg.serving is not None else ()),
        ],
        buckets=[
            cost.BucketUsage(
                b.purpose,
                str(b.storage_class),
                b.expected_size_gb
                if b.expected_size_gb is not None
                else (weights_gb if b.purpose == "checkpoints" else 0.0),
            )
            for b in cfg.buckets
        ],
        overrides=to_settings(cfg.prices, PriceOverrides),
        cluster_fee=not cfg.existing,
    )


def buckets_args(cfg: StackConfig, labels: Mapping[str, str]) -> BucketsArgs:
    return BucketsArgs(
        project=cfg.project,
        labels=labels,
        buckets=[
            BucketSpec(
                purpose=Purpose(b.purpose),
                name=bucket_name(cfg.project, cfg.cluster.name, b.purpose, b.name),
                location=b.location or cfg.region,
                storage_class=b.storage_class,
                versioning=b.versioning,
                ttl_days=b.scratch_ttl_days,
                existing=b.existing,
            )
            for b in cfg.buckets
        ],
    )


def cluster_args(cfg: StackConfig, labels: Mapping[str, str]) -> TpuClusterArgs:
    return to_settings(
        cfg.cluster,
        TpuClusterArgs,
        project=cfg.project,
        region=cfg.region,
        zone=cfg.zone,
        labels=labels,
        cpu_node_grants=(),
        gateway_api=cfg.gateway is not None,
    )


def stack_apis(cfg: StackConfig) -> tuple[str, ...]:
    """The Google Cloud APIs the stack uses: the base set and one per feature that needs its own."""
    return required_apis(
        cfg.cluster.image_streaming,
        inference_pool=cfg.gateway is not None and cfg.gateway.inference_pool,
        binary_authorization=cfg.cluster.binary_authorization,
        artifact_registry=mirror_mode(cfg) == MirrorMode.CREATE and bool(needed_upstreams(cfg)),
    )


def existing_cluster_args(cfg: StackConfig) -> ExistingClusterArgs:
    """The arguments of the existing cluster (``cluster.existing``): how it is reached, and what the stack's CPU pods
    and RBAC assume of it (``cluster.cpuPool``, ``cluster.securityGroup``)."""
    assert cfg.cluster.existing is not None
    return to_settings(
        cfg.cluster.existing,
        ExistingClusterArgs,
        project=cfg.project,
        name=cfg.cluster.name,
        region=cfg.region,
        cpu_pool=to_settings(cfg.cluster.cpu_pool, CpuPoolArgs),
        security_group=cfg.cluster.security_group,
        node_service_account=None,  # a platform stack's (PLATFORM_EXISTING_ARGS)
    )


def cost_output(estimate: cost.CostEstimate) -> dict[str, object]:
    """The ``cost`` stack output: USD per hour and per month by part, and how each item was priced."""
    per_hour: dict[str, float] = {p: round(estimate.per_hour(p), 2) for p in cost.PARTS}
    per_month: dict[str, float] = {p: round(estimate.per_month(p), 2) for p in cost.PARTS}
    return {
        "currency": "USD",
        "perHour": {**per_hour, "total": round(estimate.per_hour(), 2)},
        "perMonth": {**per_month, "total": round(estimate.per_month(), 2)},
        "peakPerHour": round(estimate.per_hour(peak=True), 2),
        "items": [
            {
                "part": x.part,
                "what": x.what,
                "perHour": None if x.usd_per_hour is None else round(x.usd_per_hour, 4),
                **({"peakPerHour": round(x.peak_usd_per_hour, 4)} if x.peak_usd_per_hour is not None else {}),
                "basis": x.basis,
            }
            for x in estimate.lines
        ],
        "unpriced": [x.what for x in estimate.unpriced],
    }


def obtained_output(cfg: StackConfig) -> dict[str, str]:
    """The ``capacity.obtained`` stack output: per slice kind, how it gets its VMs and what a stockout then does
    (:func:`tpu_serving.config.slice_capacity.obtained`)."""
    return obtained(cfg)


def allocation_output(sized: Allocation) -> dict[str, object]:
    """The ``capacity`` stack output: chips, VMs, HBM and the allocation against the model's need."""
    fit = sized.smallest_fit
    return {
        "chips": sized.chips,
        "vms": sized.vms,
        "hbmGib": sized.hbm_gib,
        "modelGib": None if sized.model is None else round(sized.model.gib, 1),
        "smallestFittingSlice": None
        if fit is None
        else f"{fit.machine_type.name} {fit.topology} ({fit.chips} chip{'s' if fit.chips != 1 else ''})",
        "servingSlices": sized.serving_slices,
        "chipsNeeded": sized.chips_needed,
        "allocatedToNeeded": None if sized.ratio is None else round(sized.ratio, 2),
    }


def cluster_network(cfg: StackConfig) -> str:
    """The cluster's network as a resource in another project names it: the host project's path with a Shared VPC."""
    host = cfg.cluster.host_project
    return network_path(host, cfg.cluster.network) if host else cfg.cluster.network


def gateway_address_and_subnet(cfg: StackConfig, service: str) -> tuple[str, str]:
    """The Gateway's address and the subnet it is reserved in, for the Service ``service``: the address named
    existing or the one the stack reserves (:func:`~tpu_serving.traffic.gateway_settings.address_name`), in
    ``gateway.addressSubnetwork``, else ``cluster.subnetwork``, else the network's name (an auto-mode network names
    its subnet in each region after itself). The gateway's arguments and the existing-cluster inventory read both."""
    g = cfg.gateway or GatewaySettings()
    name = address_name(g.existing_address, cfg.cluster.name, service)
    subnet = g.address_subnetwork or cfg.cluster.subnetwork or cfg.cluster.network
    # Shared VPC: the address is reserved in the host project's subnet, which the service project names by its path
    host = cfg.cluster.host_project
    return name, subnetwork_path(host, cfg.region, subnet) if host and "/" not in subnet else subnet


def maintenance_gate_args(cfg: StackConfig, labels: Mapping[str, str]) -> HostMaintenanceGateArgs | None:
    """The host-maintenance gate of a stack that runs one (:func:`tpu_serving.config.serving_facts.
    maintenance_gate_runs`): its serving pools, its LeaderWorkerSet (named after the serving), its standing groups,
    its HPA with the bounds the stack declares for it (which a cover gives back), and whether it starts the
    maintenance (:func:`tpu_serving.backends.rollout.maintenance_starts`) or watches; None otherwise."""
    serving = cfg.serving
    if serving is None or not maintenance_gate_runs(cfg):
        return None
    scaled = cast(scaling.Scaled, serving)
    return HostMaintenanceGateArgs(
        namespace=cfg.workload_identity.namespace,
        pools=tuple(p for s in cfg.tpu_slices if s.name in serving.slices for p in cfg.node_pool_names(s)),
        leader_worker_sets=(scaled.name,),
        fewest_groups=scaling.fewest_groups(scaled),
        autoscalers=scaling.autoscalers(scaled),
        autoscaler_bounds=scaling.autoscaler_bounds(scaled),
        due_hours=cfg.host_maintenance.due_hours,
        surge_groups=surge_groups(scaled.rollout),
        reload_seconds=BACKENDS[serving.backend].startup_seconds(serving),
        starts=maintenance_starts(cfg, scaled),
        compute_class=compute_class_name(cfg.workload_identity.namespace) if has_fallback(cfg) else "",
        priority_class_name=SERVING_PRIORITY,  # the deployment's Tenancy creates it
        labels=dict(labels),
    )


ARTIFACT_REGISTRY_HOST = "-docker.pkg.dev/"
"""What an Artifact Registry image's host ends with (``<region>-docker.pkg.dev/``)."""


def image_streamed(cfg: StackConfig, image: str) -> bool:
    """Whether GKE streams ``image`` to the stack's TPU nodes: image streaming on the stack's own pools, and the image
    in Artifact Registry, named so or pulled through the stack's mirror (image streaming applies to Artifact Registry
    images only: https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, "Requirements", as
    :mod:`tpu_serving.platform.image_mirror` cites it); an existing cluster's pools are not the stack's to set."""
    in_registry = ARTIFACT_REGISTRY_HOST in image or mirror_mode(cfg) is not MirrorMode.NONE
    return cfg.cluster.image_streaming and not cfg.existing and in_registry


def time_to_serve(cfg: StackConfig) -> list[str]:
    """How long a new serving group takes to serve, by slice kind, as a sum of published terms
    (:func:`tpu_serving.cost.serve_time.group_start`); a line that says so where no figure is published."""
    if cfg.serving is None:
        return ["no serving group: the stack serves nothing"]
    backend = BACKENDS[cfg.serving.backend]
    profile = backend.engine_profile(cfg.serving)
    if profile is None:
        return [f"{cfg.serving.backend}: no start figure of its engine is published; {serve_time.PROVISIONING}"]
    size = backend.model_size(cfg.serving)
    window = backend.startup_seconds(cfg.serving)
    kinds: dict[str, list[str]] = {}
    streamed = image_streamed(cfg, profile.image)
    for s in serving_kinds(cfg):
        t = serve_time.group_start(
            profile, size.gib if size else None, s.image_cache_disk is not None, streamed, s.shape.vms
        )
        kinds.setdefault(t.line(window), []).append(s.name)
    return [line if len(kinds) == 1 else f"slices {', '.join(n)}: {line}" for line, n in kinds.items()]


def token_cost(cfg: StackConfig, estimate: cost.CostEstimate) -> list[str]:
    """What a million output tokens cost on each serving slice kind, where a throughput is published for its model,
    shape and engine, at the stack's chip-hour price (:func:`tpu_serving.cost.serve_time.token_cost_line`), then what they
    cost the stack at its TPU ``estimate`` (:func:`tpu_serving.cost.serve_time.stack_cost_line`)."""
    if cfg.serving is None:
        return ["no serving group: the stack serves nothing"]
    profile = BACKENDS[cfg.serving.backend].engine_profile(cfg.serving)
    if profile is None:
        return [f"{cfg.serving.backend}: no throughput of its engine is published, so no cost per token is given"]
    overrides = to_settings(cfg.prices, PriceOverrides)
    serving = serving_kinds(cfg)
    kinds: dict[str, list[str]] = {}
    for s in serving:
        chosen = s.effective_capacity
        price = cost.chip_hour(s.shape.generation.name, chosen, overrides)
        line = serve_time.token_cost_line(profile, s.shape, price.usd, price.note)
        kinds.setdefault(line, []).append(f"{s.name} ({chosen})")
    shapes = {s.shape for s in serving}
    tpu = (estimate.per_hour("tpu"), estimate.per_hour("tpu", peak=True))
    whole = serve_time.stack_cost_line(profile, next(iter(shapes)), tpu) if len(shapes) == 1 else None
    return [f"slices {', '.join(names)}: {line}" for line, names in kinds.items()] + ([whole] if whole else [])


def fallback_output(cfg: StackConfig) -> list[str] | None:
    """The ``capacity.fallback`` stack output (``serving.fallback``): the ComputeClass's order, the price of a slice at
    each step and what a slice taken there costs beside the serving's own pools; None without a fallback."""
    steps = fallback_steps(cfg)
    if not steps:
        return None
    overrides = to_settings(cfg.prices, PriceOverrides)
    kinds = serving_kinds(cfg)
    shape, zones = kinds[0].shape, ", ".join(sorted({cfg.zone_of(k) for k in kinds}))

    def per_slice(c: capacity.Capacity) -> tuple[float | None, str, str]:
        price = cost.chip_hour(shape.generation.name, c, overrides)
        if price.usd is None:
            return None, "unpriced", f"; {price.note}" if price.note else ""
        usd = price.usd * shape.chips
        return (
            usd,
            f"${usd:.2f} a slice-hour ({shape.chips} chips at ${price.usd:.2f})",
            f"; {price.note}" * bool(price.note),
        )

    own = sorted({s.effective_capacity for s in kinds}, key=str)
    held = any(c in (capacity.Capacity.RESERVATION, capacity.Capacity.ANY_RESERVATION) for c in own)
    first, first_text, first_note = max((per_slice(c) for c in own), key=lambda p: p[0] or 0.0)
    lines = [f"1. the serving's own pools ({', '.join(map(str, own))}): {first_text}{first_note}"]
    for i, step in enumerate(steps, start=2):
        usd, text, note = per_slice(capacity.Capacity(str(step)))
        if usd is None or first is None:
            more = ""
        elif held:
            more = ", all of it on top of the reservation, which bills its VMs used or not"
        else:
            more = (
                f", {'+' if usd >= first else '-'}${abs(usd - first):.2f} against the pools' slice it stands in for "
                "(the autoscaler removes that one once idle)"
            )
        lines.append(f"{i}. {step}, a {shape.slice_name} slice GKE creates in {zones}: {text}{more}{note}")
    name = compute_class_name(cfg.workload_identity.namespace)
    kept = [p for k in kinds if cfg.cluster.existing is not None or k.existing_node_pools is not None
            for p in cfg.node_pool_names(k)]  # fmt: skip
    lines += [
        f"existing pool {p}: the stack cannot label it; its owner adds the class's label and taint: "
        + compute_class.label_command(name, p)
        for p in kept
    ]
    return lines
