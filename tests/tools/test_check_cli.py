"""``python -m tpu_serving_tools.check``: the summary line, failures, exit status (tools.check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools import check as cli
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult, Finding

FIXTURES = ROOT / "tests" / "fixtures" / "runtime"


def test_check_cli_summary_line_and_failures():
    results = [
        CategoryResult(
            "scheduling", [Finding("pod a", True), Finding("pod b", False, "too big"), Finding("quota q", True)]
        ),
        CategoryResult("network", [Finding("flow x", True)]),
        CategoryResult("identity", [Finding("x", True)]),
        CategoryResult("prerequisites", [Finding("api", False, "off")]),
    ]
    lines = cli.summary("s", results)
    assert lines[0] == (
        "s: pods scheduled 1/2, quota admits 1/1, flows allowed 1/1, identities with access 1/1, prerequisites met 0/1"
    )
    assert lines[1:] == ["  [scheduling] pod b: too big", "  [prerequisites] api: off"]


def test_check_cli_runs_every_category():
    results = cli.run_checks(PlanView({"stack": "t", "resources": []}))
    assert [r.category for r in results] == [
        "objects",
        "scheduling",
        "network",
        "ports",
        "identity",
        "prerequisites",
        "second apply",
        "admission",
        "engines",
        "maintenance",
        "production",
        "coverage",
    ]


def test_check_cli_plan_before_fix_fails(capsys: pytest.CaptureFixture[str]):
    assert cli.main(["--plan", str(FIXTURES / "pathwaysjob-batch-before-fix.plan.json")]) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        "pathwaysjob-batch-v6e16: controller objects created 2/2, maintenance pages true to their pools and gates 0/0, "
        "wired to the cluster's network, pool and project 2/2, pods scheduled 4/5, quota admits 1/2, "
    )
    assert "identities with access 0/2" in out
    assert "[scheduling] pod pathways-batch/pathways-device-check-pathways-head-0-0: needs 24.25 CPU" in out


def test_check_cli_empty_plan_fails_rather_than_passing_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    plan = tmp_path / "p.json"
    plan.write_text('{"stack": "empty", "resources": []}')
    assert cli.main(["--plan", str(plan)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("empty: maintenance pages true to their pools and gates 0/0, pods scheduled 0/0, ")
    assert "  [coverage] coverage resources: 0 resource(s) in the plan" in out
    assert "  [coverage] coverage scheduling: examined nothing" in out


def test_check_cli_passing_plan_exits_zero(capsys: pytest.CaptureFixture[str]):
    golden = ROOT / "tests" / "golden" / "pathwaysjob-batch-v6e16.plan.json"
    assert cli.main(["--plan", str(golden)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "pathwaysjob-batch-v6e16: controller objects created 2/2, maintenance pages true to their pools and gates 3/3, "
        "wired to the cluster's network, pool and project 3/3, pods scheduled 5/5, "
    )
    assert "one-per-scope resources unique" in out and "  [" not in out


def test_check_cli_notes_an_existing_nat_no_checked_stack_makes(capsys: pytest.CaptureFixture[str]):
    """New-user review 15, M1: a stack that borrows another stack's Cloud NAT, checked alone, passed with "shared NATs
    found" and said nothing; its private nodes would pull nothing from outside Google until that NAT exists."""
    golden = ROOT / "tests" / "golden" / "pathwaysjob-batch-v6e16.plan.json"
    assert cli.main(["--plan", str(golden)]) == 0
    note = "  note: scope existing Cloud NAT of pathwaysjob-batch-v6e16: llama405b-nat-router/llama405b-nat: "
    lines = capsys.readouterr().out.splitlines()
    assert note + "made by none of the checked stacks: it must exist already" in lines
    maker = ROOT / "tests" / "golden" / "llama31-405b-v6e16.plan.json"
    assert cli.main(["--plan", str(golden), "--plan", str(maker)]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("  note: ")]


@pytest.mark.parametrize(
    ("stack", "expected"),
    [(None, []), ("a b", ["--stack", "a", "--stack", "b"])],
)
def test_check_cli_make_check_checks_every_stack_unless_told(stack, expected):
    """``make check`` checks every stack; ``make check STACK=...`` only those (new-user review of issue 39). The
    Makefile's default STACK, preview's, is not a choice: it once narrowed ``make check`` to that one stack."""
    import os
    import shlex
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "STACK"}
    argv = ["make", "-n", "check", *([f"STACK={stack}"] if stack else [])]
    shown = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    (line,) = [line for line in shown.splitlines() if line.split()[:1] and line.split()[0].endswith("/tpu-serving")]
    assert shlex.split(line)[1:] == ["check", *expected], line
