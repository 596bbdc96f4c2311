"""docs/check.md's output of ``make check`` (tools/docgen/check_page.py): the command's own lines over the shipped stacks,
never a pasted run whose counts drift."""

from __future__ import annotations

import json

from tests.conftest import ROOT
from tpu_serving_tools.docgen import check_page


def golden_plans() -> list[tuple[str, dict]]:
    """Each shipped stack's plan as tests/golden holds it (test_golden holds those to the program), by stack name."""
    found = [json.loads(p.read_text()) for p in sorted((ROOT / "tests" / "golden").glob("*.plan.json"))]
    return [(str(plan["stack"]), plan) for plan in found]


def test_check_page_block_is_current():
    page = (ROOT / check_page.PAGE).read_text()
    assert "<!-- generated: check -->" in page
    plans = dict(golden_plans())
    shown = [(s, plans[s]) for s in check_page.STACKS]
    assert check_page.render(page, shown) == page, "docs/check.md's check block is stale: run `make readme`"
    assert "across the 5 stack(s): " in page and "vllm-llama31-8b-platform: references resolved" in page


def test_check_page_output_is_what_the_command_prints(capsys):
    plans = golden_plans()
    from tpu_serving_tools import check

    status = check.main(
        [arg for p in sorted((ROOT / "tests" / "golden").glob("*.plan.json")) for arg in ("--plan", str(p))]
    )
    assert status == 0
    output = check_page.output(plans)  # once: it runs every check over every plan, as the command did
    assert capsys.readouterr().out == output
    assert output.splitlines()[-1].startswith(f"across the {len(plans)} stack(s): ")
