"""What the DisaggregatedSet controller of LeaderWorkerSet v0.10.0 and the llm-d router v0.10.0 do, as the runtime
model knows them: the model's own table, the values and their upstream files and lines in ``data/disaggregated.json``.
The library keeps its own copy of some of these; ``tests/tools/runtime/test_runtime_disagg_facts.py`` compares the two
without the model importing the library.
"""

from __future__ import annotations

from collections.abc import Mapping

from tpu_serving_tools.runtime import sourced as _sourced

_T = _sourced.table("disaggregated")

# --------------------------------------------------------------------------- DisaggregatedSet (LWS v0.10.0)

DS_KIND = _T.text("DS_KIND")
SCALER_KIND = _T.text("SCALER_KIND")
DS_GROUP = _T.text("DS_GROUP")

DS_NAME_LABEL = _T.text("DS_NAME_LABEL")
DS_ROLE_LABEL = _T.text("DS_ROLE_LABEL")
DS_SLICE_LABEL = _T.text("DS_SLICE_LABEL")
DS_REVISION_LABEL = _T.text("DS_REVISION_LABEL")

CHILD_NAME = _T.text("CHILD_NAME")
REVISION_LENGTH = _T.integer("REVISION_LENGTH")
REVISION = "<rev8>"
"""What the model writes for the revision in names and labels (never the real hash): the model cannot reproduce Go's
encoding of the defaulted object, so only the length (:data:`REVISION_LENGTH`) and that every template change makes a
new one are modelled."""
PRV_SUFFIX = _T.text("PRV_SUFFIX")

SCALER_NAME = _T.text("SCALER_NAME")
DEFAULT_MAX_SURGE = _T.integer("DEFAULT_MAX_SURGE")
SCALER_SEED = _T.integer("SCALER_SEED")
STATIC_DEFAULT_REPLICAS = _T.integer("STATIC_DEFAULT_REPLICAS")
SCALER_SELECTOR = _T.text("SCALER_SELECTOR")

PLACEMENT_NONE: tuple[str, str] = _T.get("PLACEMENT_NONE", tuple[str, str])

LWS_NAME_MAX = _T.integer("LWS_NAME_MAX")
DNS1035 = _T.text("DNS1035")
STATEFULSET_NAME_MAX = _T.integer("STATEFULSET_NAME_MAX")

ROLES_MIN, ROLES_MAX = _T.integer("ROLES_MIN"), _T.integer("ROLES_MAX")

# --------------------------------------------------------------------------- llm-d router v0.10.0 in P/D mode

LLMD_ROLE_LABEL = _T.text("LLMD_ROLE_LABEL")
DECODE_ROLES: frozenset[str] = _T.get("DECODE_ROLES", frozenset[str])
DECODE_ACCEPTS_UNLABELLED = _T.get("DECODE_ACCEPTS_UNLABELLED", bool)
PREFILL_ROLES: frozenset[str] = _T.get("PREFILL_ROLES", frozenset[str])
FAIL_CLOSE = _T.text("FAIL_CLOSE")
PREFILL_ONLY_ROLES = PREFILL_ROLES - DECODE_ROLES
"""Pods that only prefill: never the destination of a picked request."""
PREFILL_HEADER = _T.text("PREFILL_HEADER")
SIDECAR_PORTS: Mapping[str, tuple[str, int]] = _T.get("SIDECAR_PORTS", dict[str, tuple[str, int]])
SIDECAR_MARKERS: tuple[str, str, str] = _T.get("SIDECAR_MARKERS", tuple[str, str, str])
