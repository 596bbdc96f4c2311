"""tpu_serving_tools.runtime.program_gaps: a program's plan held to what a stack file's ``production: true`` refuses
(library review 9, M3: one on-demand group whose tickets page got the same all-clear as the production example).

The plans are the shipped stacks' without their ``TpuServingDeployment`` (a program's plan has none); the stack
files' own verdicts, from their settings, are the independent reading they are compared with."""

from __future__ import annotations

import copy
from typing import Any

from tests.conftest import plan_of
from tpu_serving.catalog.capacity import fallback, fallback_reserved
from tpu_serving_tools.check import passed, run_checks, summary
from tpu_serving_tools.runtime import program_gaps
from tpu_serving_tools.runtime.planview import PlanView

PRODUCTION = "vllm-llama33-70b-v6e8"  # production: true, so its stack file refuses every gap


def program(stack: str) -> dict[str, Any]:
    """``stack``'s plan as a program of its own makes it: no TpuServingDeployment."""
    plan = copy.deepcopy(plan_of(stack).as_json())
    plan["resources"] = [r for r in plan["resources"] if r["type"] != program_gaps.DEPLOYMENT]
    return plan


def gaps(plan: dict[str, Any]) -> dict[str, str]:
    return {f.subject: f.reason for f in program_gaps.check(PlanView(plan)).failures()}


def test_program_gaps_the_production_stacks_program_has_none_of_the_gaps():
    result = program_gaps.check(PlanView(program(PRODUCTION)))
    # groups, zones, capacity (two: the reserved pools kept whole, and those a reservation fills from zero), upgrades,
    # the namespace's tenancy, ticket channels, the serving's priority
    assert len(result.findings) == 8 and result.ok, result.findings
    assert program_gaps.preview_lines(PlanView(program(PRODUCTION))) == [
        "Production: none of the gaps a stack file's production: true refuses, of 8 read"
    ]


def test_program_gaps_capacity_says_what_the_stacks_capacity_obtained_says():
    """New-user review of the capacity fallback, M2 and m5: the program's capacity findings read the pools' inputs and
    say what the stack file's capacity.obtained output says of the same slices (the fallback's next step included)."""
    obtained = plan_of(PRODUCTION).outputs["capacity"]["obtained"]
    found = {f.subject: f.reason for f in program_gaps.check(PlanView(program(PRODUCTION))).findings}
    for kind in ("v6e8a", "v6e8b", "v6e8c", "v6e8s"):
        (reason,) = [
            r for subject, r in found.items() if subject.startswith("reservation TPU pools") and kind in subject
        ]
        assert obtained[kind] == f"reservation: {reason}", (kind, reason)
    assert fallback_reserved(30) in obtained["v6e8c"]


def test_program_gaps_a_stack_files_plan_is_left_to_its_production_output():
    assert program_gaps.check(PlanView(plan_of("vllm-llama31-405b-v6e16").as_json())).findings == []


def test_program_gaps_agree_with_the_stack_files_production_output():
    """The example stacks (production: false) list their gaps from their settings; the plan's reading finds the
    same kinds: one group, one zone, on-demand slices, a multi-host caution."""
    found = gaps(program("vllm-llama31-405b-v6e16"))
    said = " ".join(str(g) for g in plan_of("vllm-llama31-405b-v6e16").outputs["production"]["gaps"])
    assert sorted(s.split(" ")[0] for s in found) == ["caution", "on-demand", "standing", "zones"], found
    # the stack file says the one zone within its one group's gap; the plan's reading says both
    for key in ("serving.singleGroup", "tpuSlices[0].capacity", "serving.slices"):
        assert key in said, said


def test_program_gaps_one_standing_group_fails_naming_the_argument():
    """Review 9's reason-one-group: replicas=1 in one zone (with its capacity fallback the pool is created empty, and
    the one group brings its slice: it stands on it, as a pool created whole would hold it)."""
    why = gaps(program("vllm-llama31-405b-v6e16"))["standing groups LeaderWorkerSet vllm-llama405b/vllm"]
    assert why.startswith("1 standing group(s) on the pools as they start: ") and "VllmServingArgs.replicas" in why


def test_program_gaps_capacity_of_a_fallback_pool_says_its_groups_wait():
    """A pool of a capacity fallback is created empty: its gap says what the stack file's capacity.obtained says (the
    groups wait, pulumi up does not fail), not a fixed pool's stockout (new-user review of issue 37 item 2, M1)."""
    found = gaps(program("vllm-llama31-405b-v6e16"))
    (why,) = [w for s, w in found.items() if s.startswith("on-demand TPU pools ")]
    assert why.startswith(fallback(30)), why  # the minutes of the program's capacity-wait alert
    assert "fails the node pool's creation" not in why


def test_program_gaps_on_demand_slices_fail():
    """Review 9's on-demand: the production program with its pools' reservation affinity taken away."""
    plan = program(PRODUCTION)
    for r in plan["resources"]:
        if r["type"] == "gcp:container/nodePool:NodePool":
            r["inputs"].get("nodeConfig", {}).pop("reservationAffinity", None)
    # the pools kept whole, and those created empty, whose stockout takes the class's next step: both are gaps
    subjects = [s for s in gaps(plan) if s.startswith("on-demand TPU pools ")]
    assert subjects == [
        "on-demand TPU pools vllm70bv6e-v6e8a, vllm70bv6e-v6e8b",
        "on-demand TPU pools vllm70bv6e-v6e8c, vllm70bv6e-v6e8s",
    ]


def test_program_gaps_tickets_on_a_page_channel_fail():
    """Review 9's ticket-is-page: ticket_channels = the page channels."""
    plan = program(PRODUCTION)
    page = next(
        r["inputs"]["notificationChannels"][0]
        for r in plan["resources"]
        if r["type"] == program_gaps.ALERT_POLICY and r["inputs"].get("severity") == "CRITICAL"
    )
    for r in plan["resources"]:
        if r["type"] == program_gaps.ALERT_POLICY and r["inputs"].get("severity") == "WARNING":
            r["inputs"]["notificationChannels"] = [page]
    why = gaps(plan)["ticket channels"]
    assert page in why and why.endswith("ObservabilitySettings.ticket_channels"), why


def test_program_gaps_one_zone_fails():
    plan = program(PRODUCTION)
    for r in plan["resources"]:
        if r["type"] == "gcp:container/nodePool:NodePool":
            r["inputs"]["nodeLocations"] = ["us-east5-b"]
    assert gaps(plan)["zones of the TPU pools"].startswith("every TPU pool is in us-east5-b: ")


def test_check_warns_of_a_programs_gaps_and_fails_on_them_with_production():
    view = PlanView(program("vllm-llama31-405b-v6e16"))
    results = run_checks(view)
    lines = summary("p", results)
    assert "production rules broken 4 of 7" in lines[0], lines[0]
    assert "  warning [production] zones of the TPU pools: every TPU pool is in us-east5-b: " in "\n".join(lines)
    strict = frozenset({"maintenance"})
    assert passed(results)  # the gaps warn
    assert passed(results, strict) is False
    assert any(x.startswith("  [production] zones of the TPU pools") for x in summary("p", results, strict))


def test_program_gaps_node_upgrades_not_held_fail():
    """Library review 10, M2: the Program: line named it, and check --production passed it."""
    plan = program(PRODUCTION)
    for r in plan["resources"]:
        if r["type"] == "gcp:container/cluster:Cluster":
            r["inputs"]["maintenancePolicy"].pop("maintenanceExclusions")
    why = gaps(plan)["node upgrades of cluster vllm70bv6e"]
    assert why.startswith("not held: ") and "TpuClusterArgs.maintenance" in why


def _with_exclusion(**exclusion: Any) -> dict[str, Any]:
    """The production program with its cluster's one maintenance exclusion changed."""
    plan = program(PRODUCTION)
    for r in plan["resources"]:
        if r["type"] == "gcp:container/cluster:Cluster":
            (held,) = r["inputs"]["maintenancePolicy"]["maintenanceExclusions"]
            held.update(exclusion)
    return plan


def test_program_gaps_an_exclusion_that_holds_no_node_upgrade_fails():
    """Library review 12, M2: any exclusion counted as held, one of scope NO_MINOR_UPGRADES (node patches go through)
    or one that had ended too."""
    subject = "node upgrades of cluster vllm70bv6e"
    minor_only = _with_exclusion(
        exclusionOptions={"scope": "NO_MINOR_UPGRADES", "endTimeBehavior": "UNTIL_END_OF_SUPPORT"}
    )
    assert gaps(minor_only)[subject].startswith("not held: no maintenance exclusion of scope NO_UPGRADES or ")
    ended = _with_exclusion(exclusionOptions={"scope": "NO_UPGRADES"}, endTime="2026-03-01T00:00:00Z")
    assert "an exclusion whose endTime has passed holds nothing" in gaps(ended)[subject]
    coming = _with_exclusion(exclusionOptions={"scope": "NO_UPGRADES"}, endTime="2999-01-01T00:00:00Z")
    assert subject not in gaps(coming)


def test_program_gaps_a_namespace_without_its_tenancy_or_alerts_fails():
    plan = program(PRODUCTION)
    plan["resources"] = [r for r in plan["resources"] if (r["inputs"] or {}).get("kind") != "ResourceQuota"]
    assert gaps(plan)["tenancy of namespace vllm-llama70b"].endswith("give the namespace its Tenancy")
    assert "alert policies" not in gaps(plan)
    plan["resources"] = [r for r in plan["resources"] if r["type"] != program_gaps.ALERT_POLICY]
    assert gaps(plan)["alert policies"].endswith("add an Observability")


def test_program_gaps_groups_over_two_zones_not_held_apart_fail():
    """Library review 10, m6: ``zones=1`` beside pools in two zones passed ``--production``."""
    plan = program(PRODUCTION)
    for r in plan["resources"]:
        if (r["inputs"] or {}).get("kind") == "LeaderWorkerSet":
            template = r["inputs"]["spec"]["leaderWorkerTemplate"]
            leader = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
            leader["topologySpreadConstraints"] = [
                c for c in leader["topologySpreadConstraints"] if c.get("whenUnsatisfiable") != "DoNotSchedule"
            ]
    why = gaps(plan)["standing groups LeaderWorkerSet vllm-llama70b/vllm"]
    assert "not required apart by zone" in why and why.endswith("set VllmServingArgs.zones=2 (library review 10, m6)")


def test_program_gaps_a_gateway_without_its_alerts_fails():
    """Library review 11, M2: without ``through_gateway`` the Gateway's alert policies were gone, and
    ``check --production`` passed."""
    plan = program(PRODUCTION)

    def gateway_rule(r: dict[str, Any]) -> bool:
        conditions = r["inputs"].get("conditions") or ()
        return any(
            str((c.get("conditionPrometheusQueryLanguage") or {}).get("alertRule")) == "gateway_errors"
            for c in conditions
        )

    subject = "watched gateway_errors of Gateway vllm-llama70b/vllm-api-gateway"
    assert subject not in gaps(plan)
    plan["resources"] = [r for r in plan["resources"] if not gateway_rule(r)]
    why = gaps(plan)[subject]
    assert "through_gateway(metrics, gateway)" in why, why


def test_program_gaps_each_namespace_and_gateway_is_watched_on_its_own():
    """Library review 12, M3: the rules were looked for in the whole plan, so one namespace's probe and Gateway alerts
    hid another's missing ones. A second namespace's serving and Gateway, copied from the production program's
    without alerts of their own, are named; the first namespace's stay watched."""
    plan = program(PRODUCTION)
    copies = []
    for r in plan["resources"]:
        if (r["inputs"] or {}).get("kind") in ("LeaderWorkerSet", "Gateway", "InferencePool"):
            twin = copy.deepcopy(r)
            twin["urn"] = str(r.get("urn", "")) + "-twin"
            twin["name"] = str(r["name"]) + "-twin"
            twin["inputs"]["metadata"]["namespace"] = "other"
            copies.append(twin)
    assert len(copies) == 3, [c["inputs"]["kind"] for c in copies]
    plan["resources"] += copies
    found = [s for s in gaps(plan) if s.startswith("watched ")]
    assert sorted(found) == [
        "watched gateway_errors of Gateway other/vllm-api-gateway",
        "watched probe_failing of namespace other",
        "watched router_not_ready of InferencePool other/vllm-api-gateway",
    ], found


def _leader_worker_set(plan: dict[str, Any]) -> dict[str, Any]:
    (lws,) = [r for r in plan["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    return lws


def test_program_gaps_a_serving_without_a_priority_class_beside_declared_ones_fails():
    """Library review 14, M1: the serving left at priority 0 while the plan's Tenancy declares the online and batch
    classes was silent; the production stack's serving names tpu-serving-online."""
    plan = program(PRODUCTION)
    subject = "priority of LeaderWorkerSet vllm-llama70b/vllm"
    assert subject not in gaps(plan)
    template = _leader_worker_set(plan)["inputs"]["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        if role in template:
            template[role]["spec"].pop("priorityClassName", None)
    why = gaps(plan)[subject]
    assert why.startswith("its pods run at priority 0, below the classes the plan declares (tpu-serving-batch, ")
    assert "VllmServingArgs.priority_class_name" in why
