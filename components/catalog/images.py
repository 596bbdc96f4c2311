"""Container image references: checked at the stack's edge, so a typo fails the preview, not the pod."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator

from .versions import PINS

_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"^(?:(?P<registry>[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d+)?)/)?"
    rf"(?P<path>{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[a-f0-9]{64}))?$"
)
"""The image reference grammar of the OCI distribution reference
(https://github.com/distribution/reference/blob/main/reference.go): optional registry host
(with port), lower-case path components, optional tag of at most 128 word characters,
optional sha256 digest. A first component without a dot or port is part of the path
(Docker Hub)."""


@dataclass(frozen=True)
class Reference:
    """An image reference split as Docker splits it: ``registry`` None for Docker Hub."""

    registry: str | None
    path: str
    tag: str | None
    digest: str | None


def split_reference(image: str) -> Reference | None:
    """``image`` split into registry, path, tag and digest (None: not a reference). The first component is a
    registry host only if it holds a ``.`` or a ``:`` or is ``localhost``; otherwise it is the path's, and the image
    is Docker Hub's (distribution/reference normalize.go ``splitDockerDomain``): ``vllm/vllm-tpu:v0.29.0`` is
    ``docker.io/vllm/vllm-tpu:v0.29.0`` (GKE review round 63, M1: it was read as a registry named ``vllm``)."""
    m = _REFERENCE.match(image)
    if not m:
        return None
    registry, path = m.group("registry"), m.group("path")
    if registry is not None and not ("." in registry or ":" in registry or registry == "localhost"):
        registry, path = None, f"{registry}/{path}"
    return Reference(registry, path, m.group("tag"), m.group("digest"))


def image_name(image: str) -> str | None:
    """The last name of ``image``'s path (``vllm-tpu`` of ``docker.io/vllm/vllm-tpu:v0.29.0`` and of any mirror's
    path to it), or None when it is no reference."""
    ref = split_reference(image)
    return None if ref is None else ref.path.rsplit("/", 1)[-1]


def image_problem(image: str, *, pinned: bool = False) -> str:
    """Why ``image`` is not a valid image reference (``pinned``: or not pinned to a tag or digest), or ``""``."""
    m = _REFERENCE.match(image)
    if not m:
        return "not an image reference such as registry.example.com/path/name:tag"
    if not pinned:
        return ""
    if not m.group("tag") and not m.group("digest"):
        return "has no tag or digest; pin a release tag or a sha256 digest"
    if m.group("tag") == "latest" and not m.group("digest"):
        return "uses the mutable tag `latest`; pin a release tag or a sha256 digest"
    return ""


def pinned_image_problem(image: str) -> str:
    """Why ``image`` is not a reference pinned to a release tag or digest (``latest`` is not), or ``""``."""
    return image_problem(image, pinned=True)


def release_image_problem(pin_key: str, override: str | None = None) -> Callable[[str], str]:
    """The check of an engine image whose pods the library builds for one release, the version set's
    ``pin_key``: the image must be pinned, and its tag must name that release (a digest may follow it, and
    the registry and path may be a mirror's). The pods' flags and environment, and the engine tables that
    ``make check`` holds them to, are those of the pinned release: another release, or a digest alone (whose
    release cannot be read), would run flags the engine may not have. ``override``: the field that runs another
    release anyway, unverified, which the message names."""
    pin = PINS[pin_key]

    name = image_name(pin.value)  # the image's own name, kept by any mirror's path

    def problem(image: str) -> str:
        m = _REFERENCE.match(image)
        if not m:
            return image_problem(image)
        tag, digest = m.group("tag"), m.group("digest")
        if image_name(image) != name:  # library review 1, M2: vllm/vllm-openai (GPU) passed
            return (
                f"is not a {name} image (the pods are built for {pin.value}; a mirror's path keeps the name "
                f"{name}); valid: <registry>/<path>/{name}:{pin.version}"
            )
        if tag == pin.version:
            return ""
        if tag == "latest":
            which = "uses the mutable tag `latest`"
        elif tag:
            which = f"is release {tag}"
        else:
            which = "names no release (a digest alone)" if digest else "has no tag"
        return (
            f"{which}, but the pods' flags and environment are built for {pin.version} (`{pin.key}` in the "
            f"version set, `tpu-serving versions`); valid: an image tagged {pin.version}, optionally with its "
            f"digest ({pin.value.rsplit(':', 1)[0]}:{pin.version}@sha256:...). Another release needs the "
            "tpu-serving release that pins it"
            + (f", or set {override} beside it to run that release unverified on these flags" if override else "")
        )

    return problem


def _check(image: str) -> str:
    problem = image_problem(image)
    if problem:
        raise ValueError(problem)
    return image


ImageRef = Annotated[str, AfterValidator(_check)]
"""A well-formed container image reference. (Whether it is pinned is a policy matter:
``k8s-mutable-image-tags`` reports ``latest`` and untagged images; every default image of
the library is pinned, which a test checks with ``image_problem(..., pinned=True)``.)"""
