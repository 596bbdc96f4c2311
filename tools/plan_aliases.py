"""Which resource of a base plan a head plan's resource is, by URN and then by alias, as the Pulumi engine finds it.

The engine looks a registered resource up in the stack's state by its URN first, then by each of its aliases in
order; a resource found by an alias is that resource renamed (updated, not created, and the old URN is not deleted).
An alias matches only what is in the state, and a state resource is taken by one resource at most. The plans record
each resource's aliases as the engine receives them (:class:`tpu_serving_tools.offline.RecordedResource`): either a
URN, or a spec whose name, type, parent, stack and project default to the resource's own. A parent's own aliases,
which the engine also applies to its children, are not followed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STACK_TYPE = "pulumi:pulumi:Stack"


def _parts(urn: str) -> tuple[str, str, str, str]:
    """``(stack, project, qualified type, name)`` of ``urn:pulumi:<stack>::<project>::<type>::<name>``."""
    head, project, qualified, name = urn.split("::", 3)
    return head.removeprefix("urn:pulumi:"), project, qualified, name


def make_urn(stack: str, project: str, parent: str | None, type_: str, name: str) -> str:
    """The URN of a resource of ``type_`` named ``name`` under ``parent`` (a URN; none, or the stack: top level)."""
    parent_type = _parts(parent)[2].split("$")[-1] if parent else STACK_TYPE
    qualified = type_ if parent_type == STACK_TYPE else f"{parent_type}${type_}"
    return f"urn:pulumi:{stack}::{project}::{qualified}::{name}"


def alias_urns(resource: Mapping[str, Any]) -> list[str]:
    """The URNs ``resource``'s recorded aliases name, in order."""
    stack, project, _, name = _parts(str(resource["urn"]))
    out = []
    for alias in resource.get("aliases") or ():
        if isinstance(alias.get("urn"), str):
            out.append(alias["urn"])
            continue
        spec = alias.get("spec") or {}
        parent = None if spec.get("noParent") else spec.get("parentUrn") or resource.get("parent")
        out.append(
            make_urn(
                spec.get("stack") or stack,
                spec.get("project") or project,
                parent,
                spec.get("type") or str(resource["type"]),
                spec.get("name") or name,
            )
        )
    return out


def renamed(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """``{old URN: new URN}`` of the base's resources that a head resource with another URN takes by an alias: its
    first alias in the base, unless that is the URN of a head resource or an earlier head resource took it (the
    engine refuses the deployment then)."""
    taken: dict[str, str] = {}
    for urn, resource in new.items():
        if urn in old:
            continue
        hit = next((a for a in alias_urns(resource) if a in old), None)
        if hit is not None and hit not in new and hit not in taken:
            taken[hit] = urn
    return taken
