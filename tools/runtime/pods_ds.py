"""The LeaderWorkerSets the DisaggregatedSet controller (LWS v0.10.0) makes, and what its webhooks refuse.

One child LeaderWorkerSet per (slice, role), named ``<ds>-<slice>-<revision>-<role>``, its spec the role's with
``replicas`` set (a Static role's ``spec.replicas``, an External role's DisaggregatedSetRoleScaler: an HPA's minimum,
else the controller's seed of 1), the controller's labels merged over the pod templates' (facts:
:mod:`.ds_facts`; their sources: ``data/disaggregated.json``). Each child is then expanded as any LeaderWorkerSet (:mod:`.pods_lws`). The real revision is a hash
of Go's JSON of the defaulted templates; the model writes ``<rev8>`` in its place.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.runtime import ds_facts as D
from tpu_serving_tools.runtime.pods_lws import expand_leaderworkerset
from tpu_serving_tools.runtime.pods_model import LimitDefaults, Pod
from tpu_serving_tools.runtime.quantities import scaled
from tpu_serving_tools.runtime.result import Finding

Counts = Mapping[tuple[str, str, str], int]
"""``(namespace, kind, name)`` -> replicas, as :func:`tools.runtime.pods.pods_of` takes them."""


@dataclass(frozen=True)
class Child:
    """One LeaderWorkerSet the DisaggregatedSet controller creates."""

    ds: str
    namespace: str
    role: str
    slice: int
    name: str
    lws: Mapping[str, Any]
    external: bool
    replicas: int


def is_external(role: Mapping[str, Any]) -> bool:
    return str((role.get("scaling") or {}).get("mode")) == "External"


def scaler_name(ds: str, role: str) -> str:
    return D.SCALER_NAME.format(ds=ds, role=role)


def role_replicas(ds: Mapping[str, Any], role: Mapping[str, Any], counts: Counts | None = None) -> int:
    """The replicas a role's child runs: an External role's scaler (``counts`` keyed by the scaler, else its seed),
    a Static role's ``spec.replicas``."""
    meta = ds.get("metadata") or {}
    if is_external(role):
        key = (str(meta.get("namespace", "default")), D.SCALER_KIND, scaler_name(str(meta["name"]), str(role["name"])))
        return int((counts or {}).get(key, D.SCALER_SEED))
    return int((role.get("spec") or {}).get("replicas", D.STATIC_DEFAULT_REPLICAS))


def child_name(ds: str, slice_: int, role: str, revision: str = D.REVISION) -> str:
    return D.CHILD_NAME.format(ds=ds, slice=slice_, revision=revision, role=role)


def _labelled(template: Mapping[str, Any] | None, labels: Mapping[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(dict(template or {}))
    meta = dict(out.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), **labels}  # the controller's labels win (lws_manager.go:45-50)
    out["metadata"] = meta
    return out


def children(ds: Mapping[str, Any], counts: Counts | None = None) -> list[Child]:
    """The child LeaderWorkerSets of a DisaggregatedSet, slice by slice, role by role (lws_manager.go:59-99)."""
    meta, spec = ds.get("metadata") or {}, ds.get("spec") or {}
    name, ns = str(meta["name"]), str(meta.get("namespace", "default"))
    out = []
    for s in range(int(spec.get("slices", 1))):
        for role in spec.get("roles") or ():
            rname = str(role["name"])
            labels = {
                "app": f"{name}-{s}-{rname}",
                D.DS_ROLE_LABEL: rname,
                D.DS_SLICE_LABEL: str(s),
                D.DS_NAME_LABEL: name,
                D.DS_REVISION_LABEL: D.REVISION,
            }
            lws_spec = copy.deepcopy(dict(role.get("spec") or {}))
            replicas = role_replicas(ds, role, counts)
            lws_spec["replicas"] = replicas
            tmpl = dict(lws_spec.get("leaderWorkerTemplate") or {})
            tmpl["workerTemplate"] = _labelled(tmpl.get("workerTemplate"), labels)
            if tmpl.get("leaderTemplate") is not None:
                tmpl["leaderTemplate"] = _labelled(tmpl["leaderTemplate"], labels)
            lws_spec["leaderWorkerTemplate"] = tmpl
            role_meta = role.get("metadata") or {}
            cname = child_name(name, s, rname)
            lws = {
                "apiVersion": "leaderworkerset.x-k8s.io/v1",
                "kind": "LeaderWorkerSet",
                "metadata": {
                    "name": cname,
                    "namespace": ns,
                    "labels": {**(role_meta.get("labels") or {}), **labels},
                    "annotations": dict(role_meta.get("annotations") or {}),
                },
                "spec": lws_spec,
            }
            out.append(Child(name, ns, rname, s, cname, lws, is_external(role), replicas))
    return out


def expand_disaggregatedset(obj: Mapping[str, Any], defaults: LimitDefaults, counts: Counts | None = None) -> list[Pod]:
    """Every pod of a DisaggregatedSet: each child LeaderWorkerSet's groups (:func:`.pods_lws.expand_leaderworkerset`)."""
    return [pod for child in children(obj, counts) for pod in expand_leaderworkerset(child.lws, defaults)]


# --------------------------------------------------------------------------- what the webhooks refuse


def _role_refusals(role: Mapping[str, Any], at: str) -> Iterator[str]:
    """The DisaggregatedSet webhook's rollout rules for one role (disaggregatedset_webhook.go:172-254)."""
    spec = role.get("spec") or {}
    strategy = spec.get("rolloutStrategy") or {}
    if strategy.get("type") not in (None, "", "RollingUpdate"):
        yield f"{at}.spec.rolloutStrategy.type {strategy['type']!r}: only RollingUpdate (webhook.go:176-183)"
    conf = strategy.get("rollingUpdateConfiguration") or {}
    if conf.get("partition") not in (None, 0):
        yield f"{at}...partition {conf['partition']}: not supported by DisaggregatedSet (webhook.go:189-195)"
    replicas = spec.get("replicas")
    if conf and replicas:
        unavailable = scaled(conf.get("maxUnavailable", 0), int(replicas), round_up=False)
        surge = scaled(conf.get("maxSurge", 0), int(replicas), round_up=True)
        if unavailable == 0 and surge == 0:
            yield f"{at}: maxUnavailable must not be 0 when maxSurge is 0 (webhook.go:205-254)"


def _exclusive_annotation(role: Mapping[str, Any]) -> str | None:
    """An LWS exclusive-topology annotation anywhere it takes effect for a role (webhook.go:150-166)."""
    keys = ("leaderworkerset.sigs.k8s.io/exclusive-topology", "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology")
    tmpl = (role.get("spec") or {}).get("leaderWorkerTemplate") or {}
    places = [role.get("metadata") or {}, (tmpl.get("leaderTemplate") or {}).get("metadata") or {}]
    places.append((tmpl.get("workerTemplate") or {}).get("metadata") or {})
    return next((k for p in places for k in keys if k in (p.get("annotations") or {})), None)


def refusals(ds: Mapping[str, Any]) -> list[str]:
    """Why the API server (CRD schema and CEL) or the DisaggregatedSet webhook refuses a DisaggregatedSet."""
    spec = ds.get("spec") or {}
    roles = list(spec.get("roles") or ())
    out = [*_role_count_refusals(roles), *_static_replicas_refusals(roles)]
    for i, role in enumerate(roles):
        out += _role_refusals(role, f"spec.roles[{i}]")
    if any(is_external(r) for r in roles) and int(spec.get("slices", 1)) > 1:
        out.append("spec.slices > 1 with a scaling.mode External role (webhook.go:96-102, alpha)")
    return out + _placement_refusals(spec.get("placementPolicy") or {}, roles)


def _role_count_refusals(roles: list[Mapping[str, Any]]) -> list[str]:
    """The CRD's bounds on the number of roles (types.go:107-111)."""
    if D.ROLES_MIN <= len(roles) <= D.ROLES_MAX:
        return []
    return [f"spec.roles has {len(roles)} role(s), not {D.ROLES_MIN} to {D.ROLES_MAX} (types.go:107-111)"]


def _static_replicas_refusals(roles: list[Mapping[str, Any]]) -> list[str]:
    """The CEL rule: the roles not scaled by a DisaggregatedSetRoleScaler run all zero replicas or none zero."""
    static = [r for r in roles if not is_external(r)]
    some_zero = any(not (r.get("spec") or {}).get("replicas") for r in static)
    some_up = any((r.get("spec") or {}).get("replicas") for r in static)
    if some_zero and some_up:
        return ["replicas must be zero for all non-External roles or non-zero for all (CEL, types.go:102)"]
    return []


def _placement_refusals(policy: Mapping[str, Any], roles: list[Mapping[str, Any]]) -> list[str]:
    """A placement policy other than None needs a topology and excludes the roles' LWS exclusive-topology
    annotations (webhook.go:120-133)."""
    if str(policy.get("type", "")) in D.PLACEMENT_NONE:
        return []
    out = []
    if not policy.get("topology"):
        out.append("spec.placementPolicy.topology is required when type is not None (webhook.go:120-123)")
    for i, role in enumerate(roles):
        key = _exclusive_annotation(role)
        if key:
            out.append(f"spec.roles[{i}]: {key} must not be combined with placementPolicy (webhook.go:126-133)")
    return out


def name_problems(child: Child) -> list[str]:
    """Why the child's LeaderWorkerSet or its groups' StatefulSets would be refused for their names, with the real
    revision's 8 characters in place of the model's placeholder."""
    real = child_name(child.ds, child.slice, child.role, "0" * D.REVISION_LENGTH)
    out = []
    if len(real) > D.LWS_NAME_MAX or not re.match(D.DNS1035, real):
        out.append(
            f"the LWS webhook refuses the name ({len(real)} characters with the revision; a DNS-1035 label of at "
            f"most {D.LWS_NAME_MAX}, leaderworkerset_webhook.go:127-129): the role never runs"
        )
    last = max(child.replicas - 1, 0)
    if len(f"{real}-{last}") > D.STATEFULSET_NAME_MAX:
        out.append(
            f"group StatefulSet {child.name}-{last} has {len(real) + 1 + len(str(last))} characters: over "
            f"{D.STATEFULSET_NAME_MAX}, its controller-revision-hash label exceeds 63 and no pod is created "
            "(kubernetes/kubernetes#64023)"
        )
    return out


def admission_findings(view_objects: list[Mapping[str, Any]]) -> list[Finding]:
    """Per DisaggregatedSet: admitted by its webhook; per child: a name its controllers can create."""
    out = []
    for ds in view_objects:
        meta = ds.get("metadata") or {}
        subject = f"object DisaggregatedSet {meta.get('namespace', 'default')}/{meta.get('name')} admission"
        refused = refusals(ds)
        out.append(Finding(subject, not refused, "; ".join(refused) or "the webhook and the CRD's rules admit it"))
        for child in children(ds):
            problems = name_problems(child)
            out.append(
                Finding(
                    f"object LeaderWorkerSet {child.namespace}/{child.name} of DisaggregatedSet/{child.ds}",
                    not problems,
                    "; ".join(problems) or "created by the DisaggregatedSet controller (lws_manager.go:59-99)",
                )
            )
    return out
