"""The output of ``make check`` that docs/check.md shows, written by the command's own code (``make readme``).

``python -m tpu_serving_tools.docgen.check_page`` previews the :data:`STACKS` as ``make check`` does, and
writes what :func:`tpu_serving_tools.check.report` prints of them between the page's ``<!-- generated: check -->``
markers; ``--check`` exits 1 instead when the block is stale. The page quoted a pasted run, whose counts drifted
from what the command printed as the stacks changed (new-user review); a test holds the block to the golden plans,
which ``make test`` holds to the program.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tpu_serving_tools.check import report
from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.docgen.settings_tables import rewrite

STACKS = (
    "vllm-llama33-70b-v6e8",
    "saxml-175b-v5e32x2",
    "platform-us-east5",
    "vllm-llama33-70b-platform",
    "vllm-llama31-8b-platform",
)
"""The stacks whose output the page shows: a self-contained vLLM stack, a Saxml one, and the platform with its two
model stacks (``make check`` itself checks every stack file; a stack added to ``stacks/`` leaves the page as it is)."""

PAGE = Path("docs/check.md")
"""The page, from the repository's root."""

BLOCK = re.compile(r"(<!-- generated: check -->\n\n```\n)(?P<body>.*?)(```\n\n<!-- end generated -->)", re.S)


def output(plans: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """What ``tpu-serving check`` prints on its standard output over ``plans`` (label, plan)."""
    return "".join(line + "\n" for lines, _ in report(plans) for line in lines)


def render(page: str, plans: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """``page`` with its generated block holding the output over ``plans``."""
    return BLOCK.sub(lambda m: m.group(1) + output(plans) + m.group(3), page)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the block is stale, write nothing")
    args = parser.parse_args(argv)
    root = Path.cwd()
    from tpu_serving_tools.preview.offline import preview_stacks

    plans = preview_stacks(root, list(STACKS))
    if plans is None:
        return 2
    return rewrite(root / PAGE, render((root / PAGE).read_text(), plans), check=args.check, what="the check block")


if __name__ == "__main__":
    sys.exit(main())
