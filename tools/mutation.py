"""``make mutate``'s verdict: the kill ratio of a mutmut run, from ``mutmut export-cicd-stats``.

Killed, timed-out and crashing mutants count as caught (a mutant that hangs or kills the suite is found);
survivors, suspicious ones (passed, but slower than they should) and mutants no test reaches are not;
skipped ones do not count. The run fails under :data:`TARGET`, and with no mutants at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TARGET = 0.90
"""The kill ratio the library must keep."""


def verdict(stats: dict[str, int]) -> tuple[float, str]:
    caught = sum(stats.get(k, 0) for k in ("killed", "timeout", "segfault"))
    missed = sum(stats.get(k, 0) for k in ("survived", "no_tests", "suspicious"))
    total = caught + missed
    if total == 0:
        return 0.0, "no mutants were run: nothing is measured"
    ratio = caught / total
    return ratio, f"{caught} of {total} mutants caught ({ratio:.1%}; target {TARGET:.0%}): {missed} missed"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    stats = json.loads(Path(args[0] if args else "mutants/mutmut-cicd-stats.json").read_text())
    ratio, text = verdict(stats)
    print(text)
    if ratio < TARGET:
        print("the survivors: `.venv/bin/python -m mutmut results`; each one: `mutmut show <name>`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
