"""The host-maintenance gate's run (:mod:`tpu_serving.operations.maintenance.gate_run`): its settings from the CronJob's environment, its
imports (the standard library and its two siblings), and ``main`` against a fake API: its JSON line, its node label,
the HPA hold, a 422, a watching gate, and the cover of a lost group (the HPA patch, and a 403 on it)."""

from __future__ import annotations

import ast
import io
import json
import urllib.error
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tests.components.operations.maintenance.test_maintenance_gate import IN_40H, IN_50H, NOW, SERVING, node, pod, pools
from tpu_serving.operations.maintenance import gate_fallback, gate_memory, gate_run, group_cover
from tpu_serving.operations.maintenance import maintenance_gate as mg


def test_gate_from_reads_the_cronjob_environment() -> None:
    env = {
        "POOLS": "p-a, p-b",
        "NAMESPACE": "serving",
        "LEADER_WORKER_SETS": "vllm",
        "FEWEST_GROUPS": "2",
        "DUE_SECONDS": "3600",
        "AUTOSCALERS": "",
        "SURGE": "1",
    }
    gate = gate_run.gate_from(env)
    assert (gate.pools, gate.autoscalers, gate.due_seconds, gate.lost_seconds, gate.maintenance_seconds) == (
        ("p-a", "p-b"),
        (),
        3600,
        600,
        21600,
    )
    assert (gate.surge, gate.starts) == (1, True)


STDLIB = {"calendar", "json", "os", "ssl", "sys", "time", "urllib", "collections", "dataclasses", "typing"}


@pytest.mark.parametrize("module", [mg, gate_run, gate_memory, group_cover, gate_fallback], ids=lambda m: m.__name__)
def test_the_program_imports_the_standard_library_and_its_siblings_only(module: object) -> None:
    """The ConfigMap holds these files and nothing else: an import of the library or a third-party package
    fails in the gate's pod (ModuleNotFoundError at its first run)."""
    tree = ast.parse(Path(str(module.__file__)).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    absolute = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
    imported |= {str(n.module).split(".")[0] for n in absolute}
    assert imported <= STDLIB
    relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    siblings = {n.module or a.name for n in relative for a in n.names}
    assert all(n.level == 1 for n in relative) and siblings <= {
        "maintenance_gate",
        "gate_memory",
        "group_cover",
        "gate_fallback",
    }


HPA = {
    "metadata": {"name": "vllm"},
    "spec": {"minReplicas": 2, "maxReplicas": 3, "scaleTargetRef": {"name": "vllm"}},
    "status": {"currentReplicas": 2},
}


class FakeApi:
    """The reads and the patches of one run, answered from memory."""

    def __init__(
        self,
        nodes: list[dict],
        pods: list[dict],
        hpa: dict,
        refuse: int = 0,
        refuse_hpa: int = 0,
        refuse_state: int = 0,
    ):
        self.nodes, self.pods, self.hpa, self.refuse, self.refuse_hpa = nodes, pods, hpa, refuse, refuse_hpa
        self.refuse_state = refuse_state
        self.state: dict | None = {"data": {"windows": "{}"}}
        self.patched: list[tuple[str, dict | None]] = []
        self.read_sets = self.read_hpas = 0
        self.classed: list[dict] = []
        self.read_classed = 0

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        if method == "PATCH":
            refuse = self.refuse_hpa if "horizontalpodautoscalers" in path else self.refuse if "/nodes/" in path else 0
            refuse = self.refuse_state if "/configmaps/" in path else refuse
            if refuse:
                raise urllib.error.HTTPError(path, refuse, "Refused", {}, None)  # type: ignore[arg-type]
            self.patched.append((path, body))
            return {}
        if path.startswith("/api/v1/nodes?") and "compute-class" in path:  # the nodes of the serving's class
            assert path.endswith("cloud.google.com%2Fcompute-class%20in%20%28c-serving%29"), path
            self.read_classed += 1
            return {"items": self.classed}
        if path.startswith("/api/v1/nodes"):
            assert "cloud.google.com%2Fgke-nodepool%20in%20%28p-a%2Cp-b%2Cp-c%29" in path
            return {"items": self.nodes}
        if "/pods" in path:
            return {"items": self.pods}
        if path == "/api/v1/namespaces/serving/configmaps/host-maintenance-gate-state":
            if self.state is None:
                raise urllib.error.HTTPError(path, 404, "Not Found", {}, None)  # type: ignore[arg-type]
            return self.state
        if path == "/apis/leaderworkerset.x-k8s.io/v1/namespaces/serving/leaderworkersets/vllm":
            self.read_sets += 1
            return {"spec": {"replicas": 2}}
        assert path == "/apis/autoscaling/v2/namespaces/serving/horizontalpodautoscalers/vllm"
        self.read_hpas += 1
        return self.hpa


ENV = {"POOLS": "p-a,p-b,p-c", "NAMESPACE": "serving", "LEADER_WORKER_SETS": "vllm", "FEWEST_GROUPS": "2",
       "AUTOSCALERS": "vllm", "STATE": "host-maintenance-gate-state"}  # fmt: skip


def run_main(api: FakeApi, monkeypatch: pytest.MonkeyPatch, **env: str) -> tuple[int, dict]:
    monkeypatch.setattr(gate_run, "Api", lambda env: api)
    out = io.StringIO()
    with redirect_stdout(out):
        code = gate_run.main({**ENV, **env}, NOW)
    (line,) = out.getvalue().splitlines()
    return code, json.loads(line)


def test_main_patches_the_chosen_nodes_and_logs_one_json_line(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, {"spec": {}})
    code, line = run_main(api, monkeypatch)
    assert code == 0
    label = {"metadata": {"labels": {mg.PERFORM_LABEL: "true"}}}
    nodes = [(p, b) for p, b in api.patched if "/nodes/" in p]
    assert nodes == [("/api/v1/nodes/n-p-b?fieldManager=tpu-serving-host-maintenance-gate", label)]
    assert (line["severity"], line["decision"], line["pool"], line["gate"], line["covers"]) == (
        "INFO",
        "start",
        "p-b",
        "host-maintenance",
        [],
    )


def test_main_holds_every_start_while_a_node_upgrade_session_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review 35, M1: the upgrade runbook and the gate each waited for every group Ready, then took a slice. The
    runbook sets the state's ``upgrading`` for its session: the run holds, labels nothing, and still logs its line
    (no gate-silent page); without it the same run starts the pool."""
    api = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, {"spec": {}})
    api.state = {"data": {"windows": "{}", gate_run.UPGRADING_KEY: "node upgrades by hand"}}
    code, line = run_main(api, monkeypatch)
    assert code == 0 and not [p for p, _ in api.patched if "/nodes/" in p]
    assert (line["decision"], line["pool"], line["severity"]) == ("hold", "p-b", "WARNING"), line
    assert "a node upgrade session holds the gate's starts" in line["message"]
    api.state = {"data": {"windows": "{}"}}
    _, line = run_main(api, monkeypatch)
    assert line["decision"] == "start"


def test_main_starts_nothing_when_its_state_changed_since_its_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review 36, m1: a run that read its state just before the upgrade runbook set ``upgrading`` still started
    a pool. The start's record carries the read's resourceVersion; the API's 409 leaves every node unlabelled and the
    run holds, saying why, without an ERROR."""
    api = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, {"spec": {}})
    api.state = {"metadata": {"resourceVersion": "7"}, "data": {"windows": "{}"}}
    seen: list[dict | None] = []

    def conflict(method: str, path: str, body: dict | None = None) -> dict:
        if method == "PATCH" and "/configmaps/" in path and (body or {}).get("metadata"):  # the read is stale
            seen.append(body)
            raise urllib.error.HTTPError(path, 409, "Conflict", {}, None)  # type: ignore[arg-type]
        return FakeApi.call(api, method, path, body)

    monkeypatch.setattr(api, "call", conflict)
    code, line = run_main(api, monkeypatch)
    assert code == 0 and not [p for p, _ in api.patched if "/nodes/" in p]
    assert seen and seen[0] is not None and seen[0]["metadata"] == {"resourceVersion": "7"}
    assert (line["decision"], line["severity"]) == ("hold", "WARNING"), line
    assert "changed since this run read it" in line["message"]


def test_main_reads_the_hpa_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    three = [*SERVING, pod("vllm-2", "n-p-c")]
    hold = {"spec": {"behavior": {"scaleDown": {"selectPolicy": "Disabled"}}}}
    assert run_main(FakeApi(pools({"p-a": IN_50H}), three, hold), monkeypatch)[1]["decision"] == "start"
    assert run_main(FakeApi(pools({"p-a": IN_50H}), three, {"spec": {}}), monkeypatch)[1]["decision"] == "hold"


def test_main_logs_error_when_the_api_refuses_the_label(monkeypatch: pytest.MonkeyPatch) -> None:
    code, line = run_main(FakeApi(pools({"p-a": IN_50H}), SERVING, {"spec": {}}, refuse=422), monkeypatch)
    assert code == 1
    assert line["severity"] == "ERROR"
    assert line["message"] == "the API refused the gate's patch of node n-p-a: 422 Refused"


def test_main_of_a_watching_gate_labels_no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeApi(pools({"p-a": IN_50H}), SERVING, HPA)
    code, line = run_main(api, monkeypatch, STARTS="false")
    assert (code, line["decision"], [p for p, _ in api.patched if "/nodes/" in p]) == (0, "watch", [])
    assert (api.read_hpas, api.read_sets) == (1, 1)  # the LeaderWorkerSet's spec.replicas (SRE 16, m1); the HPA


def test_main_of_a_gate_with_a_compute_class_reads_the_nodes_gke_made_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review of the capacity fallback, M2: a group on a Spot slice GKE made for the class, its node lost, pages and
    is covered; a node that both reads return counts once."""
    api = FakeApi([node("n-p-a", "p-a")], [pod("vllm-0", "n-p-a"), pod("vllm-1", "n-spot")], HPA)
    lost = node("n-spot", "gke-made-spot", ready=False, since=NOW - 1200)
    lost["metadata"]["labels"][mg.CLASS_LABEL] = "c-serving"
    api.classed = [lost, api.nodes[0]]
    code, line = run_main(api, monkeypatch, STARTS="false", COMPUTE_CLASS="c-serving")
    assert (code, line["decision"], line["severity"], api.read_classed) == (0, "watch", "ERROR", 1)
    assert line["message"].startswith("watching 2 serving nodes"), line["message"]
    assert "node n-spot NotReady for 1200 s holds a serving pod" in line["pages"]
    code, line = run_main(FakeApi(api.nodes, api.pods, HPA), monkeypatch, STARTS="false")
    assert line["severity"] == "INFO"  # without the class the gate never reads those nodes


def lost_zone() -> tuple[list[dict], list[dict]]:
    """Group 0's node NotReady for 20 minutes, its pods Terminating on it; group 1 serving on p-b."""
    lost = node("n-p-a", "p-a", ready=False, since=NOW - 1200)
    leaving = pod("vllm-0", "n-p-a", ready=False)
    leaving["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z"
    serving = pod("vllm-1", "n-p-b")
    for p, g in ((leaving, "0"), (serving, "1")):
        p["metadata"]["labels"][group_cover.GROUP_INDEX_LABEL] = g
    return [lost, node("n-p-b", "p-b"), node("n-p-c", "p-c")], [leaving, serving]


def test_main_raises_the_hpas_minimum_while_a_serving_node_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review round 21, M1: a lost group's replacement is the gate's patch, not a human's."""
    nodes, pods = lost_zone()
    api = FakeApi(nodes, pods, HPA)
    code, line = run_main(api, monkeypatch, STARTS="false")
    assert (code, line["severity"]) == (0, "ERROR")  # the lost node still pages
    ((path, body),) = api.patched
    assert path == (
        "/apis/autoscaling/v2/namespaces/serving/horizontalpodautoscalers/vllm?fieldManager=tpu-serving-host-maintenance-gate"
    )
    assert body is not None and body["spec"] == {"minReplicas": 3, "maxReplicas": 3}
    assert line["covers"] == ["raising HPA vllm's minimum from 2 to 3: groups 0 of vllm are on lost nodes"]
    assert line["covers"][0] in line["message"]


def test_main_logs_error_when_the_api_refuses_the_hpa_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes, pods = lost_zone()
    code, line = run_main(FakeApi(nodes, pods, HPA, refuse_hpa=403), monkeypatch, STARTS="false")
    assert (code, line["severity"], line["decision"]) == (1, "ERROR", "error")
    assert line["message"] == "the API refused the gate's patch of HPA vllm: 403 Refused"


def test_gate_from_reads_each_hpas_own_bounds() -> None:
    """SRE review round 29, M3: the stack's bounds of each HPA, which a cover gives back."""
    gate = gate_run.gate_from({**ENV, "AUTOSCALERS": "vllm,other", "AUTOSCALER_BOUNDS": "vllm=2..3, other=1..4"})
    assert gate.bounds == (("vllm", 2, 3), ("other", 1, 4))
    assert gate_run.gate_from(ENV).bounds == ()


def test_main_gives_back_the_stacks_bounds_from_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review round 29, M3: a cover that began over a hand cover (3..3) recorded those bounds; once the groups
    serve, the gate gives back the stack's own, 2..3, which its environment carries, not the 3..3 it recorded."""
    pods = [pod("vllm-0", "n-p-a"), pod("vllm-1", "n-p-b")]  # group 0 serves again
    for p, g in zip(pods, "01", strict=True):
        p["metadata"]["labels"][group_cover.GROUP_INDEX_LABEL] = g
    nodes = [node("n-p-a", "p-a"), node("n-p-b", "p-b"), node("n-p-c", "p-c")]
    record = {"minReplicas": 3, "maxReplicas": 3, "groups": 3, "lost": ["0"]}
    covered = {**HPA, "metadata": {"name": "vllm", "annotations": {group_cover.COVER_ANNOTATION: json.dumps(record)}}}
    covered["spec"] = {**HPA["spec"], "minReplicas": 4, "maxReplicas": 4}
    api = FakeApi(nodes, pods, covered)
    code, line = run_main(api, monkeypatch, STARTS="false", AUTOSCALER_BOUNDS="vllm=2..3")
    assert code == 0, line
    ((_, body),) = [(p, b) for p, b in api.patched if "horizontalpodautoscalers" in p]
    assert body is not None and body["spec"] == {"minReplicas": 2, "maxReplicas": 3}
    assert line["covers"] == ["giving HPA vllm the stack's bounds back (2 to 3): groups serve again"]


STATE_PATH = (
    "/api/v1/namespaces/serving/configmaps/host-maintenance-gate-state?fieldManager=tpu-serving-host-maintenance-gate"
)


def test_main_remembers_the_windows_gke_announces_and_writes_them_only_when_they_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SRE review round 21, m1: the state ConfigMap keeps each announced window and when the run saw it; the next
    run, which sees it again, writes it again (its time seen); a state that holds what the run would write is left."""
    api = FakeApi(pools({"p-a": IN_50H}), SERVING, HPA)
    code, _ = run_main(api, monkeypatch, STARTS="false")
    written = json.dumps({"n-p-a": [float(IN_50H), NOW]}, separators=(",", ":"))
    assert (code, api.patched) == (0, [(STATE_PATH, {"data": {"windows": written, "started": "{}"}})])
    api = FakeApi(pools({"p-a": IN_50H}), SERVING, HPA)
    api.state = {"data": {"windows": written}}
    assert run_main(api, monkeypatch, STARTS="false")[0] == 0 and api.patched == []


def test_main_pages_no_node_in_a_remembered_maintenance_but_covers_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review round 24, M1: a serving pod still bound to a node in maintenance keeps its group down for the
    maintenance and its reload; the page spares the maintenance, the cover does not."""
    nodes, pods = lost_zone()  # n-p-a NotReady 20 minutes, no label
    api = FakeApi(nodes, pods, HPA)
    api.state = {"data": {"windows": json.dumps({"n-p-a": [NOW - 1800, NOW - 1500]})}}
    code, line = run_main(api, monkeypatch, STARTS="false")
    assert (code, line["severity"], line["lost"], line["pages"]) == (0, "INFO", ["n-p-a"], [])
    assert line["covers"] == ["raising HPA vllm's minimum from 2 to 3: groups 0 of vllm are on lost nodes"]
    api = FakeApi(nodes, pods, HPA)
    api.state = {"data": {"windows": "not json"}}  # unreadable: nothing remembered, the lost node pages
    assert run_main(api, monkeypatch, STARTS="false")[1]["severity"] == "ERROR"


def test_main_without_its_state_config_map_still_pages_and_covers(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review round 23, m1: a state ConfigMap deleted by hand costs the memory of windows, not the run."""
    nodes, pods = lost_zone()
    api = FakeApi(nodes, pods, HPA)
    api.state = None
    code, line = run_main(api, monkeypatch, STARTS="false")
    assert (code, line["severity"], line["lost"]) == (0, "ERROR", ["n-p-a"])
    assert [p for p, _ in api.patched if "configmaps" in p] == []
    assert line["covers"][0].startswith("raising HPA vllm's minimum from 2 to 3")
    # GKE review round 59, m1: the run says the memory is gone
    assert "the state ConfigMap host-maintenance-gate-state is missing" in line["message"]


def test_main_records_the_pool_it_starts_and_holds_the_next_after_gke_takes_the_label_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GKE review round 60, M1: GKE may take the perform label off within a minute; the pool the gate started stays
    busy by the state's record until its nodes have been Ready since the start."""
    api = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, HPA)
    code, line = run_main(api, monkeypatch)
    assert (code, line["decision"], line["pool"]) == (0, "start", "p-b")
    (state,) = [b for p, b in api.patched if "configmaps" in p]
    assert json.loads(state["data"]["started"]) == {"p-b": NOW}
    # five minutes later: p-b's node has no perform label (GKE took it), is still Ready (draining): hold p-a
    later = FakeApi(pools({"p-a": IN_50H, "p-b": None}), SERVING, HPA)
    later.state = {"data": {"started": json.dumps({"p-b": NOW})}}
    monkeypatch.setattr(gate_run, "Api", lambda env: later)
    out = io.StringIO()
    with redirect_stdout(out):
        assert gate_run.main(ENV, NOW + 300) == 0
    (held,) = out.getvalue().splitlines()
    said = "n-p-b (started by the gate 300 s ago, not Ready again since; the state ConfigMap's started)"
    assert json.loads(held)["decision"] == "hold" and said in json.loads(held)["message"], held  # SRE review 26, m2


def test_main_records_the_start_before_the_label_and_takes_it_back_when_the_label_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GKE review round 61, m1: the record first, so that a refused record labels nothing; SRE review round 26, m1: a
    refused label takes the record back, or the pool held every other for 6 hours."""
    api = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, HPA, refuse=503)
    code, line = run_main(api, monkeypatch)
    assert (code, line["message"]) == (1, "the API refused the gate's patch of node n-p-b: 503 Refused")
    states = [json.loads(b["data"]["started"]) for p, b in api.patched if "configmaps" in p]
    assert states == [{"p-b": NOW}, {}]  # recorded, then taken back
    unwritable = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, HPA, refuse_state=500)
    code, line = run_main(unwritable, monkeypatch)
    assert code == 1 and "ConfigMap host-maintenance-gate-state: 500 Refused" in line["message"]
    assert [p for p, _ in unwritable.patched if "/nodes/" in p] == []  # no label without the record


def test_main_starts_no_pool_without_its_state_config_map(monkeypatch: pytest.MonkeyPatch) -> None:
    """GKE review round 61, m1: with the state missing, a pool started would be forgotten once GKE takes the label
    off, and a second one started 5 minutes on. The start is held, and pages."""
    api = FakeApi(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, HPA)
    api.state = None
    code, line = run_main(api, monkeypatch)
    assert (code, line["decision"], line["severity"]) == (0, "hold", "ERROR")
    assert line["pages"] == [
        "the state ConfigMap host-maintenance-gate-state is missing, in which the gate records the pools it starts "
        "(pulumi up --refresh)"
    ]
    assert api.patched == []


def test_main_pages_a_start_gke_did_not_act_on_and_forgets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """SRE review round 26, M1; GKE review round 61, m3: a pool started 30 minutes ago whose node shows nothing of a
    maintenance (its perform label still on, Ready since before the start): the run pages, and forgets the start."""
    started = NOW - gate_memory.IGNORED_SECONDS
    stuck = node("n-p-b", "p-b", perform=True, since=NOW - 7200)
    api = FakeApi([node("n-p-a", "p-a", IN_50H), stuck], SERVING, HPA)
    api.state = {"data": {"windows": "{}", "started": json.dumps({"p-b": started})}}
    code, line = run_main(api, monkeypatch)
    assert (code, line["severity"]) == (0, "ERROR")
    assert line["pages"] == [gate_run.ignored_page("p-b", started, NOW)]
    assert "GKE has not acted on the start of pool p-b, labelled 1800 s ago" in line["pages"][0]
    (state,) = [b for p, b in api.patched if "configmaps" in p]
    assert json.loads(state["data"]["started"]) == {}


def test_main_keeps_the_record_of_a_pool_labelled_in_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """GKE review round 62, m1: one labelled VM starts the whole slice's maintenance; a pool whose label was refused
    on one node of four stays recorded, or the next run starts a second pool while this one drains."""

    class OneRefused(FakeApi):
        def call(self, method: str, path: str, body: dict | None = None) -> dict:
            if method == "PATCH" and path.startswith("/api/v1/nodes/n-p-b-2"):
                raise urllib.error.HTTPError(path, 404, "Not Found", {}, None)  # type: ignore[arg-type]
            return super().call(method, path, body)

    slice_b = [node(f"n-p-b-{i}", "p-b", IN_40H) for i in range(4)]
    api = OneRefused([node("n-p-a", "p-a", IN_50H), *slice_b], SERVING, HPA)
    code, line = run_main(api, monkeypatch)
    assert (code, line["message"]) == (1, "the API refused the gate's patch of node n-p-b-2: 404 Not Found")
    assert sorted(p.split("?")[0] for p, _ in api.patched if "/nodes/" in p) == [
        "/api/v1/nodes/n-p-b-0", "/api/v1/nodes/n-p-b-1", "/api/v1/nodes/n-p-b-3"
    ]  # fmt: skip
    states = [json.loads(b["data"]["started"]) for p, b in api.patched if "configmaps" in p]
    assert states == [{"p-b": NOW}]  # recorded, and kept


def test_main_treats_a_label_with_no_answer_as_refused_and_takes_the_record_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SRE review round 27, m3: a PATCH that times out is not known to be applied: the record goes back (no false
    'GKE has not acted' page 30 minutes on), and the run's line says it."""

    class TimesOut(FakeApi):
        def call(self, method: str, path: str, body: dict | None = None) -> dict:
            if method == "PATCH" and "/nodes/" in path:
                raise TimeoutError("timed out")
            return super().call(method, path, body)

    api = TimesOut(pools({"p-a": IN_50H, "p-b": IN_40H}), SERVING, HPA)
    code, line = run_main(api, monkeypatch)
    assert (code, line["message"]) == (1, "the API refused the gate's patch of node n-p-b: TimeoutError('timed out')")
    states = [json.loads(b["data"]["started"]) for p, b in api.patched if "configmaps" in p]
    assert states == [{"p-b": NOW}, {}]
