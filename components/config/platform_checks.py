"""Checks of a model stack (``platform``, :mod:`.platform_ref`): each key that asks for what the platform stack owns
(the one-per-region resources, the cluster, the cluster-wide controllers) is refused at its key path, naming the owner.
"""

from __future__ import annotations

import json

from pydantic.alias_generators import to_camel

from ..common.settings import PROJECT_NAMESPACE
from .models import StackConfig

NS = PROJECT_NAMESPACE

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
    auto = getattr(cfg.serving, "autoscaling", None)
    if auto is not None and auto.adapter_install == "create":
        found.append(
            f'{NS}:serving.autoscaling.adapterInstall = "create": the Custom Metrics Stackdriver Adapter is one per '
            f"cluster, and the platform stack {ref} (platform.stack) installs and owns it; remove this key"
        )
    if auto is not None and "adapter_iam" in _given(auto):
        found.append(
            f"{NS}:serving.autoscaling.adapterIam: the metrics adapter's roles/monitoring.viewer grant is the platform "
            f"stack's {ref} (platform.stack, its sharedPlatform.metricsAdapterIam), as the adapter is; a model stack "
            "makes none: remove this key"
        )
    return found
