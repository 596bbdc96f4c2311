"""What changed in the golden plans, by resource and field: a regeneration is never silent.

``make golden`` prints it after rewriting the files; ``make golden-review GOLDEN_BASE=<ref>`` prints it for the
working tree against a git ref; ``tests/test_golden.py`` fails when a change against the base is not listed
in :data:`ACKNOWLEDGED` (``tests/golden_changes.txt``), one line per changed resource field::

    <stack> <resource name> <field>

where the resource name is the plan's ``name`` (with its type when two resources share it, ``type::name``),
and the field a dotted path (``inputs.spec.replicas``; ``+`` or ``-`` for a resource added or removed,
``output.<name>`` for a stack output). A resource is known by its URN, so a renamed or re-parented
resource is one removed and one added.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NEW = "new stack"
"""The field of the one change a new stack's golden plan makes."""
GOLDEN = Path("tests") / "golden"
ACKNOWLEDGED = Path("tests") / "golden_changes.txt"
SHOWN = 60
"""Characters of an old or new value shown."""


@dataclass(frozen=True, order=True)
class Change:
    """One changed field of one resource of one stack (``field`` ``+``/``-``: added/removed resource)."""

    stack: str
    resource: str
    field: str
    old: str = ""
    new: str = ""

    @property
    def key(self) -> str:
        return f"{self.stack} {self.resource} {self.field}"

    def __str__(self) -> str:
        if self.field == NEW:
            return f"new stack {self.stack} {self.resource} (its golden files are new: no line to list)"
        if self.field in ("+", "-"):
            return f"{self.field} {self.stack} {self.resource}"
        return f"~ {self.key}: {self.old} -> {self.new}"


def _shown(value: Any) -> str:
    text = "(absent)" if value is _ABSENT else json.dumps(value, sort_keys=True)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


_ABSENT = object()


def field_changes(old: Any, new: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(dotted path, old, new) of every leaf that differs; lists compare item by item (``path[i]``)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            yield from field_changes(old.get(key, _ABSENT), new.get(key, _ABSENT), f"{path}.{key}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from field_changes(a, b, f"{path}[{i}]")
    elif old != new:
        yield path, old, new


def _names(resources: list[Mapping[str, Any]]) -> dict[str, str]:
    """URN -> how a change names the resource: ``name``, or ``type::name`` when the name is not unique."""
    count: dict[str, int] = {}
    for r in resources:
        count[str(r["name"])] = count.get(str(r["name"]), 0) + 1
    return {
        str(r["urn"]): (str(r["name"]) if count[str(r["name"])] == 1 else f"{r['type']}::{r['name']}")
        for r in resources
    }


def plan_changes(stack: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[Change]:
    """Every change from plan ``old`` to plan ``new`` of ``stack`` (None: the stack's file is absent)."""
    before = {str(r["urn"]): r for r in (old or {}).get("resources", ())}
    after = {str(r["urn"]): r for r in (new or {}).get("resources", ())}
    names = {**_names(list(before.values())), **_names(list(after.values()))}
    out = [Change(stack, names[u], "-") for u in before.keys() - after.keys()]
    out += [Change(stack, names[u], "+") for u in after.keys() - before.keys()]
    for urn in before.keys() & after.keys():
        a = {k: v for k, v in before[urn].items() if k != "urn"}
        b = {k: v for k, v in after[urn].items() if k != "urn"}
        out += [Change(stack, names[urn], p[1:], _shown(x), _shown(y)) for p, x, y in field_changes(a, b, "")]
    for path, x, y in field_changes((old or {}).get("outputs", {}), (new or {}).get("outputs", {}), ""):
        out.append(Change(stack, "(stack)", f"output{path}", _shown(x), _shown(y)))
    return sorted(out)


def tree_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[Change]:
    """Changes between two golden trees (file name -> text); the plans say what the manifests render."""
    stacks = {n.removesuffix(".plan.json") for n in (*old, *new) if n.endswith(".plan.json")}
    out = []
    for stack in sorted(stacks):
        name = f"{stack}.plan.json"
        a, b = old.get(name), new.get(name)
        if a is None and b is not None:  # a new stack: its golden file is new as a whole, and reviewed as one
            out.append(Change(stack, f"({len(json.loads(b).get('resources', ()))} resources)", NEW))
            continue
        out += plan_changes(stack, json.loads(a) if a else None, json.loads(b) if b else None)
    return out


def working_tree(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((root / GOLDEN).glob("*.plan.json"))}


class BaseUnavailable(Exception):
    """The git ref to compare with cannot be read."""


def at_ref(root: Path, ref: str) -> dict[str, str]:
    """The golden plans as committed at ``ref``."""
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{ref}:{GOLDEN.as_posix()}"], cwd=root, capture_output=True, text=True
    )
    if listed.returncode != 0:
        raise BaseUnavailable(
            f"cannot read {GOLDEN} at git ref {ref!r}: {listed.stderr.strip()}; name the base with "
            "`make golden-review GOLDEN_BASE=<ref>` (origin/main in a clone whose branch is not main)"
        )
    out = {}
    for name in listed.stdout.split():
        if name.endswith(".plan.json"):
            shown = subprocess.run(
                ["git", "show", f"{ref}:{GOLDEN.as_posix()}/{name}"],
                cwd=root,
                capture_output=True,
                text=True,
                check=True,
            )
            out[name] = shown.stdout
    return out


def acknowledged(root: Path) -> set[str]:
    """The keys listed in :data:`ACKNOWLEDGED` (blank lines and ``#`` comments skipped)."""
    path = root / ACKNOWLEDGED
    lines = path.read_text().splitlines() if path.is_file() else []
    return {" ".join(line.split()) for line in lines if line.strip() and not line.lstrip().startswith("#")}


def unacknowledged(changes: list[Change], listed: set[str]) -> list[Change]:
    """The changes a line of :data:`ACKNOWLEDGED` must name: all but a new stack's, whose golden files are new as a
    whole (new-user review 11, m9: a new stack's 108 lines were copied by hand into a file every stack shares)."""
    return [c for c in changes if c.field != NEW and c.key not in listed]


def report(changes: list[Change]) -> str:
    if not changes:
        return "golden plans: no resource changed"
    resources = {(c.stack, c.resource) for c in changes}
    head = f"golden plans: {len(changes)} change(s) in {len(resources)} resource(s)"
    return "\n".join([head, *(f"  {c}" for c in changes)])


def stale_lines(stale: list[str], ref: str, verbose: bool) -> list[str]:
    """The listed keys that no longer change against ``ref``, with ``verbose`` only: a count and each key under it (on
    a clean main every entry of the release's list is such a key)."""
    if not stale:
        return []
    head = f"listed in {ACKNOWLEDGED} but unchanged against {ref}: {len(stale)}"
    if verbose:
        return [f"{head}:", *(f"  {k}" for k in stale)]
    return []  # the release's list, unchanged against the ref: noise to a change that lists none (new-user review 12, m3)


@dataclass(frozen=True)
class Base:
    """The golden plans at the base ref, and the ref read."""

    ref: str
    tree: dict[str, str]


def base_tree(root: Path, ref: str) -> Base:
    """The golden plans at ``ref``; ``main`` falls back to ``origin/main`` in a clone whose checked-out branch is
    another (new-user review round 39, m2), as ``make diff`` and the golden test read it."""
    try:
        return Base(ref, at_ref(root, ref))
    except BaseUnavailable:
        if ref != "main":
            raise
        return Base("origin/main", at_ref(root, "origin/main"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tpu_serving_tools.golden.review",
        description="The golden plans' changes against a git ref, and those not yet listed in "
        f"{ACKNOWLEDGED} (a new stack's need none).",
    )
    parser.add_argument("ref", nargs="?", default="main", help="the git ref to compare with (default main)")
    parser.add_argument("--verbose", action="store_true", help="also list each listed key that no longer changes")
    args = parser.parse_args(argv)
    ref, verbose = str(args.ref), bool(args.verbose)
    root = Path.cwd()
    try:
        base = base_tree(root, ref)
    except BaseUnavailable as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if base.ref != ref:
        print(f"{ref} is not a branch of this clone: against {base.ref}")
    ref = base.ref
    changes = tree_changes(base.tree, working_tree(root))
    print(f"against {ref}: " + report(changes))
    listed = acknowledged(root)
    missing = unacknowledged(changes, listed)
    if missing:
        print(f"not listed in {ACKNOWLEDGED} ({len(missing)}):", *(f"  {c.key}" for c in missing), sep="\n")
    for line in stale_lines(sorted(listed - {c.key for c in changes}), ref, verbose):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
