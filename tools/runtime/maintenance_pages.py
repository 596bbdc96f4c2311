"""The host-maintenance pages against the plan's TPU node pools.

Compute Engine's upcoming-maintenance notice names a VM, not its node pool or namespace, so the pages
(:func:`tpu_serving.operations.maintenance.host_maintenance.policy_args`, :func:`~tpu_serving.operations.maintenance.host_maintenance.unscheduled_policy_args`)
filter on the project and zones (:data:`tpu_serving.operations.maintenance.host_maintenance.PENDING` cites the entry). Two of a kind whose
zones meet page twice for one VM, each with its own text: a program whose namespaces' slices share a zone gives that
zone's pages to one ``Observability`` (library review 8, M1: the check compared the conditions' exact JSON, so it
caught the pages only when both zone sets were equal). And what a page tells on-call of a manual start (its
:data:`~tpu_serving.operations.maintenance.host_maintenance.MANUAL_START_LABEL`) must hold for every pool in its zones, which Cloud TPU lists
for some shapes only (:func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`; library review 8, M4: a page told
on-call to start maintenance on single-host v6e pools).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from itertools import combinations
from typing import Any

from tpu_serving import catalog
from tpu_serving.operations.maintenance.host_maintenance import (
    GATE_TITLE,
    MANUAL_START_LABEL,
    UNSCHEDULED,
    UPCOMING_METHOD,
    WATCH_TITLE,
    all_startable,
    manual_start_value,
)
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime.gcp_facts import ALERT_POLICY
from tpu_serving_tools.runtime.maintenance import gate_environments, gates
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import Finding

ZONE = re.compile(r'resource\.labels\.zone="([^"]+)"')
GATE_NAMESPACE = re.compile(r'resource\.labels\.namespace_name="([^"]+)"')
ONCE = (
    "give each zone's maintenance pages to one Observability: ObservabilityArgs.maintenance_zones holding every "
    "namespace's serving zones on one of them, () on the others, and maintenance_shapes holding every slice's shape "
    "in those zones (the pages then tell which pools take a manual start)"
)


def _page(r: Mapping[str, Any]) -> tuple[bool, frozenset[str]] | None:
    """(unscheduled, zones) of an upcoming-maintenance policy; None for any other."""
    for c in r["inputs"].get("conditions") or ():
        text = str((c.get("conditionMatchedLog") or {}).get("filter", ""))
        if f'methodName="{UPCOMING_METHOD}"' in text:
            unscheduled = f'metadata.type="{UNSCHEDULED}"' in text.replace(
                f'NOT protoPayload.metadata.type="{UNSCHEDULED}"', ""
            )
            return unscheduled, frozenset(ZONE.findall(text))
    return None


def tpu_pool_resources(view: PlanView) -> Iterator[tuple[Mapping[str, Any], catalog.SliceShape]]:
    """Each TPU node pool the plan creates and its slice, read back from its machine type and topology
    (:func:`tpu_serving.catalog.pool_slice`)."""
    for r in view.of_type(NODE_POOL):
        inputs = r["inputs"]
        machine = str((inputs.get("nodeConfig") or {}).get("machineType"))
        shape = catalog.pool_slice(machine, (inputs.get("placementPolicy") or {}).get("tpuTopology"))
        if shape is not None:
            yield r, shape


def tpu_pools(view: PlanView) -> Iterator[tuple[str, str, frozenset[str], catalog.SliceShape]]:
    """(project, pool, zones, shape) of each TPU node pool the plan creates (:func:`tpu_pool_resources`)."""
    for r, shape in tpu_pool_resources(view):
        inputs = r["inputs"]
        name = str(inputs.get("name") or r["name"])
        yield str(inputs.get("project", "")), name, frozenset(inputs.get("nodeLocations") or ()), shape


def is_page(r: Mapping[str, Any]) -> bool:
    return _page(r) is not None


def _claim(r: Mapping[str, Any], zones: frozenset[str], pools: list[tuple[str, str, frozenset[str], Any]]) -> Finding:
    """What the policy tells of a manual start against the plan's pools in its zones."""
    project = str(r["inputs"].get("project", ""))
    here = [(name, shape) for p, name, z, shape in pools if p == project and z & zones]
    subject = f"maintenance page {r['name']} ({', '.join(sorted(zones))}): manual start"
    said = (r["inputs"].get("userLabels") or {}).get(MANUAL_START_LABEL)
    if not here:
        return Finding(subject, True, "the plan creates no TPU pool in its zones (an existing cluster's): not compared")
    expected = manual_start_value(all_startable(shape for _, shape in here))
    pools_said = ", ".join(sorted(name for name, _ in here))
    if said == expected:
        return Finding(subject, True, f"says '{said}', as pools {pools_said} are")
    return Finding(
        subject,
        False,
        f"says '{said}' ({MANUAL_START_LABEL}), but of pools {pools_said} in its zones {expected} take one (Cloud TPU "
        "lists a manual start for v4, v5p and multi-host v5e and v6e only): on-call would be told to start "
        "maintenance that does not start, or to wait for one they could start; give ObservabilityArgs."
        "maintenance_shapes the shapes of every slice in those zones (or, for this namespace's alone, "
        f"maintenance_startable={expected == 'all'})",
    )


def findings(view: PlanView) -> list[Finding]:
    """Per maintenance page, its manual-start claim; per two pages of a kind whose zones meet, a duplicate."""
    pools = list(tpu_pools(view))
    pages = [(r, p) for r in view.of_type(ALERT_POLICY) if (p := _page(r)) is not None]
    out = [_claim(r, zones, pools) for r, (_, zones) in pages]
    for (a, (ua, za)), (b, (ub, zb)) in combinations(pages, 2):
        shared = za & zb
        if ua == ub and shared and a["inputs"].get("project") == b["inputs"].get("project"):
            out.append(
                Finding(
                    f"declared twice AlertPolicy {a['name']}",
                    False,
                    f"{a['name']} and {b['name']} both page on the {'unscheduled ' if ua else ''}maintenance notices "
                    f"of VMs in {', '.join(sorted(shared))}: one VM's notice opens an incident on each, with its own "
                    f"text; {ONCE}",
                )
            )
    return out


def unpaged_findings(view: PlanView) -> list[Finding]:
    """In a plan that has alert policies, each gate has its pages and each TPU pool's zones a maintenance page (library
    review 10, M1: ``ObservabilityArgs.maintenance_gate`` left False beside a running gate dropped its "Serving group
    lost" and "gate silent" pages, and ``maintenance_zones=()`` the zone pages, and the check passed). A plan with no
    alert policy at all is the production category's (no ``Observability``)."""
    policies = view.of_type(ALERT_POLICY)
    if not policies:
        return []
    paged = {ns for r in policies if (ns := _gate_page_namespace(r)) is not None}
    out = []
    for g in gates(view):
        subject = f"maintenance page of the gate {g.namespace}/{g.name}"
        if g.namespace in paged:
            out.append(Finding(subject, True, "its decisions and its silence page"))
        else:
            why = (
                "the gate runs, but no alert policy pages its decisions (a serving group lost, a second one going to "
                "maintenance) or its silence: nobody is told; pass maintenance_gate=True to that namespace's "
                "ObservabilityArgs"
            )
            out.append(Finding(subject, False, why))
    covered = frozenset().union(*(p[1] for r in policies if (p := _page(r)) is not None and not p[0]))
    for _, name, zones, _ in tpu_pools(view):
        subject = f"maintenance page of TPU pool {name}"
        if zones and zones <= covered:
            out.append(
                Finding(subject, True, f"its zones {', '.join(sorted(zones))} have an upcoming-maintenance page")
            )
        elif zones:
            missing = ", ".join(sorted(zones - covered))
            why = (
                f"no upcoming-maintenance page covers {missing}: a host maintenance scheduled there pages nobody; give "
                "the zones to one Observability's maintenance_zones"
            )
            out.append(Finding(subject, False, why))
    return out


def _gate_page_namespace(r: Mapping[str, Any]) -> str | None:
    """The namespace of a gate page (its title the gate's or the watcher's), or None for another policy."""
    title = str(r["inputs"].get("displayName", ""))
    if not (title.endswith(GATE_TITLE) or title.endswith(WATCH_TITLE)):
        return None
    conditions = r["inputs"].get("conditions") or ()
    where = GATE_NAMESPACE.search(
        str(((conditions[0] if conditions else {}).get("conditionMatchedLog") or {}).get("filter", ""))
    )
    return None if where is None else where[1]


def gate_page_findings(view: PlanView) -> list[Finding]:
    """Per gate page (:func:`tpu_serving.operations.maintenance.host_maintenance.gate_policy_args`), its wording against the gate CronJob of
    its namespace: a gate that starts maintenance (``STARTS``) pages as one, a watching gate as a watcher (library
    review 9, M5: a page told on-call the gate only watches while it started maintenance)."""
    starts = {g.namespace: g.starts for g in gates(view)}
    out = []
    for r in view.of_type(ALERT_POLICY):
        ns = _gate_page_namespace(r)
        if ns is None:
            continue
        said, subject = (
            str(r["inputs"].get("displayName", "")).endswith(GATE_TITLE),
            f"maintenance page {r['name']}: its gate",
        )
        if ns not in starts:
            out.append(Finding(subject, False, f"pages for the gate of namespace {ns}, which the plan has not"))
        elif starts[ns] == said:
            out.append(Finding(subject, True, f"{'starts' if said else 'watches'}, as the page says"))
        else:
            out.append(
                Finding(
                    subject,
                    False,
                    f"says the gate of namespace {ns} {'starts' if said else 'only watches'} maintenance, but its "
                    f"CronJob's STARTS is {str(starts[ns]).lower()}: set that namespace's ObservabilityArgs."
                    f"maintenance_startable={starts[ns]} (the gate's starts); the zone pages take "
                    "maintenance_shapes",
                )
            )
    return out


FALLBACK_FIELD = "jsonPayload.fallback:"
NAMESPACE = re.compile(r'resource\.labels\.namespace_name="([^"]+)"')


def fallback_ticket_findings(view: PlanView) -> list[Finding]:
    """In a plan that has alert policies, each gate that watches a capacity fallback's ComputeClass (its CronJob's
    ``COMPUTE_CLASS``) has a ticket on its run line's ``fallback`` field in its namespace, and each such ticket a gate
    to write the field (SRE review of the capacity fallback, M1: a group on a fallback slice told nobody; a ticket with
    no such gate can never fire)."""
    policies = view.of_type(ALERT_POLICY)
    if not policies:
        return []
    filters = [str((c.get("conditionMatchedLog") or {}).get("filter", "")) for r in policies for c in
               r["inputs"].get("conditions") or ()]  # fmt: skip
    ticketed = {m.group(1) for f in filters if FALLBACK_FIELD in f and (m := NAMESPACE.search(f))}
    classed = {ns: env["COMPUTE_CLASS"] for ns, _, _, env in gate_environments(view) if env.get("COMPUTE_CLASS")}
    out = [
        Finding(
            f"maintenance page fallback ticket of the gate {ns}",
            True,
            f"a group long on a slice of {cls} opens a ticket",
        )
        if ns in ticketed
        else Finding(
            f"maintenance page fallback ticket of the gate {ns}",
            False,
            f"the gate watches ComputeClass {cls}, but no alert policy matches its fallback field: a group serving from "
            "a fallback slice tells nobody; pass maintenance_fallback=True to that namespace's ObservabilityArgs",
        )
        for ns, cls in sorted(classed.items())
    ]
    return out + [
        Finding(
            f"maintenance page fallback ticket of namespace {ns}",
            False,
            "an alert policy matches the gate's fallback field, but no gate of that namespace watches a ComputeClass "
            "(COMPUTE_CLASS): it can never fire; pass maintenance_fallback=False, or the gate its compute_class",
        )
        for ns in sorted(ticketed - classed.keys())
    ]
