"""The runtime model's required zone spread: the standing groups' leaders a serving component holds apart over
zones all schedule on the zones its pools are in (library review 2, M2)."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import scheduling_check, zone_spread
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods_model import ZoneRule

STACK = "vllm-llama33-70b-v6e8"  # two zones, two standing groups
SUBJECT = "zone spread vllm-llama70b/vllm leader"


def _spread(plan: dict) -> dict[str, tuple[bool, str]]:
    result = scheduling_check.check(PlanView(plan))
    return {f.subject: (f.ok, f.reason) for f in result.findings if f.subject.startswith("zone spread")}


def _in_one_zone(plan: dict) -> dict:
    out = copy.deepcopy(plan)
    for r in out["resources"]:
        if r["type"] == "gcp:container/nodePool:NodePool" and str(r["inputs"]["nodeConfig"]["machineType"]).startswith(
            "ct"
        ):
            r["inputs"]["nodeLocations"] = ["us-east5-a"]
    return out


def test_zone_spread_the_shipped_stack_spreads_its_standing_groups():
    plan = plan_of(STACK).as_json()
    found = _spread(plan)
    assert list(found) == [SUBJECT]
    ok, reason = found[SUBJECT]
    assert ok and reason.startswith("its 2 pods spread over the zones") and "us-east5-a 2, us-east5-b 2" in reason


def test_zone_spread_slices_all_in_one_zone_leave_a_standing_group_pending():
    """The component asks two zones; the program put every slice in one: the second leader never schedules."""
    ok, reason = _spread(_in_one_zone(plan_of(STACK).as_json()))[SUBJECT]
    assert not ok
    assert reason.startswith(
        "asks 2 zones, but the pools its pods may land on span 1 (maxSkew 1, minDomains 2; slices per zone: "
        "us-east5-a 4): no zone takes more than 1 of them, so past 1 they stay Pending"
    )


def test_zone_spread_more_zones_asked_than_the_pools_span_fails_though_the_pods_fit():
    """Library review 3, M6: ``zones=3`` over slices of two zones: the two standing leaders schedule, but the
    spread the program asked for is not there, and a third group never schedules."""
    plan = copy.deepcopy(plan_of(STACK).as_json())
    (lws,) = [r for r in plan["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    template = lws["inputs"]["spec"]["leaderWorkerTemplate"]
    spec = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
    spec["topologySpreadConstraints"][0]["minDomains"] = 3
    ok, reason = _spread(plan)[SUBJECT]
    assert not ok and reason.startswith("asks 3 zones, but the pools its pods may land on span 2"), reason


def test_zone_spread_a_rule_that_selects_no_pod_fails():
    plan = copy.deepcopy(plan_of(STACK).as_json())
    (lws,) = [r for r in plan["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    template = lws["inputs"]["spec"]["leaderWorkerTemplate"]
    spec = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
    spec["topologySpreadConstraints"][0]["labelSelector"]["matchLabels"]["role"] = "nobody"
    assert _spread(plan)[SUBJECT] == (False, "its required zone spread selects no pod of the plan")


def test_zone_spread_most_placed_below_and_at_min_domains():
    rule = ZoneRule(max_skew=1, min_domains=2, selector={})
    assert zone_spread.most_placed({"a": 4}, rule) == 1
    assert zone_spread.most_placed({"a": 4, "b": 0}, rule) == 1
    assert zone_spread.most_placed({"a": 3, "b": 1}, rule) == 3  # b 1, a 2: within one of the emptiest
    assert zone_spread.most_placed({"a": 2, "b": 2}, rule) == 4
    assert zone_spread.most_placed({"a": 5, "b": 2}, ZoneRule(2, 1, {})) == 6
