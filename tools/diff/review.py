"""Preview diffs for review, each stack against a git ref.

Renders the offline plan of every stack (or one) at the base ref, in a temporary git worktree, and in the working
tree, and prints a Markdown report per stack: resources added, removed and changed, with field-level changes of their
inputs, and a prominent warning for every change that recreates a TPU node pool, its workload policy or the cluster.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpu_serving.catalog import MACHINE_TYPES
from tpu_serving.cost.serve_time import output_lines
from tpu_serving_tools import provider_rules
from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.diff import aliases as plan_aliases
from tpu_serving_tools.diff import pool_disruption, range_moves, served_names
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL, RESOURCE_POLICY
from tpu_serving_tools.provider_rules.node_recreation import recreates_nodes

RELEASES: Mapping[str, str] = {"v0.2.0": "31cd050d12c5428ea9a147908c65d9753804ec19"}
"""This package's releases by their commits: ``BASE=v0.2.0`` works in a clone without tags (a clone of one
branch, CI's), since each release's commit is an ancestor of main. The tags, where present, name the same
commits (tests/tools/diff/test_release_diff.py)."""


MULTI_HOST_NODE_COUNT = ("nodeCount", "VMs of a multi-host slice (a slice cannot be resized)")
"""Beyond the provider's schema, for a pool with a placement policy (a multi-host TPU slice): "After a multi-host
slice node pool is created, you can't add nodes to it" (https://cloud.google.com/tpu/docs/tpus-in-gke)."""
SLICE_TOPOLOGY = ("placementPolicy", "slice topology (a TPU slice's topology cannot change in place)")
"""GKE re-creates a node pool for a topology change ("you don't need to delete and re-create node pools for
topology changes, which would be necessary without dynamic slicing",
https://cloud.google.com/kubernetes-engine/docs/how-to/use-gke-dynamic-slicing); the provider's schema marks only
the placement policy block itself (its presence) ForceNew."""


def flatten(value: Any, path: str = "") -> dict[str, Any]:
    """{dotted path: leaf}; lists of named objects are keyed by name, other lists by index."""
    out: dict[str, Any] = {}
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            out.update(flatten(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(value, list) and value:
        named = all(isinstance(v, Mapping) and isinstance(v.get("name"), str) for v in value)
        for i, v in enumerate(value):
            out.update(flatten(v, f"{path}[{v['name'] if named else i}]"))
    else:
        out[path] = value
    return out


@dataclass
class Change:
    """A resource whose inputs (or options) differ."""

    urn: str
    type: str
    name: str
    fields: list[tuple[str, Any, Any]]
    recreates: list[str] = field(default_factory=list)
    recreates_nodes: list[str] = field(default_factory=list)
    """Paths updated in place whose change recreates the node pool's VMs (:mod:`.provider_rules.node_recreation`)."""


@dataclass
class StackDiff:
    """What a change does to one stack."""

    stack: str
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cautions: list[str] = field(default_factory=list)  # clients' errors during the rollout (:mod:`.served_names`)
    total: int = 0
    cost: str | None = None
    """The change of chips and estimated cost, when the head plan exports a cost estimate."""
    rollouts: list[str] = field(default_factory=list)
    """How each LeaderWorkerSet whose groups' template changes (in place, not replaced) rolls its groups."""
    router: str | None = None
    """What a restart of the router in front of the serving pods does, from the head plan's ``gateway`` output."""
    lifecycle: list[tuple[str, str]] = field(default_factory=list)
    """How the head plan's groups roll, drain and scale down (its ``rollout`` output), shown on every diff."""


def recreate_reason(resource: Mapping[str, Any], path: str) -> str | None:
    """Why a change of ``path`` replaces ``resource``: ForceNew in the provider's schema
    (:mod:`tpu_serving_tools.provider_rules`), a multi-host slice's size, or ``replaceOnChanges``."""
    field = provider_rules.force_new(resource["type"], path)
    if field is not None:
        prov = provider_rules.provenance()
        return f"{field} is ForceNew ({prov['repository']} {prov['ref']})"
    if resource["type"] == NODE_POOL and "placementPolicy" in resource["inputs"]:
        if path == MULTI_HOST_NODE_COUNT[0]:
            return MULTI_HOST_NODE_COUNT[1]
        if under(path, SLICE_TOPOLOGY[0]):
            return SLICE_TOPOLOGY[1]
    if any(under(path, p) for p in resource.get("replaceOnChanges") or ()):
        return "replaceOnChanges: the controller's webhook or CRD refuses this change in place"
    return None


def under(path: str, prefix: str) -> bool:
    """Whether the flattened ``path`` is ``prefix`` or inside it."""
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _label(r: Mapping[str, Any]) -> str:
    if "kind" in r["inputs"]:  # namespace/name: a program's two namespaces may each name theirs vllm (new-user 17, m5)
        meta = r["inputs"].get("metadata") or {}
        name = meta.get("name", r["name"])
        return f"{r['inputs']['kind']} `{meta['namespace'] + '/' if meta.get('namespace') else ''}{name}`"
    name = r["inputs"].get("name", r["name"])
    if r["type"] == NODE_POOL:
        tpu = r["inputs"].get("nodeConfig", {}).get("machineType") in MACHINE_TYPES
        return f"{'TPU node pool' if tpu else 'node pool'} `{name}`"
    policy = r["type"] == RESOURCE_POLICY  # its pools go first (delete_before_replace): no slice until both are back
    return f"workload policy `{name}` (and the TPU pools it places, deleted first)" if policy else f"cluster `{name}`"


def _changed(
    urn: str, a: Mapping[str, Any], b: Mapping[str, Any], out: StackDiff, renamed_from: str | None = None
) -> None:
    """The fields of resource ``urn`` that differ between the base (``a``) and the head (``b``), into ``out``, with
    a warning for each that recreates it. ``renamed_from``: ``a``'s name, when ``b`` is ``a`` renamed (an alias)."""
    fa, fb = flatten(a["inputs"]), flatten(b["inputs"])
    ignored = list(b.get("ignoreChanges") or ())  # Pulumi does not act on these paths
    fields = [
        (p, fa.get(p), fb.get(p))
        for p in sorted(set(fa) | set(fb))
        if fa.get(p) != fb.get(p) and not any(under(p, i) for i in ignored)
    ]
    if renamed_from is not None:
        fields.insert(0, (RENAMED, renamed_from, b["name"]))
    if a.get("protect") != b.get("protect"):
        fields.append(("(option) protect", a.get("protect"), b.get("protect")))
    if not fields:
        return
    change = Change(urn, b["type"], b["name"], fields)
    for path, before, after in fields:
        if after is None and provider_rules.keeps_state_when_left_out(b["type"], path):
            continue  # left out of the head's inputs: the provider keeps the value in state and replaces nothing
        why, values = recreate_reason(b, path), f"`{path}` {json.dumps(before)} → {json.dumps(after)}"
        if why:
            change.recreates.append(path)
            out.warnings.append(f"Recreates {_label(b)}: {values} ({why})")
        elif recreates_nodes(b["type"], path):
            change.recreates_nodes.append(path)
            out.warnings.append(f"Recreates the nodes of {_label(b)}: {values} (updated in place: {NODES_RECREATED})")
    out.changed.append(change)


RENAMED = "(alias) name"
"""The field row of a resource the head renames with an alias to its base name (:mod:`.plan_aliases`): Pulumi
updates it under its new name, creating and deleting nothing."""

NODES_RECREATED = "GKE drains and recreates every VM of the pool, the pool itself stays"
"""Why a node-recreating field warns though the pool is not replaced (:mod:`.provider_rules.node_recreation`)."""


def _vm_pools(diff: StackDiff, new: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """{name: URN} of the node pools whose VMs ``diff`` recreates (in place or by replacement) or deletes."""
    pools = {
        new[c.urn]["inputs"].get("name", c.name): c.urn
        for c in diff.changed
        if c.type == NODE_POOL and (c.recreates or c.recreates_nodes)
    }
    pools.update({r["inputs"].get("name", r["name"]): r["urn"] for r in diff.removed if r["type"] == NODE_POOL})
    return pools


def router_restart(outputs: Mapping[str, Any]) -> str | None:
    """What a restart of the router does, from the head plan's gateway output (``routerRestart``)."""
    gateway = outputs.get("gateway")
    restart = gateway.get("routerRestart") if isinstance(gateway, Mapping) else None
    return restart if isinstance(restart, str) else None


LIFECYCLE = (
    ("summary", "Rollout (when the groups' template changes)"),
    ("drain", "Drain"),
    ("scaleDown", "Scale-down"),
)
"""The head plan's ``rollout`` output keys a diff shows, with their titles."""


def lifecycle(outputs: Mapping[str, Any], rolling: bool = False) -> list[tuple[str, str]]:
    """``(title, line)`` for how the groups roll, drain and scale down, from the head plan's ``rollout`` output.
    ``rolling``: the diff changes a group template, so its **Rollout** lines (:func:`rollouts`) already print the
    ``summary``, which is left out here rather than printed twice."""
    plan = outputs.get("rollout")
    if not isinstance(plan, Mapping):
        return []
    keys = [(key, title) for key, title in LIFECYCLE if not (rolling and key == "summary")]
    return [(title, plan[key]) for key, title in keys if isinstance(plan.get(key), str)]


def _compare(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], out: StackDiff) -> None:
    """The resources added, removed and changed, by URN, into ``out``; a head resource that takes a base resource by
    an alias (:func:`.plan_aliases.renamed`, as the engine does) is that resource renamed, not added and removed."""
    moved = plan_aliases.renamed(old, new)
    out.added = [new[u] for u in sorted(set(new) - set(old) - set(moved.values()))]
    out.removed = [old[u] for u in sorted(set(old) - set(new) - set(moved))]
    for urn in sorted(set(old) & set(new)):
        _changed(urn, old[urn], new[urn], out)
    for was, urn in sorted(moved.items()):
        _changed(urn, old[was], new[urn], out, renamed_from=old[was]["name"])


def diff_plans(stack: str, base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> StackDiff:
    """Compare the base and head plans of ``stack`` (either may be None: no such stack)."""
    old = {r["urn"]: r for r in (base or {}).get("resources", [])}
    new = {r["urn"]: r for r in (head or {}).get("resources", [])}
    out = StackDiff(stack, total=len(new))
    _compare(old, new, out)
    head_outputs = (head or {}).get("outputs") or {}
    out.cost = cost_change((base or {}).get("outputs") or {}, head_outputs)
    out.rollouts = rollouts(out.changed, new, head_outputs)
    out.router = router_restart(head_outputs)
    out.lifecycle = lifecycle(head_outputs, rolling=bool(out.rollouts)) + output_lines(head_outputs)
    for r in out.removed:
        if r["type"] in (CLUSTER, NODE_POOL):
            renamed = any(n["type"] == r["type"] for n in out.added)
            out.warnings.append(f"{'Recreates (renamed)' if renamed else 'Deletes'} {_label(r)}")
    out.warnings += plan_aliases.same_object_replaced(out.added, out.removed)
    out.cautions, out.warnings = served_names.cautions(old, new), out.warnings + range_moves.warnings(old, new)
    hit = pool_disruption.at_once(_vm_pools(out, new), base, head)
    if hit is not None:  # several standing groups' pools in one run: said first, and the Drain line corrected
        out.warnings.insert(0, pool_disruption.warning(hit))
        out.lifecycle = [(t, pool_disruption.drain(line, hit) if t == "Drain" else line) for t, line in out.lifecycle]
    return out


LWS_TEMPLATE = "spec.leaderWorkerTemplate"
"""A change under it makes the LWS controller replace every group, by its rolloutStrategy."""
DS_ROLE_TEMPLATE = re.compile(r"^spec\.roles\[[^\]]+\]\.spec\.leaderWorkerTemplate(\.|$)")
"""A DisaggregatedSet role's group template: a change makes a new revision, whose LeaderWorkerSets replace the
old ones role by role (LWS v0.10.0 pkg/controllers/disaggregatedset: the revision hash covers every role)."""


def rollouts(changed: list[Change], new: Mapping[str, Mapping[str, Any]], outputs: Mapping[str, Any]) -> list[str]:
    """For each LeaderWorkerSet updated in place with a new group template: what its rollout does, from the head
    plan's ``rollout`` output (a TpuServingDeployment exports it)."""
    out = []
    for c in changed:
        inputs = new[c.urn]["inputs"]
        if inputs.get("kind") not in ("LeaderWorkerSet", "DisaggregatedSet") or c.recreates:
            continue
        if not any(under(path, LWS_TEMPLATE) or DS_ROLE_TEMPLATE.match(path) for path, _, _ in c.fields):
            continue
        plan = outputs.get("rollout")
        how = plan["summary"] if isinstance(plan, Mapping) else "every group is replaced, by its rolloutStrategy"
        out.append(f"{_label(new[c.urn])}: {how}")
    return out


def _signed(value: float, money: bool = False) -> str:
    sign = "+" if value >= 0 else "-"
    return f"{sign}${abs(value):,.2f}" if money else f"{sign}{abs(value):g}"


def cost_change(base: Mapping[str, Any], head: Mapping[str, Any]) -> str | None:
    """``+32 chips, +$86.40/hour (+$63,072.00/month): $43.82 → $130.22/hour`` from the plans' ``capacity`` and ``cost`` outputs."""
    new_cost, new_capacity = head.get("cost"), head.get("capacity")
    if not isinstance(new_cost, Mapping) or not isinstance(new_capacity, Mapping):
        return None
    after = new_cost["perHour"]["total"]
    old_cost, old_capacity = base.get("cost"), base.get("capacity")
    if not isinstance(old_cost, Mapping) or not isinstance(old_capacity, Mapping):
        what = "a new stack" if not base else "the base has no cost estimate"
        return f"{new_capacity['chips']} chips, ${after:,.2f}/hour ({what})"
    before = old_cost["perHour"]["total"]
    chips = new_capacity["chips"] - old_capacity["chips"]
    if chips == 0 and round(after - before, 2) == 0:
        return f"unchanged: {new_capacity['chips']} chips, ${after:,.2f}/hour"
    month = new_cost["perMonth"]["total"] - old_cost["perMonth"]["total"]
    change = (
        f"{_signed(chips)} chips, {_signed(after - before, money=True)}/hour ({_signed(month, money=True)}/month): "
        f"${before:,.2f} → ${after:,.2f}/hour"
    )
    peak_before, peak_after = old_cost.get("peakPerHour", before), new_cost.get("peakPerHour", after)
    if round(peak_after - after, 2) or round(peak_before - before, 2):
        change += f" (with every slice up: ${peak_before:,.2f} → ${peak_after:,.2f}/hour)"
    return change


CELL = 120
"""Characters of a value a table cell shows."""


def _text(value: Any) -> str:
    return "—" if value is None else json.dumps(value) if not isinstance(value, str) else value


def _cell(value: Any, start: int = 0) -> str:
    """``value`` in a cell, from ``start`` (``...`` marks what is cut off on either side)."""
    text = _text(value).replace("\n", " ")
    head = "..." if start > 0 else ""
    shown = text[start : start + CELL - len(head)]
    tail = "..." if start + len(shown) < len(text) else ""
    shown = (head + shown)[: CELL - len(tail)] + tail
    return f"`{shown.replace('|', chr(92) + '|')}`"


def _cells(before: Any, after: Any) -> tuple[str, str]:
    """Both values, cut alike around where they first differ: a long command line shows its change."""
    a, b = _text(before).replace("\n", " "), _text(after).replace("\n", " ")
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, first - CELL // 3) if max(len(a), len(b)) > CELL else 0
    return _cell(before, start), _cell(after, start)


def _alert(kind: str, title: str, items: list[str]) -> list[str]:
    return [f"> [!{kind}]", f"> **{title}:**", *(f"> - {i}" for i in items), ""] if items else []


def render_markdown(diff: StackDiff, base_ref: str) -> str:
    """The report of one stack."""
    lines = [f"### `{diff.stack}` (against `{base_ref}`)", ""]
    lines += _alert(
        "WARNING", "This change recreates or deletes TPU capacity, the cluster or a workload", diff.warnings
    )
    lines += _alert("CAUTION", "Clients get errors from part of the groups during this rollout", diff.cautions)
    if diff.cost:
        lines += [f"**Capacity and cost (estimate):** {diff.cost}", ""]
    lines += [f"**Rollout:** {r}" for r in diff.rollouts] + ([""] if diff.rollouts else [])
    lines += [f"**Router restart:** {diff.router}", ""] if diff.router else []
    lines += [f"**{title}:** {line}" for title, line in diff.lifecycle] + ([""] if diff.lifecycle else [])
    if not (diff.added or diff.removed or diff.changed):
        return "\n".join(lines + ["No changes.", ""])
    counts = f"{len(diff.added)} to add, {len(diff.changed)} to change, {len(diff.removed)} to remove"
    lines += [f"**{counts}** ({diff.total} resources)", ""]
    for verb, items in (("add", diff.added), ("remove", diff.removed)):
        if items:
            lines += [f"| {verb} | type | name |", "|---|---|---|"]
            lines += [f"| {'+' if verb == 'add' else '-'} | `{r['type']}` | `{r['name']}` |" for r in items]
            lines.append("")
    for c in diff.changed:
        mark = " ⚠ recreate" if c.recreates else " ⚠ recreates nodes" if c.recreates_nodes else ""
        lines += [
            f"<details><summary>~ <code>{c.type}</code> <code>{c.name}</code>{mark} ({len(c.fields)} field(s))</summary>",
            "",
        ]
        lines += ["| field | before | after |", "|---|---|---|"]
        lines += ["| `{}` | {} | {} |".format(p, *_cells(before, after)) for p, before, after in c.fields]
        lines += ["", "</details>", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- rendering plans


def project_stacks(root: Path) -> set[str]:
    """The stacks of the project at ``root`` (its ``Pulumi.yaml``'s ``stackConfigDir``, as ``pulumi`` reads
    them); none where there is no project (a base ref from before the project existed)."""
    from tpu_serving_tools.preview.stack_files import load_project

    if not (root / "Pulumi.yaml").is_file():
        return set()
    return set(load_project(root).stacks())


def render_plan(root: Path, stack: str, out: Path) -> dict[str, Any] | None:
    """Preview ``stack`` of the project at ``root`` with this harness; None if it has no such stack."""
    if stack not in project_stacks(root):
        return None
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tpu_serving_tools.preview.stack",
            stack,
            "--root",
            str(root),
            "--out",
            str(out),
            "--plan-only",  # the base's library may not be the one the summary's notes read
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise DiffError(f"preview of {stack} at {root} failed:\n{proc.stderr.strip()}")
    plan: dict[str, Any] = json.loads((out / "plan.json").read_text())
    return plan


class DiffError(Exception):
    """Why the diff cannot be made: no git checkout, an unknown ref or stack, a stack that does not preview."""


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise DiffError(f"git {' '.join(args)} in {root}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def _check_out(root: Path, base: str, worktree: Path) -> Path:
    """Check ``base`` out at ``worktree``; the project's folder in it (the same place as ``root`` in its repository)."""
    top = Path(_git(root, "rev-parse", "--show-toplevel")).resolve()
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    except DiffError:
        if base not in RELEASES:
            releases = ", ".join(RELEASES)
            raise DiffError(
                f"unknown git ref {base!r} in {top} (fetch it, or name a branch, tag or commit, or a release: {releases})"
            ) from None
        print(f"{base}: no such tag here, using the release's commit {RELEASES[base][:7]}", file=sys.stderr)
        base = RELEASES[base]
        try:
            _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        except DiffError:
            raise DiffError(f"the release's commit {base[:7]} is not in {top} (a shallow clone: fetch it)") from None
    _git(root, "worktree", "add", "--detach", "--quiet", str(worktree), base)
    return worktree / root.relative_to(top)


def report(root: Path, base: str, stack: str | None, tmp: Path) -> str:
    """The Markdown report of every stack of either side (or ``stack``)."""
    worktree = tmp / "base"
    base_root = _check_out(root, base, worktree)
    try:
        known = project_stacks(base_root) | project_stacks(root)
        if stack is not None and stack not in known:
            choices = ", ".join(sorted(known)) or "none"
            raise DiffError(f"no stack {stack!r} at {base} or in the working tree; stacks: {choices}")
        if not known:
            raise DiffError(f"no stack files for the project at {root} (Pulumi.yaml's stackConfigDir)")
        stacks = [stack] if stack else sorted(known)
        reports, warned = [], 0
        for i, s in enumerate(stacks, 1):
            print(f"previewing {s} at {base} and in the working tree ({i}/{len(stacks)})", file=sys.stderr, flush=True)
            before = render_plan(base_root, s, tmp / "plans" / "base" / s)
            after = render_plan(root, s, tmp / "plans" / "head" / s)
            diff = diff_plans(s, before, after)
            warned += bool(diff.warnings)
            reports.append(render_markdown(diff, base))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=root, check=False)
    return f"## tpu-serving preview diff\n\n{len(stacks)} stack(s); {warned} with recreate warnings.\n\n" + "\n".join(
        reports
    )


def _compare_plan_files(base: Path, head: Path) -> int:
    """The report of two plan files of one stack (``tpu-serving preview`` writes them)."""
    plans = []
    for path in (base, head):
        try:
            plan = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            print(f"error: {path}: not a readable plan.json ({err.__class__.__name__})", file=sys.stderr)
            return 2
        if not isinstance(plan, dict) or "resources" not in plan:
            print(f"error: {path}: not a plan.json (no resources); `tpu-serving preview` writes one", file=sys.stderr)
            return 2
        plans.append(plan)
    stacks = {str(p.get("stack")) for p in plans}
    if len(stacks) != 1:
        print(f"error: the plans are of different stacks: {', '.join(sorted(stacks))}", file=sys.stderr)
        return 2
    print(render_markdown(diff_plans(stacks.pop(), plans[0], plans[1]), str(base)))
    return 0


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--base", help="git ref to compare the working tree with")
    which.add_argument(
        "--plans",
        nargs=2,
        type=Path,
        metavar=("BASE_PLAN", "HEAD_PLAN"),
        help="compare two plan.json files instead (e.g. one stack previewed with two releases of the package)",
    )
    parser.add_argument("--stack", help="one stack (default: every stack of either side)")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the project, in a git checkout (default: .)")
    args = parser.parse_args(argv)
    if args.plans:
        return _compare_plan_files(*args.plans)
    # a SIGTERM (a CI job's timeout, a cancelled run) unwinds like Ctrl-C, so the base worktree is removed and the
    # temporary folder deleted: the default action ends the process there, leaving the worktree registered in the
    # checkout (new-user review 17, m8)
    signal.signal(signal.SIGTERM, _terminated)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            text = report(args.root.resolve(), args.base, args.stack, Path(tmp))
        except DiffError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
