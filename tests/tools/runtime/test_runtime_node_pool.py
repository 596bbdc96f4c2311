"""The runtime model's reading of a node pool's inputs (:mod:`tpu_serving_tools.runtime.node_pool`): what a stockout
does to a pool, said as the stack file's ``capacity.obtained`` says it, from inputs shaped as the plan holds them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import plan_of
from tpu_serving.catalog import capacity
from tpu_serving.pools.compute_class import LABEL
from tpu_serving_tools.runtime.node_pool import COMPUTE_CLASS_TYPE, capacity_wait_minutes, classes_of, stockout_said

RESERVED = {"reservationAffinity": {"consumeReservationType": "SPECIFIC_RESERVATION", "key": "k", "values": ["r"]}}
CLASSED = {"labels": {LABEL: "c-serving"}}
AUTOSCALED = {"autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4}}


def pool(config: dict[str, Any], **inputs: Any) -> dict[str, Any]:
    return {"nodeConfig": {"machineType": "ct6e-standard-4t", **config}, **inputs}


@pytest.mark.parametrize(
    ("inputs", "said"),
    [
        (pool({}, nodeCount=4), capacity.STOCKOUT[capacity.Capacity.ON_DEMAND]),
        (pool({}, nodeCount=4, **AUTOSCALED), capacity.TO_ZERO),
        (pool({}, initialNodeCount=0, **AUTOSCALED), capacity.FROM_ZERO),
        (pool(RESERVED, initialNodeCount=0, **AUTOSCALED), capacity.FROM_ZERO_RESERVED),
        (pool({"flexStart": True}, initialNodeCount=0, **AUTOSCALED), capacity.STOCKOUT[capacity.Capacity.FLEX_START]),
        # a pool of a ComputeClass created empty, by scale_to_zero (nodeCount 0) or by scale_from_zero (new-user
        # review of the capacity fallback, M2: it read FROM_ZERO, as if no class took the next step)
        (pool(CLASSED, nodeCount=0, **AUTOSCALED), capacity.fallback(45)),
        (pool(CLASSED, initialNodeCount=0, **AUTOSCALED), capacity.fallback(45)),
        (pool({**CLASSED, **RESERVED}, initialNodeCount=0, **AUTOSCALED), capacity.fallback_reserved(45)),
        (pool({**CLASSED, **RESERVED}, nodeCount=4), capacity.STOCKOUT[capacity.Capacity.RESERVATION]),
    ],
    ids=[
        "fixed",
        "to-zero",
        "from-zero",
        "from-zero-reserved",
        "flex-start",
        "class-waits",
        "class-from-zero",
        "class-from-zero-reserved",
        "class-reserved-whole",
    ],  # fmt: skip
)
def test_stockout_said_of_a_pool_by_its_inputs(inputs: dict[str, Any], said: str) -> None:
    assert stockout_said(inputs, {"c-serving"}, 45) == said


def test_stockout_said_of_a_pool_of_a_class_the_plan_does_not_create_names_no_next_step() -> None:
    """New-user review of the capacity fallback, M1: the class removed from a program, its pools still labelled."""
    inputs = pool(CLASSED, initialNodeCount=0, **AUTOSCALED)
    assert stockout_said(inputs, set(), 45) == capacity.FROM_ZERO
    assert classes_of([{"type": COMPUTE_CLASS_TYPE, "inputs": {"metadata": {"name": "c-serving"}}}]) == {"c-serving"}


def test_stockout_said_of_a_fallback_pool_names_the_minutes_of_the_plans_capacity_wait_alert() -> None:
    """New-user review m7: the Capacity line says after how many minutes the capacity-wait ticket opens, the plan's
    alert's; a plan without that alert opens no ticket, and says so."""
    inputs = pool(CLASSED, nodeCount=0, **AUTOSCALED)
    assert "after 45 minutes (observability.capacityWaitMinutes)" in stockout_said(inputs, {"c-serving"}, 45)
    assert "no capacity-wait ticket opens" in stockout_said(inputs, {"c-serving"}, None)


def _policy(rule: str, duration: str) -> dict[str, Any]:
    condition = {"conditionPrometheusQueryLanguage": {"alertRule": rule, "duration": duration}}
    return {"type": "gcp:monitoring/alertPolicy:AlertPolicy", "inputs": {"conditions": [condition]}}


def test_capacity_wait_minutes_of_a_plan_are_its_capacity_wait_alerts_duration() -> None:
    assert capacity_wait_minutes([_policy("capacity_wait", "2700s"), _policy("not_ready", "600s")]) == 45
    assert capacity_wait_minutes([_policy("capacity_wait", "2700s"), _policy("capacity_wait", "1800s")]) == 30
    assert capacity_wait_minutes([_policy("not_ready", "600s")]) is None
    assert capacity_wait_minutes(plan_of("vllm-llama31-405b-v6e16").as_json()["resources"]) == 30  # the default
