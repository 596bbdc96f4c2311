"""The host-maintenance gate's run: read the Kubernetes API with the pod's ServiceAccount token, decide
(:func:`tpu_serving.maintenance_gate.decide`), label the chosen nodes, cover lost groups
(:func:`tpu_serving.group_cover.cover`), and log one JSON line on stdout.

The CronJob runs this module (``python -m tpu_serving.gate_run``) from the ConfigMap's files, laid out as the package
``tpu_serving`` (:mod:`tpu_serving.host_maintenance_job`). Stdlib only, besides its three siblings.
"""

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from . import gate_fallback, group_cover
from .gate_memory import IGNORED_SECONDS, Window, ignored_starts, remember_started, remember_windows
from .maintenance_gate import (
    CLASS_LABEL,
    LWS_API,
    LWS_NAME_LABEL,
    PERFORM_LABEL,
    POOL_LABEL,
    SERVICE_ACCOUNT_DIR,
    Decision,
    Gate,
    Obj,
    decide,
)

FIELD_MANAGER = "tpu-serving-host-maintenance-gate"
"""The field manager of the gate's patches (the ``fieldManager`` query parameter of a PATCH: kubernetes.io/docs/
reference/using-api/server-side-apply/#field-management): the HPA bounds it raised or gave back stay owned by it,
and a later ``pulumi up`` that changes them meets a conflict that names it (docs/operate.md, "A zone outage")."""


class Api:
    """The Kubernetes API from inside a pod, with its ServiceAccount token."""

    def __init__(self, env: Mapping[str, str]):
        folder = env.get("SERVICE_ACCOUNT_DIR", SERVICE_ACCOUNT_DIR)
        with open(os.path.join(folder, "token"), encoding="utf-8") as f:
            self.token = f.read().strip()
        self.base = f"https://{env['KUBERNETES_SERVICE_HOST']}:{env['KUBERNETES_SERVICE_PORT']}"
        self.context = ssl.create_default_context(cafile=os.path.join(folder, "ca.crt"))

    def call(self, method: str, path: str, body: Obj | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/merge-patch+json")
        with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
            return json.loads(response.read() or b"{}")


def _selector(key: str, values: Sequence[str]) -> str:
    return urllib.parse.quote(f"{key} in ({','.join(values)})", safe="")


def gate_from(env: Mapping[str, str]) -> Gate:
    """The gate's settings from the CronJob's environment (``AUTOSCALER_BOUNDS``: ``<hpa>=<min>..<max>``, comma
    separated)."""

    def names(key: str) -> tuple[str, ...]:
        return tuple(v.strip() for v in env.get(key, "").split(",") if v.strip())

    def bounds(item: str) -> tuple[str, int, int]:
        name, _, both = item.partition("=")
        low, _, high = both.partition("..")
        return name.strip(), int(low), int(high)

    return Gate(
        pools=names("POOLS"),
        namespace=env["NAMESPACE"],
        leader_worker_sets=names("LEADER_WORKER_SETS"),
        fewest_groups=int(env["FEWEST_GROUPS"]),
        due_seconds=int(env.get("DUE_SECONDS", "86400")),
        lost_seconds=int(env.get("LOST_SECONDS", "600")),
        maintenance_seconds=int(env.get("MAINTENANCE_SECONDS", "21600")),
        autoscalers=names("AUTOSCALERS"),
        bounds=tuple(bounds(item) for item in names("AUTOSCALER_BOUNDS")),
        close_seconds=int(env.get("CLOSE_SECONDS", "25200")),
        starts=env.get("STARTS", "true") == "true",
        surge=int(env.get("SURGE", "0")),
        state=env.get("STATE", ""),
        compute_class=env.get("COMPUTE_CLASS", ""),
        away_seconds=int(env.get("AWAY_SECONDS", str(Gate.away_seconds))),
    )


def held(hpa: Obj) -> bool:
    """The HPA's scale-down is disabled (an operator's hold)."""
    scale_down = (hpa.get("spec", {}).get("behavior") or {}).get("scaleDown") or {}
    return scale_down.get("selectPolicy") == "Disabled"


WINDOWS_KEY, STARTED_KEY = "windows", "started"
"""The state ConfigMap's keys: the remembered windows, ``{node: [opens, seen]}``, and the pools the gate started,
``{pool: epoch seconds}``, as JSON."""
UPGRADING_KEY = "upgrading"
"""The state ConfigMap's key the node upgrade runbook sets for its session and removes at its end: while it is set, a
starting gate starts no pool (SRE review 35, M1: both waited for every group Ready, then each took a slice)."""


def _read_json(config_map: Obj, key: str) -> dict[str, Any]:
    try:
        found = json.loads((config_map.get("data") or {}).get(key) or "{}")
    except ValueError:
        return {}
    return {str(k): v for k, v in found.items()} if isinstance(found, dict) else {}


def _windows(config_map: Obj) -> dict[str, Window]:
    """The windows a state ConfigMap holds, ``{node: [opens, seen]}`` (none when it holds nothing readable)."""
    pairs = {k: v for k, v in _read_json(config_map, WINDOWS_KEY).items() if isinstance(v, list) and len(v) == 2}
    return {k: (float(v[0]), float(v[1])) for k, v in pairs.items() if all(isinstance(x, (int, float)) for x in v)}


def _started(config_map: Obj) -> dict[str, float]:
    """The pools a state ConfigMap says the gate started, ``{pool: when}``."""
    return {k: float(v) for k, v in _read_json(config_map, STARTED_KEY).items() if isinstance(v, (int, float))}


def _state(api: Api, path: str) -> Obj | None:
    """The state ConfigMap, None when it is missing. A missing one (404: deleted by hand) costs the memory, not the
    run: the lost-node page and the cover go on (SRE review round 23, m1); ``pulumi up --refresh`` creates it
    again."""
    try:
        found: Obj = api.call("GET", path)
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
        return None
    return found


def _read(api: Api, gate: Gate) -> tuple[list[Obj], list[Obj], list[Obj], int | None]:
    """The serving pools' nodes, the serving pods, the HPAs, and (a watching gate) the groups the LeaderWorkerSets
    ask for."""
    nodes = api.call("GET", f"/api/v1/nodes?labelSelector={_selector(POOL_LABEL, gate.pools)}")["items"]
    if gate.compute_class:  # the pools GKE made for the serving's class: a selector has no "or", so a second read
        found = {str(n.get("metadata", {}).get("name")) for n in nodes}
        made = api.call("GET", f"/api/v1/nodes?labelSelector={_selector(CLASS_LABEL, (gate.compute_class,))}")
        nodes += [n for n in made["items"] if str(n.get("metadata", {}).get("name")) not in found]
    pods = api.call(
        "GET",
        f"/api/v1/namespaces/{gate.namespace}/pods?labelSelector={_selector(LWS_NAME_LABEL, gate.leader_worker_sets)}",
    )["items"]
    hpas = [
        api.call("GET", f"/apis/autoscaling/v2/namespaces/{gate.namespace}/horizontalpodautoscalers/{name}")
        for name in gate.autoscalers
    ]
    wanted = None
    if not gate.starts:  # a watching gate bounds the groups it counts by what the LeaderWorkerSets ask for
        lws = [
            api.call("GET", f"/apis/{LWS_API}/namespaces/{gate.namespace}/leaderworkersets/{name}")
            for name in gate.leader_worker_sets
        ]
        wanted = sum(int(o.get("spec", {}).get("replicas", 1)) for o in lws)
    return nodes, pods, hpas, wanted


def _remember(api: Api, gate: Gate, nodes: list[Obj], now: float) -> tuple[list[Obj], Obj | None, tuple[Any, ...]]:
    """The nodes with what the state remembers given back (:func:`remember_windows`, :func:`remember_started`), the
    state ConfigMap (None when missing), and (windows read, windows now, pools read, pools now, pools whose start GKE
    ignored): an ignored start is forgotten, and said (:func:`ignored_starts`)."""
    config_map = _state(api, f"/api/v1/namespaces/{gate.namespace}/configmaps/{gate.state}") if gate.state else None
    known, was_started = _windows(config_map or {}), _started(config_map or {})
    ignored = ignored_starts(nodes, was_started, now)
    nodes, remembered = remember_windows(nodes, known, now, gate.maintenance_seconds)
    kept = {pool: t for pool, t in was_started.items() if pool not in ignored}
    nodes, started = remember_started(nodes, kept, now, gate.maintenance_seconds)
    return nodes, config_map, (known, remembered, was_started, started, ignored)


def ignored_page(pool: str, started: float, now: float) -> str:
    """The page of a start GKE did not act on (SRE review round 26, M1)."""
    return (
        f"GKE has not acted on the start of pool {pool}, labelled {int(now - started)} s ago (none of its nodes "
        f"NotReady or marked in maintenance within {IGNORED_SECONDS} s): its maintenance comes at its window. Take "
        f"the label off, or it holds every other pool: kubectl label nodes -l {POOL_LABEL}={pool} {PERFORM_LABEL}-; "
        "if GKE does not start these pools, set hostMaintenance.mode: ticket (docs/operate.md, 'TPU host "
        "maintenance')"
    )


def _state_patches(
    gate: Gate, config_map: Obj | None, memory: tuple[Any, ...], fenced: bool = False
) -> list[tuple[str, str, Obj]]:
    """The state ConfigMap's patch when what it remembers changed (none when it is missing); ``fenced``: only if the
    ConfigMap is still as read (its ``resourceVersion`` in the patch: the API server answers 409 Conflict when it
    changed since, e.g. a node upgrade session's hold set after this run read it: SRE review 36, m1)."""
    known, remembered, was_started, started, _ = memory
    if config_map is None or (remembered == known and started == was_started):
        return []
    windows = json.dumps({k: list(v) for k, v in sorted(remembered.items())}, separators=(",", ":"))
    pools = json.dumps(dict(sorted(started.items())), separators=(",", ":"))
    path = f"/api/v1/namespaces/{gate.namespace}/configmaps/{gate.state}"
    body: dict[str, Any] = {"data": {WINDOWS_KEY: windows, STARTED_KEY: pools}}
    version = (config_map.get("metadata") or {}).get("resourceVersion")
    if fenced and version:
        body["metadata"] = {"resourceVersion": version}
    return [(f"ConfigMap {gate.state}", path, body)]


def run(api: Api, gate: Gate, now: float) -> tuple[Decision, list[str], list[group_cover.Cover]]:
    """Read, decide, label, cover, remember: the decision, what the API refused (a node's label, an HPA's patch, the
    state's), and what the run did to each HPA (:func:`tpu_serving.group_cover.cover`); a missing state ConfigMap
    is said among them (GKE review round 59, m1: the run said nothing of it)."""
    nodes, pods, hpas, wanted = _read(api, gate)
    nodes, config_map, memory = _remember(api, gate, nodes, now)
    upgrading = str(((config_map or {}).get("data") or {}).get(UPGRADING_KEY) or "")
    decision = decide(nodes, pods, gate, now, bool(hpas) and all(held(h) for h in hpas), wanted, upgrading)
    decision = replace(decision, fallback=gate_fallback.away(nodes, pods, gate, now))
    if ignored := tuple(ignored_page(pool, t, now) for pool, t in sorted(memory[4].items())):
        decision = replace(decision, severity="ERROR", pages=decision.pages + ignored)
    own = {name: (low, high) for name, low, high in gate.bounds}  # the stack's bounds, given back (SRE 29, M3)
    found = [group_cover.cover(h, pods, decision.lost, own.get(str(h.get("metadata", {}).get("name")))) for h in hpas]
    covers = [c for c in found if c is not None]
    hpa_path = f"/apis/autoscaling/v2/namespaces/{gate.namespace}/horizontalpodautoscalers"
    refused = _patch(  # the cover first: a lost group's HPA waits on no start (SRE review round 27, m3)
        api, [(f"HPA {c.autoscaler}", f"{hpa_path}/{c.autoscaler}", c.patch) for c in covers if c.patch is not None]
    )
    decision, started, memory = _act(api, gate, decision, config_map, memory, now)
    refused += started
    refused += _patch(api, _state_patches(gate, config_map, memory))
    if gate.state and config_map is None:
        said = f"the state ConfigMap {gate.state} is missing: no maintenance window is remembered (pulumi up --refresh)"
        covers.append(group_cover.Cover(gate.state, said))
    return decision, refused, covers


def _act(
    api: Api, gate: Gate, decision: Decision, config_map: Obj | None, memory: tuple[Any, ...], now: float
) -> tuple[Decision, list[str], tuple[Any, ...]]:
    """A start carried out (:func:`_start`), or held for want of the state, or because the state changed since the
    run read it: the decision as done, what the API refused, the memory as written."""
    if decision.action != "start":
        return decision, [], memory
    if gate.state and config_map is None:
        return _no_state(decision, gate.state), [], memory
    started, memory = _start(api, gate, decision, config_map, memory, now)
    if started and all(r.startswith(f"ConfigMap {gate.state}: 409 ") for r in started):
        return _changed(decision, gate.state), [], memory
    return decision, started, memory


def _changed(decision: Decision, state: str) -> Decision:
    """A start whose record the API refused because the state changed since this run read it: nothing is labelled,
    and the next run decides on what the state says then (a node upgrade session's hold, most likely)."""
    message = (
        f"holding pool {decision.pool}: the state ConfigMap {state} changed since this run read it (a node upgrade "
        "session's hold, or another run): nothing started; the next run decides again"
    )
    return replace(decision, action="hold", severity="WARNING" if not decision.pages else "ERROR", message=message)


def _no_state(decision: Decision, state: str) -> Decision:
    """A start held for want of the state ConfigMap: without it the gate cannot remember the pool it starts once GKE
    takes the label off, and would start a second one at its next run (GKE review round 61, m1). It pages."""
    why = f"the state ConfigMap {state} is missing, in which the gate records the pools it starts (pulumi up --refresh)"
    message = f"holding pool {decision.pool}: {why}"
    return replace(decision, action="hold", severity="ERROR", message=message, pages=(*decision.pages, why))


def _start(
    api: Api, gate: Gate, decision: Decision, config_map: Obj | None, memory: tuple[Any, ...], now: float
) -> tuple[list[str], tuple[Any, ...]]:
    """Record the start in the state ConfigMap, then label the pool's nodes (GKE review round 61, m1: labelled first, a
    refused record let the next run start a second pool); a label refused takes the record back (SRE review round 26,
    m1: a pool recorded but never labelled held every other for 6 hours), but only when no node was labelled: one
    labelled VM starts the maintenance of the whole slice (Cloud TPU "Manually start a host maintenance event"), so a
    pool labelled in part stays recorded (GKE review round 62, m1). What was refused, and the memory as written (read
    and now the same: nothing left to write)."""
    started = {**memory[3], decision.pool: now}
    recorded = (*memory[:3], started, memory[4])
    refused = _patch(api, _state_patches(gate, config_map, recorded, fenced=True))
    if refused:
        return refused, memory
    label: Obj = {"metadata": {"labels": {PERFORM_LABEL: "true"}}}
    refused = _patch(api, [(f"node {n}", f"/api/v1/nodes/{n}", label) for n in decision.nodes])
    if refused and len(refused) == len(decision.nodes):  # none labelled; one labelled VM starts the whole slice
        back = (recorded[1], recorded[1], started, memory[3], memory[4])
        return refused + _patch(api, _state_patches(gate, config_map, back)), (*back[:2], memory[3], memory[3], back[4])
    return refused, (recorded[1], recorded[1], started, started, memory[4])


def _patch(api: Api, patches: Sequence[tuple[str, str, Obj]]) -> list[str]:
    """Apply each patch as the gate's field manager; what the API refused."""
    refused = []
    for what, path, body in patches:
        try:
            api.call("PATCH", f"{path}?fieldManager={FIELD_MANAGER}", body)
        except urllib.error.HTTPError as e:
            refused.append(f"{what}: {e.code} {e.reason}")
        except OSError as e:  # no answer (a timeout, a reset): not applied, as far as the run knows (SRE review 27, m3)
            refused.append(f"{what}: {e!r}")
    return refused


def log(severity: str, message: str, **fields: Any) -> None:
    """One JSON line on stdout, which Cloud Logging reads as a structured entry of that severity."""
    print(json.dumps({"severity": severity, "message": message, "gate": "host-maintenance", **fields}), flush=True)


def main(env: Mapping[str, str] | None = None, now: float | None = None) -> int:
    """One run: 0 when it decided (and labelled what it chose), 1 when the API refused it or failed."""
    env = os.environ if env is None else env
    try:
        gate = gate_from(env)
        decision, refused, covers = run(Api(env), gate, time.time() if now is None else now)
    except urllib.error.HTTPError as e:
        severity = "ERROR" if e.code in (403, 422) else "WARNING"
        log(severity, f"the API refused the gate: {e.code} {e.reason} ({e.url})", decision="error")
        return 1
    except (OSError, KeyError, ValueError) as e:
        log("WARNING", f"the gate could not run: {e!r}", decision="error")
        return 1
    fields = {k: v for k, v in asdict(decision).items() if k not in ("severity", "message")}
    fields["covers"] = [c.said for c in covers]
    if refused:
        log("ERROR", f"the API refused the gate's patch of {'; '.join(refused)}", decision="error", **fields)
        return 1
    fallback = [decision.fallback] if decision.fallback else []
    said = "; ".join((decision.message, *decision.pages, *decision.tickets, *fallback, *fields["covers"]))
    log(decision.severity, said, decision=decision.action, **fields)
    return 0


if __name__ == "__main__":
    sys.exit(main())
