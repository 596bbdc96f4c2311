"""Every stack renders exactly its reviewed golden plan and manifests (``make golden`` updates them)."""

import difflib

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving_tools.golden import GOLDEN, render


@pytest.mark.parametrize("stack", STACKS)
def test_golden_stack_renders_reviewed_files(stack):
    for name, text in render(stack, plan_of(stack)).items():
        path = GOLDEN / name
        assert path.is_file(), f"no golden file {name}: run `make golden` and review it"
        golden = path.read_text()
        if text != golden:
            diff = "".join(
                difflib.unified_diff(golden.splitlines(True), text.splitlines(True), f"golden/{name}", "rendered", n=2)
            )
            pytest.fail(f"{name} differs from its golden file (review, then `make golden`):\n{diff[:6000]}")


def test_golden_no_file_without_a_stack():
    names = {p.name for p in GOLDEN.iterdir()}
    expected = {f"{s}.{kind}" for s in STACKS for kind in ("plan.json", "manifests.yaml")}
    assert names == expected
