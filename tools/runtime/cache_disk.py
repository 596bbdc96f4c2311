"""Where each serving's GCS FUSE file cache goes, and whether the boot disk under it holds it.

Read from the rendered pod templates only: a read-only GCS FUSE volume (the weights) has a file cache when its
``file-cache:max-size-mb`` option is not 0; the cache lives in the pod's ``gke-gcsfuse-cache`` volume, in memory when
the pod declares it an emptyDir of medium ``Memory``, and otherwise on the node's boot disk, where the webhook puts it
(:data:`.facts.GCS_FUSE_CACHE_VOLUME`). On the boot disk it holds up to its cap, or, unbounded (``-1``), the whole
model: the size of the model the engine serves (``--served-model-name``), looked up by its exact id in the catalog
(:data:`tpu_serving.catalog.models.HUGGING_FACE_MODELS`) in its released precision, as the bucket holds it. Each pool the pods
may land on must have that plus the stack file's allowance for the images (``DISK_ALLOWANCE_GIB``, the rule of
``tpuSlices[].diskSizeGb``) on each VM's boot disk; a pod no pool takes, an unknown size or an existing pool with no
declared disk fails.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tpu_serving.backends.vllm.settings import DISK_ALLOWANCE_GIB
from tpu_serving.catalog.models import HUGGING_FACE_MODELS, weight_gib
from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.node_pool import NodePool
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod, Volume, pods_of
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling import landing_pools, node_pools
from tpu_serving_tools.text import counted

SUBJECT = "file cache "
"""The prefix of this module's findings (the check's ``file caches fit`` count)."""
MODEL_FLAG = "--served-model-name"
GIB, GB = 2**30, 10**9


@dataclass(frozen=True)
class Cache:
    """The file cache of one pod's weights volumes."""

    volumes: tuple[str, ...]
    """The read-only GCS FUSE volumes whose file cache is on (empty: the cache is off)."""
    where: str
    """``memory``, ``boot disk``, or the kind of the pod's own cache volume."""
    gib: float | None
    """GiB it holds at most, or None: unknown (``unknown`` says why)."""
    unknown: str = ""


def _cap_mib(volume: Volume) -> int | None:
    """``file-cache:max-size-mb`` of a volume: -1 unbounded, 0 (or absent) off."""
    given = [
        o[len(F.GCS_FUSE_FILE_CACHE_OPTION) :]
        for o in volume.mount_options
        if o.startswith(F.GCS_FUSE_FILE_CACHE_OPTION)
    ]
    try:
        return int(given[-1]) if given else None
    except ValueError:
        return None


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part.replace("$(", "("))
    except ValueError:  # an unbalanced quote: words as the shell would not split them, but the flag is still seen
        return part.split()


def served_model(pod: Pod) -> str | None:
    """The model a container of ``pod`` serves: its ``--served-model-name`` (in a shell script or an argument)."""
    for c in pod.containers:
        words = [w for part in (*c.command, *c.args) for w in _words(part)]
        for i, w in enumerate(words):
            if w.startswith(f"{MODEL_FLAG}="):
                return w.split("=", 1)[1]
            if w == MODEL_FLAG and i + 1 < len(words):
                return words[i + 1]
    return None


def weights_gib(model: str | None) -> float | None:
    """GiB of the checkpoint of ``model``, the catalog's exact id, in its released precision; None: not in it."""
    card = HUGGING_FACE_MODELS.get(model or "")
    return None if card is None else weight_gib(card.parameters_billions, card.precision)


def _where(pod: Pod) -> str:
    own = next((v for v in pod.volumes if v.name == F.GCS_FUSE_CACHE_VOLUME), None)
    if own is None or own.medium == "":
        return "boot disk"
    return "memory" if own.medium == "Memory" else f"volume {own.kind}"


def _size(model: str | None, cached: Sequence[Volume]) -> tuple[float | None, str]:
    """GiB the cache of ``cached`` holds at most, or (None, why unknown)."""
    weights = weights_gib(model)
    total = 0.0
    for v in cached:
        cap = _cap_mib(v) or -1
        if cap > 0:
            total += cap / 1024 if weights is None else min(cap / 1024, weights)
        elif weights is not None:
            total += weights
        else:
            named = f"the served model {model!r} is not in the catalog" if model else f"no container has {MODEL_FLAG}"
            return None, (
                f"volume {v.name}'s file cache is unbounded and {named}, so its size on the boot disk is unknown; "
                "put the cache in memory (file_cache: memory) or serve the model under its catalog id"
            )
    return total, ""


def pod_cache(pod: Pod, model: str | None) -> Cache | None:
    """The file cache of the pod's read-only GCS FUSE volumes (None: the pod has none), of the weights of ``model``
    (the one its group serves: a Ray worker's container does not name it)."""
    weights = [v for v in pod.volumes if v.gcs_bucket is not None and v.read_only]
    if not weights:
        return None
    cached = [v for v in weights if (_cap_mib(v) or 0) != 0]
    if not cached:
        return Cache((), "off", 0.0)
    gib, unknown = _size(model, cached)
    return Cache(tuple(v.name for v in cached), _where(pod), gib, unknown)


def _gb(gib: float) -> int:
    return int(gib * GIB / GB) + 1


def disk_problem(pool: NodePool, cache: Cache) -> str:
    """Why ``pool``'s boot disk does not hold ``cache`` and the images, or ``""``."""
    need = (cache.gib or 0) + DISK_ALLOWANCE_GIB
    if pool.disk_size_gb is None:
        return (
            f"existing pool {pool.name} declares no boot disk size, and the file cache of {', '.join(cache.volumes)} "
            f"needs at least {_gb(need)} GB on it; declare it (ExistingTpuNodePoolArgs.disk_size_gb)"
        )
    if pool.disk_size_gb * GB / GIB >= need:
        return ""
    return (
        f"pool {pool.name} has diskSizeGb {pool.disk_size_gb}, and each VM's boot disk holds the file cache of "
        f"{', '.join(cache.volumes)} ({cache.gib:.0f} GiB) next to the images ({DISK_ALLOWANCE_GIB} GiB): needs at "
        f"least {_gb(need)} GB; raise the pool's disk_size_gb (a stack file's tpuSlices[].diskSizeGb) to {_gb(need)}, "
        "or put the cache in memory (file_cache: memory) on a VM that holds it"
    )


def _problems(pod: Pod, cache: Cache, pools: Sequence[NodePool]) -> tuple[list[str], list[NodePool]]:
    """Why the cache of ``pod`` does not fit, and the pools it may land on."""
    if cache.where != "boot disk":
        return [], []
    landing = landing_pools(pod, pools)
    if not landing:
        return [f"no node pool takes pod {pod.key}, so no boot disk is known to hold its file cache"], []
    if cache.gib is None:
        return [cache.unknown], landing
    return [p for pool in landing if (p := disk_problem(pool, cache))], landing


def _workloads(pods: Iterable[Pod]) -> dict[str, list[tuple[Pod, Cache]]]:
    """Serving (``namespace/name`` of the object the plan declares) -> its pods with a weights volume, and their
    cache, of the model one of its pods serves."""
    groups: dict[str, list[Pod]] = {}
    for pod in pods:
        groups.setdefault(f"{pod.namespace}/{pod.owner.split('/', 1)[-1]}", []).append(pod)
    out: dict[str, list[tuple[Pod, Cache]]] = {}
    for name, members in groups.items():
        model = next((m for p in members if (m := served_model(p))), None)
        caches = [(p, c) for p in members if (c := pod_cache(p, model)) is not None]
        if caches:
            out[name] = caches
    return out


def _how(cache: Cache, landing: Sequence[NodePool]) -> str:
    if cache.where == "off":
        return "off"
    size = "" if cache.gib is None else f"{cache.gib:.0f} GiB, "
    if cache.where != "boot disk":
        return f"{size}{cache.where}"
    if not landing:  # no pool takes the pod: the scheduling category says why (new-user review 16, m3)
        return f"{size}boot disk of no pool (the pod is placed on none)"
    sizes = {p.disk_size_gb for p in landing}
    if len(sizes) == 1:
        return f"{size}boot disk of {sizes.pop() or '?'} GB ({counted(len(landing), 'pool')})"
    disks = ", ".join(f"{p.name} {p.disk_size_gb or '?'} GB" for p in landing)
    return f"{size}boot disk ({disks})"


def _verdicts(pods: Sequence[Pod], pools: Sequence[NodePool]) -> list[tuple[str, list[str], list[str]]]:
    """(serving, why its cache does not fit, where it goes) of each serving with a GCS FUSE weights volume."""
    out = []
    for name, members in _workloads(pods).items():
        problems: list[str] = []
        hows: list[str] = []
        for pod, cache in members:
            found, landing = _problems(pod, cache, pools)
            problems += [p for p in found if p not in problems]
            how = _how(cache, landing)
            hows += [how] if how not in hows else []
        out.append((name, problems, hows))
    return out


def findings(pods: Sequence[Pod], pools: Sequence[NodePool]) -> list[Finding]:
    """One finding per serving with a GCS FUSE weights volume: where its file cache goes, and whether it fits."""
    return [
        Finding(f"{SUBJECT}{n}", not bad, "; ".join(bad) or "; ".join(how)) for n, bad, how in _verdicts(pods, pools)
    ]


def preview_lines(view: PlanView) -> list[str]:
    """The preview's ``File cache:`` line of each serving: where its weights' cache goes (``auto`` chooses silently)."""
    return [
        f"File cache: {name}: {'; '.join(how)}" + ("; `tpu-serving check` fails it" if bad else "")
        for name, bad, how in _verdicts(pods_of(view), node_pools(view))
    ]
