"""``make mutate``'s verdict over mutmut's counts."""

from __future__ import annotations

import json

from tpu_serving_tools.mutation import TARGET, main, verdict


def test_mutation_verdict_counts_caught_and_missed():
    ratio, text = verdict({"killed": 85, "timeout": 3, "segfault": 2, "survived": 8, "no_tests": 1, "suspicious": 1})
    assert ratio == 0.9 and text.startswith("90 of 100 mutants caught (90.0%")
    assert verdict({"killed": 89, "survived": 11, "skipped": 50})[0] == 0.89  # skipped ones do not count


def test_mutation_fails_under_the_target_and_on_an_empty_run(tmp_path, capsys):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"killed": 90, "survived": 10}))
    assert main([str(stats)]) == 0
    stats.write_text(json.dumps({"killed": 89, "survived": 11}))
    assert main([str(stats)]) == 1
    stats.write_text(json.dumps({"killed": 0, "survived": 0, "skipped": 4}))
    assert main([str(stats)]) == 1
    assert "nothing is measured" in capsys.readouterr().out
    assert TARGET == 0.90
