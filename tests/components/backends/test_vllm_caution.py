"""The caution of a multi-host vLLM stack (issue 38, point 2): GKE calls multi-host vLLM on TPU unsupported and
tpu-inference's support matrix has not tested it, so every vLLM stack whose groups span several VMs says so in its
preview (a ``Caution:`` line, from the ``caution`` output of :func:`tpu_serving.backends.vllm.facts.caution`) and in
the README's stack table; a single-host vLLM stack and the other backends' stacks say nothing of it."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, plan_of
from tests.fixtures.configs import DISAGG_STACK, disagg_multi_host_plan, plan_edited
from tpu_serving import catalog
from tpu_serving.backends.vllm.facts import MULTI_HOST_CAUTION, caution
from tpu_serving_tools.preview.offline import Plan
from tpu_serving_tools.preview.stack import summary
from tpu_serving_tools.preview.stack_files import load_project

SHIPPED = load_project(ROOT).stacks()
"""This project's stacks: those the README's table lists (not a copy's, tests/test_new_stack.py)."""
MULTI_HOST_VLLM = [
    "vllm-llama33-70b-v5e16",
    "vllm-llama31-405b-v6e16",
    "vllm-llama33-70b-existing",
    "vllm-llama31-405b-tpu7x16",
]
"""The shipped vLLM stacks whose groups span a multi-host slice (the disaggregated stack's roles and the production
example's groups run on one VM each)."""
MULTI_HOST_DISAGG = f"{DISAGG_STACK} with multi-host roles"
"""The disaggregated stack with its roles over two VMs each (:func:`~tests.fixtures.configs.disagg_multi_host_plan`):
the library's multi-host roles, which no shipped stack uses."""


def _plan(name: str) -> Plan:
    return disagg_multi_host_plan() if name == MULTI_HOST_DISAGG else plan_of(name)


def _cautions(plan: Plan) -> list[str]:
    return [line for line in summary(plan).splitlines() if line.startswith("Caution: ")]


def test_vllm_caution_is_none_on_one_vm_and_names_the_slice_and_sources_on_several():
    assert caution(catalog.slice_shape("ct6e-standard-8t", "2x4")) is None
    text = caution(catalog.slice_shape("ct5lp-hightpu-4t", "4x4"))
    assert text is not None and text.startswith(f"{MULTI_HOST_CAUTION}: each group spans the 4 VMs of a v5e 4x4 slice")
    assert "https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-vllm-tpu" in text
    assert "tpu-inference v0.27.0" in text and "untested on the torchax path" in text


@pytest.mark.parametrize("stack", [*MULTI_HOST_VLLM, MULTI_HOST_DISAGG])
def test_vllm_caution_multi_host_stack_previews_with_it(stack):
    plan = _plan(stack)
    assert plan.outputs["caution"].startswith(MULTI_HOST_CAUTION)
    (line,) = _cautions(plan)
    assert line == f"Caution: {plan.outputs['caution']}"


def test_vllm_caution_single_host_stack_previews_without_it():
    """The 70B stack, which previews with the caution, previews without it once its slices are single-host v6e 2x4
    VMs (ct6e-standard-8t: 256 GiB HBM holds its weights)."""

    def single_host(slices):
        for s in slices:
            del s["slice"]
            s.update(machineType="ct6e-standard-8t", topology="2x4")

    assert _cautions(plan_of("vllm-llama33-70b-v5e16"))
    plan = plan_edited("vllm-llama33-70b-v5e16", tpuSlices=single_host)
    assert "caution" not in plan.outputs
    assert not _cautions(plan)


def test_vllm_caution_is_said_of_the_multi_host_vllm_stacks_only():
    """Not of the other backends' multi-host stacks (JetStream, Saxml, PathwaysJob): the library decides, by backend
    and slice shape."""
    assert sorted(s for s in SHIPPED if _cautions(plan_of(s))) == sorted(MULTI_HOST_VLLM)


def _stack_rows() -> dict[str, str]:
    """The README's stack table (the docs site includes the same lines), by stack."""
    text = (ROOT / "README.md").read_text()
    part = text.split("<!-- --8<-- [start:stacks] -->", 1)[1].split("<!-- --8<-- [end:stacks] -->")[0]
    rows = [line for line in part.strip().split("\n\n")[0].splitlines() if line.startswith("| `")]
    return {row.split("`", 2)[1]: row for row in rows}


def test_vllm_caution_readme_stack_table_quotes_it_for_every_multi_host_vllm_stack():
    """The README's stack table (hand-written, or written by make readme) quotes the caution's head in the row of each stack whose preview has
    the caution (:func:`test_vllm_caution_is_said_of_the_multi_host_vllm_stacks_only`), and in no other row."""
    rows = _stack_rows()
    assert set(rows) == set(SHIPPED), (
        "README.md's Stacks table (between its `stacks` markers) lists every stack file, and only those: run `make "
        f"readme`, which writes a row for {sorted(set(SHIPPED) - set(rows))} and removes "
        f"{sorted(set(rows) - set(SHIPPED))} (tools/docgen/stack_rows.py)"
    )
    for stack, row in rows.items():
        assert (MULTI_HOST_CAUTION in row) == (stack in MULTI_HOST_VLLM), stack


def test_vllm_caution_a_library_programs_vllm_serving_registers_it_and_the_preview_prints_it():
    """A program that builds ``VllmServing`` itself exports no ``caution``: the component registers it (and warns),
    and the preview prints it from there, once (user review round 41, M2)."""
    from tpu_serving_tools.preview.stack import caution_summary

    plan = plan_of("vllm-llama33-70b-v5e16")
    (component,) = [r for r in plan.resources if r.type == "tpu-serving:index:VllmServing"]
    text = (component.registered_outputs or {}).get("caution")
    assert isinstance(text, str) and text.startswith(MULTI_HOST_CAUTION)
    assert caution_summary({}, plan.resources) == [f"Caution: {text}"]  # the deployment registers it too: once
    assert caution_summary({}, [component]) == [f"Caution: {text}"]
    assert caution_summary({}, [r for r in plan.resources if r.type != component.type and r.custom]) == []
