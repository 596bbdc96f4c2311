"""Helpers for the documented settings dataclasses that components take as arguments."""

from __future__ import annotations

from dataclasses import field
from typing import Any


def described(text: str, **kwargs: Any) -> Any:
    """A dataclass field with a description, which the stack config models show and require."""
    return field(metadata={"description": text}, **kwargs)
