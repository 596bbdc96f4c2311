"""``ports``: does every port the plan points at land on a port a container declares?

A probe, a Service's ``targetPort``, a NetworkPolicy rule's port and a ``--*_port=`` argument each name a port
that some container must serve; one that no container of the pods concerned declares is a typo or a drift
between two places, and on a real cluster a probe or Service aimed at it fails. Named ports resolve against
the destination container's ``ports[].name`` (https://kubernetes.io/docs/concepts/services-networking/service/
#field-spec-ports, NetworkPolicy ``port`` "a numerical or named port on a pod").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tpu_serving_tools.runtime import network_kv, network_pd, picker
from tpu_serving_tools.runtime.network import selector_matches, workloads
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Container, Pod, pods_of
from tpu_serving_tools.runtime.result import CategoryResult, Finding

PORT_ARG = re.compile(r"--(?P<flag>[a-z_]*port)=(?P<port>\d+)\b")
"""A ``--x_port=N`` / ``--port=N`` argument: the program listens on (or serves) N."""


def _declared(containers: Iterable[Container]) -> set[int]:
    return {p for c in containers for p in c.ports}


def _resolve(port: int | str, containers: Iterable[Container]) -> int | None:
    """A numeric port, or a named one resolved against the containers' named ports (None: no such name)."""
    if isinstance(port, int) or str(port).isdigit():
        return int(port)
    return next((c.named_ports[str(port)] for c in containers if str(port) in c.named_ports), None)


def _serving(pod: Pod) -> tuple[Container, ...]:
    """The containers that run beside each other and serve the pod's ports: the regular ones and the native sidecars
    (init containers with ``restartPolicy: Always``, https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/)."""
    return pod.containers + tuple(c for c in pod.init_containers if c.sidecar)


def _unique_pods(view: PlanView) -> list[Pod]:
    seen: dict[tuple[str, str, str], Pod] = {}
    for pod in pods_of(view):  # same-named objects of two namespaces are two (library review 2, M1)
        seen.setdefault((pod.namespace, pod.owner, pod.role), pod)
    return list(seen.values())


def _probe_findings(pods: list[Pod]) -> Iterator[Finding]:
    for pod in pods:
        for c in pod.containers:
            for port in c.probe_ports:
                # The kubelet probes the pod's IP: any container of the pod may serve the port (the pod's
                # containers share one network namespace), as JetStream's HTTP server does for jax-tpu.
                at = _resolve(port, _serving(pod))
                ok = at is not None and at in _declared(_serving(pod))
                subject = f"ports probe {pod.namespace}/{pod.owner.split('/', 1)[1]} {pod.role} {c.name}:{port}"
                yield Finding(subject, ok, "declared in the pod" if ok else "no container of the pod declares it")


def _arg_findings(pods: list[Pod]) -> Iterator[Finding]:
    for pod in pods:
        for c in pod.containers:
            for arg in (*c.command, *c.args):
                for m in PORT_ARG.finditer(arg):
                    port = int(m["port"])
                    if m["flag"] in ("ray_port",):
                        continue  # the Ray head's port, served by the leader (network: --ray_address flows)
                    ok = port in c.ports or port in _declared(_serving(pod))
                    subject = f"ports arg {pod.namespace}/{pod.owner.split('/', 1)[1]} {pod.role} {c.name} --{m['flag']}={port}"
                    yield Finding(subject, ok, "declared" if ok else "listened on, but no container declares it")


def _service_findings(view: PlanView, pods: list[Pod]) -> Iterator[Finding]:
    for svc in view.kubernetes_objects("Service"):
        meta, spec = svc["metadata"], svc.get("spec") or {}
        ns, sel = meta.get("namespace", "default"), spec.get("selector") or {}
        if not sel:
            continue
        backends = [p for p in pods if p.namespace == ns and selector_matches({"matchLabels": sel}, p.labels)]
        for sp in spec.get("ports") or ():
            target = sp.get("targetPort", sp.get("port"))
            subject = f"ports service {ns}/{meta['name']}:{sp.get('port')} -> {target}"
            if not backends:
                yield Finding(subject, False, "selects no pod of the plan")
                continue
            missing = [p.role for p in backends if _resolve(target, _serving(p)) not in _declared(_serving(p))]
            yield Finding(
                subject,
                not missing,
                f"no container of {', '.join(sorted(set(missing)))} declares it"
                if missing
                else f"declared by {len(backends)} backend role(s)",
            )


def _opened(port: int | str, end: int | str | None, selected: Iterable[Pod]) -> list[int]:
    """The ports from ``port`` (to ``endPort``) that the selected pods' serving containers declare."""
    hits: list[int] = []
    for p in selected:
        at = _resolve(port, _serving(p))
        hi = int(end) if end and at is not None else at
        hits += [x for x in _declared(_serving(p)) if at is not None and hi is not None and at <= x <= hi]
    return hits


def _policy_port_finding(
    view: PlanView, meta: Mapping[str, Any], spec: Mapping[str, Any], selected: list[Pod], rp: Mapping[str, Any]
) -> Finding:
    """One port of an ingress rule of a NetworkPolicy: a pod it selects declares it, or the KV path serves it."""
    ns = meta.get("namespace", "default")
    port, end = rp["port"], rp.get("endPort")
    subject = f"ports policy {ns}/{meta['name']} ingress {port}{'-' + str(end) if end else ''}"
    hits = _opened(port, end, selected)
    served = (
        network_kv.ephemeral_served(view, spec.get("podSelector") or {}, ns, int(port), int(end))
        if (end and not hits and str(port).isdigit())
        else None
    )
    return Finding(
        subject,
        bool(hits) or served is not None,
        f"opens {sorted(set(hits))}" if hits else served or "no pod the policy selects declares that port",
    )


def _policy_findings(view: PlanView, pods: list[Pod]) -> Iterator[Finding]:
    for pol in view.kubernetes_objects("NetworkPolicy"):
        meta, spec = pol["metadata"], pol.get("spec") or {}
        ns = meta.get("namespace", "default")
        selected = [p for p in pods if p.namespace == ns and selector_matches(spec.get("podSelector") or {}, p.labels)]
        for rule in spec.get("ingress") or ():
            for rp in rule.get("ports") or ():
                if "port" not in rp or not selected:
                    continue
                yield _policy_port_finding(view, meta, spec, selected, rp)


def _picker_findings(view: PlanView, pods: list[Pod]) -> Iterator[Finding]:
    """Each InferencePool's endpoint picker (:mod:`.picker`): a container of the pods behind the pool's
    ``endpointPickerRef`` Service picks for that pool, listens for ext-proc where the pool's calls land, and
    serves gRPC health where GKE health-checks it."""
    for pp in picker.pool_pickers(view):
        where = f"ports picker {pp.namespace}/{pp.pool}"
        selector = ((pp.service or {}).get("spec") or {}).get("selector") or {}
        behind = [
            p
            for p in pods
            if selector and p.namespace == pp.namespace and selector_matches({"matchLabels": selector}, p.labels)
        ]
        found = [(p, c) for p in behind for c in p.containers if picker.served_pool(c, p.namespace) is not None]
        if not found:
            why = "no container behind its endpointPickerRef Service is a picker (none is given --pool-name)"
            yield Finding(where, False, why)
            continue
        for p, c in found:
            ns, name = picker.served_pool(c, p.namespace) or ("", "")
            yield Finding(f"{where} serves", (ns, name) == (pp.namespace, pp.pool), f"{c.name} picks for {ns}/{name}")
            ext, health = picker.listens(c)["ext-proc"], picker.listens(c)["health"]
            lands = _resolve(pp.port, p.containers)
            says = f"{c.name} listens for ext-proc on {ext} ({picker.said(c, 'ext-proc')})"
            yield Finding(
                f"{where} ext-proc {lands}",
                lands == ext,
                says if lands == ext else f"{says}; the pool's calls land on {lands}",
            )
            says = f"{c.name} serves gRPC health on {health} ({picker.said(c, 'health')})"
            checked = pp.health_check_port
            yield Finding(
                f"{where} health check {checked}",
                checked == health,
                says if checked == health else f"{says}; GKE health-checks {checked} ({pp.health_check_why})",
            )


def findings(view: PlanView) -> list[Finding]:
    pods = _unique_pods(view)
    ws = workloads(view)
    return [
        *_probe_findings(pods),
        *_arg_findings(pods),
        *_service_findings(view, pods),
        *_policy_findings(view, pods),
        *_picker_findings(view, pods),
        *network_kv.port_findings(view, ws),
        *network_pd.port_findings(view, ws),
    ]


def check(view: PlanView) -> CategoryResult:
    return CategoryResult("ports", findings(view))
