"""tools/e2e/model_run.py: which stacks run beside a platform, and its judgement of what a model's destroy left."""

from __future__ import annotations

from tests.conftest import ROOT
from tpu_serving_tools.e2e.coverage import model_platforms
from tpu_serving_tools.e2e.model_run import model_stacks_of, still_there
from tpu_serving_tools.verify.expect import declared_objects

KEY = ("v1", "Service", "ns", "api")


def test_model_platforms_reads_the_platform_stacks_own_name_bare_or_namespaced(tmp_path):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    text = (ROOT / "stacks" / "Pulumi.vllm-llama31-8b-platform.yaml").read_text()
    assert "\n  platform:\n" in text
    (tmp_path / "stacks" / "Pulumi.bare.yaml").write_text(text)
    (tmp_path / "stacks" / "Pulumi.spaced.yaml").write_text(
        text.replace("\n  platform:\n", "\n  tpu-serving:platform:\n")
    )
    (tmp_path / "stacks" / "Pulumi.platform-us-east5.yaml").write_text(
        (ROOT / "stacks" / "Pulumi.platform-us-east5.yaml").read_text()
    )
    assert model_platforms(tmp_path) == {"bare": "platform-us-east5", "spaced": "platform-us-east5"}


def test_model_stacks_of_the_shipped_platform_are_its_two_model_stacks():
    assert model_stacks_of(ROOT, "platform-us-east5") == ["vllm-llama31-8b-platform", "vllm-llama33-70b-platform"]
    assert model_stacks_of(ROOT, "vllm-llama33-70b-v6e8") == []


def test_declared_objects_of_a_state_are_its_kubernetes_objects_but_its_config_groups():
    state = [
        {"type": "kubernetes:core/v1:Service", "outputs": {"apiVersion": "v1", "kind": "Service",
                                                             "metadata": {"name": "api", "namespace": "ns"}}},
        {"type": "kubernetes:yaml/v2:ConfigGroup", "outputs": {"kind": "x", "metadata": {"name": "y"}}},
        {"type": "gcp:storage/bucket:Bucket", "outputs": {"kind": "b", "metadata": {"name": "b"}}},
    ]  # fmt: skip
    assert set(declared_objects(state)) == {KEY}


def test_still_there_fails_on_a_gone_object_and_on_nothing_expected():
    assert still_there("s", {KEY}, {KEY}).ok
    gone = still_there("s", {KEY}, set())
    assert not gone.ok and gone.detail == "1 of 1 gone: Service ns/api"
    assert not still_there("s", set(), {KEY}).ok


def test_same_pods_fails_on_a_recreated_pod_and_on_no_pod_to_compare():
    from tpu_serving_tools.e2e.model_run import same_pods

    before = {("vllm-0", "u1"), ("vllm-1", "u2")}
    assert same_pods("s", before, set(before)).ok
    recreated = same_pods("s", before, {("vllm-0", "u3"), ("vllm-1", "u2")})
    assert not recreated.ok and recreated.detail == "recreated or gone: vllm-0"
    assert not same_pods("s", set(), set()).ok


def test_until_ok_reads_again_until_the_findings_pass_or_the_wait_is_over():
    from tpu_serving_tools.e2e.model_run import until_ok
    from tpu_serving_tools.verify.checks import Finding

    answers = iter([[Finding("c", "s", False)], [Finding("c", "s", True)]])
    slept: list[float] = []
    assert until_ok(lambda: next(answers), wait=10, interval=1, sleep=slept.append).pop().ok and slept == [1]
    now = iter([0.0, 0.0, 5.0, 11.0])
    failing = until_ok(
        lambda: [Finding("c", "s", False)], wait=10, interval=5, clock=lambda: next(now), sleep=slept.append
    )
    assert not failing[0].ok and slept == [1, 5, 5]  # read at 0, 5 and 11: 16 is past the deadline


def test_standing_pods_are_all_but_a_jobs():
    """A CronJob's run comes and goes on its schedule (the host-maintenance gate's pod, gone across a platform's
    refused destroy in CI): the comparison of a model's pods leaves it out, and keeps the serving pods."""
    from tpu_serving_tools.e2e.model_run import standing

    def pod(kind: str | None) -> dict:
        return {"metadata": {"ownerReferences": [{"kind": kind, "name": "x"}] if kind else []}}

    assert not standing(pod("Job"))
    assert standing(pod("StatefulSet")) and standing(pod("ReplicaSet")) and standing(pod(None)) and standing({})
