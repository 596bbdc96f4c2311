"""What the checks and the production gate both read of the serving: the slice kinds it runs on, and whether its
groups reload for longer than GKE waits on a node upgrade."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends import BACKENDS, Serving, rollout, scaling
from ..backends.jetstream.settings import PathwaysServingConfig
from ..backends.rollout import UPGRADE_WAIT_MINUTES
from ..backends.vllm import VllmServingConfig
from ..backends.vllm.disagg_checks import roles
from ..operations.maintenance.host_maintenance_job import GateMode

if TYPE_CHECKING:
    from .models import StackConfig


def serving_kind_names(serving: Serving) -> set[str]:
    """The slice kinds (``tpuSlices[].name``) the serving runs on: ``serving.slices`` and each disaggregated role's."""
    named = set(serving.slices)
    if isinstance(serving, VllmServingConfig):
        named |= {r.slice for _, r in roles(serving)}
    return named


def reload_outlasting_upgrade_wait(serving: object) -> int | None:
    """The startup window of LeaderWorkerSet serving of several groups (vLLM, JetStream) when it is no shorter than
    the wait GKE gives a disruption budget in an automatic node upgrade (:data:`~tpu_serving.backends.rollout.
    UPGRADE_WAIT_MINUTES`), so a slice's upgrade can take a second group while the first reloads; None otherwise.
    A created cluster must hold node upgrades (:func:`tpu_serving.config.checks.upgrade_overlap_problems`); an existing one's owner is said to
    (:func:`tpu_serving.config.production.existing_upgrades_gap`)."""
    if not isinstance(serving, VllmServingConfig | PathwaysServingConfig) or scaling.groups(serving) < 2:
        return None
    startup = BACKENDS[serving.backend].startup_seconds(serving)
    return startup if startup >= UPGRADE_WAIT_MINUTES * 60 else None


def maintenance_gate_runs(cfg: StackConfig) -> bool:
    """Whether the stack runs the host-maintenance gate (:mod:`tpu_serving.operations.maintenance.host_maintenance_job`):
    ``hostMaintenance.mode: start`` and serving that keeps two or more standing LeaderWorkerSet groups (vLLM or
    JetStream, not disaggregated) (:func:`tpu_serving.backends.rollout.maintenance_watched`). It starts the
    maintenance where the pools take a manual start (:func:`tpu_serving.backends.rollout.maintenance_starts`), and
    otherwise watches the serving nodes."""
    return cfg.host_maintenance.mode == GateMode.START and maintenance_gate_applies(cfg)


def maintenance_gate_applies(cfg: StackConfig) -> bool:
    """Whether the stack's serving would run the host-maintenance gate with ``hostMaintenance.mode: start``: two or
    more standing LeaderWorkerSet groups (vLLM or JetStream, not disaggregated)."""
    serving = cfg.serving
    if not isinstance(serving, VllmServingConfig | PathwaysServingConfig):
        return False
    if isinstance(serving, VllmServingConfig) and serving.disaggregation is not None:
        return False
    return rollout.gate_would_watch(cfg, serving)
