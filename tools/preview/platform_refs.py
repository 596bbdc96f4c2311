"""The offline preview's answer to a model stack's ``pulumi.StackReference``: the platform stack's own preview.

A model stack (``platform: {stack: <org>/<project>/<stack>}``) reads its platform's ``platform`` output through a
StackReference, which only a Pulumi backend answers. Offline, the preview runs the platform stack's own program first
(its stack file, ``Pulumi.<stack>.yaml`` in the project's stack folder) and answers the reference with that preview's
outputs: what the platform's ``pulumi up`` would export, not hand-written values. A reference whose stack file is not
in the folder, or of another project, is a :class:`StackConfigError` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tpu_serving.common.settings import PROJECT_NAMESPACE
from tpu_serving_tools.preview.stack_files import Project, StackConfigError

KEY = "platform"
"""The model stack's key naming its platform stack."""


def referenced_platform(config: Mapping[str, str], namespace: str) -> str | None:
    """The platform stack a stack's config map names (``platform.stack``), or None."""
    raw = config.get(f"{namespace}:{KEY}", config.get(f"{PROJECT_NAMESPACE}:{KEY}"))
    if raw is None:
        return None
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return None  # not a mapping: the program's own validation says so, at its key
    stack = value.get("stack") if isinstance(value, dict) else None
    return stack if isinstance(stack, str) else None


def platform_stack_name(project: Project, reference: str, stack: str) -> str:
    """The stack file's stack that answers ``reference`` offline; :class:`StackConfigError` when none can."""
    parts = reference.split("/")
    name = parts[-1]
    if len(parts) == 3 and parts[1] != project.name:
        raise StackConfigError(
            f"{stack}: platform.stack = {reference!r} is a stack of project {parts[1]!r}; the offline preview answers "
            f"a StackReference only with a stack of this project ({project.name!r}), from its stack file"
        )
    if name == stack:
        raise StackConfigError(f"{stack}: platform.stack = {reference!r} names the stack itself")
    if name not in project.stacks():
        folder = project.stack_config_dir
        raise StackConfigError(
            f"{stack}: platform.stack = {reference!r}: no stack file {project.stack_file(name).name} in {folder}, so "
            f"the offline preview cannot answer its StackReference; stacks there: {', '.join(project.stacks())}"
        )
    return name


def platform_references(
    project: Project,
    config: Mapping[str, str],
    stack: str,
    outputs_of: Callable[[str], Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The StackReference answers a stack's offline preview needs: its platform's name -> the outputs of that
    platform stack's preview (``outputs_of``), or nothing when the stack names no platform."""
    reference = referenced_platform(config, project.name)
    if reference is None:
        return {}
    return {reference: dict(outputs_of(platform_stack_name(project, reference, stack)))}
