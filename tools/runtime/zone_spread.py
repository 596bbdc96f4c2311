"""A required spread over zones, against the zones the pods' pools are in: do the pods it holds apart all schedule?

A serving component spreads its standing groups' leaders over ``zones`` zones with ``whenUnsatisfiable:
DoNotSchedule`` and ``minDomains`` (:func:`tpu_serving.common.spread.group_zone_spread`). The component does not know the
node pools: a program that asks two zones of slices it placed in one gets leaders that stay Pending, for the
scheduler keeps each zone within ``maxSkew`` of the emptiest, and while fewer than ``minDomains`` zones are
eligible it takes the emptiest as holding none ("When the number of eligible domains with matching topology keys is
less than minDomains, Pod Topology Spread treats 'global minimum' as 0": k8s.io/api v0.36.3 core/v1/types.go
l.4734-4743; the filter, "'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'":
k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/podtopologyspread/filtering.go l.337-356).

Eligible zones are those of the pools the pods may land on (:func:`.scheduling.landing_pools`); each zone holds as
many of the pods as it has slices: one per multi-host slice pool, one per VM of a single-host pool (a group takes
its VM's chips whole). The placement model (:func:`.scheduling.place`) does not see the rule; this finding does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence

from tpu_serving_tools.runtime.network_policy import selector_matches
from tpu_serving_tools.runtime.node_pool import NodePool
from tpu_serving_tools.runtime.pods import Pod
from tpu_serving_tools.runtime.pods_model import ZoneRule
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling import landing_pools

UNPLACED = "(zone not in the plan)"
"""The zone of an existing pool the plan does not place."""


def zone_slices(pod: Pod, pools: Sequence[NodePool]) -> dict[str, int]:
    """Per zone, how many groups like ``pod``'s the pools it may land on hold at their largest."""
    out: dict[str, int] = {}
    for pool in landing_pools(pod, pools):
        zones = pool.zones or (UNPLACED,)
        per_zone = 1 if pool.slice_vms else pool.nodes // len(zones)
        for zone in zones:
            out[zone] = out.get(zone, 0) + per_zone
    return out


def most_placed(slices: Mapping[str, int], rule: ZoneRule) -> int:
    """The most pods ``rule`` lets schedule on zones holding ``slices`` each: with fewer eligible zones than its
    ``minDomains``, ``maxSkew`` in each; else the fullest fill whose zones stay within ``maxSkew`` of the emptiest."""
    held = [n for n in slices.values() if n > 0]
    if len(held) < rule.min_domains:
        return sum(min(n, rule.max_skew) for n in held)
    return max(sum(min(n, low + rule.max_skew) for n in held) for low in range(min(held) + 1))


def _rules(pods: Sequence[Pod]) -> Iterator[tuple[Pod, ZoneRule]]:
    """Each distinct required zone rule, with the first pod that carries it."""
    seen: set[tuple[str, str, int, int, str]] = set()
    for pod in pods:
        for rule in pod.zone_rules:
            key = (pod.namespace, pod.owner, rule.max_skew, rule.min_domains, json.dumps(rule.selector, sort_keys=True))
            if key not in seen:
                seen.add(key)
                yield pod, rule


def findings(pods: Sequence[Pod], pools: Sequence[NodePool]) -> list[Finding]:
    """One finding per required zone rule of the plan's pods: every pod it holds apart can be placed."""
    out = []
    for pod, rule in _rules(pods):
        held = [p for p in pods if p.namespace == pod.namespace and selector_matches(rule.selector, p.labels)]
        subject = f"zone spread {pod.namespace}/{pod.owner.split('/', 1)[1]} {pod.role}"
        if not held:
            out.append(Finding(subject, False, "its required zone spread selects no pod of the plan"))
            continue
        slices = zone_slices(pod, pools)
        placed = most_placed(slices, rule)
        where = ", ".join(f"{z} {n}" for z, n in sorted(slices.items())) or "none"
        said = f"maxSkew {rule.max_skew}, minDomains {rule.min_domains}; slices per zone: {where}"
        zones = sum(1 for n in slices.values() if n > 0)
        if zones < rule.min_domains:  # library review 3, M6: the spread promised is not the one the pools give
            out.append(
                Finding(
                    subject,
                    False,
                    f"asks {rule.min_domains} zones, but the pools its pods may land on span {zones} ({said}): no zone "
                    f"takes more than {rule.max_skew} of them, so past {placed} they stay Pending; give the serving as "
                    "many zones as its slices span, or slices in more zones",
                )
            )
        elif placed >= len(held):
            out.append(Finding(subject, True, f"its {len(held)} pods spread over the zones ({said})"))
        else:
            pending = f"{len(held) - placed} of the {len(held)} pods it holds apart stay Pending"
            out.append(Finding(subject, False, f"{pending}: the required spread ({said}) places {placed}"))
    return out
