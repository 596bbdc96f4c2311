"""The typed arguments of :class:`~.disagg_component.VllmDisaggregatedServing`, and the rules a prefill/decode pair
must keep, shared by the stack file's checks (:mod:`.disagg_checks`) and the component's own.

Decode pulls prefill's KV cache with its own sharding and shapes (tpu-inference 0.29.0 tpu_connector.py
``_get_kv_spec`` l.874-880), host by host (decode worker *i* pulls from prefill node *i*, l.795-800, l.882-886): the two
roles must agree on the model, the dtype, the block size, the tensor parallelism and the hosts per slice
(tpu-inference PR #3379: P/D "only works when both sides run identical hardware and parallelism";
examples/disagg/run_disagg_single_host.sh l.66-73 sets equal TP). Pipeline parallelism is refused: the connector
orders hosts by their devices' coordinates, and with PP > 1 by plain rank (tpu_inference/distributed/utils.py
l.100-145). KV-cache *capacity* may differ (upstream's GKE run: prefill ``--gpu-memory-utilization=0.70``, decode
``0.90``). docs/design/disaggregated-vllm.md section 1.4 has the sources.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...catalog import SliceShape
from ...common.naming import check_dns_name, namespace_problem
from ...common.settings import described
from ...platform.lws import DISAGGREGATED_CANARY, Rollout
from .args import VllmEngineSettings, VllmServingArgs
from .kv import DS_NAME_MAX, KvRole

KV_LAYOUT_FLAGS: tuple[str, ...] = ("--kv-cache-dtype",)
"""Engine flags a role may pass in ``extra_args`` that change the KV cache's layout (vllm/config/cache.py
``cache_dtype``): both roles must pass the same value, or neither."""

SHARED_ARGUMENTS: tuple[str, ...] = (
    "namespace",
    "service_account",
    "model",
    "served_model_name",
    "served_model_aliases",
    "model_size",
    "loader",
    "file_cache",
    "weights_bucket",
    "hf_token_secret",
    "images",
    "lws_version",
)
"""Arguments both roles' engines take alike: one model, loaded the same way, in one namespace."""


def ds_name_problem(name: str) -> str:
    """Why ``name`` cannot name a DisaggregatedSet, or ``""`` (:data:`~.kv.DS_NAME_MAX`)."""
    if len(name) > DS_NAME_MAX:
        return (
            f"at most {DS_NAME_MAX} characters: the controller names each role's LeaderWorkerSet "
            "<name>-<slice>-<revision>-<role>, and each group's StatefulSet <that>-<group> must keep to 52"
        )
    return check_dns_name(name)


def _extra_flag(engine: VllmEngineSettings, flag: str) -> str | None:
    return next((a.split("=", 1)[1] if "=" in a else "" for a in engine.extra_args if a.split("=", 1)[0] == flag), None)


def kv_layout_problems(
    roles: Sequence[tuple[str, VllmEngineSettings, SliceShape]], spell: Callable[[str], str] = str
) -> list[str]:
    """Where the decode role's KV cache layout differs from the prefill role's, each at decode's key (``roles`` is
    ``(key of the role's engine, engine, slice shape)`` for prefill, then decode; ``spell`` writes a field's name as
    the keys do)."""
    (p_at, p, p_shape), (d_at, d, d_shape) = roles
    found = []
    for at, e, _shape in roles:
        if e.pipeline_parallel_size > 1:
            found.append(
                f"{at}.{spell('pipeline_parallel_size')} = {e.pipeline_parallel_size}: a disaggregated role runs "
                "tensor parallelism only (the TPU KV connector pairs hosts by their chips' coordinates, by plain "
                "rank with pipeline stages); valid: 1"
            )
    pairs: list[tuple[str, object, object]] = [
        ("dtype", p.dtype.value, d.dtype.value),
        ("quantization", p.quantization and p.quantization.value, d.quantization and d.quantization.value),
        ("block_size", p.block_size, d.block_size),
        ("tensor_parallel_size", p.parallelism(p_shape.devices)[0], d.parallelism(d_shape.devices)[0]),
    ]
    for name, mine, theirs in pairs:
        if mine != theirs:
            valid = json.dumps(mine) if mine is not None else "unset, as on prefill"
            found.append(
                f"{d_at}.{spell(name)} = {json.dumps(theirs)}: decode pulls prefill's KV cache in its own layout, so "
                f"the roles must agree; prefill's is {json.dumps(mine)} ({p_at}.{spell(name)}); valid: {valid}"
            )
    if p.max_model_len != d.max_model_len:
        found.append(
            f"{d_at}.{spell('max_model_len')} = {json.dumps(d.max_model_len)}: prefill computes a request's prompt and "
            f"decode continues it, so one context length serves both; prefill's is {json.dumps(p.max_model_len)} "
            f"({p_at}.{spell('max_model_len')}); valid: {json.dumps(p.max_model_len)}"
        )
    for flag in KV_LAYOUT_FLAGS:
        mine, theirs = _extra_flag(p, flag), _extra_flag(d, flag)
        if mine != theirs:
            found.append(
                f"{d_at}.{spell('extra_args')}: {flag} is {json.dumps(theirs)} on decode but {json.dumps(mine)} on "
                f"prefill ({p_at}.{spell('extra_args')}); it sets the KV cache's dtype, which both roles must share"
            )
    if p_shape.vms != d_shape.vms or p_shape.chips != d_shape.chips:
        found.append(
            f"{d_at}: a {d_shape.topology} slice of {d_shape.vms} VMs and {d_shape.chips} chips against prefill's "
            f"{p_shape.topology} of {p_shape.vms} VMs and {p_shape.chips} chips: decode host i pulls from prefill "
            "host i, so both roles need slices of the same hosts and chips"
        )
    return found


@dataclass(frozen=True)
class VllmDisaggregatedArgs:
    """Arguments of :class:`~.disagg_component.VllmDisaggregatedServing`: a prefill and a decode engine, each on
    its own slices, in one LeaderWorkerSet DisaggregatedSet."""

    prefill: VllmServingArgs = described(
        "The prefill engine: its slices' shape, its groups (one slice each) and engine settings; `kv_transfer.role` "
        "`prefill`."
    )
    """The prefill engine (``kv_transfer.role`` ``prefill``)."""
    decode: VllmServingArgs = described(
        "The decode engine, behind the router's sidecar; `kv_transfer.role` `decode`. Its model, loader, image and "
        "namespace are prefill's."
    )
    """The decode engine (``kv_transfer.role`` ``decode``)."""
    namespace: str = described("Namespace of the DisaggregatedSet (the roles' own).", check=namespace_problem)
    """Namespace of the DisaggregatedSet."""
    name: str = described(
        "DisaggregatedSet name; its controller names each role's LeaderWorkerSet `<name>-0-<revision>-<role>`.",
        default="vllm",
        check=ds_name_problem,
    )
    """DisaggregatedSet name."""
    service_name: str = described(
        "ClusterIP Service on the decode leaders' sidecars (port 8000), for port-forwarding; the Gateway routes "
        "through the InferencePool.",
        default="vllm-api",
        check=check_dns_name,
    )
    """ClusterIP Service on the decode leaders' serving port."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the DisaggregatedSet and the Service."""

    def problems(self) -> list[str]:
        """The roles are prefill then decode, share the model and what loads it, keep one KV cache layout, and roll
        out with surge (a DisaggregatedSet brings a revision's new LeaderWorkerSets up before the old go)."""
        found = []
        for at, role, want in (("prefill", self.prefill, KvRole.PREFILL), ("decode", self.decode, KvRole.DECODE)):
            have = role.kv_transfer.role if role.kv_transfer is not None else None
            if have != want:
                found.append(f"{at}.kv_transfer = {json.dumps(have and have.value)}: must be role {want.value!r}")
            if role.namespace != self.namespace:
                found.append(f"{at}.namespace = {role.namespace!r}: must be the DisaggregatedSet's, {self.namespace!r}")
            if role.node_pools and not role.autoscaled and len(role.node_pools) != role.replicas + 1:
                found.append(
                    f"{at}.node_pools = {list(role.node_pools)!r}: the role's {role.replicas} group(s) take a slice "
                    "each and a rollout's surge group one more (LWS v0.10.0 disaggregatedset planner.go l.195-215); "
                    f"list {role.replicas + 1} node pools"
                )
            if role.canary_groups is not None:
                found.append(f"{at}.canary_groups = {role.canary_groups}: {DISAGGREGATED_CANARY}")
            if role.rollout != Rollout.SURGE:
                found.append(
                    f"{at}.rollout = {role.rollout.value!r}: a role rolls out with surge, a revision's new group up "
                    "before the old one goes, as its DisaggregatedSet does by default (LWS v0.10.0 "
                    "pkg/controllers/disaggregatedset/planner.go DefaultRollingUpdateConfig: maxSurge 1, "
                    "maxUnavailable 0); in place, a role of one group stops serving; valid: surge"
                )
        pool = self.decode.kv_transfer.inference_pool if self.decode.kv_transfer is not None else ""
        if pool.count("/") != 1 or not all(pool.split("/")):
            found.append(
                f"decode.kv_transfer.inference_pool = {json.dumps(pool)}: the router's sidecar runs with SSRF protection "
                "and sends a prefill leg only to the pods of this InferencePool; valid: <namespace>/<name>"
            )
        for name in SHARED_ARGUMENTS:
            mine, theirs = getattr(self.prefill, name), getattr(self.decode, name)
            if mine != theirs:
                found.append(f"decode.{name} = {theirs!r}: must equal prefill.{name} ({mine!r}); one model serves both")
        found += kv_layout_problems(
            [
                ("prefill.engine", self.prefill.engine, self.prefill.shape),
                ("decode.engine", self.decode.engine, self.decode.shape),
            ]
        )
        return found
