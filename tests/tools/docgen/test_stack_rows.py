"""tpu_serving_tools.docgen.stack_rows: the README's Stacks table gets a written row for a stack file it does not describe."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ALL_STACKS, ROOT, plan_of
from tpu_serving_tools.docgen import stack_rows

README = (ROOT / "README.md").read_text()


def _files(names: list[str]) -> dict[str, Path]:
    return {s: ROOT / "stacks" / f"Pulumi.{s}.yaml" for s in names}


def _hand() -> list[str]:
    """The stacks README.md's table describes by hand (a user's own stack may have a written row)."""
    _, _, rows = stack_rows.table_rows(README)
    return [m.group("stack") for r in rows[2:] if stack_rows.WRITTEN not in r and (m := stack_rows.ROW.match(r))]


def test_stack_rows_the_readme_is_current():
    """Every stack file has its row, hand-written or written by make readme from its plan (new-user review 12, M1:
    this test asserted hand-written rows only, and failed on a user's stack after make readme)."""
    files = _files(list(ALL_STACKS))
    plans = {s: plan_of(s) for s in stack_rows.missing(README, files)}
    assert stack_rows.render(README, files, plans) == README, "README.md's Stacks table is stale: run `make readme`"


def test_stack_rows_a_new_stack_gets_a_written_row_rewritten_each_run_and_dropped_with_its_file(tmp_path: Path):
    """New-user review 11 (m9, issue point 4): a new stack needed a hand-written README row, a shared file."""
    mine = tmp_path / "Pulumi.mine.yaml"
    mine.write_text("# Qwen 2.5 7B on one v6e chip\nconfig: {}\n")
    hand = _hand()
    base = stack_rows.render(README, _files(hand), {})  # the table of the hand-written rows alone
    files = {**_files(hand), "mine": mine}
    plans = {"mine": plan_of("vllm-llama33-70b-v5e16")}  # a multi-host vLLM plan: its caution is quoted
    assert stack_rows.missing(base, files) == ["mine"]
    once = stack_rows.render(base, files, plans)
    (row,) = [r for r in once.splitlines() if r.startswith("| `mine` |")]
    # the model served, the slices as the hand-written rows say them (new-user review 14, m3: the whole comment line
    # and a slice name the docs give another slice), and whether it serves through a slice's loss
    assert "| `meta-llama/Llama-3.3-70B-Instruct` |" in row
    assert "| 4 x v5e 4x4 (`ct5lp-hightpu-4t`: 4 VMs x 4 chips) | vLLM TPU; " in row
    assert "| yes: 2 standing groups on 2 slices; the others serve while one reloads " in row
    assert "**caution: multi-host vLLM on TPU is unsupported on GKE" in row and row.endswith(f"{stack_rows.WRITTEN} |")
    _, _, rows = stack_rows.table_rows(once)
    assert rows[-1] == row and len(rows) == len(stack_rows.table_rows(base)[2]) + 1
    assert stack_rows.render(once, files, plans) == once
    assert stack_rows.render(once, _files(hand), {}) == base
