"""The ``platform`` stack output: what a platform stack gives the model stacks built on it, declared once.

A platform stack (:mod:`tpu_serving.platform.tpu_platform`) exports one output, ``platform``, of the shape :class:`PlatformOutputs`
declares; a model stack (``platform.stack`` in its stack file) reads it through a ``pulumi.StackReference`` and
validates it against the same model (:meth:`PlatformOutputs.from_output`). Both sides use this module, so the two
cannot drift apart: a field added here is exported by the one and required by the other.

A ``StackReference`` is a ``pulumi:pulumi:StackReference`` resource the engine reads (its ``id`` the referenced
stack's name), whose ``outputs`` are that stack's outputs; ``get_output`` gives None for an output the stack lacks
(pulumi 3.272.0 ``pulumi/stack_reference.py`` l.54-113). Every field here is plain data, known when the platform is
planned (the offline preview answers the reference with it): the node service account's email is its account id and
project (GCP's ``<account-id>@<project>.iam.gserviceaccount.com``,
https://cloud.google.com/iam/docs/service-account-overview, "Service account emails"), not the provider's output.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from ..common.settings import Model

OUTPUT = "platform"
"""The stack output's name."""

Owner = Literal["platform", "existing"]
"""Who owns a one-per-region-and-network resource: the platform stack creates it, or it exists already (made and
kept by someone else)."""


class ControlPlane(Model):
    """How a model stack reaches the platform's control plane."""

    endpoint: Literal["dns", "ip"] = Field(
        description="`dns`: GKE's DNS-based endpoint (the default, IAM-authorised); `ip`: the external IP endpoint."
    )
    cluster_identifier: str = Field(
        description="The cluster's resource name, `projects/<project>/locations/<location>/clusters/<name>` (the "
        "Kubernetes provider's `clusterIdentifier`, and the `cluster` of a model stack's node pools)."
    )


class SharedGateway(Model):
    """The platform's internal Gateway, which the model stacks' HTTPRoutes attach to."""

    name: str = Field(description="The Gateway's name.")
    namespace: str = Field(description="Its namespace.")
    proxy_only_cidr: str = Field(
        description="The range of the region's proxy-only subnet its proxies connect from (model stacks' "
        "NetworkPolicies admit it)."
    )
    address: str = Field(description="The name of the regional internal address the Gateway takes.")


class ControllerRelease(Model):
    """A cluster-wide controller the platform installs and owns."""

    name: str = Field(description="The controller (`lws`, `jobset`).")
    version: str = Field(description="Its release tag, e.g. `v0.10.0`.")
    api_group: str = Field(description="The API group of its custom resources.")


class CpuNodes(Model):
    """The platform's CPU node pool, where the model stacks' CPU pods (endpoint pickers, probes) run."""

    machine_type: str = Field(description="Its machine type.")
    min_nodes: int = Field(description="The nodes it keeps in each zone.")
    max_nodes: int = Field(description="The most nodes it scales to in each zone.")
    zones: list[str] = Field(description="Its zones.")


class RegionalOwners(Model):
    """Who owns the resources a region and network have one of."""

    cloud_nat: Owner = Field(description="The Cloud NAT of the cluster's private nodes.")
    proxy_only_subnet: Owner = Field(description="The proxy-only subnet of the regional internal load balancers.")


class PlatformCost(Model):
    """The platform's own cost estimate (:mod:`tpu_serving.cost.platform_cost`) and how the model stacks share it."""

    per_hour: float = Field(ge=0, description="USD per hour, unpriced items left out.")
    per_month: float = Field(ge=0, description="USD per month (730 hours).")
    unpriced: list[str] = Field(description="The items with no price, which the sums leave out.")
    shares: dict[str, float] = Field(
        description="Each model stack's share of it, by stack name (`sharedPlatform.costShares`)."
    )


class PlatformOutputs(Model):
    """The ``platform`` stack output of a platform stack."""

    stack: str = Field(description="The platform stack's name.")
    project: str = Field(description="GCP project of the cluster.")
    region: str = Field(description="Region of the cluster.")
    cluster_name: str = Field(description="The GKE cluster's name.")
    cluster_location: str = Field(description="Its location (the region: a regional cluster).")
    control_plane: ControlPlane = Field(description="How to reach the control plane.")
    network: str = Field(description="The cluster's VPC network (its name, or its path in a Shared VPC host).")
    subnetwork: str = Field(description="The nodes' subnet (its name, or its path in a Shared VPC host).")
    node_service_account: str = Field(
        description="Email of the node service account the model stacks' pools use: the platform's own, or on an "
        "existing cluster the one its stack file names (`cluster.existing.nodeServiceAccount`)."
    )
    cpu_pool: CpuNodes = Field(description="The CPU node pool the model stacks' CPU pods run on.")
    workload_pool: str = Field(description="The cluster's workload identity pool, `<project>.svc.id.goog`.")
    gateway: SharedGateway = Field(description="The shared internal Gateway.")
    controllers: list[ControllerRelease] = Field(description="The controller releases the platform installs.")
    owners: RegionalOwners = Field(description="Who owns the one-per-region-and-network resources.")
    cost: PlatformCost = Field(description="The platform's cost estimate and the model stacks' shares of it.")
    node_upgrades_held: bool = Field(
        description="Whether the cluster holds GKE's automatic node upgrades back: a maintenance exclusion of the "
        "created cluster (scope NO_UPGRADES or NO_MINOR_OR_NODE_UPGRADES), or `cluster.existing.nodeUpgradesHeld` of "
        "an existing one. A model stack whose groups each reload longer than GKE's upgrade wait needs it "
        "(its production gap, its upgrade notices)."
    )

    def to_output(self) -> dict[str, Any]:
        """The stack output: camelCase keys, plain JSON values."""
        return self.model_dump(by_alias=True, mode="json")

    @classmethod
    def from_output(cls, value: object, stack: str) -> PlatformOutputs:
        """The ``platform`` output of stack ``stack`` as read through a ``StackReference``; a ``ValueError`` saying
        what is wrong when the stack exports none, or one of another shape (another release's platform)."""
        if value is None:
            raise ValueError(
                f"stack {stack!r} exports no `{OUTPUT}` output: platform.stack must name a platform stack (a stack "
                "file with sharedPlatform) that has been deployed"
            )
        try:
            return cls.model_validate(value)
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors())
            raise ValueError(f"stack {stack!r}: its `{OUTPUT}` output is not a platform's: {problems}") from None

    def controller(self, name: str) -> ControllerRelease | None:
        """The platform's release of controller ``name``, if it installs one."""
        return next((c for c in self.controllers if c.name == name), None)
