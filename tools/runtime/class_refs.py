"""The references of a plan's ComputeClasses: each pool a class names first is a node pool of the plan, and each zone
it gives GKE's fallback slices is a zone of the plan's created pools (new-user review of the capacity fallback, M1: a
program's class naming a pool it lacks, or a zone of another region, passed preview and check, and could never
serve). GKE's own pools of a priority are named in ``nodepools`` ("PriorityDefaults doesn't apply to priorities with
only Nodepools": the CRD in the reference folder), and ``priorityDefaults.location.zones`` holds the zones in which
GKE creates a priority's pools (the same CRD: "zones considered for node autoprovisioning")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime.identity import resolve_account
from tpu_serving_tools.runtime.node_pool import COMPUTE_CLASS_TYPE
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling import node_pools


def _spec(r: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    inputs = r.get("inputs") or {}
    return str((inputs.get("metadata") or {}).get("name")), dict(inputs.get("spec") or {})


def _ref(name: str, what: tuple[str, str], known: set[str], held: str, missing: str) -> Finding:
    """The finding of the class ``name``'s reference ``what`` (a kind and a value: "node pool", "v6e8c"): ``held``
    when the plan's ``known`` set has the value, else ``missing``."""
    ok = what[1] in known
    return Finding(f"ref ComputeClass {name} -> {what[0]} {what[1]}", ok, held if ok else missing)


def _pool(name: str, pool: str, pools: set[str]) -> Finding:
    return _ref(
        name,
        ("node pool", pool),
        pools,
        "a node pool of the plan",
        f"the plan has no such node pool (its pools: {', '.join(sorted(pools)) or 'none'}): the class's first "
        "priority holds no slice, and every group takes a fallback step",
    )


def _zone(name: str, zone: str, zones: set[str]) -> Finding:
    return _ref(
        name,
        ("zone", zone),
        zones,
        "a zone of the plan's pools",
        f"no pool of the plan is in {zone} (theirs: {', '.join(sorted(zones))}): GKE makes no fallback slice there "
        "for this cluster's groups (TpuComputeClassArgs.zones: the serving slices' zones)",
    )


def _account_findings(view: PlanView, r: Mapping[str, Any], name: str, spec: Mapping[str, Any]) -> list[Finding]:
    """A ``ref ComputeClass`` finding per plan pool the class names first: it runs as the class's
    ``nodePoolConfig.serviceAccount``, as GKE matches a pool with the class "only if their configuration match this
    field" (the CRD's ``spec.nodePoolConfig``; GKE review of the capacity fallback, Blocker: three of four pools ran
    as accounts of their own). None where the class names no account (an existing cluster's pools); a named pool the
    plan lacks fails as :func:`_pool`."""
    given = (spec.get("nodePoolConfig") or {}).get("serviceAccount")
    if given is None:
        return []
    want = resolve_account(view, r, "spec", str(given))
    named = {str(p) for step in spec.get("priorities") or () for p in step.get("nodepools") or ()}
    out = []
    for pool in view.of_type(NODE_POOL):
        pool_name = str((pool.get("inputs") or {}).get("name") or pool.get("name"))
        if pool_name not in named:
            continue
        config = (pool.get("inputs") or {}).get("nodeConfig") or {}
        runs = resolve_account(view, pool, "nodeConfig", str(config.get("serviceAccount", "")))
        out.append(
            Finding(
                f"ref ComputeClass {name} -> node account of pool {pool_name}",
                runs == want,
                "the class's nodePoolConfig.serviceAccount"
                if runs == want
                else f"runs as {runs}, the class names {want}: GKE matches the pool with the class only where its "
                "configuration matches the class's nodePoolConfig, so the pool takes none of the class's groups",
            )
        )
    return out


def findings(view: PlanView) -> list[Finding]:
    """A ``ref ComputeClass`` finding per pool and per zone the plan's classes name (zones only where the plan creates
    pools with locations: on an existing cluster's pools it has none to compare with)."""
    pools = {p.name for p in node_pools(view)}
    zones = {str(z) for r in view.of_type(NODE_POOL) for z in (r.get("inputs") or {}).get("nodeLocations") or ()}
    out = []
    for r in view.of_type(COMPUTE_CLASS_TYPE):
        name, spec = _spec(r)
        out += [
            _pool(name, str(p), pools) for step in spec.get("priorities") or () for p in step.get("nodepools") or ()
        ]
        location = ((spec.get("priorityDefaults") or {}).get("location") or {}).get("zones") or ()
        out += [_zone(name, str(z), zones) for z in location if zones]
        out += _account_findings(view, r, name, spec)
    return out
