"""The pods the LeaderWorkerSet controller creates: groups of a leader and workers, with LWS's environment
variables and TPU variables (sub-groups included) and its exclusive placement annotations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.pods_model import LimitDefaults, Pod, _Placement, _with_env, make_pod

# --------------------------------------------------------------------------- LeaderWorkerSet


def _subgroup_of_worker(size: int, subgroup_size: int, index: int) -> int:
    """LWS v0.10.0 ``getSubGroupIndex`` (see facts)."""
    if (size - 1) % subgroup_size == 0 and size % subgroup_size != 0:
        return (index - 1) // subgroup_size
    return index // subgroup_size


def _lws_tpu_env(pod: Pod, lws: str, group: int, index: int, size: int, leader_tpu: bool) -> Pod:
    """TPU_WORKER_HOSTNAMES / TPU_WORKER_ID for the first TPU container (LWS v0.10.0 tpu.go, no sub-groups)."""
    tpu = next((c for c in pod.containers + pod.init_containers if c.limits.tpu or c.requests.tpu), None)
    if tpu is None:
        return pod
    leader = f"{lws}-{group}"
    hosts = ([f"{leader}.{lws}"] if leader_tpu or index == 0 else []) + [f"{leader}-{i}.{lws}" for i in range(1, size)]
    worker_id = index if (leader_tpu or index == 0) else index - 1
    port = tpu.env.get("TPU_PROCESS_PORT", str(F.LWS_TPU_PROCESS_DEFAULT_PORT))
    env = {
        "TPU_WORKER_HOSTNAMES": ",".join(hosts),
        "TPU_WORKER_ID": str(worker_id),
        "TPU_NAME": leader,
        "TPU_PROCESS_ADDRESSES": ",".join(f"{h}:{port}" for h in hosts),
        "TPU_PROCESS_PORT": port,
    }
    return _with_env(pod, env, only=tpu.name)


def _lws_tpu_env_subgroup(pod: Pod, lws: str, group: int, index: int, size: int, sg_size: int, leader_tpu: bool) -> Pod:
    """TPU env with sub-groups (LWS v0.10.0 ``addTPUVariablesSubGroup``)."""
    tpu = next((c for c in pod.containers + pod.init_containers if c.limits.tpu or c.requests.tpu), None)
    if tpu is None:
        return pod
    leader = f"{lws}-{group}"
    sg = 0 if index == 0 else _subgroup_of_worker(size, sg_size, index)
    worker_id = index % sg_size
    if index != 0 and not leader_tpu:
        worker_id, sg = (index - 1) % sg_size, (index - 1) // sg_size
    start, end = sg_size * sg + 1, sg_size * (sg + 1)
    hosts: list[str] = []
    if index == 0 or (leader_tpu and sg == 0):
        hosts.append(f"{leader}.{lws}")
        end -= 1
    elif leader_tpu:
        start, end = start - 1, end - 1
    hosts += [f"{leader}-{i}.{lws}" for i in range(start, end + 1)]
    env = {"TPU_WORKER_HOSTNAMES": ",".join(hosts), "TPU_WORKER_ID": str(worker_id), "TPU_NAME": leader}
    return _with_env(pod, env, only=tpu.name)


@dataclass(frozen=True)
class _Lws:
    """What the expansion reads of a LeaderWorkerSet: its name, group size, templates, sub-groups, exclusive
    placement annotations and restart policy."""

    name: str
    namespace: str
    size: int
    leader_template: Mapping[str, Any]
    worker_template: Mapping[str, Any]
    subgroup_size: int | None
    leader_excluded: bool
    group_exclusive: str | None
    subgroup_exclusive: str | None
    recreate_group: bool


def _read_lws(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> _Lws:
    """The LeaderWorkerSet's metadata and spec as :class:`_Lws`, with LWS's defaults."""
    annotations = meta.get("annotations") or {}
    tmpl = spec.get("leaderWorkerTemplate") or {}
    worker_t = tmpl.get("workerTemplate") or {}
    sg_policy = tmpl.get("subGroupPolicy") or {}
    sg_size = int(sg_policy["subGroupSize"]) if sg_policy.get("subGroupSize") else None
    leader_excluded = (
        sg_policy.get("subGroupPolicyType") == "LeaderExcluded" or sg_policy.get("type") == "LeaderExcluded"
    )
    return _Lws(
        name=meta["name"],
        namespace=meta.get("namespace", "default"),
        size=int(tmpl.get("size", 1)),
        leader_template=tmpl.get("leaderTemplate") or worker_t,
        worker_template=worker_t,
        subgroup_size=sg_size,
        leader_excluded=leader_excluded,
        group_exclusive=annotations.get(F.LWS_EXCLUSIVE_ANNOTATION),
        subgroup_exclusive=annotations.get(F.LWS_SUBGROUP_EXCLUSIVE_ANNOTATION) if sg_size else None,
        recreate_group=tmpl.get("restartPolicy", "RecreateGroupOnPodRestart") != "None",
    )


def _exclusive(lws: _Lws, index: int, group_key: str) -> tuple[str | None, str | None]:
    """The exclusive topology key and the set of pods it keeps together, for pod ``index`` of a group."""
    topo, excl_set = None, None
    if lws.subgroup_exclusive and not (index == 0 and lws.leader_excluded):
        sg = 0 if index == 0 else _subgroup_of_worker(lws.size, lws.subgroup_size or 1, index)
        topo, excl_set = lws.subgroup_exclusive, f"{group_key}/subgroup-{sg}"
    if lws.group_exclusive:  # the group-level rule dominates placement when both are set
        topo, excl_set = lws.group_exclusive, group_key
    return topo, excl_set


def _group_member(lws: _Lws, g: int, index: int, leader_tpu: bool, defaults: LimitDefaults) -> Pod:
    """Pod ``index`` of group ``g`` (0 the leader), with LWS's variables and the TPU ones."""
    name, ns, size, sg_size = lws.name, lws.namespace, lws.size, lws.subgroup_size
    owner = f"LeaderWorkerSet/{name}"
    group_key = f"{ns}/{owner}/{g}"  # namespaced: two same-named sets in two namespaces are two (library review 1, M1)
    template, role = (lws.leader_template, "leader") if index == 0 else (lws.worker_template, "worker")
    pod_name = f"{name}-{g}" if index == 0 else f"{name}-{g}-{index}"
    topo, excl_set = _exclusive(lws, index, group_key)
    where = _Placement(
        pod_name,
        ns,
        owner,
        role,
        group_key,
        group_key if lws.recreate_group else f"{ns}/{owner}/{pod_name}",
        topo,
        excl_set,
        {F.LWS_NAME_LABEL: name, F.LWS_WORKER_INDEX_LABEL: str(index), F.LWS_GROUP_INDEX_LABEL: str(g)},
    )
    pod = make_pod(template, where, defaults)
    lws_env = {
        F.LWS_ENV_LEADER_ADDRESS: f"{name}-{g}.{name}.{ns}",
        F.LWS_ENV_GROUP_SIZE: str(size),
        F.LWS_ENV_WORKER_INDEX: str(index),
    }
    if pod.requests_tpu:
        pod = (
            _lws_tpu_env_subgroup(pod, name, g, index, size, sg_size, leader_tpu)
            if sg_size
            else _lws_tpu_env(pod, name, g, index, size, leader_tpu)
        )
    return _with_env(pod, lws_env)


def expand_leaderworkerset(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """Every pod of a LeaderWorkerSet: ``replicas`` groups of a leader and ``size - 1`` workers."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    lws = _read_lws(meta, spec)
    name, ns = lws.name, lws.namespace
    owner = f"LeaderWorkerSet/{name}"
    pods: list[Pod] = []
    for g in range(int(spec.get("replicas", 1))):
        group_key = f"{owner}/{g}"
        leader_t = lws.leader_template
        leader_pod = make_pod(leader_t, _Placement(f"{name}-{g}", ns, owner, "leader", group_key, group_key), defaults)
        pods += [_group_member(lws, g, index, leader_pod.requests_tpu, defaults) for index in range(lws.size)]
    return pods
