"""tpu_serving_tools.e2e.lifecycle: the verdicts of the steps after `pulumi up`, on recorded observations."""

from __future__ import annotations

from tpu_serving_tools.e2e.lifecycle import floor_held, left_behind


def test_floor_held_passes_at_the_floor_and_fails_below_it_or_without_samples() -> None:
    assert floor_held([2, 2, 3, 2], 2, "lws").ok
    dipped = floor_held([2, 1, 2], 2, "lws")
    assert not dipped.ok and dipped.detail == "lowest Ready groups 1, floor 2, 3 samples"
    assert not floor_held([], 2, "lws").ok


def test_left_behind_names_what_destroy_left() -> None:
    before = {("v1", "Namespace", None, "default")}
    assert left_behind(before, set(before)).ok
    after = before | {("v1", "Namespace", None, "serving"), ("apps/v1", "Deployment", "lws-system", "lws")}
    finding = left_behind(before, after)
    assert not finding.ok
    assert finding.detail == "2 objects left: Deployment lws-system/lws; Namespace serving"
