"""Kubernetes quantities and the CPU / memory / TPU resources of containers and pods.

Parses quantities (``"500m"``, ``"32Gi"``) and sums, compares and describes :class:`Resources`;
:mod:`tools.runtime.pods` re-exports its public names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.runtime import facts as F

# --------------------------------------------------------------------------- quantities

_SUFFIX = {
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse_quantity(value: str | int | float) -> float:
    """A Kubernetes quantity (``"500m"``, ``"32Gi"``, ``"32000000000"``, ``1.5``) as a float."""
    if isinstance(value, (int, float)):
        return float(value)
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return float(m.group(1)) * _SUFFIX[m.group(2) or ""]


@dataclass(frozen=True)
class Resources:
    """CPU (cores), memory (bytes) and TPU chips."""

    cpu: float = 0.0
    memory: float = 0.0
    tpu: float = 0.0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.tpu + other.tpu)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.tpu - other.tpu)

    def max(self, other: Resources) -> Resources:
        """Per-resource maximum."""
        return Resources(max(self.cpu, other.cpu), max(self.memory, other.memory), max(self.tpu, other.tpu))

    def fits_in(self, other: Resources) -> bool:
        """Whether every resource of ``self`` is at most that of ``other`` (with a rounding margin)."""
        eps = 1e-9
        return self.cpu <= other.cpu + eps and self.memory <= other.memory + 1 and self.tpu <= other.tpu + eps

    def describe(self) -> str:
        """``24.25 CPU / 132.5 GB`` (+ ``/ 4 TPU`` when any)."""
        text = f"{_num(self.cpu)} CPU / {_num(self.memory / F.GB)} GB"
        return text + (f" / {_num(self.tpu)} TPU" if self.tpu else "")


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


_RESOURCE_KEYS = {"cpu": "cpu", "memory": "memory", F.TPU_RESOURCE: "tpu"}


def _resources(values: Mapping[str, Any] | None) -> dict[str, float]:
    return {_RESOURCE_KEYS[k]: parse_quantity(v) for k, v in (values or {}).items() if k in _RESOURCE_KEYS}


def _as_resources(values: Mapping[str, float]) -> Resources:
    return Resources(values.get("cpu", 0.0), values.get("memory", 0.0), values.get("tpu", 0.0))


def scaled(value: object, replicas: int, *, round_up: bool) -> int:
    """An int-or-percent of ``replicas``, as LWS scales it (``intstr.GetScaledValueFromIntOrPercent``)."""
    if isinstance(value, str) and value.endswith("%"):
        share = replicas * float(value[:-1]) / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(float(str(value)))
