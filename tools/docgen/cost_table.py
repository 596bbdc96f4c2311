"""The cost table of the Cost page: each stack's capacity and estimated cost, from its offline plan.

``python -m tpu_serving_tools.docgen.cost_table [--check]`` rewrites (or checks) the block of ``docs/cost.md``
between ``<!-- generated: cost -->`` and ``<!-- end generated -->`` from the ``capacity`` and
``cost`` outputs of every stack's preview, so a price or a slice changed in the code changes
the page, and a test fails until it is regenerated (``make readme``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tpu_serving_tools.cli import command_parser

PAGE = Path("docs/cost.md")
"""The page that holds the cost table, from the repository's root."""

BLOCK = re.compile(r"(<!-- generated: cost -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def table(outputs: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table: stack -> chips, allocated/needed, and cost per hour by part, total per month."""
    lines = [
        "| stack | chips (VMs) | allocated / needed | TPU $/h | CPU $/h | storage $/h | GKE fee $/h | total $/h | total $/month "
        "| every slice up $/h |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for stack, out in outputs.items():
        if "capacity" not in out:  # a platform stack (sharedPlatform): no model, no slices; its preview prices it
            continue
        cap, hour = out["capacity"], out["cost"]["perHour"]
        ratio = cap.get("allocatedToNeeded")
        fit = f"{ratio:.2f}x ({cap['chipsNeeded']} chips needed)" if ratio is not None else "model size unknown"
        # a slice with no list price (TPU7x) is left out of the sums: the TPU figure says so, the totals say "at least"
        unpriced = bool(out["cost"].get("unpriced"))
        tpu, least = ("unpriced (no list price)", "at least ") if unpriced else (_usd(hour["tpu"]), "")
        lines.append(
            f"| `{stack}` | {cap['chips']} ({cap['vms']}) | {fit} | {tpu} | {_usd(hour['cpu'])} | "
            f"{_usd(hour['storage'])} | {_usd(hour['cluster'])} | **{least}{_usd(hour['total'])}** | "
            f"{least}{_usd(out['cost']['perMonth']['total'])} | "
            f"{least}{_usd(out['cost'].get('peakPerHour', hour['total']))} |"
        )
    return "\n".join(lines) + "\n"


def render(page: str, outputs: Mapping[str, Mapping[str, Any]]) -> str:
    """``page`` with the cost block replaced by the table of ``outputs`` (stack -> plan outputs)."""
    return BLOCK.sub(lambda m: m.group(1) + table(outputs) + m.group(3), page)


def main(argv: list[str] | None = None) -> int:
    from tpu_serving_tools.docgen.settings_tables import rewrite
    from tpu_serving_tools.preview.offline import close_event_loop, preview_stack
    from tpu_serving_tools.preview.stack_files import load_project

    parser = command_parser(__name__, __doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is not current")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    root = Path.cwd()
    outputs = {stack: preview_stack(root, stack).outputs for stack in load_project(root).stacks()}
    close_event_loop()
    new = render(args.page.read_text(), outputs)
    return rewrite(args.page, new, check=args.check, what=f"the cost table of {len(outputs)} stack(s)")


if __name__ == "__main__":
    sys.exit(main())
