"""Tests of ``tpu-serving plan`` (:mod:`tpu_serving_tools.plan`): groups from published throughputs only."""

from __future__ import annotations

import pytest

from tpu_serving.cost import serve_time
from tpu_serving_tools import plan

LLAMA70 = "meta-llama/Llama-3.3-70B-Instruct"


def test_plan_lines_count_the_groups_of_the_published_throughput_and_one_spare() -> None:
    lines, code = plan.plan_lines(LLAMA70, 20000)
    assert code == 0
    text = "\n".join(lines)
    # 2494.80 output tokens/s a v6e-8 group at concurrency 64: 20000 / 2494.8 = 8.02, so 9 groups, 10 with the spare
    assert "at concurrency 64 (P99 TTFT 2501.65 ms, mean TPOT 25.35 ms): 9 group(s) of 2,495" in text
    assert "10 with one spare" in text and "80 chips, $216.00/hour on demand" in text
    # 3544.46 at concurrency 128: 5.6, so 6 groups, 7 with the spare, 56 chips
    assert "6 group(s) of 3,544 output tokens/s serve 20,000; 7 with one spare" in text
    assert "56 chips, $151.20/hour on demand" in text
    for row in serve_time.THROUGHPUT:
        assert row.output_tokens_per_second_per_chip.source in text
    assert "not counted: a zone outage" in text


def test_plan_lines_of_exactly_one_groups_rate_need_one_group() -> None:
    lines, _ = plan.plan_lines(LLAMA70, 3544.46)
    assert "1 group(s) of 3,544 output tokens/s serve 3,544; 2 with one spare" in "\n".join(lines)


def test_plan_lines_without_a_published_throughput_give_the_smallest_fit_and_no_count() -> None:
    lines, code = plan.plan_lines("meta-llama/Llama-3.1-8B-Instruct", 1000)
    assert code == 1
    assert lines[0].startswith("no throughput is published for meta-llama/Llama-3.1-8B-Instruct")
    assert "v6e-1 (ct6e-standard-1t 1x1, 47% of its HBM)" in lines[1]
    assert "group(s)" not in "\n".join(lines)


def test_plan_lines_of_an_unknown_model_name_the_known_ones() -> None:
    lines, code = plan.plan_lines("llama-70b", 1000)
    assert code == 2
    assert LLAMA70 in lines[0] and "'llama-70b' is unknown; known:" in lines[0]
    assert "docs/add-your-own-model.md" in lines[0]
    cased, _ = plan.plan_lines(LLAMA70.lower(), 1000)
    assert f"did you mean {LLAMA70}?" in cased[0]


@pytest.mark.parametrize("rate", ["0", "-5", "nan", "inf"])
def test_main_refuses_a_rate_that_is_not_a_number_above_zero(rate: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        plan.main(["--model", LLAMA70, "--output-tokens-per-second", rate])
    assert exit_.value.code == 2
    assert "must be a number above 0" in capsys.readouterr().err


def test_main_prints_the_proposal_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert plan.main(["--model", LLAMA70, "--output-tokens-per-second", "7000"]) == 0
    assert "2 group(s) of 3,544" in capsys.readouterr().out
