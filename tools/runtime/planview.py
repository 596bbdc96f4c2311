"""Read access to an offline plan (the JSON of ``plan.json``) for the runtime checks."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

UNKNOWN = "<unknown>"
"""How the offline preview shows a value only the provider can compute."""


def known_text(value: Any) -> str | None:
    """A string input the plan knows (None for an unknown or absent value)."""
    return value if isinstance(value, str) and value != UNKNOWN else None


def qualified_name(obj: Mapping[str, Any]) -> str:
    """``<namespace>/<name>`` of a Kubernetes object (namespace ``default`` when its metadata names none): what
    tells two same-named objects of two namespaces apart in a finding's subject."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', 'default')}/{meta.get('name')}"


def entries(value: Any) -> Iterator[tuple[str | None, Any]]:
    """Every (key, value) under ``value``, however deep: a mapping's entries with their keys, a list's items with
    None; each container before what it holds. The one walker of a plan's free-form values."""
    items: Iterator[tuple[str | None, Any]]
    if isinstance(value, Mapping):
        items = iter(value.items())
    elif isinstance(value, list):
        items = ((None, v) for v in value)
    else:
        return
    for key, child in items:
        yield key, child
        yield from entries(child)


@dataclass(frozen=True)
class PlanView:
    """A plan with look-ups by type, URN and Kubernetes kind."""

    plan: Mapping[str, Any]

    @property
    def stack(self) -> str:
        return str(self.plan["stack"])

    def setting(self, key: str) -> Any:
        """The stack's setting ``key`` (``<namespace>:<key>`` in the plan's ``config``, any namespace), parsed as
        JSON where it is JSON; None when the plan has no such setting."""
        for name, value in (self.plan.get("config") or {}).items():
            if str(name).split(":", 1)[-1] == key:
                try:
                    return json.loads(value)
                except (TypeError, ValueError):
                    return value
        return None

    @property
    def resources(self) -> list[Mapping[str, Any]]:
        return list(self.plan["resources"])

    def of_type(self, type_: str) -> list[Mapping[str, Any]]:
        """Resources of a Pulumi type token, e.g. ``gcp:container/nodePool:NodePool``."""
        return [r for r in self.resources if r["type"] == type_]

    def by_urn(self, urn: str) -> Mapping[str, Any]:
        return next(r for r in self.resources if r["urn"] == urn)

    def input_source(self, resource: Mapping[str, Any], prop: str) -> list[Mapping[str, Any]]:
        """The resources of the plan whose outputs flow into input ``prop`` of ``resource`` (a resource the program
        read, not declared, is not in the plan: a model stack's StackReference to its platform)."""
        urns = set((resource.get("propertyDependencies") or {}).get(prop, []))
        return [r for r in self.resources if r["urn"] in urns]

    def kubernetes_objects(self, kind: str | None = None) -> Iterator[Mapping[str, Any]]:
        """Kubernetes objects the plan declares (``inputs`` with apiVersion/kind), optionally of one kind."""
        for r in self.resources:
            if (
                r["custom"]
                and r["type"].startswith("kubernetes:")
                and "kind" in r["inputs"]
                and (kind is None or r["inputs"]["kind"] == kind)
            ):
                yield r["inputs"]


@dataclass(frozen=True)
class Dependencies:
    """What each resource of a plan waits for: its dependencies, property dependencies included, transitively."""

    waits_for: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, view: PlanView, *, through_components: bool = False) -> Dependencies:
        """The plan's dependencies; ``through_components``: a dependency on a component stands for its children too
        (the engine waits for them), for plans that record a component's URN as a dependency."""
        children: dict[str, list[str]] = {}
        if through_components:
            for r in view.resources:
                if r.get("parent"):
                    children.setdefault(str(r["parent"]), []).append(str(r["urn"]))
        waits: dict[str, tuple[str, ...]] = {}
        for r in view.resources:
            deps = list(r.get("dependencies") or ())
            for p in (r.get("propertyDependencies") or {}).values():
                deps += list(p)
            waits[str(r["urn"])] = tuple(w for u in deps for w in (u, *children.get(u, ())))
        return cls(waits)

    def ancestors(self, urn: str) -> set[str]:
        """URNs ``urn`` waits for, transitively."""
        seen: set[str] = set()
        todo = [urn]
        while todo:
            for u in self.waits_for.get(todo.pop(), ()):
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
        return seen
