"""A model stack on a platform stack: the stack file's ``platform`` key, and what it refuses beside it.

A model stack (``platform: {stack: <org>/<project>/<stack>}``) reads the platform's ``platform`` output through a
``pulumi.StackReference`` (:mod:`tpu_serving.platform_outputs`) and builds only its own part on the platform's cluster:
its TPU node pools, namespace, identity, serving, route and alerts. What the platform owns, the one-per-region
resources (the Cloud NAT, the proxy-only subnet), the cluster and the cluster-wide controllers, the model stack must
not ask for: each such key is refused at its key path, naming the owner.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import Field
from pydantic.alias_generators import to_camel

from ..settings import PROJECT_NAMESPACE, Model

if TYPE_CHECKING:
    from .models import StackConfig

NS = PROJECT_NAMESPACE

STACK_REFERENCE = r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A fully qualified Pulumi stack name, ``<organization>/<project>/<stack>``: a ``StackReference`` names another
project's stack in that form (pulumi 3.x ``pulumi/stack_reference.py`` l.75-100, ``stack_name``), and stack names
hold alphanumerics, ``-``, ``_`` and ``.``."""


class PlatformRefConfig(Model):
    """The platform stack a model stack is built on."""

    stack: str = Field(
        description="The platform stack, fully qualified: `<organization>/<project>/<stack>` (e.g. "
        "`my-org/tpu-serving/platform-us-east5`), read through a Pulumi StackReference. The platform owns the "
        "cluster, its CPU pool, the Cloud NAT, the proxy-only subnet, the controllers and the shared Gateway; "
        "the model stack creates its TPU node pools, namespace, identity, serving and route. The offline preview "
        "answers the reference with the platform stack file's own preview (stacks/Pulumi.<stack>.yaml).",
        pattern=STACK_REFERENCE,
        min_length=5,
        max_length=200,
    )

    cluster: str = Field(
        description="The platform's GKE cluster (its `cluster.name`), which the stack's log-based metrics, alerts and "
        "dashboard filter on; the preview and `pulumi up` fail when the platform's output names another.",
        min_length=1,
        max_length=40,
        pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
    )

    @property
    def stack_name(self) -> str:
        """The stack's own name, the last part (its stack file is ``Pulumi.<stack_name>.yaml``)."""
        return self.stack.rsplit("/", 1)[-1]

    @property
    def project(self) -> str:
        """The Pulumi project of the stack, the middle part."""
        return self.stack.split("/")[1]


PLATFORM_CLUSTER_KEYS: tuple[str, ...] = ("name", "security_group")
"""``cluster`` keys a model stack sets: ``name``, the prefix of the names it gives its own resources (its pools,
accounts and buckets), and ``securityGroup``, which its RBAC names. Every other shapes or names the platform's cluster."""

ONE_PER_REGION = "one per region and network"


def _owned(key: str, value: object, what: str, ref: str) -> str:
    return (
        f"{key} = {json.dumps(value, default=str)}: {what} is {ONE_PER_REGION}, and the platform stack {ref} "
        f"(platform.stack) owns it; a model stack creates none: remove this key"
    )


def _given(model: object) -> set[str]:
    """The keys the stack file sets on a settings model (none for None); mypy sees a generated model as the dataclass
    it mirrors (:mod:`.models`)."""
    return set(getattr(model, "model_fields_set", ()))


def platform_problems(cfg: StackConfig) -> list[str]:
    """Every key of a model stack (``platform`` set) that asks for what the platform owns, at its key path."""
    if cfg.platform is None:
        return []
    ref, c = cfg.platform.stack, cfg.cluster
    found: list[str] = []
    if c.existing is not None:
        found.append(
            f"{NS}:cluster.existing: the cluster is the platform stack's {ref} (platform.stack), read from its "
            "outputs; give one of the two"
        )
    if "cloud_nat" in c.model_fields_set:
        found.append(_owned(f"{NS}:cluster.cloudNat", str(c.cloud_nat), "the cluster's Cloud NAT", ref))
    found += [
        f"{NS}:cluster.{to_camel(name)}: shapes the platform's cluster, which the platform stack {ref} "
        f"(platform.stack) owns; a model stack sets only cluster.{', cluster.'.join(map(to_camel, PLATFORM_CLUSTER_KEYS))}"
        ": remove this key"
        for name in sorted(c.model_fields_set - {"cloud_nat", "existing", *PLATFORM_CLUSTER_KEYS})
    ]
    g, given = cfg.gateway, _given(cfg.gateway)
    if g is not None and "create_proxy_only_subnet" in given and g.create_proxy_only_subnet:
        found.append(_owned(f"{NS}:gateway.createProxyOnlySubnet", True, "the proxy-only subnet", ref))
    if g is not None:
        found += [
            f"{NS}:gateway.{to_camel(name)}: names the Gateway's address, and the Gateway is the platform stack's "
            f"{ref} (platform.stack): remove this key"
            for name in ("existing_address", "existing_address_ip", "address_subnetwork")
            if name in given
        ]
    installs = cfg.controller_installs
    found += [
        f'{NS}:controllerInstalls.{to_camel(name)} = "create": the cluster-wide controllers are the platform '
        f"stack's {ref} (platform.stack), which installs and owns them; remove this key"
        for name in ("lws", "jobset", "pathways_job")
        if getattr(installs, name) == "create"
    ]
    found += [
        f"{NS}:tpuSlices[{i}].existingNodePools: a model stack creates its own node pools on the platform's cluster; "
        "remove this key"
        for i, s in enumerate(cfg.tpu_slices)
        if s.existing_node_pools is not None
    ]
    return found
