"""The runtime model's wiring findings: what a program copies by hand between the gate, the serving and its HPA
agrees in its plan (library review 5, M2)."""

from __future__ import annotations

import copy

from tests.conftest import plan_of
from tpu_serving_tools.runtime import wiring
from tpu_serving_tools.runtime.planview import PlanView

GATE = "ref CronJob vllm-llama70b/host-maintenance-gate copies LeaderWorkerSet vllm-llama70b/vllm"
HPA = "ref HorizontalPodAutoscaler vllm-llama70b/vllm keeps the standing groups of LeaderWorkerSet vllm-llama70b/vllm"


def _found(plan: dict) -> dict[str, tuple[bool, str]]:
    return {f.subject: (f.ok, f.reason) for f in wiring.findings(PlanView(plan))}


def _env(plan: dict, name: str, value: str) -> None:
    for r in plan["resources"]:
        if r["inputs"].get("kind") == "CronJob":
            for c in r["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]:
                for e in c.get("env") or ():
                    if e["name"] == name:
                        e["value"] = value


def test_wiring_the_shipped_stack_agrees_and_each_drift_fails():
    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    found = _found(plan)
    assert found[GATE][0] and found[HPA][0], found
    for name, value, said in (
        ("AUTOSCALERS", "", "AUTOSCALERS leaves out HPA vllm"),
        ("AUTOSCALER_BOUNDS", "", "AUTOSCALER_BOUNDS leaves out HPA vllm: its cover gives back the bounds it finds"),
        ("AUTOSCALER_BOUNDS", "vllm=2..4", "AUTOSCALER_BOUNDS vllm=2..4, but the HPA declares 2..3"),  # SRE 29, M3
        ("FEWEST_GROUPS", "1", "FEWEST_GROUPS 1, but the standing groups are 2"),
        ("SURGE", "0", "SURGE 0, but the LeaderWorkerSet's rollout adds 1 group(s)"),
    ):
        drifted = copy.deepcopy(plan)
        _env(drifted, name, value)
        ok, why = _found(drifted)[GATE]
        assert not ok and why.startswith(said), why
    low = copy.deepcopy(plan)
    for r in low["resources"]:
        if r["inputs"].get("kind") == "HorizontalPodAutoscaler":
            r["inputs"]["spec"]["minReplicas"] = 1
    ok, why = _found(low)[HPA]
    assert not ok and why.startswith("minReplicas 1, but the serving holds 2 standing groups apart over zones")


def _min_and_partition(plan: dict, low: int, partition: int | None) -> dict:
    """``plan`` with the HPA's minReplicas ``low`` and the LeaderWorkerSet's canary ``partition``."""
    out = copy.deepcopy(plan)
    for r in out["resources"]:
        spec = r["inputs"].get("spec") or {}
        if r["inputs"].get("kind") == "HorizontalPodAutoscaler":
            spec["minReplicas"] = low
        if r["inputs"].get("kind") == "LeaderWorkerSet" and partition is not None:
            spec["rolloutStrategy"]["rollingUpdateConfiguration"]["partition"] = partition
    return out


def test_wiring_hpa_minimum_against_the_spread_and_canary_the_template_assumes():
    """Library review 9, M2: min_replicas 3 with VllmServingArgs.replicas 2 left the zone spread on groups 0, 1 and a
    one-group canary's partition at 1, so two of the three standing groups rolled; nothing failed."""
    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    ok, why = _found(_min_and_partition(plan, 3, None))[HPA]
    assert not ok and why.startswith(
        "minReplicas 3, but the LeaderWorkerSet's required zone spread holds only 2 standing groups apart over 2 zones"
    ), why
    assert "VllmServingArgs.replicas" in why and "min_replicas" in why, why
    ok, why = _found(_min_and_partition(plan, 3, 1))[HPA]
    assert (
        not ok and "its partition 1 is a canary of 1 counted from 2, so on the next template change 2 of the 3" in why
    )
    assert "(partition 2 for that canary)" in why, why
    found = _found(_min_and_partition(plan, 2, 1))
    assert found[HPA][0] and found[f"{HPA} under its canary"][0], found
    ok, why = _found(_min_and_partition(plan, 2, 2))[f"{HPA} under its canary"]
    assert not ok and why.startswith("partition 2, but minReplicas 2: the canary rolls none of the standing"), why


def test_wiring_gate_pools_and_starts_held_against_the_standing_pools():
    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    env = next(
        {e["name"]: e.get("value") for e in c.get("env") or ()}
        for r in plan["resources"]
        if r["inputs"].get("kind") == "CronJob"
        for c in r["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
        if any(e["name"] == "POOLS" for e in c.get("env") or ())
    )
    pools = env["POOLS"].split(",")
    assert len(pools) >= 2 and env["STARTS"] == "false", env
    for name, value, said in (
        # library reviews 6, m6, and 12, M1: the pools its groups may run on, those that start empty too
        ("POOLS", pools[0], f"POOLS leaves out pool(s) {', '.join(pools[1:])} its groups may run on"),
        # library review 7, m4: a reload window shorter than the 60-minute startup window
        ("CLOSE_SECONDS", str(21600 + 600), "CLOSE_SECONDS gives a reload window of 600 s, but the pods' startup"),
        # a single-host v6e 2x4 pool: Cloud TPU lists no manual start (library review 6, m5)
        (
            "STARTS",
            "true",
            f"STARTS true, but Cloud TPU lists no manual start of host maintenance for pool(s) {pools[0]}",
        ),
    ):
        drifted = copy.deepcopy(plan)
        _env(drifted, name, value)
        ok, why = _found(drifted)[GATE]
        assert not ok and why.startswith(said), why


def test_wiring_not_ready_alert_waits_out_the_startup_window():
    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    subject = "ref AlertPolicy vllm70bv6e-observability-not-ready waits out the startup of namespace vllm-llama70b"
    assert _found(plan)[subject] == (True, "it fires after 75 minutes; the pods' startup probes allow 60")
    for r in plan["resources"]:
        for c in r["inputs"].get("conditions") or () if r["type"].endswith("AlertPolicy") else ():
            if (c.get("conditionPrometheusQueryLanguage") or {}).get("alertRule") == "not_ready":
                c["conditionPrometheusQueryLanguage"]["duration"] = "600s"  # library review 6, m8
    ok, why = _found(plan)[subject]
    assert not ok and why.startswith("it fires after 10 minutes; the pods' startup probes allow 60: it would page"), why
