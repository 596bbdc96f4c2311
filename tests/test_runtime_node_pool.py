"""The runtime model's reading of a node pool's inputs (:mod:`tpu_serving_tools.runtime.node_pool`): what a stockout
does to a pool, said as the stack file's ``capacity.obtained`` says it, from inputs shaped as the plan holds them."""

from __future__ import annotations

from typing import Any

import pytest

from tpu_serving import capacity
from tpu_serving.compute_class import LABEL
from tpu_serving_tools.runtime.node_pool import COMPUTE_CLASS_TYPE, classes_of, stockout_said

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
        (pool(CLASSED, nodeCount=0, **AUTOSCALED), capacity.FALLBACK),
        (pool(CLASSED, initialNodeCount=0, **AUTOSCALED), capacity.FALLBACK),
        (pool({**CLASSED, **RESERVED}, initialNodeCount=0, **AUTOSCALED), capacity.FALLBACK_RESERVED),
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
    assert stockout_said(inputs, {"c-serving"}) == said


def test_stockout_said_of_a_pool_of_a_class_the_plan_does_not_create_names_no_next_step() -> None:
    """New-user review of the capacity fallback, M1: the class removed from a program, its pools still labelled."""
    inputs = pool(CLASSED, initialNodeCount=0, **AUTOSCALED)
    assert stockout_said(inputs, set()) == capacity.FROM_ZERO
    assert classes_of([{"type": COMPUTE_CLASS_TYPE, "inputs": {"metadata": {"name": "c-serving"}}}]) == {"c-serving"}
