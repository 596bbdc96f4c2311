"""The endpoint picker's prefill/decode routing (llm-d router v0.10.0), as the runtime model knows it.

For an InferencePool whose pods run a TPU KV connector (:mod:`.network_kv`), the picker runs the decode profile,
then the prefill one, and sends the request to a decode pod with the prefill pod's ``address:port`` in a header; the
decode pod's sidecar sends the prefill leg there, then decode to its local vLLM (facts: :mod:`.ds_facts`; sources: ``data/disaggregated.json``).
So: the roles' pods must be told apart by the label the picker's filters read; the decode pods' sidecar listens on the
pool's target port and forwards to the port its vLLM listens on; and each decode pod reaches each prefill pod on the
pool's target port. The picker's own flows (proxies -> picker, picker -> the pool's pods) are
:func:`.network_flows._picker_flows`'.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tpu_serving_tools.runtime import ds_facts as D
from tpu_serving_tools.runtime import network_kv, picker
from tpu_serving_tools.runtime.network_policy import Flow, Workload, evaluate, peer_of, selector_matches
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Container
from tpu_serving_tools.runtime.result import Finding


def decode_accepts(labels: Mapping[str, str]) -> bool:
    role = labels.get(D.LLMD_ROLE_LABEL)
    return role in D.DECODE_ROLES or (role is None and D.DECODE_ACCEPTS_UNLABELLED)


def prefill_accepts(labels: Mapping[str, str]) -> bool:
    return labels.get(D.LLMD_ROLE_LABEL) in D.PREFILL_ROLES


def _pd_pools(
    view: PlanView, ws: Sequence[Workload]
) -> Iterator[tuple[Mapping[str, Any], list[Workload], dict[str, str]]]:
    """(pool, its pods, owner -> KV role) of every InferencePool selecting a KV producer or consumer."""
    kinds = {r.owner: r.kind for r in network_kv.kv_roles(ws)}
    for pool in view.kubernetes_objects("InferencePool"):
        ns = pool["metadata"].get("namespace", "default")
        sel = (pool.get("spec") or {}).get("selector")
        pods = [w for w in ws if w.namespace == ns and selector_matches(sel, w.labels)]
        if any(w.owner in kinds for w in pods):
            yield pool, pods, kinds


def sidecar(w: Workload) -> Container | None:
    """The P/D sidecar among a pod's containers (by its image or its ``--kv-connector`` flag)."""
    for c in w.containers:
        text = " ".join((c.image, *c.command, *c.args))
        if any(m in text for m in D.SIDECAR_MARKERS):
            return c
    return None


def sidecar_port(c: Container, what: str) -> int:
    name, default = D.SIDECAR_PORTS[what]
    given = picker.flag(c.args, name)
    return int(given) if given and given.isdigit() else default


def _serve_port(w: Workload) -> int | None:
    """The port the pod's vLLM listens on (``vllm serve --port``, vLLM's default 8000)."""
    for c in w.containers:
        if network_kv.kv_config(c) is not None:
            words = network_kv.words(c)
            return int(picker.flag(words, "--port") or 8000)
    return None


def findings(view: PlanView, ws: Sequence[Workload]) -> list[Finding]:
    """Per P/D pool: each KV role's pods seen by the picker's filters as that role; each decode pod's sidecar in
    front of its vLLM; each decode pod -> each prefill pod on the pool's target ports (the sidecar's prefill leg)."""
    out = []
    for pool, pods, kinds in _pd_pools(view, ws):
        ns, name = pool["metadata"].get("namespace", "default"), pool["metadata"]["name"]
        targets = [int(t["number"]) for t in (pool.get("spec") or {}).get("targetPorts") or ()]
        for w in pods:
            kind = kinds.get(w.owner)
            if kind is None:
                continue
            want = "prefill" if kind == "producer" else "decode"
            seen = [r for r, ok in (("prefill", prefill_accepts(w.labels)), ("decode", decode_accepts(w.labels))) if ok]
            label = w.labels.get(D.LLMD_ROLE_LABEL)
            out.append(
                Finding(
                    f"flow picker {ns}/{name} sees {w.name} as {want}",
                    seen == [want],
                    f"{D.LLMD_ROLE_LABEL}={label!s}: the picker's filters take it for {' and '.join(seen) or 'nothing'}"
                    f" (KV {kind}; roles.go:46-58)",
                )
            )
        decode = [w for w in pods if kinds.get(w.owner) == "consumer"]
        prefill = [w for w in pods if kinds.get(w.owner) == "producer"]
        for d in decode:
            for p in prefill:
                for port in targets:
                    why = f"{d.name}'s sidecar sends the prefill leg to {D.PREFILL_HEADER} ({p.name}:{port})"
                    out.append(evaluate(view, Flow(peer_of(d), peer_of(p), port, why=why)))
    return out


def port_findings(view: PlanView, ws: Sequence[Workload]) -> list[Finding]:
    """Each decode pod of a P/D pool: its sidecar listens on the pool's target port and sends decode where its vLLM
    listens."""
    out = []
    for pool, pods, kinds in _pd_pools(view, ws):
        ns, name = pool["metadata"].get("namespace", "default"), pool["metadata"]["name"]
        targets = [int(t["number"]) for t in (pool.get("spec") or {}).get("targetPorts") or ()]
        for d in (w for w in pods if kinds.get(w.owner) == "consumer"):
            subject = f"ports sidecar {ns}/{d.name} (pool {name})"
            car = sidecar(d)
            if car is None:
                why = (
                    "no P/D sidecar: the picker's decode pick gets the whole request and nothing sends the prefill leg"
                )
                out.append(Finding(subject, False, f"{why} (docs/disaggregation.md:48-57)"))
                continue
            listen, forward, serve = sidecar_port(car, "listen"), sidecar_port(car, "model-server"), _serve_port(d)
            problems = [f"listens on {listen}, the pool's target ports are {targets}"] if listen not in targets else []
            if forward != serve:
                problems.append(f"--model-server-port {forward}, but vLLM listens on {serve}")
            out.append(
                Finding(
                    subject,
                    not problems,
                    "; ".join(problems) or f"{car.name} on {listen} -> vLLM on {serve} (options.go:91-92, :262-265)",
                )
            )
    return out
