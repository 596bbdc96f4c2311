"""``make mutate``'s verdict over mutmut's counts."""

from __future__ import annotations

import json

from tpu_serving_tools.mutation import TARGET, main, mutant_names, sample, verdict, wilson_lower


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


def test_mutation_a_sample_is_held_to_its_interval_lower_end():
    # 950 of 1000 caught, out of 9000 mutants: 95% with a lower bound near 93.5%
    full = {"killed": 950, "survived": 50, "total": 1000}
    sampled = {**full, "total": 9000}
    assert verdict(full)[0] == 0.95
    low, text = verdict(sampled)
    assert 0.93 < low < 0.95 and "a sample" in text and "93.5%" in text
    # 91 of 100 passes as a whole run but not as a sample: its lower end is under 90%
    assert verdict({"killed": 91, "survived": 9, "total": 100})[0] >= TARGET
    assert verdict({"killed": 91, "survived": 9, "total": 5000})[0] < TARGET


def test_mutation_wilson_lower_bound_matches_the_textbook_value():
    # Wilson interval of 81/263 at 95%: (0.2553, 0.3662) (Newcombe 1998, Stat. Med. 17:857, example)
    assert round(wilson_lower(81, 263), 4) == 0.2553
    assert wilson_lower(0, 0) == 0.0


def test_mutation_sample_is_seeded_uniform_and_bounded():
    listing = "\n".join(f"    tpu_serving.m.x_f__mutmut_{i}: not checked" for i in range(1, 101)) + "\nnoise\n"
    names = mutant_names(listing)
    assert len(names) == 100 and names[0] == "tpu_serving.m.x_f__mutmut_1"
    a, b = sample(names, 10, 7), sample(list(reversed(names)), 10, 7)
    assert a == b and len(set(a)) == 10 and a != sample(names, 10, 8)
    assert sample(names, 500, 7) == sorted(names)
