"""Second ``pulumi up`` of an unchanged stack: state read back vs the same inputs."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tpu_serving_tools.runtime import second_apply
from tpu_serving_tools.runtime.planview import PlanView

FIXTURES = ROOT / "tests" / "fixtures" / "runtime"


def _view(name: str) -> PlanView:
    return PlanView(json.loads((FIXTURES / name).read_text()))


def test_second_apply_cluster_without_ignore_changes_is_replaced() -> None:
    [finding] = second_apply.findings(_view("apply-cluster-replace.plan.json"))
    assert not finding.ok
    assert "REPLACE" in finding.reason and "nodeConfig" in finding.reason and "initialNodeCount" in finding.reason


def test_second_apply_cluster_with_ignore_changes_changes_nothing() -> None:
    [finding] = second_apply.findings(_view("apply-cluster-ignore.plan.json"))
    assert finding.ok and finding.reason == "no change"


def test_second_apply_update_only_when_path_not_force_new() -> None:
    resource = json.loads((FIXTURES / "apply-cluster-ignore.plan.json").read_text())["resources"][0]
    resource = {**resource, "ignoreChanges": ["nodeConfig"]}
    drifts = second_apply.drift(resource)
    assert [d.path for d in drifts] == ["initialNodeCount"] and drifts[0].replaces


def test_second_apply_replace_on_changes_forces_replacement() -> None:
    resource = {"type": "x:y:Z", "inputs": {"a": 1}, "replaceOnChanges": ["a"]}
    assert second_apply._replace_reason(resource, "a") == (
        "replaceOnChanges: the controller's webhook or CRD refuses this change in place"
    )
    assert second_apply._replace_reason({**resource, "replaceOnChanges": []}, "a") is None


def test_second_apply_no_read_back_without_remove_default_pool() -> None:
    resource = json.loads((FIXTURES / "apply-cluster-replace.plan.json").read_text())["resources"][0]
    resource = {**resource, "inputs": {**resource["inputs"], "removeDefaultNodePool": False}}
    assert second_apply.drift(resource) == []
