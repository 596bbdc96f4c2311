"""The README's Stacks table: a row for each stack file the hand-written rows do not describe.

``python -m tpu_serving_tools.docgen.stack_rows [--check]`` (run by ``make readme``) keeps the table's hand-written rows and
writes one row for every stack file that has none: its stack file's first comment line, the TPU pools of its
offline plan and, for multi-host vLLM, the caution's head. A row it wrote ends with :data:`WRITTEN` and is rewritten
on each run; a stack file removed loses its written row. So a new stack changes no shared file by hand (new-user
review 11, m9; issue point 4), and a row can be rewritten by hand afterwards (drop the mark to keep it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

from tpu_serving.backends.vllm.facts import MULTI_HOST_CAUTION
from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.preview.library import tpu_pools
from tpu_serving_tools.preview.offline import Plan

PAGE = Path("README.md")
START, END = "<!-- --8<-- [start:stacks] -->", "<!-- --8<-- [end:stacks] -->"
WRITTEN = "(row written by `make readme` from the stack file; rewrite it by hand to keep it)"
ROW = re.compile(r"^\| `(?P<stack>[^`]+)` \|")
SERVING_COMPONENTS = {
    "tpu-serving:index:VllmServing": "vLLM TPU",
    "tpu-serving:index:VllmDisaggregatedServing": "vLLM TPU disaggregated",
    "tpu-serving:index:PathwaysServing": "JetStream + Pathways",
    "tpu-serving:index:SaxmlServing": "Saxml",
    "tpu-serving:index:PathwaysWorkload": "PathwaysJob",
}
"""The serving column's words for the serving component a plan holds."""


def table_rows(text: str) -> tuple[int, int, list[str]]:
    """(first line, line after the last, rows) of the table that opens the page's Stacks part: its header, rule
    and one row per stack."""
    lines = text.split("\n")
    start = lines.index(START) + 1
    while not lines[start].startswith("|"):
        start += 1
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return start, end, lines[start:end]


def first_comment(stack_file: Path) -> str:
    """The stack file's first comment line, which says what it serves (the shipped stacks' first line does)."""
    for line in stack_file.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return "(its stack file opens with no comment)"


def model_of(plan: Plan, stack_file: Path) -> str:
    """The model it serves: the stack's ``serving.servedModelName`` (else ``model``), else the stack file's first
    comment line."""
    import json

    raw = plan.config.get("tpu-serving:serving")
    serving = json.loads(raw) if isinstance(raw, str) else {}
    named = serving.get("servedModelName") or serving.get("model") if isinstance(serving, dict) else None
    return f"`{named}`" if isinstance(named, str) else first_comment(stack_file)


def tpu_of(plan: Plan) -> str:
    """Its TPU pools as the hand-written rows say them: ``2 x v6e 2x4 slice (`ct6e-standard-8t`: 1 VM x 8 chips)``."""
    kinds: dict[str, int] = {}
    for p in tpu_pools(plan):
        shape = p.shape
        vms = f"{shape.vms} VM{'s' if shape.vms > 1 else ''}"
        key = f"{shape.generation.name} {shape.topology} (`{shape.machine_type.name}`: {vms} x {shape.chips_per_vm} chips)"
        kinds[key] = kinds.get(key, 0) + 1
    return ", ".join(f"{n} x {k}" for k, n in kinds.items()) or "none created"


def resilience_of(plan: Plan) -> str:
    """Whether it serves through a slice's loss: two or more standing LeaderWorkerSet groups on slices apart."""
    from tpu_serving_tools.runtime.maintenance import standing_pools
    from tpu_serving_tools.runtime.planview import PlanView

    standing = standing_pools(PlanView(plan.as_json()))
    if not standing:
        return "its preview's `Production:` line says"
    pools = max(standing.values(), key=len)
    if len(set(pools)) >= 2:
        return f"yes: {len(pools)} standing groups on {len(set(pools))} slices; the others serve while one reloads"
    return f"no: {len(pools)} standing group(s) on one slice; its preview's `Production:` line says why"


def row(stack: str, stack_file: Path, plan: Plan) -> str:
    """A written row: the stack, its model, its TPU pools, its serving (with the caution when its plan has it) and
    whether it serves through a slice's loss."""
    named = [SERVING_COMPONENTS[r.type] for r in plan.resources if r.type in SERVING_COMPONENTS]
    serving = ", ".join(dict.fromkeys(named)) or "none"
    if isinstance(plan.outputs.get("caution"), str):
        serving += f"; **caution: {MULTI_HOST_CAUTION}** (the preview's `Caution:` line has the sources)"
    return (
        f"| `{stack}` | {model_of(plan, stack_file)} | {tpu_of(plan)} | {serving} | {resilience_of(plan)} {WRITTEN} |"
    )


def render(text: str, stacks: Mapping[str, Path], plans: Mapping[str, Plan]) -> str:
    """``text`` with the hand-written rows of stack files that exist kept, and written rows for the others
    (``plans``: those stacks' previews)."""
    start, end, lines = table_rows(text)
    hand = {s: r for s, r in _hand_rows(lines).items() if s in stacks}
    written = [row(s, stacks[s], plans[s]) for s in missing(text, stacks)]
    out = text.split("\n")
    out[start:end] = lines[:2] + list(hand.values()) + written
    return "\n".join(out)


def _hand_rows(lines: list[str]) -> dict[str, str]:
    """The table's hand-written rows (no :data:`WRITTEN` mark), by stack, in the table's order."""
    return {m.group("stack"): r for r in lines[2:] if WRITTEN not in r and (m := ROW.match(r))}


def missing(text: str, stacks: Mapping[str, Path]) -> list[str]:
    """The stacks without a hand-written row (the ones :func:`render` writes)."""
    hand = _hand_rows(table_rows(text)[2])
    return [s for s in stacks if s not in hand]


def main(argv: list[str] | None = None) -> int:
    from tpu_serving_tools.docgen.settings_tables import rewrite
    from tpu_serving_tools.preview.offline import close_event_loop, preview_stack
    from tpu_serving_tools.preview.stack_files import load_project

    parser = command_parser(__name__, __doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is not current")
    parser.add_argument("--page", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    root = Path.cwd()
    stacks = {s: root / "stacks" / f"Pulumi.{s}.yaml" for s in load_project(root).stacks()}
    text = args.page.read_text()
    plans = {s: preview_stack(root, s) for s in missing(text, stacks)}
    close_event_loop()
    new = render(text, stacks, plans)
    return rewrite(args.page, new, check=args.check, what=f"the Stacks table's rows for {len(stacks)} stack(s)")


if __name__ == "__main__":
    sys.exit(main())
