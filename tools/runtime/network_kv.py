"""The KV cache transfer between disaggregated vLLM TPU roles, as tpu-inference 0.29.0's TPU connectors make it.

Which pods take part comes from what their engines are told (a ``vllm serve --kv-transfer-config`` naming a TPU
connector and a ``kv_role``) and what they then do comes from the model's own facts (``kv_transfer`` in
``components/backends/vllm/runtime_facts.json``, each with its tpu-inference file and line): every host of a consumer
(decode) role connects to every host of a producer (prefill) role on the producer's transfer port, on the side
channel port of the consumer's own value, and on the producer's bulk listeners, which take ephemeral ports. Nothing
connects the other way. Each flow is evaluated against the plan's NetworkPolicies (:mod:`.network_policy`); a range
is admitted only when every port of it is.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_policy.rules import backend_folders
from tpu_serving_tools.runtime.backend_facts import FACTS_FILE
from tpu_serving_tools.runtime.network_policy import (
    Flow,
    Workload,
    _peer_matches,
    _policies,
    _port_matches,
    evaluate,
    peer_of,
    selector_matches,
    workloads,
)
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Container, pods_of
from tpu_serving_tools.runtime.result import Finding

CONFIG_FLAG = "--kv-transfer-config"


def _sourced(entry: Mapping[str, Any], where: str) -> Any:
    if "value" not in entry or not str(entry.get("source", "")).strip():
        raise ValueError(f"{where}: needs a value and its source")
    return entry["value"]


@dataclass(frozen=True)
class KvFacts:
    """The TPU connectors' facts (each entry of ``kv_transfer`` carries its source)."""

    connectors: Mapping[str, str]
    producer_roles: frozenset[str]
    consumer_roles: frozenset[str]
    transfer: tuple[str, int]
    side_channel: tuple[str, int]
    channels: tuple[str, int]
    ephemeral: tuple[int, int]
    sources: Mapping[str, str]


def load(path: Any = None) -> KvFacts:
    """The ``kv_transfer`` facts of the vLLM backend's runtime facts."""
    doc = json.loads((path or backend_folders() / "vllm" / FACTS_FILE).read_text())["kv_transfer"]
    v = {k: _sourced(e, f"kv_transfer.{k}") for k, e in doc.items() if isinstance(e, Mapping)}
    env = {k: (str(doc[k]["env"]), int(v[k])) for k in ("transfer_port", "side_channel_port", "bulk_channels")}
    lo, hi = v["ephemeral_ports"]
    return KvFacts(
        dict(v["connectors"]),
        frozenset(v["producer_kv_roles"]),
        frozenset(v["consumer_kv_roles"]),
        env["transfer_port"],
        env["side_channel_port"],
        env["bulk_channels"],
        (int(lo), int(hi)),
        {k: str(e["source"]) for k, e in doc.items() if isinstance(e, Mapping)},
    )


FACTS = load()

# --------------------------------------------------------------------------- who takes part


def words(c: Container) -> list[str]:
    """A container's command and arguments as words, shell scripts split as the shell would."""
    out: list[str] = []
    for item in (*c.command, *c.args):
        try:
            out += shlex.split(item) if any(ch.isspace() for ch in item) else [item]
        except ValueError:
            out += item.split()
    return out


def kv_config(c: Container) -> Mapping[str, Any] | None:
    """The ``--kv-transfer-config`` JSON a container's ``vllm serve`` is given (None: none, or not JSON)."""
    for seq in ([*c.command, *c.args], words(c)):
        for i, w in enumerate(seq):
            text = seq[i + 1] if w == CONFIG_FLAG and i + 1 < len(seq) else None
            if w.startswith(CONFIG_FLAG + "="):
                text = w[len(CONFIG_FLAG) + 1 :]
            if text is not None:
                try:
                    value = json.loads(text)
                except ValueError:
                    continue
                return value if isinstance(value, Mapping) else None
    return None


@dataclass(frozen=True)
class KvRole:
    """One object's pods in the KV transfer: producers or consumers, and the hosts (pods with TPUs) that do it."""

    owner: str
    kind: str
    """``producer`` or ``consumer``."""
    connector: str
    hosts: tuple[Workload, ...]


def kv_roles(ws: Sequence[Workload]) -> list[KvRole]:
    """Per object whose engine runs a TPU connector: its role and its TPU hosts (leader and workers: every host's
    worker registers with the connector, tpu_connector.py:535-556)."""
    out = []
    for owner in dict.fromkeys(w.owner for w in ws):
        config = next((cfg for w in ws if w.owner == owner for c in w.containers if (cfg := kv_config(c))), None)
        if config is None or str(config.get("kv_connector")) not in FACTS.connectors:
            continue
        role = str(config.get("kv_role"))
        kind = "producer" if role in FACTS.producer_roles else "consumer" if role in FACTS.consumer_roles else ""
        hosts = tuple(w for w in ws if w.owner == owner and any(c.limits.tpu or c.requests.tpu for c in w.containers))
        if kind:
            out.append(KvRole(owner, kind, str(config["kv_connector"]), hosts))
    return out


def _env_port(w: Workload, fact: tuple[str, int]) -> int | str:
    """The port a host's TPU container takes from variable ``fact[0]`` (its default when unset); a value the model
    cannot read as a number is returned as text."""
    name, default = fact
    tpu = next((c for c in w.containers if c.limits.tpu or c.requests.tpu), None)
    value = (tpu.env if tpu else {}).get(name)
    if value is None:
        return default
    return int(value) if str(value).isdigit() else str(value)


# --------------------------------------------------------------------------- flows and their verdicts


def breakpoints(view: PlanView, lo: int, hi: int) -> list[int]:
    """The ports of ``lo..hi`` where a policy's verdict can change: the ends, and each rule port and range end
    inside. Admission is constant between two of them, so checking them checks the whole range."""
    points = {lo, hi}
    for pol in view.kubernetes_objects("NetworkPolicy"):
        spec = pol.get("spec") or {}
        for rule in [*(spec.get("ingress") or ()), *(spec.get("egress") or ())]:
            for p in rule.get("ports") or ():
                if isinstance(p.get("port"), int):
                    end = int(p.get("endPort") or p["port"])
                    points |= {x for x in (p["port"] - 1, p["port"], end, end + 1) if lo <= x <= hi}
    return sorted(points)


def range_finding(view: PlanView, flow: Flow, lo: int, hi: int) -> Finding:
    """One finding for ``flow`` on every port of ``lo..hi``: the first port denied, if any."""
    subject = f"flow {flow.src.label} -> {flow.dst.label}:{lo}-{hi}/{flow.protocol}"
    for port in breakpoints(view, lo, hi):
        verdict = evaluate(view, Flow(flow.src, flow.dst, port, flow.protocol, flow.why))
        if not verdict.ok:
            return Finding(subject, False, f"port {port}: {verdict.reason}")
    last = evaluate(view, Flow(flow.src, flow.dst, lo, flow.protocol, flow.why))
    return Finding(subject, True, last.reason)


def _why(key: str, src: str, dst: str) -> str:
    return f"KV transfer {src} -> {dst}: {FACTS.sources[key].split(';')[0]}"


def host_pairs(ws: Sequence[Workload], src_kind: str, dst_kind: str) -> Iterator[tuple[Workload, Workload]]:
    """Every host of a ``src_kind`` role with every host of a ``dst_kind`` role in its namespace."""
    roles = kv_roles(ws)
    for a in (r for r in roles if r.kind == src_kind):
        for b in (r for r in roles if r.kind == dst_kind):
            yield from ((x, y) for x in a.hosts for y in b.hosts if x.namespace == y.namespace)


def flow_findings(view: PlanView, ws: Sequence[Workload]) -> Iterator[Finding]:
    """Every consumer host -> every producer host in its namespace: transfer port, side channel, bulk range."""
    for d, p in host_pairs(ws, "consumer", "producer"):
        src, dst = peer_of(d), peer_of(p)
        names = (d.name, p.name)
        transfer = _env_port(p, FACTS.transfer)
        side, bound = _env_port(d, FACTS.side_channel), _env_port(p, FACTS.side_channel)
        for key, port in (("transfer_port", transfer), ("side_channel_port", side)):
            if not isinstance(port, int):
                yield Finding(f"flow {src.label} -> {dst.label}:{port}/TCP", False, f"{port!r} is no port")
                continue
            verdict = evaluate(view, Flow(src, dst, port, why=_why(key, *names)))
            if key == "side_channel_port" and bound != side:
                verdict = Finding(
                    verdict.subject,
                    False,
                    f"{d.name} connects to its own {FACTS.side_channel[0]}={side}, {p.name} binds {bound}: "
                    f"nothing listens ({FACTS.sources[key]})",
                )
            yield verdict
        lo, hi = FACTS.ephemeral
        yield range_finding(view, Flow(src, dst, lo, why=_why("bulk_channels", *names)), lo, hi)


def pairing_findings(ws: Sequence[Workload], view: PlanView) -> Iterator[Finding]:
    """A consumer host *i* pulls from producer host *i* (tpu_connector.py:795-800, :882-886): the roles' groups must
    have as many TPU hosts; pods per group come from the groups' size."""
    roles = kv_roles(ws)
    sizes = _group_sizes(view)
    for con in (r for r in roles if r.kind == "consumer"):
        for pro in (r for r in roles if r.kind == "producer"):
            a, b = sizes.get(con.owner), sizes.get(pro.owner)
            subject = f"flow kv pairing {con.owner} -> {pro.owner}"
            ok = a == b
            reason = f"{a} host(s) per group on each side" if ok else f"{a} consumer host(s) per group, {b} producer"
            yield Finding(subject, ok, reason + " (host i pulls from host i: tpu_connector.py:795-800, :882-886)")


def _group_sizes(view: PlanView) -> dict[str, int]:
    out: dict[str, int] = {}
    for pod in pods_of(view):
        if pod.requests_tpu and pod.group.endswith("/0"):
            owner = f"{pod.namespace}/{pod.owner}"  # as Workload.owner
            out[owner] = out.get(owner, 0) + 1
    return out


def excess_findings(view: PlanView, ws: Sequence[Workload]) -> Iterator[Finding]:
    """Producer -> consumer on a KV port is a connection TPUConnector never makes: a policy rule that names such a
    port and admits it opens more than the mode needs. (A rule without ports, such as a namespace-wide allow, is
    the tenancy's choice and not reported.)"""
    for p, d in host_pairs(ws, "producer", "consumer"):
        # the ends of the ephemeral range and every rule port inside it: a rule opening any part of it is found
        ports = {_env_port(d, FACTS.transfer), _env_port(d, FACTS.side_channel), *breakpoints(view, *FACTS.ephemeral)}
        opened = _port_rules_admitting(view, p, d, {x for x in ports if isinstance(x, int)})
        subject = f"excess flow {p.name} -> {d.name} (KV ports)"
        yield Finding(
            subject,
            not opened,
            f"admitted by {', '.join(opened)}, but only the consumer connects (tpu_connector.py:795-810, :882-899)"
            if opened
            else "no rule naming a KV port admits it",
        )


def _port_rules_admitting(view: PlanView, src: Workload, dst: Workload, ports: set[int]) -> list[str]:
    out = []
    target, other = peer_of(dst), peer_of(src)
    for pol in _policies(view, dst.namespace, "Ingress", target):
        for rule in pol["spec"].get("ingress") or ():
            if not rule.get("ports"):
                continue
            peers = rule.get("from")
            if peers and not any(_peer_matches(view, x, dst.namespace, other) for x in peers):
                continue
            hit = sorted(x for x in ports if _port_matches(rule["ports"], x, "TCP", dst))
            if hit:
                out.append(f"{pol['metadata']['name']} (port {hit[0]})")
    return list(dict.fromkeys(out))


def findings(view: PlanView, ws: Sequence[Workload]) -> list[Finding]:
    return [*flow_findings(view, ws), *pairing_findings(ws, view), *excess_findings(view, ws)]


# --------------------------------------------------------------------------- ports


def port_findings(view: PlanView, ws: Sequence[Workload]) -> Iterator[Finding]:
    """Every KV host's TPU container declares the transfer port, and producers the side channel, they listen on."""
    for role in kv_roles(ws):
        for w in role.hosts:
            wanted = [("transfer_port", FACTS.transfer)]
            if role.kind == "producer":
                wanted.append(("side_channel_port", FACTS.side_channel))
            tpu = next(c for c in w.containers if c.limits.tpu or c.requests.tpu)
            for _, fact in wanted:
                port = _env_port(w, fact)
                ok = port in tpu.ports
                subject = f"ports kv {w.namespace}/{w.name} {tpu.name}:{port} ({fact[0]})"
                yield Finding(subject, ok, "declared" if ok else "listened on, but the container does not declare it")


def ephemeral_served(view: PlanView, selector: Mapping[str, Any], namespace: str, lo: int, hi: int) -> str | None:
    """Why a policy's port range ``lo..hi`` on the pods ``selector`` picks is served though no container declares
    it: they are KV producers, whose bulk listeners take ports of the ephemeral range (None: it is not)."""
    ws = workloads(view)
    producers = {r.owner for r in kv_roles(ws) if r.kind == "producer"}
    selected = [w for w in ws if w.namespace == namespace and selector_matches(selector, w.labels)]
    elo, ehi = FACTS.ephemeral
    if any(w.owner in producers for w in selected) and lo <= ehi and hi >= elo:
        return f"the KV producers' bulk listeners take ephemeral ports {elo}-{ehi} ({FACTS.channels[0]})"
    return None
