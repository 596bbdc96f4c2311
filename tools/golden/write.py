"""Golden files: the reviewed plan and manifests of every stack, kept under tests/golden.

``python -m tpu_serving_tools.golden.write`` (``make golden``) rewrites them from the current program; the
tests fail on any difference, so every change to what a stack renders shows up as a diff
of these files in review. It prints which resources and fields the rewrite changed
(:mod:`tpu_serving_tools.golden.review`), and ``tests/test_golden.py`` fails until each change
against ``main`` is listed in ``tests/golden_changes.txt``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tpu_serving_tools.golden.review import report, tree_changes, working_tree
from tpu_serving_tools.preview.offline import Plan, close_event_loop, preview_stack
from tpu_serving_tools.preview.stack import manifests_yaml
from tpu_serving_tools.preview.stack_files import load_project

GOLDEN = Path("tests") / "golden"
"""Where the golden files live, relative to the project root (the working directory)."""


def render(stack: str, plan: Plan | None = None) -> dict[str, str]:
    """File name -> content of the golden files of ``stack``."""
    plan = plan or preview_stack(Path.cwd(), stack)
    return {
        f"{stack}.plan.json": json.dumps(plan.as_json(), indent=2) + "\n",
        f"{stack}.manifests.yaml": manifests_yaml(plan),
    }


def main() -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    before = working_tree(Path.cwd())
    stacks = load_project(Path.cwd()).stacks()
    expected = set()
    for stack in stacks:
        for name, text in render(stack).items():
            expected.add(name)
            (GOLDEN / name).write_text(text)
    for stale in set(p.name for p in GOLDEN.iterdir()) - expected:
        (GOLDEN / stale).unlink()
    close_event_loop()
    print(f"wrote {len(expected)} golden files for {len(stacks)} stacks in {GOLDEN}")
    print(report(tree_changes(before, working_tree(Path.cwd()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
