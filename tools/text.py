"""Words in the tools' output: a count's noun agrees with it (``1 VM``, ``2 VMs``)."""

from __future__ import annotations


def plural(noun: str, n: int) -> str:
    """``noun`` as ``n`` of it is written: ``VM`` for 1, ``VMs`` otherwise (a regular plural)."""
    return noun if n == 1 else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """``n`` and its noun: ``1 VM``, ``4 VMs``."""
    return f"{n} {plural(noun, n)}"
