"""Would a second ``pulumi up`` of the unchanged stack change nothing, where the cloud reads back a field differently?

The first ``pulumi up`` records each resource's state: its inputs as the provider reads them back. For most fields
that is the input, so a model that compares inputs with inputs finds nothing by construction; only the fields that
:data:`READ_BACK` lists (where GKE or the provider reads back something else, each with its source) can differ.
This category examines exactly the resources one of those rules is about, and nothing else: every difference
between their inputs and the recorded state that ``ignoreChanges`` does not cover is a diff, a replacement when the
path is ForceNew in the provider's schema (``tools/provider_rules``, the same rules ``make diff`` reports) or listed
in the resource's ``replaceOnChanges``, an update otherwise. Kubernetes objects are not examined: ``make e2e``
applies them with the real provider and previews again against the live objects (``preview --refresh``), which is
what this model could only assume.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.diff.review import flatten, recreate_reason, under
from tpu_serving_tools.gcp_types import CLUSTER
from tpu_serving_tools.runtime.planview import UNKNOWN, PlanView
from tpu_serving_tools.runtime.result import CategoryResult, Finding

Inputs = Mapping[str, Any]


def _default_pool_removed(inputs: Inputs) -> bool:
    return bool(inputs.get("removeDefaultNodePool"))


@dataclass(frozen=True)
class ReadBack:
    """A field whose state after the first apply differs from its input, and when."""

    type: str
    path: str
    applies: Callable[[Inputs], bool]
    state: Callable[[Any], Any]
    """The value recorded in state, given the input value."""
    source: str


READ_BACK: tuple[ReadBack, ...] = (
    ReadBack(
        CLUSTER,
        "nodeConfig",
        _default_pool_removed,
        lambda v: {"<read back from the API>": "defaults / another pool"},
        "With removeDefaultNodePool the API's cluster nodeConfig reflects defaults or another pool, so the "
        "refreshed nodeConfig differs from the inputs (pulumi/pulumi-gcp#2247: GKE rewrote oauthScopes and "
        "the cluster was replaced on every up; #1355: fresh clusters with removeDefaultNodePool drift; "
        "terraform-google-kubernetes-engine v44.2.0 ignores the default pool in lifecycle.ignore_changes)",
    ),
    ReadBack(
        CLUSTER,
        "initialNodeCount",
        _default_pool_removed,
        lambda v: 0,
        "After the default pool is removed the cluster reports no initial nodes; GKE modules set "
        "lifecycle ignore_changes = [node_pool, initial_node_count] "
        "(terraform-google-modules/terraform-google-kubernetes-engine, cluster.tf)",
    ),
)
"""What the provider reads back differently after the first apply."""


@dataclass(frozen=True)
class Drift:
    """One path that differs between the second run's inputs and the recorded state."""

    path: str
    replaces: str | None
    """Why the path forces a replacement, or None for an in-place update."""


def recorded_state(resource: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs as the first apply records them (after :data:`READ_BACK`)."""
    state = dict(resource["inputs"])
    for rb in READ_BACK:
        if rb.type == resource["type"] and rb.path in state and rb.applies(resource["inputs"]):
            state[rb.path] = rb.state(state[rb.path])
    return state


def _covered(path: str, patterns: list[str]) -> bool:
    """Whether ``path`` is under one of Pulumi's ``ignoreChanges``/``replaceOnChanges`` paths."""
    return any(under(path, p.replace("[*]", "")) for p in patterns)


def _replace_reason(resource: Mapping[str, Any], path: str) -> str | None:
    return recreate_reason(resource, path)


def drift(resource: Mapping[str, Any]) -> list[Drift]:
    """Differences the second ``pulumi up`` would act on."""
    ignore = list(resource.get("ignoreChanges") or ())
    want, have = flatten(resource["inputs"]), flatten(recorded_state(resource))
    out = []
    for path in sorted(set(want) | set(have)):
        if want.get(path) == have.get(path) or want.get(path) == UNKNOWN or _covered(path, ignore):
            continue
        out.append(Drift(path, _replace_reason(resource, path)))
    return out


def _finding(resource: Mapping[str, Any]) -> Finding:
    label = f"second apply {resource['type'].split(':')[-1]} {resource['name']}"
    drifts = drift(resource)
    if not drifts:
        return Finding(label, True, "no change")
    replacing = [d for d in drifts if d.replaces]
    top = sorted({d.path.split(".")[0].split("[")[0] for d in (replacing or drifts)})
    if replacing:
        return Finding(
            label,
            False,
            f"would REPLACE the {resource['type'].split(':')[-1].lower()}: "
            f"{', '.join(top)} differs ({replacing[0].replaces}); add them to ignoreChanges",
        )
    return Finding(label, False, f"would update {', '.join(top)}")


READ_BACK_TYPES = frozenset(rb.type for rb in READ_BACK)
"""The resource types a read-back rule is about: the only ones a second apply can find changed."""


def findings(view: PlanView) -> list[Finding]:
    """One finding per resource of a type that :data:`READ_BACK` knows (none in a plan without such a resource)."""
    return [_finding(r) for r in view.resources if r.get("custom") and r["type"] in READ_BACK_TYPES]


def check(view: PlanView) -> CategoryResult:
    """The ``second apply`` category: would ``pulumi up`` of the unchanged stack change or replace anything?"""
    return CategoryResult("second apply", findings(view))
