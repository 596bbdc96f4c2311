"""tpu_serving_tools.e2e.lifecycle: the verdicts of the steps after `pulumi up`, on recorded observations."""

from __future__ import annotations

from tpu_serving_tools.e2e.lifecycle import left_behind


def test_left_behind_names_what_destroy_left() -> None:
    before = {("v1", "Namespace", None, "default")}
    assert left_behind(before, set(before)).ok
    after = before | {("v1", "Namespace", None, "serving"), ("apps/v1", "Deployment", "lws-system", "lws")}
    finding = left_behind(before, after)
    assert not finding.ok
    assert finding.detail == "2 objects left: Deployment lws-system/lws; Namespace serving"
