"""Slices and serving groups for a model and an output rate, from published throughputs only.

For each published throughput of the model (``tpu_serving.cost.serve_time.THROUGHPUT``, matched exactly by the Hugging
Face id), the groups of that slice that give ``--output-tokens-per-second``, one more for a group lost to a repair,
an upgrade or host maintenance, their chips and their on-demand cost, with every assumption the figure carries. A
model without a published throughput gets the smallest slice its weights fit, and no group count.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

from tpu_serving import catalog
from tpu_serving.catalog.capacity import Capacity
from tpu_serving.catalog.models import HUGGING_FACE_MODELS, weight_gib
from tpu_serving.catalog.prices import TPU_CHIP_HOUR
from tpu_serving.cost import serve_time
from tpu_serving_tools.cli import command_parser


def proposal(row: serve_time.Throughput, rate: float) -> list[str]:
    """The groups of ``row``'s slice that serve ``rate`` output tokens per second, and what they cost on demand."""
    shape = catalog.slice_shape(row.machine_type, row.topology)
    per_chip = row.output_tokens_per_second_per_chip
    per_group = per_chip.low * shape.chips
    groups = math.ceil(rate / per_group)
    price = TPU_CHIP_HOUR[(shape.generation.name, Capacity.ON_DEMAND)]
    chips = (groups + 1) * shape.chips
    cost = (
        f"${price.usd * chips:,.2f}/hour on demand (${price.usd:,.2f} per chip-hour, {price.source}, {price.as_of})"
        if price.usd is not None
        else f"no on-demand price known for {shape.generation.name}"
    )
    return [
        f"{shape.slice_name} ({row.machine_type} {row.topology}) with {row.engine} at concurrency {row.concurrency} "
        f"({row.latency}): {groups} group(s) of {per_group:,.0f} output tokens/s serve {rate:,.0f}; {groups + 1} "
        f"with one spare for a group lost to a repair, an upgrade or host maintenance: {chips} chips, {cost}",
        f"  assumes: {per_chip.cited()}, measured with {row.measured_with}",
        f"  assumes: every group loaded as in scenario {row.scenario()}; another mix of lengths, a longer context, "
        "another engine build or other settings give another throughput, which nobody has published here",
        "  not counted: a zone outage (the groups spread over two zones need one spare in each), a surge rollout's "
        "spare slice, and the reload of a lost group (docs/operate.md)",
    ]


def plan_lines(model: str, rate: float) -> tuple[list[str], int]:
    """The proposal's lines and the exit code: 0 with a proposal, 1 with none (no published throughput), 2 for a
    model the library does not know."""
    rows = [t for t in serve_time.THROUGHPUT if t.model == model]
    if rows:
        return [line for row in rows for line in proposal(row, rate)], 0
    card = HUGGING_FACE_MODELS.get(model)
    if card is None:
        alike = [m for m in HUGGING_FACE_MODELS if m.lower() == model.lower() or m.split("/")[-1] == model]
        hint = f"did you mean {alike[0]}? " if alike else ""
        return [
            f"model {model!r} is unknown; {hint}known: {', '.join(HUGGING_FACE_MODELS)} (another model: "
            "docs/add-your-own-model.md)"
        ], 2
    need = weight_gib(card.parameters_billions, card.precision)
    fits = [
        f"{s.slice_name} ({s.machine_type.name} {s.topology}, {need / s.hbm_gib:.0%} of its HBM)"
        for g in catalog.GENERATIONS
        if (s := catalog.smallest_fitting_slice(g, need)) is not None
    ]
    return [
        f"no throughput is published for {model}, so no group count is proposed for {rate:,.0f} output tokens/s",
        f"  its weights alone ({need:.1f} GiB, {card.precision}; no KV cache) fit, at the smallest: {', '.join(fits)}",
    ], 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--model", required=True, help="the Hugging Face id served, exactly")
    parser.add_argument(
        "--output-tokens-per-second", type=float, required=True, help="the output rate to serve, in tokens/s"
    )
    args = parser.parse_args(argv)
    if not math.isfinite(args.output_tokens_per_second) or args.output_tokens_per_second <= 0:
        parser.error(f"--output-tokens-per-second {args.output_tokens_per_second:g}: must be a number above 0")
    lines, code = plan_lines(args.model, args.output_tokens_per_second)
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
