"""The controllers' release manifests, rendered from their pinned Go modules the way their releases render them.

A release's ``manifests.yaml`` is an artifact of its GitHub release, which this machine cannot reach; the module
the proxy serves holds the kustomize tree it is built from. Each release's ``artifacts`` target sets the manager's
image and builds ``config/default`` (kubernetes-sigs/lws v0.9.0 ``Makefile`` l.348-352:
``cd config/manager && kustomize edit set image controller=${IMG}``, ``kustomize build config/default``;
kubernetes-sigs/jobset v0.12.0 ``Makefile`` l.308-310, the same under ``config/components/manager``). This does
the same in a copy of the module (the module cache is read-only), with the ``kustomize`` the toolchain built.

PathwaysJob's module (``pathways-job``) is not served by the proxy; its release's ``install.yaml`` is in the
project's reference material (``../shared/reference/crds/pathwaysjob-v0.1.4-install.yaml``).
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .controlplane import go_mod_dir


@dataclass(frozen=True)
class Release:
    """A controller release rendered from its module."""

    controller: str
    """The controller's name in the stack (``lws``, ``jobset``)."""
    module: str
    version: str
    manager_dir: str
    """The kustomize folder whose image is set (``config/manager``)."""
    image: str
    """The release's manager image (what the release sets; kwok runs no container)."""


def _writable(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def render(release: Release, kustomize: Path, out: Path) -> Path:
    """``out/<controller>-<version>.yaml``: the release's install manifest, built from its module."""
    source = go_mod_dir(release.module, release.version)
    tree = out / f"{release.controller}-{release.version}-src"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns("*.go", "test", "docs", "site", "keps"))
    _writable(tree)
    edit = [str(kustomize), "edit", "set", "image", f"controller={release.image}"]
    subprocess.run(edit, cwd=tree / release.manager_dir, check=True, capture_output=True, text=True)
    target = out / f"{release.controller}-{release.version}.yaml"
    build = [str(kustomize), "build", "config/default", "-o", str(target)]
    subprocess.run(build, cwd=tree, check=True, capture_output=True, text=True)
    shutil.rmtree(tree, ignore_errors=True)
    return target
