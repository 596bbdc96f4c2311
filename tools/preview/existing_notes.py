"""What the preview says of a plan's existing cloud resources and of its controller manifests' sources.

Read off the plan: the ``cloudResources`` output a deployment on an existing cluster exports (each cloud resource
the in-cluster half needs, created or existing, with the key that decides it and what an existing one must be or
hold), the existing node pools the plan records (``tpu-serving:index:ExistingTpuNodePool``), and each controller
install's release manifest with where it is read from (its registered outputs: ``url``, and for a mirror or a local
file ``source``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

EXISTING_TPU_POOLS = "tpu-serving:index:ExistingTpuNodePool"
CONTROLLER_INSTALL = "tpu-serving:index:ControllerInstall"


def existing_tpu_pools(resources: Sequence[Any]) -> list[tuple[str, str, str, str]]:
    """``(pool, machine type, topology, zone)`` of every existing TPU node pool the plan records."""
    return [
        (str(pool), str(r.inputs.get("machineType")), str(r.inputs.get("topology")), str(r.inputs.get("zone")))
        for r in resources
        if r.type == EXISTING_TPU_POOLS
        for pool in r.inputs.get("poolNames") or ()
    ]


def cloud_resource_lines(outputs: Mapping[str, Any]) -> list[str]:
    """The ``cloudResources`` output, one line per resource (status, kind, name, deciding key), and what an existing
    one must be or hold, indented under it. Nothing without the output (a cluster the stack creates)."""
    entries = outputs.get("cloudResources")
    if not isinstance(entries, list):
        return []
    created = sum(1 for e in entries if e.get("status") == "created")
    lines = [
        f"Existing cluster: the stack creates only the in-cluster half; of the {len(entries)} cloud resources it needs, "
        f"{created} created, {len(entries) - created} existing (never created nor changed):"
    ]
    for e in entries:
        lines.append(f"  {e.get('status', '?'):<8} {e.get('kind')}: {e.get('name')}  [{e.get('key')}]")
        lines += [f"             - {need}" for need in e.get("needs") or ()]
    return lines


def manifest_lines(resources: Sequence[Any]) -> list[str]:
    """One line per controller install: its release and where its manifest is read from."""
    lines = []
    for r in resources:
        if r.type != CONTROLLER_INSTALL or not isinstance(r.registered_outputs, Mapping):
            continue
        out = r.registered_outputs
        if out.get("owned") is False:
            lines.append(f"  {r.name} {out.get('version')}: existing, not installed: {out.get('expects')}")
            continue
        source = out.get("source", "upstream")
        lines.append(f"  {r.name} {out.get('version')}: {source}, {out.get('url')}")
    return ["Controller manifests:", *lines] if lines else []
