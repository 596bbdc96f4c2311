"""tpu_serving_tools.preview.stack's summary lines that are not a library component's own."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving_tools.preview import stack as preview


def test_preview_borrowed_nat_is_said_as_a_prerequisite():
    """New-user review 10, m13: a stack that names another's Cloud NAT did not say so in its preview."""
    (line,) = preview.borrowed_nat(plan_of("llama2-70b-disagg-v6e8x2"))
    assert line.startswith("Prerequisite: the Cloud NAT llama405b-nat-router/llama405b-nat of network default in ")
    assert preview.borrowed_nat(plan_of("vllm-llama33-70b-v6e8")) == []  # it makes its own


def test_summary_says_a_programs_warnings_once():
    """New-user review 17, m11: the multi-host Caution: line twice in one preview."""
    import copy

    plan = copy.copy(plan_of("vllm-llama31-405b-v6e16"))
    caution = next(line for line in preview.summary(plan).splitlines() if line.startswith("Caution: "))
    plan.warnings = [caution, "a program's own warning"]
    lines = preview.summary(plan).splitlines()
    assert lines.count(caution) == 1
    assert lines[-1] == "warning: a program's own warning"


def test_published_summary_prints_every_serving_stacks_time_to_serve_and_cost_per_token() -> None:
    lines = preview.summary(plan_of("vllm-llama33-70b-v6e8")).splitlines()
    time_line = next(line for line in lines if line.startswith("Time to serve: "))
    cost_line = next(line for line in lines if line.startswith("Cost per token: "))
    assert "LeaderWorkerSet vllm: the published terms add up to about 3-6 minutes, so at least 3" in time_line
    assert "https://github.com/vllm-project/tpu-inference/pull/2517" in time_line
    assert "$1.69 at concurrency 128" in cost_line


def test_published_summary_of_a_program_without_the_outputs_says_none_is_given() -> None:
    assert preview.published_summary({}) == [
        "Time to serve: not computed for this program (it has no timeToServe output: a TpuServingDeployment's)",
        "Cost per token: not computed for this program (it has no tokenCost output: a TpuServingDeployment's)",
    ]
    two = preview.published_summary({"timeToServe": ["a", "b"], "tokenCost": ["c"]})
    assert two == ["Time to serve: a", "  b", "Cost per token: c"]


def test_time_to_serve_streams_the_image_only_from_artifact_registry_on_the_stacks_own_pools() -> None:
    def time_line(stack: str) -> str:
        return next(x for x in preview.summary(plan_of(stack)).splitlines() if x.startswith("Time to serve: "))

    # through the stack's own Artifact Registry mirror, on its own pools
    assert "the streamed pull" in time_line("vllm-llama33-70b-v6e8")
    # Docker Hub on an existing cluster, and on a platform's cluster: pulled whole, at no published rate
    for stack in ("vllm-llama33-70b-existing", "vllm-llama31-8b-platform"):
        line = time_line(stack)
        assert "the pull rate of 19.5 GB" in line and "the streamed pull" not in line, stack
