"""tpu_serving.catalog.prices: the price tables the cost estimate reads."""

from __future__ import annotations


def test_prices_reserved_tpu_prices_are_per_chip_hour():
    """prices._tpu_prices: a reserved slice is priced per chip-hour, as the on-demand one."""
    from tpu_serving.catalog.capacity import Capacity
    from tpu_serving.catalog.prices import TPU_CHIP_HOUR

    assert {p.unit for (_, cap), p in TPU_CHIP_HOUR.items() if cap == Capacity.RESERVATION} == {"chip-hour"}
