"""Checks of ``serving.disaggregation`` against the rest of the stack: each role's slices, groups, parallelism and
HBM fit, and one KV cache layout for both (:func:`~.disagg_args.kv_layout_problems`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic.alias_generators import to_camel

from ...catalog import SliceShape
from ...common.settings import PROJECT_NAMESPACE, CreateOrExisting, to_settings
from ...operations.autoscaling import kind_problem
from ..scaling import AutoscalingConfig, metric_reader_problems
from .args import VllmEngineSettings, parallelism_problems
from .disagg_args import ds_name_problem, kv_layout_problems
from .facts import METRIC_KINDS, VllmMetric
from .kv import KvRole
from .settings import VllmRoleConfig, VllmServingConfig

if TYPE_CHECKING:
    from ..base import Stack

KEY = f"{PROJECT_NAMESPACE}:serving"
AT = f"{KEY}.disaggregation"

ROLE_METRICS: dict[KvRole, str] = {
    KvRole.PREFILL: VllmMetric.REQUESTS_WAITING.value,
    KvRole.DECODE: VllmMetric.KV_CACHE_USAGE.value,
}
"""Each role's default autoscaling gauge: prefill on its queue, decode on its KV cache in use (vLLM 0.29.0
vllm/v1/metrics/loggers.py l.504, l.562). A role's ``autoscaling.metric`` may name another gauge (decode:
``vllm:num_requests_running``, l.494)."""

REPLACED_BY_ROLES: tuple[str, ...] = ("replicas", "autoscaling", "engine")
"""The single-engine settings each role sets for itself in the disaggregated mode."""


def roles(serving: VllmServingConfig) -> list[tuple[KvRole, VllmRoleConfig]]:
    """``(role, its settings)``, prefill first; empty without ``disaggregation``."""
    d = serving.disaggregation
    return [] if d is None else [(KvRole.PREFILL, d.prefill), (KvRole.DECODE, d.decode)]


FRACTION_GAUGES: dict[str, str] = {
    VllmMetric.KV_CACHE_USAGE.value: "vLLM 0.29.0 vllm/v1/metrics/loggers.py l.562-563: 'KV-cache usage. 1 means 100 percent usage.'"
}
"""Gauges whose value is a fraction of one: an HPA target above 1 never triggers."""


def role_metric(role: KvRole, cfg: VllmRoleConfig) -> str:
    """The gauge a role's HPA reads: its ``autoscaling.metric``, else :data:`ROLE_METRICS`."""
    return cfg.autoscaling.metric if cfg.autoscaling is not None and cfg.autoscaling.metric else ROLE_METRICS[role]


def slice_counts(cfg: Stack) -> dict[str, int]:
    """Slices of each slice kind (its node pools)."""
    return {s.name: len(s.pool_names) for s in cfg.tpu_slices}


def _value(mode: CreateOrExisting | None) -> str:
    """A mode as the stack file says it, ``unset`` for none."""
    return "unset" if mode is None else json.dumps(mode.value)


def shared_adapter_problems(scaled: list[AutoscalingConfig]) -> list[str]:
    """The two roles share one metrics adapter, its install and its one grant: their settings of it must agree."""
    if len(scaled) != 2:
        return []
    prefill, decode = scaled
    return [
        f"{AT}.decode.autoscaling.{key} = {_value(getattr(decode, name))}: the roles share one metrics "
        f"adapter, its install and its one grant; prefill's says {_value(getattr(prefill, name))}: make "
        "them agree"
        for name, key in (("adapter_install", "adapterInstall"), ("adapter_iam", "adapterIam"))
        if getattr(prefill, name) != getattr(decode, name)
    ]


def problems(cfg: Stack, serving: VllmServingConfig, shape: SliceShape) -> list[str]:
    """Every problem of the disaggregated settings at once, each at its key."""
    pair = roles(serving)
    return [
        *_single_engine_problems(serving),
        *_fraction_target_problems(pair),
        *shared_adapter_problems([c.autoscaling for _, c in pair if c.autoscaling is not None]),
        *_slice_kind_problems(serving, pair),
        *_role_problems(cfg, serving, pair, shape),
        *kv_layout_problems(
            [(f"{AT}.{role.value}.engine", to_settings(r.engine, VllmEngineSettings), shape) for role, r in pair],
            to_camel,
        ),
    ]


def _single_engine_problems(serving: VllmServingConfig) -> list[str]:
    """Settings of the single-engine mode the roles replace (their own engine, replicas, autoscaling; the rollout),
    and a name the DisaggregatedSet cannot take."""
    found = [
        f"{KEY}.{to_camel(name)}: set per role in the disaggregated mode (disaggregation.prefill.{to_camel(name)}, "
        f"disaggregation.decode.{to_camel(name)}); remove it here"
        for name in REPLACED_BY_ROLES
        if name in serving.model_fields_set
    ]
    if "rollout" in serving.model_fields_set:
        found.append(
            f"{KEY}.rollout = {json.dumps(serving.rollout.value)}: the disaggregated mode's roles roll out with surge, "
            "each onto its slice that scales from zero (the DisaggregatedSet's default); remove it"
        )
    if problem := ds_name_problem(serving.name):
        found.append(f"{KEY}.name = {json.dumps(serving.name)}: {problem}")
    return found


def _fraction_target_problems(pair: list[tuple[KvRole, VllmRoleConfig]]) -> list[str]:
    """An HPA target above 1 on a gauge that is a fraction of one never adds a group."""
    return [
        f"{AT}.{role.value}.autoscaling.target = {c.autoscaling.target:g}: "
        f"{role_metric(role, c)} is a fraction from 0 to 1 ({FRACTION_GAUGES[role_metric(role, c)]}), so "
        "the HPA would never add a group; valid: a target in (0, 1], e.g. 0.8"
        for role, c in pair
        if c.autoscaling is not None and role_metric(role, c) in FRACTION_GAUGES and c.autoscaling.target > 1
    ]


def _slice_kind_problems(serving: VllmServingConfig, pair: list[tuple[KvRole, VllmRoleConfig]]) -> list[str]:
    """Each role takes a slice kind of its own, and ``serving.slices`` lists those two and no other."""
    found = []
    kinds = [r.slice for _, r in pair]
    if kinds[0] == kinds[1]:
        found.append(
            f"{AT}.decode.slice = {json.dumps(kinds[1])}: prefill's slice kind too; each role takes slices of its own "
            f"kind (its node pools); valid: a tpuSlices entry other than {json.dumps(kinds[0])}"
        )
    if sorted(set(serving.slices)) != sorted(set(kinds)):
        found.append(
            f"{KEY}.slices = {json.dumps(list(serving.slices))}: lists the roles' slice kinds and no other; valid: "
            f"{json.dumps(sorted(set(kinds)))}"
        )
    return found


def _role_problems(
    cfg: Stack, serving: VllmServingConfig, pair: list[tuple[KvRole, VllmRoleConfig]], shape: SliceShape
) -> list[str]:
    """Each role's slice is one of ``serving.slices``, and its groups and engine parallelism fit that slice kind."""
    found = []
    counts = slice_counts(cfg)
    for role, r in pair:
        at = f"{AT}.{role.value}"
        if r.slice not in serving.slices or r.slice not in counts:
            valid = ", ".join(n for n in serving.slices if n in counts)
            found.append(f"{at}.slice = {json.dumps(r.slice)}: not one of serving.slices; valid: {valid}")
            continue
        found += _group_problems(cfg, at, role, r, counts[r.slice], shape)
        found += parallelism_problems(f"{at}.engine", to_settings(r.engine, VllmEngineSettings), shape, to_camel)
    return found


def _group_problems(cfg: Stack, at: str, role: KvRole, r: VllmRoleConfig, count: int, shape: SliceShape) -> list[str]:
    """A role's groups take its slice kind's slices, one each, and a rollout's surge group one more: the kind's count
    is the fixed group count, or the autoscaled maximum, plus the spare, which scales from zero (a DisaggregatedSet
    rolls every role with surge, maxSurge 1, and removes an old group only once the new revision's groups are all
    ready: LWS v0.10.0 pkg/controllers/disaggregatedset/planner.go l.32, l.195-215, executor.go l.148-149; without
    a spare slice the surge group stays pending and the rollout of both roles stops). An autoscaled role reads a
    gauge through Managed Prometheus."""
    auto = r.autoscaling
    slices = f"tpuSlices {json.dumps(r.slice)} provides {count} {shape.topology} slice{'s' if count != 1 else ''}"
    spare = "each group takes one whole slice and a rollout's surge group one more (the spare)"

    def fix(key: str, groups: int) -> str:
        other = f" or {key} to {count - 1}" if count > 1 else ""
        return f"{spare}, and {slices}; set that slice kind's count to {groups + 1}{other}"

    if auto is None:
        if r.replicas + 1 == count:
            return []
        return [f"{at}.replicas = {r.replicas}: {fix('replicas', r.replicas)}"]
    found = []
    if "replicas" in r.model_fields_set:
        found.append(
            f"{at}.replicas = {r.replicas}: the HPA sets the role's group count with autoscaling; remove replicas "
            "and use autoscaling.minReplicas and autoscaling.maxReplicas"
        )
    if auto.max_replicas + 1 != count:
        found.append(f"{at}.autoscaling.maxReplicas = {auto.max_replicas}: {fix('maxReplicas', auto.max_replicas)}")
    metric = role_metric(role, r)
    if not_gauge := kind_problem(metric, METRIC_KINDS, "vLLM"):
        found.append(f"{at}.autoscaling.metric = {json.dumps(metric)}: {not_gauge}")
    return found + metric_reader_problems(cfg, f"{at}.autoscaling", metric, "the role's leaders")
