"""The preview of a move from a self-contained stack to a platform stack and a model stack (docs/platform.md).

Pulumi cannot alias a resource across stacks: ``pulumi state move`` moves it, rewriting only the stack and project of
its URN (and of its dependencies and provider references); a moved resource whose parent stays behind gets the
destination's root stack as parent; the children of a moved resource move with it; providers are copied, not moved
(pulumi/pulumi pkg/cmd/pulumi/state/state_move.go: ``renameStackAndProject``, ``ChildrenOf``, ``providersToCopy``).
In the destination, the program then finds each moved resource by its URN or by an alias, as in one stack.

So the self-contained stack's plan is the base, and each head plan (the platform's, then the model's) takes the base's
resources whose URN, with the head's stack, is one of its resources' URNs or aliases (:func:`.plan_aliases.renamed`);
a base resource that no head takes goes where its nearest taken ancestor goes (a child moves with its parent), or to
the last head, whose ``pulumi up`` then deletes it. Each head is then compared with the base resources it takes by
:func:`.diff.diff_plans`, the one diff engine: what is moved and updated, replaced, created and deleted. The check
fails when the base has no cluster, or a cluster or node pool would be replaced or deleted, or a head would create a
GCP object (type, project, region and ``name``: :func:`gcp_identity`) that a base resource it does not take still is
when it runs ``up`` (:func:`_collisions`). A resource a head before the last takes from under a component going to
the last (the self-contained stack's proxy-only subnet, taken by the platform's by a URN alias) is moved first, by its
own URN (:func:`_handover`): the component's move would take it along.

The plans' URNs are the offline preview's, whose type names only the parent's own type (pulumi 3.272.0
``pulumi/runtime/mocks.py`` l.209-215, ``make_urn``); the engine's names every ancestor's. :func:`engine_urn` gives the
latter, for the ``pulumi state move`` commands printed.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.diff.review import DiffError, StackDiff, diff_plans, render_markdown, render_plan
from tpu_serving_tools.gcp_types import CLUSTER, NODE_POOL
from tpu_serving_tools.preview.offline import UNKNOWN

MOVES = Path("stacks") / "moves"
"""Where the stack files a move goes to live: beside the project's stack folder, not in it (not project stacks)."""


def _chain(urn: str) -> str:
    return urn.split("::")[2]


def _urn(stack: str, project: str, parent: str | None, type_: str, name: str) -> str:
    chain = f"{_chain(parent)}${type_}" if parent else type_
    return f"urn:pulumi:{stack}::{project}::{chain}::{name}"


def engine_names(resources: list[dict[str, Any]], stack: str) -> dict[str, list[str]]:
    """{plan URN: [the engine's URN in ``stack``, then its aliases' URNs]}, as the engine derives them: a type names
    every ancestor's type, and a child has an alias under each of its parent's aliases (pulumi/pulumi
    sdk/go/common/resource/urn.go ``NewURN``, from the parent's qualified type)."""
    by = {r["urn"]: r for r in resources}
    memo: dict[str, list[str]] = {}

    def names(urn: str) -> list[str]:
        if urn not in memo:
            r = by[urn]
            _, project, _, name = str(urn).split("::", 3)
            parents: list[str | None] = [*names(r["parent"])] if r.get("parent") in by else [None]
            out = [_urn(stack, project, p, str(r["type"]), name) for p in parents]
            for alias in r.get("aliases") or ():
                spec = alias.get("spec") or {}
                parent = None if spec.get("noParent") else spec.get("parentUrn") or parents[0]
                out.append(
                    alias["urn"]
                    if "urn" in alias
                    else _urn(stack, project, parent, spec.get("type") or str(r["type"]), spec.get("name") or name)
                )
            memo[urn] = out
        return memo[urn]

    return {u: names(u) for u in by}


def resolve_cluster_ids(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The base's node pools with an unknown ``cluster`` that is the base cluster's ID, set to it: the provider's ID
    of a cluster is ``projects/<project>/locations/<location>/clusters/<name>`` (pulumi-gcp's NodePool takes "the
    format `projects/{{project}}/locations/{{location}}/clusters/{{cluster}}`", pulumi_gcp/container/node_pool.py,
    the form of :func:`tpu_serving.platform.kubeconfig.cluster_identifier`), which a model stack's pools name, so the move
    compares the value the state holds, not an unknown."""
    clusters = {r["urn"]: r["inputs"] for r in resources if r["type"] == CLUSTER}
    out = []
    for r in resources:
        deps = (r.get("propertyDependencies") or {}).get("cluster") or []
        owner = next((clusters[d] for d in deps if d in clusters), None)
        if r["type"] == NODE_POOL and r["inputs"].get("cluster") == UNKNOWN and owner is not None:
            ident = f"projects/{owner.get('project')}/locations/{owner.get('location')}/clusters/{owner.get('name')}"
            r = {**r, "inputs": {**r["inputs"], "cluster": ident}}
        out.append(r)
    return out


@dataclass
class Move:
    """Where each base resource goes, and each head's diff against the base resources it takes."""

    dest: dict[str, str] = field(default_factory=dict)
    """{base URN: head stack}."""
    taken: dict[str, str] = field(default_factory=dict)
    """{base URN: the head resource's plan URN} of the base resources a head resource takes (by URN or alias); the
    rest are deleted by their stack's ``up``."""
    diffs: list[StackDiff] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _take(base: list[dict[str, Any]], heads: list[tuple[str, Mapping[str, Any]]], move: Move) -> None:
    """Each base resource's head: the first whose resource has its engine URN, or else an alias of it, as the engine
    looks a resource up in the state, by URN first and then by each alias (one state resource to one resource)."""
    for stack, plan in heads:
        old = {n[0]: u for u, n in engine_names(base, stack).items() if u not in move.dest}
        new = engine_names(list(plan.get("resources", [])), stack)
        own = {n[0] for n in new.values()}
        for urn, names in new.items():
            hit = names[0] if names[0] in old else next((a for a in names[1:] if a in old and a not in own), None)
            if hit is not None and old[hit] not in move.dest:
                move.dest[old[hit]] = stack
                move.taken[old[hit]] = urn


def _inherit(base: Mapping[str, dict[str, Any]], last: str, move: Move) -> None:
    """A base resource no head takes goes with its nearest taken ancestor (a child moves with its parent), else to the
    last head."""
    for urn, r in base.items():
        if urn in move.dest:
            continue
        parent = str(r.get("parent"))
        while parent in base and parent not in move.taken:
            parent = str(base[parent].get("parent"))
        move.dest[urn] = move.dest.get(parent, last)


def _ancestors(base: Mapping[str, dict[str, Any]], urn: str) -> list[str]:
    out, parent = [], str(base[urn].get("parent"))
    while parent in base:
        out.append(parent)
        parent = str(base[parent].get("parent"))
    return out


def _split(base: Mapping[str, dict[str, Any]], move: Move, gone: AbstractSet[str] = frozenset()) -> set[str]:
    """The base resources with descendants going to another stack than theirs: ``pulumi state move`` would take
    those descendants along, so they are not moved (the head declares them anew; the source keeps the old ones).
    The resources ``gone`` (moved out before, with their descendants) do not count."""
    out: set[str] = set()
    for urn in base:
        ancestors = _ancestors(base, urn)
        if urn in gone or any(a in gone for a in ancestors):
            continue
        out.update(a for a in ancestors if move.dest[a] != move.dest[urn])
    return out


def _handover(base: Mapping[str, dict[str, Any]], move: Move, last: str) -> set[str]:
    """The base resources that a head before the last takes from under a resource going whole to the last head
    (the proxy-only subnet of a self-contained stack's ServingGateway, which the platform's SharedGateway takes):
    ``pulumi state move`` of that parent would take them along, children moving with their parent, so they are moved
    first, by their own URN; the source then holds the parent without them. Not one whose subtree goes to several
    stacks, nor one holding a provider: the last head's resources take their copies of it from the source (the
    cluster's Kubernetes provider), so it moves after them."""
    below: dict[str, list[str]] = {u: [] for u in base}
    for urn in base:
        for a in _ancestors(base, urn):
            below[a].append(urn)
    candidates = {
        urn
        for urn, r in base.items()
        if move.dest[urn] != last
        and move.dest.get(str(r.get("parent"))) == last
        and all(move.dest[u] == move.dest[urn] for u in below[urn])
        and not any(str(base[u]["type"]).startswith("pulumi:providers:") for u in [urn, *below[urn]])
    }
    split = _split(base, move, candidates)
    return {urn for urn in candidates if str(base[urn].get("parent")) not in split}


def _move_command(source: str, stack: str, urns: list[str]) -> str:
    listed = " \\\n    ".join(f"'{u}'" for u in sorted(urns))
    return f"pulumi state move --source {source} --dest {stack} --yes \\\n    {listed}"


def _commands(source: str, base: Mapping[str, dict[str, Any]], order: list[str], move: Move) -> None:
    """``pulumi state move`` of the resources handed over from under a resource of the last head (:func:`_handover`)
    first, then of each head's topmost moved resources, the last head's first: it takes copies of the providers the
    others' resources (a cluster's Kubernetes provider) still hold in the source."""
    engine = engine_names(list(base.values()), source)
    handed = _handover(base, move, order[0])
    split = _split(base, move, handed)
    for stack in order[:0:-1]:
        urns = [engine[u][0] for u in handed if move.dest[u] == stack]
        move.commands += [_move_command(source, stack, urns)] if urns else []
    for stack in order:
        roots = [
            engine[urn][0]
            for urn, r in base.items()
            if move.dest[urn] == stack
            and urn not in split
            and urn not in handed
            and not str(r["type"]).startswith("pulumi:providers:")
            and (r.get("parent") not in base or r.get("parent") in split)
        ]
        move.commands += [_move_command(source, stack, roots)] if roots else []


def _problems(move: Move) -> list[str]:
    """A cluster or node pool replaced, or deleted, in any head."""
    out = []
    for d in move.diffs:
        out += [
            f"{d.stack}: replaces {c.type} {c.name} ({', '.join(c.recreates)})"
            for c in d.changed
            if c.type in (CLUSTER, NODE_POOL) and c.recreates
        ]
        out += [f"{d.stack}: deletes {r['type']} {r['name']}" for r in d.removed if r["type"] in (CLUSTER, NODE_POOL)]
    return out


def gcp_identity(resource: Mapping[str, Any]) -> tuple[str, str | None, str | None, str] | None:
    """What GCP knows a resource by: its type, project, region (or location) and ``name`` input; None for a resource
    of another provider, or with no known ``name``. Two resources of one identity are one GCP object: the second
    create is refused (a subnetwork's name is unique in its project and region), as is a second ACTIVE proxy-only
    subnet of a region and network ("only a single proxy-only subnet with purpose REGIONAL_MANAGED_PROXY can be active
    at any point in time", https://cloud.google.com/load-balancing/docs/proxy-only-subnets)."""
    inputs, type_ = resource.get("inputs") or {}, str(resource["type"])
    name = inputs.get("name")
    if not type_.startswith("gcp:") or not isinstance(name, str) or name == UNKNOWN:
        return None
    return type_, inputs.get("project"), inputs.get("region") or inputs.get("location"), name


def _collisions(base: Mapping[str, dict[str, Any]], move: Move) -> list[str]:
    """A head that creates a GCP object (:func:`gcp_identity`) the base holds and the head does not take: moved to
    another stack, it exists while the head runs ``up`` (the platform's runs before the model's, and the model does
    not delete what the platform took); left to the head untaken, its ``up`` deletes it only after the create."""
    held: dict[tuple[str, str | None, str | None, str], list[str]] = {}
    for urn, r in base.items():
        ident = gcp_identity(r)
        if ident is not None:
            held.setdefault(ident, []).append(urn)
    out = []
    for d in move.diffs:
        for r in d.added:
            ident = gcp_identity(r)
            if ident is None:
                continue
            out += [
                f"{d.stack}: creates {r['type']} {r['name']}, GCP name {ident[3]!r}, which the base's "
                f"{base[urn]['type']} {base[urn]['name']} holds: "
                + (
                    f"moved to {move.dest[urn]}, it still exists when {d.stack} runs up"
                    if move.dest[urn] != d.stack
                    else f"{d.stack} does not take it, and deletes it only after the create"
                )
                + "; GCP refuses the second"
                for urn in held.get(ident, [])
                if move.dest[urn] != d.stack or urn not in move.taken
            ]
    return out


def plan_move(base_plan: Mapping[str, Any], heads: list[tuple[str, Mapping[str, Any]]]) -> Move:
    """The move of ``base_plan``'s stack to ``heads`` (``(stack, plan)``, the platform first, the model last)."""
    resources = resolve_cluster_ids(list(base_plan.get("resources", [])))
    base = {r["urn"]: r for r in resources}
    move = Move()
    if not any(r["type"] == CLUSTER for r in resources):
        move.problems.append(f"the base plan of {base_plan.get('stack')} has no cluster: nothing to move")
        return move
    if not heads:
        move.problems.append("no head plan: the move goes nowhere")
        return move
    _take(resources, heads, move)
    _inherit(base, heads[-1][0], move)
    for stack, plan in heads:
        engine = engine_names(resources, stack)
        mine = [{**r, "urn": move.taken.get(u, engine[u][0])} for u, r in base.items() if move.dest[u] == stack]
        plan = {**plan, "resources": resolve_cluster_ids(list(plan.get("resources", [])))}
        outputs = base_plan.get("outputs") if stack == heads[-1][0] else {}
        move.diffs.append(diff_plans(stack, {"stack": stack, "resources": mine, "outputs": outputs}, plan))
    _commands(str(base_plan.get("stack")), base, [s for s, _ in reversed(heads)], move)
    move.problems += _problems(move) + _collisions(base, move)
    return move


def render(move: Move, source: str) -> str:
    """The Markdown report: each head's diff, the state moves, and the check's verdict."""
    lines = [f"## Move of `{source}` to {', '.join(f'`{d.stack}`' for d in move.diffs) or 'nowhere'}", ""]
    moved = {
        s: sum(1 for u, d in move.dest.items() if d == s and u in move.taken) for s in dict.fromkeys(move.dest.values())
    }
    lines += [f"- `{s}` takes {n} of the base's resources by URN or alias" for s, n in moved.items()]
    lines += ["", "### `pulumi state move` (the engine's URNs)", "", "```sh", *move.commands, "```", ""]
    lines += [render_markdown(d, source) for d in move.diffs]
    verdict = (
        ["**The move replaces no cluster and no node pool, and creates no GCP object the source still holds.**"]
        if not move.problems
        else ["**The move fails the check:**", *(f"- {p}" for p in move.problems)]
    )
    return "\n".join(lines + verdict + [""])


def overlay(root: Path, tmp: Path) -> Path:
    """A project at ``tmp`` that is ``root`` with the move's stack files (:data:`MOVES`) in its stack folder too."""
    tmp.mkdir(parents=True)
    for entry in root.iterdir():
        if entry.name != "stacks":
            (tmp / entry.name).symlink_to(entry)
    (tmp / "stacks").mkdir()
    for f in [*(root / "stacks").glob("Pulumi.*.yaml"), *(root / MOVES).glob("Pulumi.*.yaml")]:
        (tmp / "stacks" / f.name).symlink_to(f)
    return tmp


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--from", dest="source", required=True, help="the self-contained stack (the base)")
    parser.add_argument(
        "--to", nargs="+", required=True, metavar="STACK", help="the platform stack, then the model stack (heads)"
    )
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the project (default: .)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        project = overlay(args.root.resolve(), Path(tmp) / "project")
        try:
            base = render_plan(project, args.source, Path(tmp) / "plans" / args.source)
            heads = [(s, render_plan(project, s, Path(tmp) / "plans" / s)) for s in args.to]
        except DiffError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    missing = [s for s, p in [(args.source, base), *heads] if p is None]
    if base is None or missing:
        print(f"error: no stack file for {', '.join(missing)} in stacks/ or {MOVES}/", file=sys.stderr)
        return 2
    move = plan_move(base, [(s, p) for s, p in heads if p is not None])
    print(render(move, args.source))
    return 1 if move.problems else 0


if __name__ == "__main__":
    sys.exit(main())
