"""Checks of the ``saxml`` settings against the rest of the stack (GKE version, fit)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ...catalog import SliceShape
from ...catalog.models import hbm_fit_problem
from ...common.settings import PROJECT_NAMESPACE
from ...platform.controllers import parse_version

if TYPE_CHECKING:
    from ..base import Stack
from .facts import FAILURE_RULES_SINCE
from .settings import PRIVILEGED_BEFORE, SaxmlServingConfig


def problems(cfg: Stack, serving: SaxmlServingConfig, shape: SliceShape, pools: int) -> list[str]:
    """The state bucket exists; every model is in the cell, listed once, fits its slice and its replicas."""
    key = f"{PROJECT_NAMESPACE}:serving"
    found: list[str] = []
    state = cfg.bucket("state")
    if state is None or state.workload_access != "readWrite":
        found.append(f"{PROJECT_NAMESPACE}:buckets: saxml needs a `state` bucket with workloadAccess readWrite")
    if parse_version(serving.jobset_version) < parse_version(FAILURE_RULES_SINCE):
        found.append(
            f"{key}.jobsetVersion = {json.dumps(serving.jobset_version)}: the model servers need JobSet "
            f"{FAILURE_RULES_SINCE} or later, whose failure-policy rules keep a node drain, upgrade or host "
            "maintenance from spending one of maxRestarts (without them the JobSet fails for good once they are spent)"
        )
    names = [m.model for m in serving.models]
    for i, m in enumerate(serving.models):
        fit = hbm_fit_problem(f"{key}.models[{i}]", m.parameters_billions, m.weight_precision, shape)
        if fit:
            found.append(fit)
        at = f"{key}.models[{i}]"
        if not m.model.startswith(serving.cell + "/"):
            found.append(f"{at}.model = {json.dumps(m.model)}: not in the cell {serving.cell}")
        if names.count(m.model) > 1:
            found.append(f"{at}.model = {json.dumps(m.model)}: listed more than once")
        if m.replicas > pools:
            found.append(f"{at}.replicas = {m.replicas}: only {pools} model server slice(s)")
    return found


def privileged(serving: SaxmlServingConfig, min_master_version: str | None) -> bool:
    """Privileged model servers: always, never, or (auto) only on GKE before 1.28."""
    if serving.privileged != "auto":
        return serving.privileged == "always"
    return min_master_version is not None and _minor(min_master_version) < PRIVILEGED_BEFORE


def _minor(version: str) -> tuple[int, int]:
    """``"1.27.2-gke.2100"`` -> ``(1, 27)``; ``latest`` is newer than any version."""
    if version == "latest":
        return (999, 0)
    major, minor = version.split("-")[0].split(".")[:2]
    return int(major), int(minor)
