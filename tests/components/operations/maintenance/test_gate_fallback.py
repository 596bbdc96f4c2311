"""The gate's ticket on a group long on a capacity fallback's slice (:func:`tpu_serving.operations.maintenance.gate_fallback.away`), and the
run line that carries it (:func:`tpu_serving.operations.maintenance.gate_run.main`'s ``fallback`` field, which the alert policy matches)."""

from __future__ import annotations

import dataclasses

from tests.components.operations.maintenance.test_maintenance_gate import GATE, NOW, iso, node, pod
from tpu_serving.operations.maintenance import gate_fallback
from tpu_serving.operations.maintenance import maintenance_gate as mg

CLASS_GATE = dataclasses.replace(GATE, compute_class="serving-serving")


def made(name: str) -> dict:
    """A node of a pool GKE made for the class: not one of the gate's pools, the class's label on it."""
    found = node(name, "gke-made-spot")
    found["metadata"]["labels"][mg.CLASS_LABEL] = "serving-serving"
    return found


def started(p: dict, at: float, group: int) -> dict:
    p["status"]["startTime"] = iso(at)
    p["metadata"]["labels"][mg.GROUP_INDEX_LABEL] = str(group)
    return p


NODES = [node("n-p-a", "p-a"), made("n-made")]


def test_gate_fallback_away_names_a_group_an_hour_on_a_class_slice_and_not_sooner() -> None:
    hour = gate_fallback.AWAY_SECONDS
    own = started(pod("vllm-0", "n-p-a"), NOW - 5 * hour, 0)
    leader = started(pod("vllm-1", "n-made"), NOW - hour - 120, 1)
    worker = started(pod("vllm-1-1", "n-made", worker=1), NOW - hour - 60, 1)
    said = gate_fallback.away(NODES, [own, leader, worker], CLASS_GATE, NOW)
    assert said.startswith(gate_fallback.SAID), said
    assert "group vllm-1 on n-made (pool gke-made-spot) for 62 min" in said, said
    assert "vllm-0" not in said, said
    fresh = started(pod("vllm-1", "n-made"), NOW - hour + 60, 1)
    assert gate_fallback.away(NODES, [own, fresh], CLASS_GATE, NOW) == ""


def test_gate_fallback_away_says_nothing_without_a_class_or_for_another_workload() -> None:
    leader = started(pod("vllm-1", "n-made"), NOW - 2 * gate_fallback.AWAY_SECONDS, 1)
    assert gate_fallback.away(NODES, [leader], GATE, NOW) == ""
    other = started(pod("other-0", "n-made", lws="other"), NOW - 2 * gate_fallback.AWAY_SECONDS, 0)
    assert gate_fallback.away(NODES, [other], CLASS_GATE, NOW) == ""
