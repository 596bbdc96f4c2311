"""The stack's images through its image mirror (``imageMirror``): which images come from Docker Hub or ghcr.io, the
repositories that serve them, and the settings with those images rewritten to the repositories' paths.

Read by the platform phase (:func:`tpu_serving.phases.context`): every pod the deployment builds then pulls the
rewritten image. The images are the settings' own, at their key paths: a field named ``image`` or ``...Image``, and
every field of an ``images`` block (``serving.images.vllm``, ``serving.disaggregation.sidecarImage``,
``gateway.eppImage``, ``serving.images.publisher``, a PathwaysJob component's ``image``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from ..common.naming import mirror_repository_id
from ..common.settings import PROJECT_NAMESPACE
from ..platform.image_mirror import (
    UPSTREAMS,
    MirrorMode,
    Upstream,
    effective_mode,
    mirrored_image,
    repository_path,
    upstream_of,
)
from .models import StackConfig

KEY = f"{PROJECT_NAMESPACE}:imageMirror"
IMAGE_SECTIONS = ("serving", "gateway")
"""The sections of the settings that hold container images."""


def _is_image(name: str, in_images: bool) -> bool:
    return in_images or name == "image" or name.endswith("_image")


def _fields(value: Any, key: str, name: str, in_images: bool) -> Iterator[tuple[str, str]]:
    if isinstance(value, BaseModel):
        for f in type(value).model_fields:
            yield from _fields(getattr(value, f), f"{key}.{to_camel(f)}", f, name == "images")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _fields(item, f"{key}[{i}]", name, in_images)
    elif isinstance(value, Mapping):
        for k, item in value.items():
            yield from _fields(item, f"{key}.{k}", name, in_images)
    elif isinstance(value, str) and _is_image(name, in_images):
        yield key, value


def image_fields(cfg: StackConfig) -> list[tuple[str, str]]:
    """Every container image the settings pull, as (key path, image): ``gateway.eppImage`` only behind an
    InferencePool, whose endpoint picker it is."""
    unpulled = set() if cfg.gateway is not None and cfg.gateway.inference_pool else {"gateway.eppImage"}
    fields = [kv for s in IMAGE_SECTIONS for kv in _fields(getattr(cfg, s), s, s, False)]
    return [(k, v) for k, v in fields if k not in unpulled]


def _repositories(cfg: StackConfig) -> dict[str, str]:
    """The repository of every upstream the mode pulls through, needed or not, by upstream key."""
    chosen = mode(cfg)
    if chosen == MirrorMode.EXISTING:
        return {u.key: getattr(cfg.image_mirror, u.key) for u in UPSTREAMS if getattr(cfg.image_mirror, u.key)}
    if chosen == MirrorMode.CREATE:
        return {
            u.key: repository_path(cfg.region, cfg.project, mirror_repository_id(cfg.cluster.name, u.suffix))
            for u in UPSTREAMS
        }
    return {}


def needed_upstreams(cfg: StackConfig) -> list[Upstream]:
    """The upstreams the stack's images come from, in :data:`UPSTREAMS` order: an image of the upstream, or one
    already pulled through its repository (the settings of :func:`mirrored_config` need the same repositories)."""
    repositories = _repositories(cfg)
    images = [image for _, image in image_fields(cfg)]

    def pulls(u: Upstream, image: str) -> bool:
        return upstream_of(image) is u or (u.key in repositories and image.startswith(repositories[u.key] + "/"))

    return [u for u in UPSTREAMS if any(pulls(u, image) for image in images)]


def mode(cfg: StackConfig) -> MirrorMode:
    """The stack's mirror mode (:func:`tpu_serving.platform.image_mirror.effective_mode`)."""
    return effective_mode(cfg.image_mirror.mode, cfg.existing)


def mirror_paths(cfg: StackConfig) -> dict[str, str]:
    """The repository each needed upstream's images are pulled through, by upstream key: those the stack creates
    (``create``), those it names (``existing``), none (``none``)."""
    repositories = _repositories(cfg)
    return {u.key: repositories[u.key] for u in needed_upstreams(cfg) if u.key in repositories}


def _rewritten(value: Any, name: str, in_images: bool, rewrite: Callable[[str], str]) -> Any:
    if isinstance(value, BaseModel):
        update = {}
        for f in type(value).model_fields:
            old = getattr(value, f)
            new = _rewritten(old, f, name == "images", rewrite)
            if new is not old:
                update[f] = new
        return value.model_copy(update=update) if update else value
    if isinstance(value, list):
        items = [_rewritten(v, name, in_images, rewrite) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        entries = {k: _rewritten(v, name, in_images, rewrite) for k, v in value.items()}
        return entries if any(entries[k] is not v for k, v in value.items()) else value
    if isinstance(value, str) and _is_image(name, in_images):
        new_image = rewrite(value)
        return new_image if new_image != value else value
    return value


def mirrored_config(cfg: StackConfig) -> StackConfig:
    """``cfg`` with every Docker Hub and ghcr.io image pulled through its repository (none: ``cfg`` itself)."""
    paths = mirror_paths(cfg)
    if not paths:
        return cfg

    def rewrite(image: str) -> str:
        upstream = upstream_of(image)
        return mirrored_image(image, paths[upstream.key]) if upstream and upstream.key in paths else image

    update = {s: _rewritten(getattr(cfg, s), s, False, rewrite) for s in IMAGE_SECTIONS}
    return cfg.model_copy(update={k: v for k, v in update.items() if v is not getattr(cfg, k)})


def mirror_problems(cfg: StackConfig) -> list[str]:
    """With ``existing``, a repository named for each upstream the stack's images come from."""
    if mode(cfg) != MirrorMode.EXISTING:
        return []
    problems = []
    for u in needed_upstreams(cfg):
        if getattr(cfg.image_mirror, u.key):
            continue
        key, image = next((k, i) for k, i in image_fields(cfg) if upstream_of(i) is u)
        problems.append(
            f"{KEY}.{to_camel(u.key)}: unset, but {PROJECT_NAMESPACE}:{key} = {json.dumps(image)} is pulled from "
            f"{u.what}; name its "
            f"remote repository (<location>-docker.pkg.dev/<project>/<repository>), or set {KEY}.mode to "
            f"{MirrorMode.CREATE} or {MirrorMode.NONE} (valid: {', '.join(m.value for m in MirrorMode)})"
        )
    return problems
