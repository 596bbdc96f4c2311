"""SaxmlServing: seed conformance, acceptance checks, sizing and the publication reconciler."""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from tests.conftest import HARDENED_DIFFERENCES, ROOT, SEED_MANIFESTS, flatten, plan_of, seed_differences
from tests.fixtures.configs import SAX_CONFIG, load, plan_edited
from tpu_serving.backends.saxml import publisher as saxml_publisher
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.reference import schema

STACK = "saxml-175b-v5e32x2"
SEED = "saxml-lmcloudspmd175b-2xv5e-4x8.yaml"
PLACEHOLDERS = ("BUCKET_NAME", "PROJECT_ID", "JOBSET_VERSION")


def objects(plan=None) -> dict[tuple[str, str], dict]:
    return {(o["kind"], o["metadata"]["name"]): o for o in kubernetes_objects(plan or plan_of(STACK))}


def seed_objects() -> dict[tuple[str, str], dict]:
    docs = [d for d in yaml.safe_load_all((SEED_MANIFESTS / SEED).read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


# ------------------------------------------------------------------------------ seed conformance

POD = r"spec\.template\.spec"
MODEL_POD = r"spec\.replicatedJobs\[sax-model-server\]\.template\.spec\.template"
DIFFERENCES: list[tuple[str, str]] = [
    *HARDENED_DIFFERENCES,
    (r"metadata\.namespace", "every stack runs in its own namespace, not `default`"),
    (r"(.*\.)?metadata\.labels\.app\.kubernetes\.io/.*", "standard part-of/instance labels for ownership"),
    (
        rf"{POD}\.containers\[sax-admin-server\]\.securityContext\.privileged",
        "the admin server uses no TPU: never privileged",
    ),
    (
        rf"{POD}\.containers\[sax-(admin-server|http)\]\.(readinessProbe|livenessProbe)\..*",
        "health probes the seed lacks",
    ),
    (rf"{POD}\.containers\[sax-(admin-server|http)\]\.resources\.requests\..*", "CPU/memory requests the seed lacks"),
    (
        rf"{POD}\.containers\[sax-(admin-server|http)\]\.resources\.limits\.memory",
        "memory limited to the request on the shared CPU pool (CKV_K8S_13)",
    ),
    (
        rf"{POD}\.containers\[sax-admin-server\]\.securityContext\.(runAsNonRoot|runAsUser|runAsGroup)",
        "the admin server runs as nobody: its image needs no root (google/saxml Dockerfile.admin)",
    ),
    (rf"{POD}\.containers\[sax-admin-server\]\.env\[GSBUCKET\]\.value", "the stack's state bucket (seed: placeholder)"),
    (
        rf"{POD}\.containers\[sax-admin-server\]\.env\[SAX_CELL\]\.(name|value)",
        "the stack's cell, which the image would default to /sax/test (google/saxml Dockerfile.admin l.41)",
    ),
    (
        rf"({POD}\.containers\[sax-http\]|{MODEL_POD}\.spec\.containers\[sax-model-server\])\.env\[SAX_ROOT\]\.value",
        "SAX_ROOT in the stack's state bucket (seed: placeholder)",
    ),
    (
        rf"{MODEL_POD}\.spec\.containers\[sax-model-server\]\.args",
        "--platform_topology of the slice, which the seed leaves at Saxml's default '1' (GKE review 71, m1)",
    ),
    (
        rf"{MODEL_POD}\.spec\.containers\[sax-model-server\]\.securityContext\.privileged",
        "privileged only where GKE needs it (before 1.28); the stack's GKE is newer",
    ),
    (
        r"metadata\.annotations\.networking\.gke\.io/load-balancer-type",
        "internal load balancer by default (the seed exposed sax-http publicly)",
    ),
    (rf"({POD}|{MODEL_POD}\.spec)\.priorityClassName", "serving priority, above batch work (multi-tenancy)"),
    (
        rf"{MODEL_POD}\.spec\.containers\[sax-model-server\]\.readinessProbe\..*",
        "TCP readiness on the model server port",
    ),
    (
        r"spec\.failurePolicy\.rules\[disruption\]\..*",
        "a disruption restarts the JobSet without spending one of maxRestarts (issue 35, finding 11)",
    ),
    (
        r"spec\.replicatedJobs\[sax-model-server\]\.template\.spec\.podFailurePolicy\.rules",
        "a disrupted pod fails its Job with reason PodFailurePolicy, which the JobSet rule matches",
    ),
    (rf"{MODEL_POD}\.spec\.restartPolicy", "Never: a podFailurePolicy requires it (JobSet would default OnFailure)"),
    (r"spec\.replicas", "two sax-http pods under a budget of one eviction (a drain keeps one serving)"),
    (
        r"spec\.template\.spec\.topologySpreadConstraints",
        "the two sax-http pods prefer different zones (spread.zone_spread)",
    ),
]


def quantities_as_strings(flat: dict) -> dict:
    # `4` and `"4"` are the same quantity to the API server.
    return {k: str(v) if "google.com/tpu" in k else v for k, v in flat.items()}


def unexplained(seed: dict, ours: dict) -> tuple[list[str], set[str]]:
    return seed_differences(seed, ours, DIFFERENCES, lambda o: quantities_as_strings(flatten(o)))


@pytest.mark.parametrize(
    "key",
    [
        ("Deployment", "sax-admin-server"),
        ("JobSet", "sax-model-server-set"),
        ("Deployment", "sax-http"),
        ("Service", "sax-http-lb"),
    ],
)
def test_saxml_conforms_to_seed(key, seeds):
    problems, _ = unexplained(seed_objects()[key], objects()[key])
    assert problems == [], "differences from the seed that are neither fixed nor listed:\n" + "\n".join(problems)


def test_saxml_every_listed_difference_occurs(seeds):
    used = set()
    for key, seed in seed_objects().items():
        used |= unexplained(seed, objects()[key])[1]
    assert [r for r, _ in DIFFERENCES if r not in used] == []


# ------------------------------------------------------------------------------ acceptance


def test_saxml_jobset_waits_for_install_and_slices():
    plan = plan_of(STACK)
    (jobset,) = plan.of_type("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    (group,) = plan.of_type("kubernetes:yaml/v2:ConfigGroup")
    assert group.inputs["files"] == [
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"
    ]
    assert group.urn in jobset.dependencies
    pools = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if "placementPolicy" in p.inputs]
    assert len(pools) == 2 and {p.urn for p in pools} <= set(jobset.dependencies)


def test_saxml_state_in_stack_bucket_and_no_placeholder():
    objs = objects()
    bucket = plan_of(STACK).outputs["buckets"]["state"]
    admin = objs[("Deployment", "sax-admin-server")]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "GSBUCKET", "value": bucket} in admin["env"]
    text = json.dumps(list(objs.values()))
    assert f"gs://{bucket}/sax-root" in text
    assert text.count('"SAX_ROOT"') == 2
    assert [p for p in PLACEHOLDERS if p in text] == []


def test_saxml_model_servers_from_pools():
    spec = objects()[("JobSet", "sax-model-server-set")]["spec"]
    (rj,) = spec["replicatedJobs"]
    assert rj["replicas"] == 2
    job = rj["template"]["spec"]
    assert job["parallelism"] == job["completions"] == 8 and job["backoffLimit"] == 0
    pod = job["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["serviceAccountName"] == "sax-sa"
    (c,) = pod["containers"]
    assert "--platform_chip=tpuv5e" in c["args"] and "--sax_cell=/sax/test" in c["args"]
    # the slice's topology, not Saxml's default '1' (GKE review 71, m1)
    assert "--platform_topology=4x8" in c["args"]
    assert c["resources"]["limits"] == {"google.com/tpu": "4"}
    assert {"name": "MEGASCALE_NUM_SLICES", "value": ""} in c["env"]
    # not privileged: hardened, as every TPU container from GKE 1.28
    assert c["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["automountServiceAccountToken"] is False


def test_saxml_publication_job_for_the_stack_model():
    objs = objects()
    (job,) = [o for (kind, _), o in objs.items() if kind == "Job"]
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    models = json.loads(env["SAX_MODELS"])
    assert models == [
        {
            "checkpoint": "None",
            "model": "/sax/test/spmd",
            "model_path": "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
            "replicas": 2,
        }
    ]
    assert env["SAX_HTTP"] == "http://sax-http-lb.saxml.svc:8888"
    script = objs[("ConfigMap", "sax-publisher-script")]["data"]["saxml_publisher.py"]
    assert script == (ROOT / "components" / "backends" / "saxml" / "publisher.py").read_text()
    role = objs[("Role", "sax-publisher")]
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resourceNames": ["sax-publisher-state"],
            "resources": ["configmaps"],
            "verbs": ["get", "patch"],
        }
    ]
    plan = plan_of(STACK)
    (job_res,) = plan.of_type("kubernetes:batch/v1:Job")
    http = next(r for r in plan.of_type("kubernetes:apps/v1:Deployment") if r.inputs["metadata"]["name"] == "sax-http")
    assert http.urn in job_res.dependencies


def test_saxml_http_load_balancer_internal_by_default():
    svc = objects()[("Service", "sax-http-lb")]
    assert svc["spec"]["type"] == "LoadBalancer"
    assert svc["metadata"]["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}


def plan_with(edit_serving=None, edit_cluster=None):
    edits = {k: v for k, v in (("serving", edit_serving), ("cluster", edit_cluster)) if v}
    return plan_edited(STACK, **edits)


def test_saxml_public_load_balancer_needs_source_ranges():
    plan = plan_with(lambda s: s.update(http={"exposure": "public", "sourceRanges": ["203.0.113.0/24"]}))
    svc = objects(plan)[("Service", "sax-http-lb")]
    assert "annotations" not in svc["metadata"]
    assert svc["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]
    with pytest.raises(ConfigError, match=r"serving\.http: .*needs sourceRanges"):
        plan_with(lambda s: s.update(http={"exposure": "public"}))


def test_saxml_privileged_only_before_gke_1_28():
    plan = plan_with(edit_cluster=lambda c: c.update(minMasterVersion="1.27.2-gke.2100"))
    pod = objects(plan)[("JobSet", "sax-model-server-set")]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"
    ]["spec"]
    assert pod["containers"][0]["securityContext"] == {"privileged": True}


def test_saxml_privileged_auto_with_latest_gke_is_not_privileged():
    plan = plan_with(edit_cluster=lambda c: c.update(minMasterVersion="latest"))
    pod = objects(plan)[("JobSet", "sax-model-server-set")]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"
    ]["spec"]
    assert "privileged" not in pod["containers"][0]["securityContext"]


def test_saxml_model_servers_on_the_host_network_may_reach_the_admin_port():
    objs = objects(plan_of("saxml-175b-v5e32x2"))
    policy = objs[("NetworkPolicy", "sax-admin-server-from-model-servers")]
    assert policy["spec"]["podSelector"] == {"matchLabels": {"app": "sax-admin-server"}}
    # No `from`: host-network sources are node addresses, which Dataplane V2 does not match
    # with ipBlock; the rule admits exactly one port of the admin pod.
    assert policy["spec"]["ingress"] == [{"ports": [{"protocol": "TCP", "port": 10000}]}]
    (jobset,) = plan_of("saxml-175b-v5e32x2").of_type("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet")
    assert any(d.endswith("saxml175b-saxml-admin-from-model-servers") for d in jobset.dependencies)
    assert jobset.replace_on_changes == ["spec"] and jobset.delete_before_replace is True


@pytest.mark.parametrize("release", ["v0.10.1", "v0.12.0"])
def test_saxml_jobset_valid_for_each_release(release, reference):
    plan = plan_with(lambda s: s.update(jobsetVersion=release))
    assert plan.outputs["controllers"] == {"jobset.x-k8s.io": release}
    schema.validate_custom(objects(plan)[("JobSet", "sax-model-server-set")], release)


# ------------------------------------------------------------------------------ sizing


def test_saxml_175b_bf16_rejected_on_one_4x4_v5e_slice():
    with pytest.raises(ConfigError) as exc:
        load(SAX_CONFIG)
    (problem,) = exc.value.problems
    assert problem.startswith("tpu-serving:serving.models[0]: 175B parameters in bf16 need about 326 GiB")
    assert "4x4 slice has (256 GiB)" in problem and "smallest ct5lp-hightpu-4t topology that fits is 4x8" in problem


def test_saxml_175b_int8_fits_on_4x4():
    cfg = {**SAX_CONFIG, "tpu-serving:serving": json.loads(json.dumps(SAX_CONFIG["tpu-serving:serving"]))}
    cfg["tpu-serving:serving"]["models"][0]["weightPrecision"] = "int8"
    assert load(cfg).serving.models[0].weight_precision == "int8"  # 163 GiB: fits the 256 GiB of a v5e 4x4


@pytest.mark.parametrize(
    "models, fragment",
    [
        ([{"model": "/sax/other/m", "modelPath": "x", "parametersBillions": 1}], "not in the cell /sax/test"),
        (
            [{"model": "/sax/test/m", "modelPath": "x", "parametersBillions": 1, "replicas": 3}],
            "only 1 model server slice",
        ),
        ([{"model": "sax/test/m", "modelPath": "x", "parametersBillions": 1}], "/sax/<cell>/<model>"),
    ],
)
def test_saxml_bad_models_rejected(models, fragment):
    cfg = {**SAX_CONFIG, "tpu-serving:serving": {**SAX_CONFIG["tpu-serving:serving"], "models": models}}
    with pytest.raises(ConfigError) as exc:
        load(cfg)
    assert any(p.startswith("tpu-serving:serving.models[0]") and fragment in p for p in exc.value.problems)


# ------------------------------------------------------------------------------ publisher


class FakeSax:
    """A sax-http stand-in on loopback: publish, unpublish, listcell; replicas come up at once."""

    def __init__(self, published=None):
        self.models: dict[str, dict] = dict(published or {})
        self.calls: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _body(self):
                return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")

            def _reply(self, status, body=None):
                data = json.dumps(body or {}).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                model = self._body().get("model")
                info = fake.models.get(model)
                self._reply(200, info) if info else self._reply(400, {"error": "not found"})

            def do_POST(self):
                body = self._body()
                fake.calls.append((self.path, body["model"]))
                if self.path == "/publish":
                    fake.models[body["model"]] = {
                        "model": body["model"],
                        "model_path": body["model_path"],
                        "checkpoint": body["checkpoint"],
                        "max_replicas": body["replicas"],
                        "active_replicas": body["replicas"],
                    }
                elif self.path == "/unpublish":
                    fake.models.pop(body["model"], None)
                self._reply(200, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    def close(self):
        self.server.shutdown()


@pytest.fixture
def sax():
    servers = []

    def make(published=None):
        servers.append(FakeSax(published))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def want(model, path="p.M", replicas=1):
    return {"model": model, "model_path": path, "checkpoint": "None", "replicas": replicas}


def test_saxml_publisher_publishes_then_keeps(sax, tmp_path):
    fake = sax()
    state = saxml_publisher.FileState(str(tmp_path / "state.json"))
    log = saxml_publisher.reconcile(fake.url, [want("/sax/test/a", replicas=2)], state, wait_seconds=5, poll=0.01)
    assert log == ["published /sax/test/a", "ready /sax/test/a (2 replicas)"]
    assert state.load() == ["/sax/test/a"]
    log = saxml_publisher.reconcile(fake.url, [want("/sax/test/a", replicas=2)], state, wait_seconds=5, poll=0.01)
    assert log[0] == "kept /sax/test/a" and fake.calls == [("/publish", "/sax/test/a")]


def test_saxml_publisher_unpublishes_removed_and_republishes_changed(sax, tmp_path):
    fake = sax()
    state = saxml_publisher.FileState(str(tmp_path / "state.json"))
    saxml_publisher.reconcile(fake.url, [want("/sax/test/a"), want("/sax/test/b")], state, wait_seconds=5, poll=0.01)
    log = saxml_publisher.reconcile(fake.url, [want("/sax/test/b", path="p.Other")], state, wait_seconds=5, poll=0.01)
    assert "unpublished /sax/test/a" in log and "published /sax/test/b" in log
    assert set(fake.models) == {"/sax/test/b"} and fake.models["/sax/test/b"]["model_path"] == "p.Other"
    assert state.load() == ["/sax/test/b"]


def test_saxml_publisher_leaves_models_it_did_not_publish(sax, tmp_path):
    fake = sax(
        {
            "/sax/test/manual": {
                "model": "/sax/test/manual",
                "model_path": "m",
                "checkpoint": "None",
                "max_replicas": 1,
                "active_replicas": 1,
            }
        }
    )
    state = saxml_publisher.FileState(str(tmp_path / "state.json"))
    saxml_publisher.reconcile(fake.url, [want("/sax/test/a")], state, wait_seconds=5, poll=0.01)
    assert "/sax/test/manual" in fake.models


def test_saxml_publisher_times_out_when_sax_http_is_down(tmp_path):
    state = saxml_publisher.FileState(str(tmp_path / "state.json"))
    with pytest.raises(SystemExit, match="did not answer"):
        saxml_publisher.reconcile("http://127.0.0.1:9", [want("/sax/test/a")], state, wait_seconds=0.2, poll=0.05)


def test_saxml_admin_server_serves_the_cell_the_model_servers_join():
    """The admin server's cell is the one the model servers and the publisher name (a cell other than the image's
    default /sax/test left the model servers with no admin server to join)."""
    plan = plan_with(lambda s: s.update(cell="/sax/prod", models=[dict(s["models"][0], model="/sax/prod/spmd")]))
    objs = objects(plan)
    (admin,) = objs[("Deployment", "sax-admin-server")]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in admin["env"]}
    assert env["SAX_CELL"] == "/sax/prod"
    model_servers = json.dumps([o for (kind, _), o in objs.items() if kind == "JobSet"])
    assert "--sax_cell=/sax/prod" in model_servers and "--sax_cell=/sax/test" not in model_servers


# ------------------------------------------------------------------------------ disruptions (issue 35)


def test_saxml_disruptions_do_not_spend_the_jobsets_restarts():
    """A pod with the DisruptionTarget condition fails its Job by the pod failure policy, and the JobSet's first
    rule restarts on that reason without counting; a crash (any other failure) finds no rule and counts."""
    spec = objects()[("JobSet", "sax-model-server-set")]["spec"]
    assert spec["failurePolicy"] == {
        "maxRestarts": 4,
        "rules": [
            {
                "name": "disruption",
                "action": "RestartJobSetAndIgnoreMaxRestarts",
                "onJobFailureReasons": ["PodFailurePolicy"],
            }
        ],
    }
    job = spec["replicatedJobs"][0]["template"]["spec"]
    assert job["backoffLimit"] == 0
    assert job["podFailurePolicy"] == {
        "rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    }
    # the API server refuses a podFailurePolicy under any other restart policy
    assert job["template"]["spec"]["restartPolicy"] == "Never"


def test_saxml_jobset_before_failure_rules_refused():
    with pytest.raises(ConfigError) as err:
        plan_with(lambda s: s.update(jobsetVersion="v0.5.2"))
    assert 'serving.jobsetVersion = "v0.5.2": the model servers need JobSet v0.6.0 or later' in str(err.value)


def test_saxml_http_two_replicas_under_a_budget_of_one_eviction():
    objs = objects()
    assert objs[("Deployment", "sax-http")]["spec"]["replicas"] == 2
    pdb = objs[("PodDisruptionBudget", "sax-http")]
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "sax-http"}}}
    # the budget selects exactly sax-http's pods: a drain may take one and must wait for its replacement
    assert objs[("Deployment", "sax-http")]["spec"]["template"]["metadata"]["labels"]["app"] == "sax-http"


def test_saxml_rollout_output_says_a_rollout_is_a_full_outage():
    rollout = plan_of(STACK).outputs["rollout"]
    assert "every slice goes down at once" in rollout["summary"] and "full outage" in rollout["summary"]
    assert "does not count against maxRestarts (4" in rollout["drain"]


def test_saxml_rollout_drain_says_the_jobset_fails_for_good_and_how_to_recover():
    """Once the crashes have spent maxRestarts the JobSet is Failed and its Jobs deleted (jobset v0.12.0
    failure_policy.go l.45, l.225-232): the Drain line says so and names the recovery (GKE review m1)."""
    drain = plan_of(STACK).outputs["rollout"]["drain"]
    assert "a crash after 4 counted restarts fails the JobSet for good" in drain
    assert "a later pulumi up sees no change" in drain
    assert "kubectl delete jobset sax-model-server-set in the stack's namespace, then pulumi up --refresh" in drain


def test_saxml_preview_says_readiness_does_not_mean_the_model_is_loaded():
    """The model servers' readiness is a TCP connect on 10001 (SRE review M4): the preview says a Ready pod may not
    have the model loaded yet."""
    from tests.conftest import plan_of

    caveats = plan_of("saxml-175b-v5e32x2").as_json()["outputs"]["caveats"]
    assert any(
        c.startswith("a model server turns Ready once it listens on port 10001") and "before the admin server" in c
        for c in caveats
    )


def test_saxml_in_cluster_address_is_the_services_dns_name():
    """saxml.component.SaxmlServing (mutmut_103): with `exposure: cluster` clients use the sax-http Service's
    cluster DNS name, `<service>.<namespace>.svc`, known at preview."""
    plan = plan_edited("saxml-175b-v5e32x2", serving=lambda s: s.update(http={"exposure": "cluster"}))
    services = [
        o
        for o in kubernetes_objects(plan)
        if o["kind"] == "Service" and o["spec"].get("selector") == {"app": "sax-http"}
    ]
    (svc,) = services
    name, namespace = svc["metadata"]["name"], svc["metadata"]["namespace"]
    assert plan.outputs["saxHttpAddress"] == f"{name}.{namespace}.svc"


def test_saxml_reads_the_minor_of_a_gke_version():
    """saxml.checks._minor: ``1.27.2-gke.2100`` is GKE 1.27 (the part before ``-``)."""
    from tpu_serving.backends.saxml.checks import _minor

    assert _minor("1.27.2-gke.2100") == (1, 27)
    assert _minor("1.28-gke.1") == (1, 28)


def test_saxml_privileged_always_and_never():
    """saxml.checks.privileged (mutmut_6): ``always`` and ``never`` hold whatever the GKE version."""
    from tests.fixtures.configs import SAX_CONFIG
    from tpu_serving.backends.saxml.checks import privileged

    for setting, expected in (("always", True), ("never", False)):
        cfg = copy.deepcopy(SAX_CONFIG)
        cfg["tpu-serving:tpuSlices"][0]["topology"] = "4x8"  # the smallest v5e slice 175B fits
        cfg["tpu-serving:serving"]["privileged"] = setting
        serving = load(cfg).serving
        assert privileged(serving, "1.27.3-gke.100") is expected  # type: ignore[arg-type]
        assert privileged(serving, None) is expected  # type: ignore[arg-type]


def test_saxml_examples_are_the_seeds_http_calls(seeds):
    """saxml.backend (mutmut_126 of build, now http_examples): each printed call is one the seed's manifest
    documents for sax-http: the same method, path and JSON keys."""
    import re

    from tests.conftest import SEED_MANIFESTS
    from tpu_serving.backends.saxml.backend import curl_command, http_examples

    text = (SEED_MANIFESTS / "saxml-lmcloudspmd175b-2xv5e-4x8.yaml").read_text()
    documented = {
        (m, p): sorted(json.loads(body)) for m, p, body in re.findall(r"#\s+(GET|POST)\s+(/\w+)\s+(\{[^}\n]*\})", text)
    }
    examples = http_examples("/sax/test/spmd")
    assert examples
    for method, path, body in examples.values():
        assert documented.get((method, path)) == sorted(body), (method, path, body)
        command = curl_command("10.0.0.1", method=method, path=path, body=body)
        assert f"-X {method} http://10.0.0.1:8888{path} " in command and json.dumps(body) in command
