"""``scope``: resources the cloud allows once per scope, over a set of stacks that share projects.

Each stack previews alone, so a clash between two stacks (two active proxy-only subnets in one region
and network, two service accounts with one ID in one project) shows only when the stacks are looked at
together: ``make check`` evaluates every stack it checks as one set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.runtime import gcp_facts as facts
from tpu_serving_tools.runtime.planview import UNKNOWN, PlanView
from tpu_serving_tools.runtime.result import CategoryResult, Finding

Key = tuple[str, ...]


@dataclass(frozen=True)
class OnePerScope:
    """A resource type of which at most one may exist per value of ``key`` (None: not subject)."""

    what: str
    type: str
    key: Callable[[Mapping[str, Any], PlanView], Key | None]
    source: str


def _fields(*names: str) -> Callable[[Mapping[str, Any], PlanView], Key | None]:
    def key(inputs: Mapping[str, Any], view: PlanView) -> Key | None:
        values = tuple(str(inputs.get(n, "")) for n in names)
        return None if any(v in ("", UNKNOWN) for v in values) else values

    return key


def _active_proxy_only(inputs: Mapping[str, Any], view: PlanView) -> Key | None:
    if inputs.get("purpose") not in facts.PROXY_ONLY_PURPOSES or inputs.get("role", "ACTIVE") != "ACTIVE":
        return None
    return _fields("project", "region", "network", "purpose")(inputs, view)


def _nat_of_every_range(inputs: Mapping[str, Any], view: PlanView) -> Key | None:
    """(project, region, network) of a Cloud NAT serving every subnet range, its network read off its Router."""
    if inputs.get("sourceSubnetworkIpRangesToNat") != "ALL_SUBNETWORKS_ALL_IP_RANGES":
        return None
    router = next((r for r in view.of_type(ROUTER) if r["inputs"].get("name") == inputs.get("router")), None)
    network = str(router["inputs"].get("network", "")).rsplit("/", 1)[-1] if router else ""
    project, region = str(inputs.get("project", "")), str(inputs.get("region", ""))
    return (
        None
        if UNKNOWN in (project, region, network) or "" in (project, region, network)
        else (project, region, network)
    )


ROUTER = "gcp:compute/router:Router"


SCOPED: tuple[OnePerScope, ...] = (
    OnePerScope(
        "active proxy-only subnet per (project, region, network, purpose)",
        "gcp:compute/subnetwork:Subnetwork",
        _active_proxy_only,
        facts.PROXY_ONLY_SUBNETS,
    ),
    OnePerScope(
        "Cloud NAT of every subnet range per (project, region, network)",
        "gcp:compute/routerNat:RouterNat",
        _nat_of_every_range,
        facts.NAT_PER_SUBNET_RANGE,
    ),
    OnePerScope(
        "subnetwork name per (project, region)",
        "gcp:compute/subnetwork:Subnetwork",
        _fields("project", "region", "name"),
        facts.COMPUTE_NAMES,
    ),
    OnePerScope(
        "GKE cluster name per (project, location)",
        "gcp:container/cluster:Cluster",
        _fields("project", "location", "name"),
        facts.GKE_NAMES,
    ),
    OnePerScope(
        "service account ID per project",
        "gcp:serviceaccount/account:Account",
        _fields("project", "accountId"),
        facts.IAM_ACCOUNT_ID,
    ),
    OnePerScope(
        "bucket name (global)",
        "gcp:storage/bucket:Bucket",
        _fields("name"),
        facts.GCS_BUCKET_NAMES,
    ),
)
"""What the cloud holds once per scope, with the source that says so."""


def check(plans: Sequence[tuple[str, PlanView]]) -> CategoryResult:
    """One finding per scoped resource the stacks create: unique in its scope, or which stacks clash."""
    found: list[Finding] = []
    for rule in SCOPED:
        owners: dict[Key, list[str]] = {}
        for label, view in plans:
            for r in view.of_type(rule.type):
                key = rule.key(r["inputs"], view)
                if key is not None:
                    owners.setdefault(key, []).append(f"{label}/{r['name']}")
        for key, who in sorted(owners.items()):
            subject = f"scope {rule.what}: {'/'.join(key)}"
            found.append(
                Finding(subject, True, f"only {who[0]}")
                if len(who) == 1
                else Finding(subject, False, f"created by {len(who)} stacks: {', '.join(who)} ({rule.source})")
            )
    return CategoryResult("scope", found)
