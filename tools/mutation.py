"""``make mutate``'s verdict: the kill ratio of a mutmut run, from ``mutmut export-cicd-stats``.

Killed, timed-out and crashing mutants count as caught (a mutant that hangs or kills the suite is found);
survivors, suspicious ones (passed, but slower than they should) and mutants no test reaches are not;
skipped ones do not count. The run fails under :data:`TARGET`, and with no mutants at all.

The whole library is about 9,200 mutants, several hours on two cores. ``make mutate SAMPLE=N`` runs a
uniform random sample of ``N`` of them instead (seeded, ``SEED``): mutants left unchecked make the run a
sample (mutmut's ``total`` exceeds the mutants run), and the verdict then takes the lower end of the 95% Wilson interval of the ratio, so a sample
passes only if the whole library very likely meets the target.

``python -m tpu_serving_tools.mutation sample N [SEED]`` prints the sample's mutant names (after
``mutmut run`` has generated the mutants); ``python -m tpu_serving_tools.mutation [STATS]`` gives the verdict.
"""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

TARGET = 0.90
"""The kill ratio the library must keep."""

Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""


def wilson_lower(caught: int, total: int, z: float = Z95) -> float:
    """Lower end of the Wilson score interval of ``caught / total``."""
    if total == 0:
        return 0.0
    p = caught / total
    centre = p + z * z / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return (centre - spread) / (1 + z * z / total)


def verdict(stats: dict[str, int]) -> tuple[float, str]:
    """(the ratio the target is held to, the line that says so)."""
    caught = sum(stats.get(k, 0) for k in ("killed", "timeout", "segfault"))
    missed = sum(stats.get(k, 0) for k in ("survived", "no_tests", "suspicious"))
    total = caught + missed
    if total == 0:
        return 0.0, "no mutants were run: nothing is measured"
    ratio = caught / total
    text = f"{caught} of {total} mutants caught ({ratio:.1%}; target {TARGET:.0%}): {missed} missed"
    # mutmut's ``total`` counts every mutant of the files it ran any of; the rest were not run.
    counted = total + sum(stats.get(k, 0) for k in ("skipped", "check_was_interrupted_by_user"))
    if stats.get("total", counted) <= counted:
        return ratio, text
    low = wilson_lower(caught, total)
    return low, f"{text}; a sample, so the whole library's ratio is at least {low:.1%} (95% Wilson interval)"


MUTANT = re.compile(r"^\s*(\S+__mutmut_\d+):")


def mutant_names(results: str) -> list[str]:
    """Every mutant name in the output of ``mutmut results --all true``."""
    return [m.group(1) for line in results.splitlines() if (m := MUTANT.match(line))]


def sample(names: list[str], size: int, seed: int) -> list[str]:
    """``size`` names drawn uniformly without replacement, the same for the same seed and names."""
    return sorted(random.Random(seed).sample(sorted(names), min(size, len(names))))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["sample"]:
        listing = subprocess.run(
            [sys.executable, "-m", "mutmut", "results", "--all", "true"], capture_output=True, text=True, check=True
        ).stdout
        chosen = sample(mutant_names(listing), int(args[1]), int(args[2]) if len(args) > 2 else 23)
        print("\n".join(chosen))
        return 0 if chosen else 1
    stats = json.loads(Path(args[0] if args else "mutants/mutmut-cicd-stats.json").read_text())
    ratio, text = verdict(stats)
    print(text)
    if ratio < TARGET:
        print("the survivors: `.venv/bin/python -m mutmut results`; each one: `mutmut show <name>`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
