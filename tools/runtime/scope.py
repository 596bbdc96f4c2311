"""``scope``: resources the cloud allows once per scope, over a set of stacks that share projects.

Each stack previews alone, so a clash between two stacks (two active proxy-only subnets in one region
and network, two service accounts with one ID in one project, two subnets of one network whose ranges overlap in
any region) shows only when the stacks are looked at together: ``make check`` evaluates every stack it checks as one
set.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.gcp_types import NODE_POOL, SUBNETWORK
from tpu_serving_tools.runtime import gcp_facts as facts
from tpu_serving_tools.runtime.node_pool import pool_size
from tpu_serving_tools.runtime.planview import UNKNOWN, PlanView
from tpu_serving_tools.runtime.prereqs import declared_existing_nat
from tpu_serving_tools.runtime.result import CategoryResult, Finding

Key = tuple[str, ...]


@dataclass(frozen=True)
class OnePerScope:
    """A resource type of which at most one may exist per value of ``key`` (None: not subject)."""

    what: str
    type: str
    key: Callable[[Mapping[str, Any], PlanView], Key | None]
    source: str
    remedy: str = ""
    """What to do about two, when there is a way to share one."""


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


_NAMED_AFTER_CLUSTER = (
    "; a stack names its cluster, service accounts, buckets, log-based metrics and subnets after its cluster.name: "
    "give each stack of a project its own (docs/add-your-own-model.md, step 2)"
)

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
        # new-user review 16, m4: the remedy was only in docs/add-your-own-model.md
        "; share one: every stack but one sets cluster.cloudNat: existing with cluster.existingNatRouter and "
        "cluster.existingNat naming the first's router and NAT (docs/add-your-own-model.md, step 2)",
    ),
    OnePerScope(  # library review 8, M3: two gateways given one address name passed; the second create gets 409
        "address name per (project, region)",
        "gcp:compute/address:Address",
        _fields("project", "region", "name"),
        facts.COMPUTE_NAMES,
    ),
    OnePerScope(
        "subnetwork name per (project, region)",
        "gcp:compute/subnetwork:Subnetwork",
        _fields("project", "region", "name"),
        facts.COMPUTE_NAMES,
        _NAMED_AFTER_CLUSTER,
    ),
    OnePerScope(
        "GKE cluster name per (project, location)",
        "gcp:container/cluster:Cluster",
        _fields("project", "location", "name"),
        facts.GKE_NAMES,
        _NAMED_AFTER_CLUSTER,
    ),
    OnePerScope(
        "service account ID per project",
        "gcp:serviceaccount/account:Account",
        _fields("project", "accountId"),
        facts.IAM_ACCOUNT_ID,
        _NAMED_AFTER_CLUSTER,
    ),
    OnePerScope(
        "log-based metric name per project",
        "gcp:logging/metric:Metric",
        _fields("project", "name"),
        facts.LOG_METRIC_NAMES,
        _NAMED_AFTER_CLUSTER,
    ),
    OnePerScope(
        "bucket name (global)",
        "gcp:storage/bucket:Bucket",
        _fields("name"),
        facts.GCS_BUCKET_NAMES,
        _NAMED_AFTER_CLUSTER,
    ),
)
"""What the cloud holds once per scope, with the source that says so."""


def _nats_made(plans: Sequence[tuple[str, PlanView]]) -> dict[Key, list[tuple[str, str, str]]]:
    """(project, region, network) -> (stack, router, NAT) of each Cloud NAT serving every range a stack makes."""
    made: dict[Key, list[tuple[str, str, str]]] = {}
    for label, view in plans:
        for r in view.of_type("gcp:compute/routerNat:RouterNat"):
            key = _nat_of_every_range(r["inputs"], view)
            if key is not None:
                made.setdefault(key, []).append((label, str(r["inputs"].get("router")), str(r["inputs"].get("name"))))
    return made


MUST_EXIST = "made by none of the checked stacks: it must exist already"
"""A stack's existing Cloud NAT no checked stack makes: its precondition, which ``check`` prints as a note (new-user
review 15, M1: a stack checked alone passed, its NAT said "found")."""


def existing_nat_findings(plans: Sequence[tuple[str, PlanView]]) -> list[Finding]:
    """Each stack that names an existing Cloud NAT (``cluster.cloudNat: existing``) against the NATs the checked
    stacks make in its project, region and network: the one it names (deploy that stack first), none (it must
    exist already), or others only (it names the wrong one, and its nodes would have no way out)."""
    made, found = _nats_made(plans), []
    for label, view in plans:
        existing = declared_existing_nat(view)
        if existing is None:
            continue
        network, *named_nat = existing
        key = (str(view.setting("project")), str(view.setting("region")), network)
        named = tuple(named_nat)
        makers = made.get(key, [])
        subject = f"scope existing Cloud NAT of {label}: {'/'.join(named)}"
        owner = next((m[0] for m in makers if (m[1], m[2]) == named), None)
        if owner:
            found.append(Finding(subject, True, f"made by stack {owner}: deploy it first"))
        elif makers:
            others = ", ".join(f"{m[0]} makes {m[1]}/{m[2]}" for m in makers)
            found.append(
                Finding(subject, False, f"not the NAT of {'/'.join(key)}: {others} ({facts.NAT_PER_SUBNET_RANGE})")
            )
        else:
            found.append(Finding(subject, True, MUST_EXIST))
    return found


@dataclass(frozen=True)
class Claim:
    """A node pool that consumes a specific reservation: its stack, name, machine type and most nodes."""

    stack: str
    pool: str
    machine_type: str
    nodes: int


def _claims(plans: Sequence[tuple[str, PlanView]]) -> dict[Key, list[Claim]]:
    """(project, zone, reservation) -> the node pools of the stacks that consume that specific reservation."""
    out: dict[Key, list[Claim]] = {}
    for label, view in plans:
        for r in view.of_type(NODE_POOL):
            inputs = r["inputs"]
            config = inputs.get("nodeConfig") or {}
            affinity = config.get("reservationAffinity") or {}
            names: list[Any] = list(affinity.get("values") or ())
            zones: list[Any] = list(inputs.get("nodeLocations") or ())
            if affinity.get("consumeReservationType") != "SPECIFIC_RESERVATION" or len(names) != 1 or len(zones) != 1:
                continue
            nodes = pool_size(inputs).most
            key = (str(inputs.get("project", view.setting("project"))), str(zones[0]), str(names[0]))
            claim = Claim(label, str(inputs.get("name")), str(config.get("machineType")), int(nodes))
            out.setdefault(key, []).append(claim)
    return out


def reservation_findings(plans: Sequence[tuple[str, PlanView]]) -> tuple[list[Finding], list[str]]:
    """Each specific reservation that two or more of the stacks consume (new-user review 11, m2: a copied
        production stack claimed the same reservations as the original): a failure when their machine types differ (a
        specific reservation holds VMs of one machine type, its ``specificReservation.instanceProperties.machineType``
        (Compute Engine REST v1 ``reservations``), and a VM consumes it only when it matches the reservation's properties:
        https://cloud.google.com/compute/docs/instances/reservations-consume, read 2026-12-01), else a warning with the VMs each claims, which the reservation must
        hold together. One stack's own pools sharing a reservation (a spare beside its group) are its design, unless their
    machine types differ (library review 7, M6: a program's second serving given the first's reservations)."""
    findings, warnings = [], []
    for key, claims in sorted(_claims(plans).items()):
        stacks = sorted({c.stack for c in claims})
        said = ", ".join(f"{c.stack}/{c.pool} ({c.machine_type}, up to {c.nodes} VMs)" for c in claims)
        subject = f"scope specific reservation {'/'.join(key)}"
        if len({c.machine_type for c in claims}) > 1:  # one plan's pools too (library review 7, M6)
            findings.append(Finding(subject, False, f"consumed with different machine types: {said}"))
        elif len(stacks) > 1:
            warnings.append(
                f"  warning [scope] {subject}: consumed by {len(stacks)} stacks: {said}; it must hold "
                f"{sum(c.nodes for c in claims)} VMs for all of them at once, else one stack's slices wait"
            )
    return findings, warnings


def _created_by(who: Sequence[str]) -> str:
    """``created by N stacks``, or, all of one program (``<stack>/<resource>``), ``created N times in <stack>`` (library
    review 7, m5: two resources of one program were called two stacks)."""
    stacks = {w.split("/", 1)[0] for w in who}
    return f"created {len(who)} times in {stacks.pop()}" if len(stacks) == 1 else f"created by {len(stacks)} stacks"


ROUTE_TIES = (
    "Gateway API v1.3.0 HTTPRoute CRD, gateway-api-v1.3.0-httproutes-crd.yaml l.2176-2194 of the reference copy: two "
    "routes' equal matches tie, and 'The oldest Route based on creation timestamp' takes every such request"
)


def _cluster_of(label: str, view: PlanView) -> str:
    """The cluster a plan's Kubernetes objects go to: its Kubernetes provider's ``clusterIdentifier`` when the plan
    knows it (a model stack: its platform's cluster), else the stack's own (a cluster it creates is its alone)."""
    for provider in view.of_type("pulumi:providers:kubernetes"):
        ident = provider["inputs"].get("clusterIdentifier")
        if isinstance(ident, str) and ident not in ("", UNKNOWN):
            return ident
    return f"the cluster of stack {label}"


def route_findings(plans: Sequence[tuple[str, PlanView]]) -> list[Finding]:
    """One finding per request match of an HTTPRoute on a Gateway: taken by one route, or tied between several
    (one Gateway shared by model stacks: each route must take requests the others do not)."""
    owners: dict[Key, list[str]] = {}
    for label, view in plans:
        cluster = _cluster_of(label, view)
        for route in view.kubernetes_objects("HTTPRoute"):
            meta, spec = route["metadata"], route.get("spec") or {}
            rules = spec.get("rules") or ()
            matches = [json.dumps(m, sort_keys=True) for r in rules for m in r.get("matches") or [{}]]
            for parent in spec.get("parentRefs") or ():
                gateway = f"{parent.get('namespace', meta.get('namespace', 'default'))}/{parent['name']}"
                for match in matches:
                    owners.setdefault((cluster, gateway, match), []).append(f"{label}/{meta['name']}")
    found = []
    for (cluster, gateway, match), who in sorted(owners.items()):
        subject = f"scope request match per Gateway: {cluster} {gateway} {match}"
        found.append(
            Finding(subject, True, f"only {who[0]}")
            if len(who) == 1
            else Finding(subject, False, f"taken by {len(who)} routes: {', '.join(who)} ({ROUTE_TIES})")
        )
    return found


def _ranges(inputs: Mapping[str, Any]) -> list[str]:
    """A subnet's primary range and its secondary ranges, as the plan gives them."""
    secondary = [str(r.get("ipCidrRange", "")) for r in inputs.get("secondaryIpRanges") or ()]
    return [r for r in (str(inputs.get("ipCidrRange", "")), *secondary) if r and r != UNKNOWN]


def range_findings(plans: Sequence[tuple[str, PlanView]]) -> list[Finding]:
    """One finding per range of a subnet the stacks create: no other subnet of its network, in any region, holds an
    address of it (two stacks in one project on network ``default``, in two regions, each made its proxy-only subnet
    on 192.168.2.0/23: whichever went up second failed)."""
    held: dict[Key, list[tuple[str, ipaddress.IPv4Network | ipaddress.IPv6Network]]] = {}
    for label, view in plans:
        for r in view.of_type(SUBNETWORK):
            inputs = r["inputs"]
            network = str(inputs.get("network", "")).rsplit("/", 1)[-1]
            project = str(inputs.get("project", ""))
            if UNKNOWN in (project, network) or "" in (project, network):
                continue
            for cidr in _ranges(inputs):
                held.setdefault((project, network), []).append((f"{label}/{r['name']}", ipaddress.ip_network(cidr)))
    found = []
    for (project, network), ranges in sorted(held.items()):
        for who, net in ranges:
            clash = [
                f"{other} {o}" for other, o in ranges if other != who and o.version == net.version and o.overlaps(net)
            ]
            subject = f"scope subnet range per network: {project}/{network} {net} ({who})"
            found.append(
                Finding(
                    subject,
                    not clash,
                    f"overlaps {', '.join(clash)} ({facts.SUBNET_RANGES_UNIQUE})" if clash else "unique",
                )
            )
    return found


def check(plans: Sequence[tuple[str, PlanView]]) -> CategoryResult:
    """One finding per scoped resource the stacks create: unique in its scope, or which stacks clash; and each
    named existing Cloud NAT against the NATs the stacks make."""
    found: list[Finding] = existing_nat_findings(plans)
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
                else Finding(subject, False, f"{_created_by(who)}: {', '.join(who)} ({rule.source}){rule.remedy}")
            )
    return CategoryResult(
        "scope", found + range_findings(plans) + route_findings(plans) + reservation_findings(plans)[0]
    )
