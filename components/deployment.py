"""``TpuServingDeployment``: one whole serving deployment from one validated settings object.

It composes the project's APIs, the buckets, the regional cluster, the TPU slices, the
workload identity, the namespace's tenancy, the controller installs and the chosen serving
backend (:mod:`tpu_serving.backends`), and exposes the deployment's outputs. The stack
program is then: load the settings, build one deployment, export its outputs.

The deployment is built in phases (:mod:`tpu_serving.phases`), each a function with a typed result,
called in this order by the component: the platform (:func:`build_platform`: APIs, buckets, cluster), the TPU
node pools, the workload identity, the namespace's tenancy, the serving backend, the traffic in
front of it (the gateway), operations (observability) and the cost estimate. A phase takes the
:class:`Context` and the results of the phases it builds on; every resource it creates is a
child of the deployment.
"""

from dataclasses import dataclass
from typing import Any

import pulumi

from .common.validation import check_arguments
from .config.loading import validate_stack
from .config.models import StackConfig
from .config.production import production_output
from .cost.platform_cost import share_of
from .cost.serve_time import TIME_TO_SERVE, TOKEN_COST
from .derived import allocation_output, cost_output, fallback_output, obtained_output, time_to_serve, token_cost
from .phases import (
    PlatformParts,
    build_identity,
    build_operations,
    build_platform,
    build_serving,
    build_tenancy,
    build_traffic,
    context,
    estimate_costs,
)
from .platform.inventory import cloud_resources
from .platform.platform_cluster import PlatformCluster
from .pools.pool_phase import build_pools
from .stack_outputs import infrastructure_outputs
from .traffic.route_phase import build_route


def production_of(cfg: StackConfig, platform: PlatformParts) -> dict[str, object] | pulumi.Output[dict[str, object]]:
    """The ``production`` output; a model stack's once its platform's output says whether node upgrades are held
    (a ``production: true`` stack whose platform does not hold them fails there: the preview and ``up``)."""
    cluster = platform.cluster
    if not isinstance(cluster, PlatformCluster):
        return production_output(cfg)
    return cluster.node_upgrades_held.apply(lambda held: production_output(cfg, held))


@dataclass(frozen=True)
class TpuServingDeploymentArgs:
    """Arguments of :class:`TpuServingDeployment`."""

    settings: Any
    """The deployment's settings: a validated :class:`~tpu_serving.config.StackConfig`
    (``load_from_pulumi``, ``load_stack_config``, ``validate_stack``), or the same settings as a
    mapping with the stack file's keys (``cluster``, ``tpuSlices``, ..., ``project`` and
    ``region`` for ``gcp:project``/``gcp:region``), validated here; every problem is
    reported before anything is created."""


class TpuServingDeployment(pulumi.ComponentResource):
    """A complete multi-host TPU serving deployment on GKE, from one settings object.

    Its parts are attributes: ``apis`` (:class:`ProjectServices`, None when the stack names the APIs existing),
    ``buckets``, ``cluster`` (:class:`TpuCluster`, or :class:`ExistingCluster` on an existing cluster), ``slices``
    (:class:`TpuNodePool`, or :class:`ExistingTpuNodePool`, by slice kind), ``identity``,
    ``tenancy``, ``installs`` (the controller releases), ``observability`` (:class:`Observability`,
    None without serving or with ``observability.enabled`` false) and ``outputs`` (the stack outputs).
    """

    outputs: dict[str, Any]
    """The deployment's stack outputs (the program exports them as they are)."""

    def __init__(self, name: str, args: TpuServingDeploymentArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"TpuServingDeployment {name!r}", args, TpuServingDeploymentArgs)
        super().__init__("tpu-serving:index:TpuServingDeployment", name, None, opts)
        cfg = args.settings if isinstance(args.settings, StackConfig) else validate_stack(args.settings)
        ctx = context(name, self, cfg)
        platform = build_platform(ctx)
        pools = build_pools(ctx, platform)
        identity = build_identity(ctx, platform)
        tenancy = build_tenancy(ctx, platform, identity)
        serving = build_serving(ctx, platform, pools, identity, tenancy)
        traffic = (build_route if cfg.platform else build_traffic)(ctx, platform, identity, tenancy, serving)
        operations = build_operations(ctx, platform, tenancy, serving.built, traffic)
        costs = estimate_costs(ctx, pools)

        self.apis, self.buckets, self.cluster = platform.apis, platform.buckets, platform.cluster
        self.slices = pools.slices
        self.identity = identity.identity
        self.tenancy = tenancy.tenancy
        self.installs = serving.built.installs
        self.gateway = traffic.gateway
        self.observability = operations.observability
        self.allocation, self.cost = costs.allocation, costs.estimate
        self.outputs = {
            **serving.built.outputs,
            **traffic.outputs,
            **infrastructure_outputs(ctx, platform, pools, identity, serving, operations),
            "capacity": {
                **allocation_output(costs.allocation),
                "obtained": obtained_output(cfg),
                **({"fallback": fallback} if (fallback := fallback_output(cfg)) is not None else {}),
            },
            "quota": tenancy.tenancy.summary,
            "cost": {**cost_output(costs.estimate), **share_of(platform.cluster, costs.estimate)},
            "production": production_of(cfg, platform),
            TIME_TO_SERVE: time_to_serve(cfg),
            TOKEN_COST: token_cost(cfg, costs.estimate),
        }
        if cfg.cluster.existing is not None:
            # what the stack creates and what it names existing, each cloud resource with its key
            inventory = cloud_resources(ctx, platform, pools, identity, serving)
            self.outputs["cloudResources"] = [r.output() for r in inventory]
        self.register_outputs({k: v for k, v in self.outputs.items() if k != "kubeconfig"})
