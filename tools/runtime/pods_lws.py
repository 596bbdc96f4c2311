"""The pods the LeaderWorkerSet controller creates: groups of a leader and workers, with LWS's environment
variables and TPU variables (sub-groups included) and its exclusive placement annotations."""

from __future__ import annotations

from collections.abc import Mapping
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


def expand_leaderworkerset(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """Every pod of a LeaderWorkerSet: ``replicas`` groups of a leader and ``size - 1`` workers."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    name, ns = meta["name"], meta.get("namespace", "default")
    annotations = meta.get("annotations") or {}
    tmpl = spec.get("leaderWorkerTemplate") or {}
    size = int(tmpl.get("size", 1))
    worker_t = tmpl.get("workerTemplate") or {}
    leader_t = tmpl.get("leaderTemplate") or worker_t
    sg_policy = tmpl.get("subGroupPolicy") or {}
    sg_size = int(sg_policy["subGroupSize"]) if sg_policy.get("subGroupSize") else None
    leader_excluded = (
        sg_policy.get("subGroupPolicyType") == "LeaderExcluded" or sg_policy.get("type") == "LeaderExcluded"
    )
    group_excl = annotations.get(F.LWS_EXCLUSIVE_ANNOTATION)
    sg_excl = annotations.get(F.LWS_SUBGROUP_EXCLUSIVE_ANNOTATION) if sg_size else None
    recreate_group = tmpl.get("restartPolicy", "RecreateGroupOnPodRestart") != "None"
    owner = f"LeaderWorkerSet/{name}"
    pods: list[Pod] = []
    for g in range(int(spec.get("replicas", 1))):
        group_key = f"{owner}/{g}"
        leader_pod = make_pod(leader_t, _Placement(f"{name}-{g}", ns, owner, "leader", group_key, group_key), defaults)
        leader_tpu = leader_pod.requests_tpu
        for index in range(size):
            template, role = (leader_t, "leader") if index == 0 else (worker_t, "worker")
            pod_name = f"{name}-{g}" if index == 0 else f"{name}-{g}-{index}"
            topo, excl_set = None, None
            if sg_excl and not (index == 0 and leader_excluded):
                sg = 0 if index == 0 else _subgroup_of_worker(size, sg_size or 1, index)
                topo, excl_set = sg_excl, f"{group_key}/subgroup-{sg}"
            if group_excl:  # the group-level rule dominates placement when both are set
                topo, excl_set = group_excl, group_key
            where = _Placement(
                pod_name,
                ns,
                owner,
                role,
                group_key,
                group_key if recreate_group else f"{owner}/{pod_name}",
                topo,
                excl_set,
                {F.LWS_NAME_LABEL: name, F.LWS_WORKER_INDEX_LABEL: str(index)},
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
            pods.append(_with_env(pod, lws_env))
    return pods
