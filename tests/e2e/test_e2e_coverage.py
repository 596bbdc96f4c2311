"""What the preview and the README say of the stacks ``make e2e`` runs (tools/e2e/coverage.py), read off the
harness's own list of the stacks it leaves out (GKE review M1)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, STACKS, plan_of
from tpu_serving_tools.e2e import coverage
from tpu_serving_tools.e2e.run import default_stacks
from tpu_serving_tools.preview import stack as preview

LEFT = coverage.left_out(ROOT)


def test_coverage_readme_block_is_current():
    page = (ROOT / coverage.PAGE).read_text()
    assert "<!-- generated: e2e -->" in page
    assert coverage.render(page, LEFT) == page, "README e2e block is stale: run `make readme`"
    assert not {"vllm-llama33-70b-platform", "vllm-llama31-8b-platform"} & set(LEFT)  # run beside their platform
    for stack in LEFT:
        assert f"- `{stack}`: " in page


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_coverage_preview_says_whether_make_e2e_runs_the_stack(stack):
    """Each shipped stack's preview has one ``Verified:`` line: the three stacks the harness cannot run (the
    DisaggregatedSet's LWS v0.10.0 API, the PathwaysJob controller) say their lifecycle is unverified against the
    controller, a model stack that make e2e runs it beside its platform (and which steps it leaves out), the others
    that make e2e runs them."""
    lines = [line for line in preview.summary(plan_of(stack), ROOT).splitlines() if line.startswith("Verified: ")]
    assert len(lines) == 1
    platforms = coverage.model_platforms(ROOT)
    if stack in LEFT:
        assert lines[0].startswith("Verified: lifecycle unverified against the controller: make e2e does not run")
        assert LEFT[stack] in lines[0]
    elif stack in platforms:
        assert platforms[stack] in default_stacks(ROOT)
        assert lines[0].startswith(
            f"Verified: not by this preview: make e2e, which CI runs on each commit, would take this stack file beside "
            f"its platform stack {platforms[stack]} and the platform's other model stacks"
        )
        assert "not its scale, drain, rollout nor HPA" in lines[0]
    else:
        assert stack in default_stacks(ROOT)
        # new-user review 14, m5: the line opens by saying this preview verified nothing, not by counting it run
        assert lines[0].startswith(
            "Verified: not by this preview: make e2e, which CI runs on each commit, would take this stack file (as "
            "every one it does not leave out; one added since CI last ran has not been through it yet)"
        )


def test_coverage_a_stack_that_is_not_shipped_has_no_verified_line():
    assert coverage.verified_line("my-own-stack", coverage.shipped_stacks(ROOT), LEFT) == []
    assert "Verified:" not in preview.summary(plan_of("saxml-175b-v5e32x2"))


def test_coverage_says_the_hpa_controller_scales_on_a_stand_in_adapter():
    """The preview's ``Verified:`` line and the README block say what the run shows of an HPA, and that its metric
    comes from a stand-in, not Managed Prometheus (tools/e2e/autoscale.py, metrics_adapter.py)."""
    (line,) = coverage.verified_line("vllm-llama33-70b-v6e8", coverage.shipped_stacks(ROOT), LEFT)
    block = coverage.block(LEFT)
    for text in (line, block):
        assert "the real HPA controller scaling the groups to maxReplicas" in text
        assert "stand-in for the Custom Metrics Stackdriver Adapter" in text and "not Managed Prometheus" in text
