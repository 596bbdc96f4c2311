"""Offline ``pulumi preview`` of one stack.

Runs the real program for the stack through the recording monitor of
:mod:`tools.offline`, prints the resource tree and a TPU summary, and writes
``build/<stack>/plan.json`` and ``build/<stack>/manifests.yaml``. An invalid stack prints
the configuration problems, writes nothing and exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tpu_serving.cost.serve_time import OUTPUT_TITLES
from tpu_serving.operations.prober import PROBE_ANNOTATION
from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance import vllm as vllm_conformance
from tpu_serving_tools.e2e.coverage import left_out, model_platforms, shipped_stacks, verified_line
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.preview import library as library_preview
from tpu_serving_tools.preview.cost_summary import cost_summary
from tpu_serving_tools.preview.existing_notes import cloud_resource_lines, existing_tpu_pools, manifest_lines
from tpu_serving_tools.preview.image_notes import image_source_lines
from tpu_serving_tools.preview.offline import (
    UNKNOWN,
    Plan,
    RecordedResource,
    close_event_loop,
    kubernetes_objects,
    opaque_resources,
    preview_stack,
    program_frame,
)
from tpu_serving_tools.preview.security_notes import security_summary
from tpu_serving_tools.preview.stack_files import StackConfigError
from tpu_serving_tools.preview.versions import plan_notes
from tpu_serving_tools.preview.zone_notes import zone_summary
from tpu_serving_tools.runtime import cache_disk, program_gaps
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.prereqs import declared_existing_nat
from tpu_serving_tools.text import counted, plural

if TYPE_CHECKING:
    from tpu_serving.catalog import SliceShape


def tree(plan: Plan) -> str:
    """The resource tree, children under their parents, as ``pulumi preview`` lists it."""
    children: dict[str | None, list[Any]] = {}
    for r in plan.resources:
        children.setdefault(r.parent, []).append(r)
    stack_urn = next((p for p in children if p and p.split("::")[2] == "pulumi:pulumi:Stack"), None)
    lines = [f"pulumi:pulumi:Stack  {plan.project}-{plan.stack}"]

    def walk(parent: str | None, depth: int) -> None:
        for r in children.get(parent, []):
            lines.append(f"{'    ' * depth}+ {r.type}  {r.name}")
            walk(r.urn, depth + 1)

    walk(stack_urn, 1)
    return "\n".join(lines)


def tpu_slices(plan: Plan) -> list[tuple[str, SliceShape]]:
    """(node pool name, slice shape) of every TPU node pool the plan declares.

    Read from the node pools themselves (machine type, and the placement policy's topology, or
    the machine type's single-host topology), so any program's plan is summarised, not only
    ones that export their slices.
    """
    from tpu_serving import catalog

    slices = []
    for r in plan.of_type(NODE_POOL):
        machine = catalog.MACHINE_TYPES.get((r.inputs.get("nodeConfig") or {}).get("machineType", ""))
        if machine is None:
            continue
        topology = (r.inputs.get("placementPolicy") or {}).get("tpuTopology")
        if topology is None:
            single = [t for t in machine.topologies if catalog.SliceShape(machine, t).vms == 1]
            topology = single[0] if len(single) == 1 else None
        if topology is not None:
            slices.append((str(r.inputs.get("name", r.name)), catalog.SliceShape(machine, topology)))
    for pool, machine_type, topology, _ in existing_tpu_pools(plan.resources):
        if machine_type in catalog.MACHINE_TYPES:
            slices.append((f"{pool} (existing)", catalog.SliceShape(catalog.MACHINE_TYPES[machine_type], topology)))
    return slices


def zone_notes(plan: Plan) -> list[str]:
    """A note for each zone and TPU generation of the plan's TPU node pools that the catalog's zone table
    (``tpu_zones``) does not list, naming the pools: read off the node pools' ``nodeLocations``, so any
    program's plan is described. A note, not a refusal: the table may be out of date or partial."""
    from tpu_serving import catalog
    from tpu_serving.catalog import tpu_zones

    pools: dict[tuple[str, str], list[str]] = {}
    for r in plan.of_type(NODE_POOL):
        machine = catalog.MACHINE_TYPES.get((r.inputs.get("nodeConfig") or {}).get("machineType", ""))
        if machine is None:
            continue
        for zone in r.inputs.get("nodeLocations") or []:
            pools.setdefault((str(zone), machine.generation.name), []).append(str(r.inputs.get("name", r.name)))
    for pool, machine_type, _, zone in existing_tpu_pools(plan.resources):
        if machine_type in catalog.MACHINE_TYPES:
            pools.setdefault((zone, catalog.MACHINE_TYPES[machine_type].generation.name), []).append(pool)
    notes = (tpu_zones.zone_note(", ".join(names), zone, gen) for (zone, gen), names in pools.items())
    return [f"  {n}" for n in notes if n is not None]


def summary(plan: Plan, root: Path | None = None) -> str:
    """Resources, and the slices, chips and HBM of the plan's TPU node pools (``root``: the project, whose stack
    files are the shipped stacks the ``Verified:`` line speaks of)."""
    slices = tpu_slices(plan)
    rows = [
        f"  {pool}: {s.machine_type.name} {s.topology} ({counted(s.vms, 'VM')}, {counted(s.chips, 'chip')}, "
        f"{s.hbm_gib} GiB HBM)"
        for pool, s in slices
    ]
    customs = sum(1 for r in plan.resources if r.custom)
    lines = [
        f"{len(plan.resources)} resources to create ({customs} custom, {len(plan.resources) - customs} components)",
        f"TPU: {len(slices)} slice(s), {sum(s.chips for _, s in slices)} chips, "
        f"{sum(s.hbm_gib for _, s in slices)} GiB HBM",
        *rows,
        *sizing_notes(slices),
        *zone_notes(plan),
        *production_summary(plan.outputs),
        *program_gaps.preview_lines(PlanView(plan.as_json())),
        *zone_summary(plan),
        *borrowed_nat(plan),
        *caution_summary(plan.outputs, plan.resources),
        *vllm_conformance.engine_lines(PlanView(plan.as_json())),
        *cache_disk.preview_lines(PlanView(plan.as_json())),
        *(capacity_summary(plan.outputs) if "capacity" in plan.outputs else library_preview.capacity_lines(plan)),
        *cost_summary(
            plan.outputs if "cost" in plan.outputs else {"cost": library_preview.cost_lines(plan)},
            library_preview.region(plan),
        ),
        *published_summary(plan.outputs),
        *rollout_summary(plan.outputs),
        *library_maintenance(plan),
        *library_preview.program_lines(plan),
        *router_summary(plan.outputs),
        *verified_line(
            plan.stack,
            shipped_stacks(root) if root else [],
            left_out(root) if root else {},
            model_platforms(root) if root else {},
        ),
        *quota_summary(plan.outputs),
        *alert_summary(plan.resources),
        *probe_summary(plan.resources),
        *security_summary(plan.resources),
        *image_source_lines(plan.resources),
        *plan_notes(plan.resources),
        *manifest_lines(plan.resources),
        *cloud_resource_lines(plan.outputs),
    ]
    # what the program logged, once: a component's Caution: or Engine: line is one of the lines above already
    said = set(lines)
    lines += [
        w if w.split(": ", 1)[0] in ("Caution", "Engine") else f"warning: {w}" for w in plan.warnings if w not in said
    ]
    return "\n".join(lines)


def borrowed_nat(plan: Plan) -> list[str]:
    """The Cloud NAT a stack names as existing (``cluster.cloudNat: existing``): a prerequisite the preview cannot
    see, which ``make check`` finds among the stacks it checks (new-user review 10, m13)."""
    found = declared_existing_nat(PlanView(plan.as_json()))
    if found is None:
        return []
    network, router, nat = found
    return [
        f"Prerequisite: the Cloud NAT {router}/{nat} of network {network} in {library_preview.region(plan)} must "
        "exist before pulumi up (cluster.cloudNat: existing): without it the private nodes pull no image from outside "
        "Google; make check says which of the stacks it checks makes it, or that it must exist already"
    ]


def single_host_equivalent(shape: SliceShape) -> SliceShape | None:
    """One VM of the same generation with all of a multi-host ``shape``'s chips, in the same topology, if GKE has
    such a machine type (``v6e-8``, two ``ct6e-standard-4t`` VMs, is one ``ct6e-standard-8t``); None otherwise.

    Read from the catalog's machine types, which every release of the library has: a diff previews an older
    checkout with this harness, and its library is that checkout's."""
    from tpu_serving import catalog

    if shape.vms == 1:
        return None
    return next(
        (
            catalog.SliceShape(mt, shape.topology)
            for mt in catalog.MACHINE_TYPES.values()
            if mt.generation == shape.generation and mt.chips_per_vm == shape.chips and shape.topology in mt.topologies
        ),
        None,
    )


def sizing_notes(slices: list[tuple[str, SliceShape]]) -> list[str]:
    """A hint for each multi-host slice shape whose chips one VM of the generation holds (a slice name such as
    ``v6e-8`` means the multi-host machine type; ``machineType`` and ``topology`` choose the single-host one)."""
    pools: dict[SliceShape, list[str]] = {}
    for pool, s in slices:
        pools.setdefault(s, []).append(pool)
    notes = []
    for s, names in pools.items():
        one = single_host_equivalent(s)
        if one is not None:
            each = "is" if len(names) == 1 else "are each"
            notes.append(
                f"  note: {', '.join(names)} {each} {s.vms} {s.machine_type.name} {plural('VM', s.vms)} (multi-host); one "
                f"{one.machine_type.name} VM holds the same {s.chips} chips (tpuSlices: machineType: "
                f"{one.machine_type.name}, topology: {one.topology}) if the workload wants one host"
            )
    return notes


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def capacity_summary(outputs: dict[str, Any]) -> list[str]:
    """The capacity report of a plan whose program exports ``capacity`` (a TpuServingDeployment does)."""
    c = outputs.get("capacity")
    if not isinstance(c, dict):
        return []
    line = f"Capacity: {counted(c['chips'], 'chip')}, {counted(c['vms'], 'VM')}, {c['hbmGib']} GiB HBM"
    if c.get("allocatedToNeeded") is None:
        return [line + "; the model's size is unknown, so no allocated/needed ratio", *_obtained(c)]
    line += (
        f"; model weights {c['modelGib']} GiB fit {c['smallestFittingSlice']}, x {c['servingSlices']} serving "
        f"slice(s) = {counted(c['chipsNeeded'], 'chip')} needed; allocated/needed {c['allocatedToNeeded']:.2f}x"
    )
    return [line, *_fewer_chips(str(c["smallestFittingSlice"]), float(c["modelGib"])), *_obtained(c)]


def _obtained(c: dict[str, Any]) -> list[str]:
    """One line per slice kind: how it gets its VMs and what a stockout does (``capacity.obtained``)."""
    obtained = c.get("obtained")
    lines = [f"  slices {k}: {v}" for k, v in obtained.items()] if isinstance(obtained, dict) else []
    fallback = c.get("fallback")
    if isinstance(fallback, list):
        lines += [
            "Fallback: when a group finds no slice, GKE takes the first it can of (a ComputeClass the pods select):"
        ]
        lines += [*(f"  {step}" for step in fallback), library_preview.NEW_CLUSTER_NOTE]
    return lines


def _fewer_chips(fit: str, model_gib: float) -> list[str]:
    """A note when another machine type of the generation holds the weights on fewer chips than the chosen one's
    smallest fitting slice (``allocated/needed`` counts slices of the chosen machine type only)."""
    from tpu_serving import catalog

    chosen = catalog.machine_type(fit.split()[0])
    fits = [
        shape
        for mt in catalog.MACHINE_TYPES.values()
        if mt.generation == chosen.generation
        and (shape := catalog.smallest_fitting_topology(mt.name, model_gib)) is not None
    ]
    best = min(fits, key=lambda s: (s.chips, s.machine_type.name), default=None)
    if best is None or best.chips >= int(fit.rsplit("(", 1)[1].split()[0]):
        return []
    return [
        f"  note: the weights also fit {best.machine_type.name} {best.topology} ({counted(best.chips, 'chip')}), "
        f"another {chosen.generation.name} machine type; allocated/needed counts slices of {chosen.name} only "
        "(KV cache and throughput may still call for more)"
    ]


def published_summary(outputs: dict[str, Any]) -> list[str]:
    """How long a new serving group takes to serve and what a million output tokens cost, each from published
    figures; a program without those outputs (a platform stack, a library program) is said to have none."""
    lines = []
    for key, title in OUTPUT_TITLES:
        found = outputs.get(key)
        if isinstance(found, list) and found:
            lines += [f"{title}: {found[0]}", *[f"  {more}" for more in found[1:]]]
        else:
            lines.append(f"{title}: not computed for this program (it has no {key} output: a TpuServingDeployment's)")
    return lines


def production_summary(outputs: dict[str, Any]) -> list[str]:
    """Whether the stack says it serves production traffic (the ``production`` output,
    :func:`tpu_serving.config.production.production_output`), and, when it does not, what keeps it from an SLO."""
    p = outputs.get("production")
    if not isinstance(p, dict):
        return []
    if p.get("production"):
        return ["Production: yes (production: true): no gap the library knows of"]
    gaps = [str(g) for g in p.get("gaps") or ()]
    if not gaps:
        return ["Production: no (production: false), though the library finds no gap: set production to true"]
    return [
        f"Production: no (production: false): {len(gaps)} gap(s) keep it from a serving SLO",
        *[f"  {g}" for g in gaps],
    ]


def caution_summary(outputs: dict[str, Any], resources: Sequence[RecordedResource] = ()) -> list[str]:
    """What the serving backend warns of before anything else (the ``caution`` output: a vLLM stack whose groups span
    several VMs, :func:`tpu_serving.backends.vllm.facts.caution`); without it, the ``caution`` a component of the
    program registered (a library program's ``VllmServing``: user review round 41, M2), each once."""
    c = outputs.get("caution")
    if isinstance(c, str):
        return [f"Caution: {c}"]
    found = [r.registered_outputs.get("caution") for r in resources if r.registered_outputs]
    return [f"Caution: {c}" for c in dict.fromkeys(found) if isinstance(c, str)]


def rollout_summary(outputs: dict[str, Any]) -> list[str]:
    """How the serving groups are replaced when their template changes (``rollout``, LeaderWorkerSet backends),
    and what upstream has not shown of the serving mode (``caveats``)."""
    r, caveats = outputs.get("rollout"), outputs.get("caveats")
    lines = [f"Rollout: {r['summary']}"] if isinstance(r, dict) and isinstance(r.get("summary"), str) else []
    if isinstance(r, dict) and isinstance(r.get("drain"), str):
        lines.append(f"Drain: {r['drain']}")
    if isinstance(r, dict) and isinstance(r.get("upgrade"), str):
        lines.append(f"Upgrades: {r['upgrade']}")
    if isinstance(r, dict) and isinstance(r.get("scaleDown"), str):
        lines.append(f"Scale-down: {r['scaleDown']}")
    if isinstance(r, dict) and isinstance(r.get("maintenance"), str):
        lines.append(f"Maintenance: {r['maintenance']}")
    return lines + [f"note: {c}" for c in caveats if isinstance(c, str)] if isinstance(caveats, list) else lines


def library_maintenance(plan: Plan) -> list[str]:
    """A library program's ``Maintenance:`` lines, read off its plan by the runtime model (a stack file's program
    says its own through the ``rollout`` output)."""
    from tpu_serving_tools.runtime.maintenance import preview_lines

    return preview_lines(PlanView(plan.as_json()))


def router_summary(outputs: dict[str, Any]) -> list[str]:
    """What a restart of the router in front of the serving pods does (the gateway's ``routerRestart``)."""
    g = outputs.get("gateway")
    restart = g.get("routerRestart") if isinstance(g, dict) else None
    return [f"Router restart: {restart}"] if isinstance(restart, str) else []


def quota_summary(outputs: dict[str, Any]) -> list[str]:
    """The namespace quota and what it covers (the stack output ``quota``, :mod:`tpu_serving.common.quota`)."""
    q = outputs.get("quota")
    return [f"Quota: {q['summary']}"] if isinstance(q, dict) and isinstance(q.get("summary"), str) else []


ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"


def _policies(n: int) -> str:
    return f"{n} alert {'policy' if n == 1 else 'policies'}"


def _notified(policies: Sequence[RecordedResource]) -> str:
    channels = sorted({str(c) for r in policies for c in r.inputs.get("notificationChannels") or ()})
    return ", ".join(channels) if channels else "nobody"


def alert_summary(resources: Sequence[RecordedResource]) -> list[str]:
    """Who the stack's alert policies notify, by severity (the pages, CRITICAL and ERROR; the tickets, WARNING), or a
    line that says nobody is paged; and any policy with no severity, which Cloud Monitoring shows unranked."""
    policies = [r for r in resources if r.type == ALERT_POLICY]
    if not policies:
        return []
    by = {s: [r for r in policies if r.inputs.get("severity") == s] for s in ("CRITICAL", "ERROR", "WARNING")}
    counts = ", ".join(f"{len(found)} {s}" for s, found in by.items() if found)
    head = f"Alerts: {_policies(len(policies))} ({counts})"
    unranked = [str(r.inputs.get("displayName", r.name)) for r in policies if r.inputs.get("severity") not in by]
    tail = f"; no severity on {', '.join(unranked)}" if unranked else ""
    if not any(r.inputs.get("notificationChannels") for r in policies):
        return [
            f"{head}, and nobody is paged (no notification channel named): they show only in Cloud Monitoring "
            "until one is (observability.notificationChannels in a stack file, ObservabilitySettings."
            f"notification_channels in a program){tail}"
        ]
    pages, tickets = _notified(by["CRITICAL"] + by["ERROR"]), _notified(by["WARNING"])
    return [f"{head}: pages notify {pages}; tickets (WARNING) notify {tickets}{tail}"]


def probe_summary(resources: Sequence[RecordedResource]) -> list[str]:
    """The serving probe's request and what it does not cover: its Deployment's annotation (:mod:`tpu_serving.operations.prober`),
    one line per probe (a program's namespaces each have theirs: library review 7, m5), its namespace named when
    there are several."""
    found = []
    for r in resources:
        meta = r.inputs.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        if r.type == "kubernetes:apps/v1:Deployment" and isinstance(annotations.get(PROBE_ANNOTATION), str):
            found.append((str(meta.get("namespace", "default")), str(annotations[PROBE_ANNOTATION])))
    if len(found) < 2:
        return [f"Probe: {said}" for _, said in found]
    return [f"Probe: {ns}: {said}" for ns, said in found]


def manifests_yaml(plan: Plan) -> str:
    """``manifests.yaml``: one YAML document per Kubernetes object."""
    header = [f"# Kubernetes objects of stack {plan.stack} (offline preview; {UNKNOWN} = computed at deploy time)."]
    for r in opaque_resources(plan):
        header.append(
            f"# Expanded by the provider at deploy time: {r.type} {r.name} {json.dumps(r.inputs, sort_keys=True)}"
        )
    docs = [yaml.safe_dump(o, sort_keys=False, default_flow_style=False) for o in kubernetes_objects(plan)]
    return "\n".join(header) + "\n" + "---\n".join(docs)


def write(plan: Plan, out: Path) -> tuple[Path, Path]:
    """Write ``plan.json`` and ``manifests.yaml`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    plan_path, manifests_path = out / "plan.json", out / "manifests.yaml"
    plan_path.write_text(json.dumps(plan.as_json(), indent=2, sort_keys=False) + "\n")
    manifests_path.write_text(manifests_yaml(plan))
    return plan_path, manifests_path


def _shown(path: Path) -> Path:
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def _failed(args: argparse.Namespace) -> int:
    """Leave no plan of an earlier run behind (it would no longer describe this stack); exit status 2."""
    stale = args.out or args.root.resolve() / "build" / args.stack
    for name in ("plan.json", "manifests.yaml"):
        with contextlib.suppress(OSError):  # an unwritable --out: nothing of this run is there either
            (stale / name).unlink(missing_ok=True)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument(
        "stack",
        help="stack name: its file Pulumi.<stack>.yaml is in the project's stackConfigDir (stacks/ here), or beside "
        "Pulumi.yaml",
    )
    parser.add_argument("--out", type=Path, default=None, help="output directory (default build/<stack>)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary, under a line naming the stack")
    parser.add_argument(
        "--plan-only",
        action="store_true",
        help="write the plan and manifests and say where, with no summary: a diff previews another checkout with this "
        "harness and that checkout's library, which the summary's notes do not read",
    )
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root holding Pulumi.yaml (default: .)")
    parser.add_argument("--traceback", action="store_true", help="show the program's traceback on an error")
    args = parser.parse_args(argv)
    if args.quiet:
        # The summary has no stack name: `make previews` prints one block per stack, each under its header.
        print(f"== {args.stack}", flush=True)

    import pulumi

    try:
        plan = preview_stack(args.root.resolve(), args.stack)
    # The program's ConfigError is a pulumi.RunError: the engine too prints it without a
    # traceback. Catching the base class keeps this harness from importing the project's
    # own modules before the program does (a diff previews another checkout with it).
    except (pulumi.RunError, StackConfigError) as err:
        print(f"error: {err}", file=sys.stderr)
        return _failed(args)
    except Exception as err:  # the program's own mistake (a misspelled keyword, a missing argument)
        if args.traceback:
            raise
        print(f"error: {program_frame(err, args.root.resolve())}{type(err).__name__}: {err}", file=sys.stderr)
        return _failed(args)
    finally:
        close_event_loop()
    out = args.out or args.root.resolve() / "build" / args.stack
    try:
        plan_path, manifests_path = write(plan, out)
    except OSError as err:
        where = err.filename or out
        print(f"error: cannot write the plan to {where}: {err.strerror or err}; pass a writable --out", file=sys.stderr)
        return 2
    if not args.quiet and not args.plan_only:
        print(tree(plan))
        print()
    if not args.plan_only:
        print(summary(plan, args.root.resolve()))
    print(f"wrote {_shown(plan_path)}, {_shown(manifests_path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
