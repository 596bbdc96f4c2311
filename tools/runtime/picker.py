"""An InferencePool's endpoint picker as the runtime model knows it: which container is the pool's picker, the
ports it listens on, and the port GKE health-checks it on (the facts are :mod:`.engine_facts`'; their sources are in ``data/engines.json``).

The plan says which Service the pool calls its picker through (``spec.endpointPickerRef``) and on which port; the
picker's own flags say which pool it serves and where it listens. :mod:`.ports` compares the two, and
:mod:`.network_flows` adds the load balancer's health checks of the picker to the flows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.runtime import engine_facts as ef
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Container

NAMESPACE_FROM_POD = "<fieldRef:metadata.namespace>"
"""How :class:`~tools.runtime.pods.Container` renders an env variable set from the pod's namespace."""


def flag(args: Sequence[str], name: str) -> str | None:
    """The value ``args`` give flag ``name`` (``name=value`` or ``name value``); None when not given."""
    for i, arg in enumerate(args):
        if arg == name:
            return args[i + 1] if i + 1 < len(args) else ""
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
    return None


def listens(c: Container) -> dict[str, int]:
    """The ports a picker container listens on: ``ext-proc``, ``health``, ``metrics`` (flag, else default)."""
    out = {}
    for what, (name, default) in ef.EPP_PORTS.items():
        given = flag(c.args, name)
        out[what] = int(given) if given and given.isdigit() else default
    return out


def said(c: Container, what: str) -> str:
    """Where a picker container's port ``what`` comes from: its flag, or the default."""
    name = ef.EPP_PORTS[what][0]
    return name if flag(c.args, name) else f"default, no {name}"


def served_pool(c: Container, pod_namespace: str) -> tuple[str, str] | None:
    """(namespace, name) of the InferencePool a container picks for; None when it is no picker."""
    name = flag(c.args, ef.EPP_POOL_FLAG)
    if name is None:
        return None
    ns = flag(c.args, "--pool-namespace") or c.env.get("NAMESPACE") or "default"
    return (pod_namespace if ns == NAMESPACE_FROM_POD else ns), name


@dataclass(frozen=True)
class PoolPicker:
    """What an InferencePool's objects say of its picker."""

    namespace: str
    pool: str
    service: Mapping[str, Any] | None
    """The Service ``endpointPickerRef`` names (None: the plan has none of that name)."""
    port: int | str
    """The Service's target port for the ``endpointPickerRef`` port: where the proxies' ext-proc calls land."""
    health_check_port: int
    """Where GKE health-checks the picker: a HealthCheckPolicy's port on its Service, else GKE's default."""
    health_check_why: str
    """Which of the two it is."""


def _named(view: PlanView, kind: str, ns: str, name: str) -> Mapping[str, Any] | None:
    return next(
        (
            o
            for o in view.kubernetes_objects(kind)
            if o["metadata"].get("namespace", "default") == ns and o["metadata"].get("name") == name
        ),
        None,
    )


def health_check_port(view: PlanView, ns: str, service: str) -> tuple[int, str]:
    """The port GKE health-checks a picker's Service on, and why: the one a HealthCheckPolicy targeting the
    Service gives, else :data:`~.engine_facts.GKE_EPP_HEALTH_CHECK_PORT`."""
    for policy in view.kubernetes_objects("HealthCheckPolicy"):
        spec = policy.get("spec") or {}
        ref = spec.get("targetRef") or {}
        if policy["metadata"].get("namespace", "default") != ns or ref.get("kind") != "Service":
            continue
        if ref.get("name") == service and not ref.get("group"):
            config = (spec.get("default") or {}).get("config") or {}
            for check in config.values():
                if isinstance(check, Mapping) and "port" in check:
                    return int(check["port"]), f"HealthCheckPolicy {policy['metadata']['name']}"
    return ef.GKE_EPP_HEALTH_CHECK_PORT, f"GKE's default: no HealthCheckPolicy on Service {service}"


def pool_pickers(view: PlanView) -> Iterator[PoolPicker]:
    """One :class:`PoolPicker` per InferencePool of the plan that names a picker."""
    for pool in view.kubernetes_objects("InferencePool"):
        ns, name = pool["metadata"].get("namespace", "default"), pool["metadata"]["name"]
        ref = (pool.get("spec") or {}).get("endpointPickerRef") or {}
        if not ref.get("name"):
            continue
        number = int((ref.get("port") or {}).get("number", 0))
        svc = _named(view, "Service", ns, ref["name"])
        ports = ((svc or {}).get("spec") or {}).get("ports") or ()
        sp: Mapping[str, Any] = next((p for p in ports if int(p["port"]) == number), {})
        target = sp.get("targetPort", number)
        port = int(target) if str(target).isdigit() else str(target)
        yield PoolPicker(ns, name, svc, port, *health_check_port(view, ns, ref["name"]))
