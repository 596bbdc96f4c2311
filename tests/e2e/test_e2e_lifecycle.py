"""tpu_serving_tools.e2e.lifecycle: the verdicts of the steps after `pulumi up`, on recorded observations."""

from __future__ import annotations

from tpu_serving_tools.e2e.lifecycle import left_behind, retained


def test_left_behind_names_what_destroy_left() -> None:
    before = {("v1", "Namespace", None, "default")}
    assert left_behind(before, set(before)).ok
    after = before | {("v1", "Namespace", None, "serving"), ("apps/v1", "Deployment", "lws-system", "lws")}
    finding = left_behind(before, after)
    assert not finding.ok
    assert finding.detail == "2 objects left: Deployment lws-system/lws; Namespace serving"


def test_left_behind_accepts_what_the_stack_retains_on_delete() -> None:
    """The existing-cluster stack's PriorityClasses are retainOnDelete (SRE review M5): destroy keeps them, and the
    e2e run does not count them as left behind; anything else still is."""
    state = [
        {
            "type": "kubernetes:scheduling.k8s.io/v1:PriorityClass",
            "retainOnDelete": True,
            "outputs": {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "tpu-serving-online"},
            },
        },
        {
            "type": "kubernetes:core/v1:Namespace",
            "outputs": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "serving"}},
        },
    ]
    kept = retained(state)
    assert kept == {("scheduling.k8s.io/v1", "PriorityClass", None, "tpu-serving-online")}
    after = {("scheduling.k8s.io/v1", "PriorityClass", None, "tpu-serving-online")}
    assert left_behind(set(), after, kept).ok
    assert not left_behind(set(), after | {("v1", "Namespace", None, "serving")}, kept).ok
