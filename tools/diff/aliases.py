"""Which resource of a base plan a head plan's resource is, by URN and then by alias, as the Pulumi engine finds it.

The engine looks a registered resource up in the stack's state by its URN first, then by each of its aliases in
order; a resource found by an alias is that resource renamed (updated, not created, and the old URN is not deleted).
An alias matches only what is in the state, and a state resource is taken by one resource at most. The plans record
each resource's aliases as the engine receives them (:class:`tpu_serving_tools.preview.offline.RecordedResource`): either a
URN, or a spec whose name, type, parent, stack and project default to the resource's own. A parent's own aliases,
which the engine also applies to its children, are not followed here.

A Kubernetes object declared anew under another URN with no alias (:func:`same_object_replaced`) is not renamed: the
engine creates the new resource and deletes the old one, and with it the object.
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


def _object(r: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a Kubernetes resource's object, a Patch resource's as its kind's."""
    inputs, kind = r.get("inputs") or {}, str(r.get("type", ""))
    meta = inputs.get("metadata")
    if not kind.startswith("kubernetes:") or not isinstance(meta, Mapping) or not meta.get("name"):
        return None
    return kind.rsplit(":", 1)[-1].removesuffix("Patch"), str(meta.get("namespace", "")), str(meta["name"])


def same_object_replaced(added: list[dict[str, Any]], removed: list[dict[str, Any]]) -> list[str]:
    """A removed Kubernetes resource, not retained on delete, whose object an added one declares (a new type or
    name for the same object): pulumi up creates the new one, then deletes the old, which deletes the object the new
    one just made (pulumi/pulumi-kubernetes#4522; new-user review 17, M1: a plain PriorityClass replaced by its
    Patch resource)."""
    made = {o: r for r in added if (o := _object(r)) is not None}
    return [
        f"Deletes {o[0]} {o[1] + '/' if o[1] else ''}{o[2]} after {made[o]['name']} declares it anew: the old "
        f"resource {r['name']} is removed without retainOnDelete, and its delete removes the object the new one "
        "applied; retain the old one on delete first (a pulumi up with retainOnDelete), or pulumi state delete it"
        for r in removed
        if (o := _object(r)) is not None and o in made and not r.get("retainOnDelete")
    ]
