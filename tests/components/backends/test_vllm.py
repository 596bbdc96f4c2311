"""vLLM TPU backend: conformance with the upstream LWS example, derived parallelism, weights,
the compilation cache, secrets, and what a settings change touches."""

from __future__ import annotations

import copy
import re
import shlex

import pytest
import yaml

from tests.components.backends.test_vllm_args import _vllm_args
from tests.conftest import HARDENED_DIFFERENCES, STACKS, UPSTREAM, flatten, plan_of, seed_differences
from tests.fixtures.components import _components, _descendants
from tests.fixtures.configs import VLLM, load, plan_edited, with_serving
from tpu_serving import catalog
from tpu_serving.backends.vllm.args import (
    VllmEngineSettings,
    VllmServingArgs,
    WeightsLoader,
    extra_args_problem,
    parallelism_problems,
)
from tpu_serving.backends.vllm.facts import LIBRARY_FLAGS
from tpu_serving.backends.vllm.pods import leader_worker_set_spec
from tpu_serving.catalog.versions import PINS
from tpu_serving.config import ConfigError
from tpu_serving.traffic.gateway_settings import LB_BACKEND_KEEPALIVE_SECONDS, SERVER_KEEPALIVE_SECONDS
from tpu_serving_tools.diff.review import diff_plans
from tpu_serving_tools.preview.offline import kubernetes_objects

STACK = "vllm-llama33-70b-v5e16"
LARGE = "vllm-llama31-405b-v6e32"
UPSTREAM_EXAMPLE = UPSTREAM / "lws-v0.10.0-vllm-tpu-example.yaml"
LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
TEMPLATE = "spec.leaderWorkerTemplate"
LEAD = f"{TEMPLATE}.leaderTemplate"
WORK = f"{TEMPLATE}.workerTemplate"
V5E16 = catalog.resolve_slice_name("v5litepod-16")


def rendered(stack: str, kind: str) -> dict:
    name = {"LeaderWorkerSet": "vllm", "Service": "vllm-api"}[kind]
    (obj,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


def pod(lws: dict, role: str) -> dict:
    return lws["spec"]["leaderWorkerTemplate"][f"{role}Template"]["spec"]


def serve_argv(lws: dict) -> list[str]:
    """The ``vllm serve`` command line of the leader's shell script."""
    script = pod(lws, "leader")["containers"][0]["args"][0]
    return shlex.split(script.split("exec ", 1)[1])


def args_of(**changes) -> VllmServingArgs:
    values = {
        "namespace": "vllm",
        "service_account": "vllm",
        "shape": V5E16,
        "model": "llama-3.3-70b-instruct",
        "served_model_name": "meta-llama/Llama-3.3-70B-Instruct",
        "weights_bucket": "weights",
        "cache_bucket": "scratch",
    }
    return VllmServingArgs(**{**values, **changes})


# ------------------------------------------------------------------------- upstream conformance


def _script(container: dict) -> dict:
    """A container's shell script as comparable parts: the Ray bootstrap role and flag, and the serve flags."""
    script = " ".join(container.get("command", [])[2:] + container.get("args", []))
    ray = re.search(r"multi-node-serving\.sh (leader|worker) |\$S (leader|worker) ", script)
    bootstrap = re.search(r"(--ray_cluster_size|--ray_address)=\S+", script)
    _, _, serve = script.partition("api_server" if "api_server" in script else "vllm serve")
    tokens = shlex.split(serve)
    flags = {}
    for i, a in enumerate(tokens):
        if a.startswith("--"):
            value = (
                tokens[i + 1] if "=" not in a and i + 1 < len(tokens) and not tokens[i + 1].startswith("--") else None
            )
            flags[a.split("=", 1)[0]] = a if value is None else f"{a}={value}"
    return {
        "ray": ray and (ray.group(1) or ray.group(2)),
        "bootstrap": bootstrap and bootstrap.group(0).rstrip(";"),
        **flags,
    }


def normalise(obj: dict) -> dict[str, object]:
    obj = copy.deepcopy(obj)
    for role in ("leader", "worker"):
        spec = obj.get("spec", {}).get("leaderWorkerTemplate", {}).get(f"{role}Template", {}).get("spec")
        for c in spec["containers"] if spec else ():
            c["script"] = _script(c)
            c.pop("command", None)
            c.pop("args", None)
    return flatten(obj)


DIFFERENCES: list[tuple[str, str]] = [
    *HARDENED_DIFFERENCES,
    (r"metadata\.(namespace|labels\..*|annotations\..*)", "own namespace, ownership labels, exclusive topology"),
    (r"metadata\.name", "the Service is named by the stack (serviceName)"),
    (
        rf"({LEAD}|{WORK})\.metadata\.(labels\.app\.kubernetes\.io/.*|annotations\..*)",
        "ownership labels, GCS FUSE sidecar",
    ),
    (
        r"spec\.rolloutStrategy\.rollingUpdateConfiguration\.(maxSurge|maxUnavailable)",
        "the stack's `rollout`: surge, one group at a time onto the spare slice the stack declares",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.image",
        "pinned vLLM TPU release instead of the mutable `latest`",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.env\[HF_TOKEN\]\..*",
        "no Hugging Face token: weights come from the stack's bucket (a token is only a Secret reference)",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.env\[[A-Za-z_]+\]\.(name|value)",
        "Ray health-check environment (tpu-inference), compilation cache, Hub offline",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.env\[LWS_GROUP_INDEX\]\..*",
        "the group index names the pod's own compilation cache folder",
    ),
    (
        rf"{LEAD}\.spec\.containers\[vllm-leader\]\.script\.(--port|--model|--served-model-name|--max-model-len|--dtype|--gpu-memory-utilization|--distributed-executor-backend)",
        "vLLM's default port 8000 (tpu-inference example), model from the mounted bucket, stated engine settings",
    ),
    (
        rf"{LEAD}\.spec\.containers\[vllm-leader\]\.ports(\[.*)?",
        "named ports: http 8000 and the Ray head's GCS port",
    ),
    (
        rf"{LEAD}\.spec\.containers\[vllm-leader\]\.(readinessProbe|startupProbe|livenessProbe)\..*",
        "HTTP /health probes with a startup probe instead of a fixed initial delay",
    ),
    (
        rf"{WORK}\.spec\.containers\[vllm-worker\]\.readinessProbe\..*",
        "worker ready once the group's Ray head answers",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.lifecycle\.preStop\..*",
        "graceful shutdown: the leader serves while its endpoint is removed, a worker holds its host while the head answers",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.terminationGracePeriodSeconds",
        "a grace period that covers the gateway's longest request",
    ),
    (
        rf"{LEAD}\.spec\.containers\[vllm-leader\]\.script\.--shutdown-timeout",
        "vLLM drains its requests in flight on SIGTERM for the gateway's longest request",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.resources\.requests\..*",
        "CPU/memory requests for scheduling and the namespace quota (TPU request = its limit)",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[vllm-(leader|worker)\]\.volumeMounts\[(model-weights|compilation-cache)\]\..*",
        "weights and compilation cache from the stack's buckets",
    ),
    (rf"({LEAD}|{WORK})\.spec\.volumes\[(model-weights|compilation-cache)\]\..*", "GCS FUSE volumes"),
    (
        rf"({LEAD}|{WORK})\.spec\.initContainers\[wait-for-weights\]\..*",
        "leader and workers wait for the whole checkpoint instead of restarting (weights_wait.py)",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.(serviceAccountName|priorityClassName|tolerations)",
        "workload identity KSA, serving priority, TPU toleration",
    ),
    (r"spec\.ports\[http\]\.(port|targetPort)", "vLLM's default port 8000"),
    (r"spec\.type", "ClusterIP, as upstream"),
    (r"spec\.replicas", "one group per slice the stack declares (upstream: 2 groups)"),
    (
        r"spec\.leaderWorkerTemplate\.restartPolicy",
        "RecreateGroupAfterStart (LWS v0.9+): the group restarts together, but not while a pod is still pending",
    ),
]


def upstream(kind: str) -> dict:
    (doc,) = [d for d in yaml.safe_load_all(UPSTREAM_EXAMPLE.read_text()) if d and d["kind"] == kind]
    return doc


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "Service"])
def test_vllm_conforms_to_the_upstream_lws_example(kind, reference):
    problems, _ = seed_differences(upstream(kind), rendered(STACK, kind), DIFFERENCES, normalise)
    assert problems == [], "differences from upstream that are neither fixed nor listed:\n" + "\n".join(problems)


def test_vllm_every_listed_difference_occurs(reference):
    used: set[str] = set()
    for kind in ("LeaderWorkerSet", "Service"):
        used |= seed_differences(upstream(kind), rendered(STACK, kind), DIFFERENCES, normalise)[1]
    stale = [r for r, _ in DIFFERENCES if r not in used and r not in (r"metadata\.name", r"spec\.type")]
    assert stale == [], f"listed differences that no longer occur: {stale}"


def test_vllm_conformance_detects_a_change(reference):
    ours = copy.deepcopy(rendered(STACK, "LeaderWorkerSet"))
    ours["spec"]["leaderWorkerTemplate"]["size"] = 2
    problems, _ = seed_differences(upstream("LeaderWorkerSet"), ours, DIFFERENCES, normalise)
    assert problems == [f"{TEMPLATE}.size: seed 4 != rendered 2"]


# ------------------------------------------------------------------------- the LeaderWorkerSet


def test_vllm_tensor_parallelism_spans_every_chip_of_the_slice():
    lws = rendered(STACK, "LeaderWorkerSet")
    argv = serve_argv(lws)
    assert "--tensor-parallel-size=16" in argv and not any(a.startswith("--pipeline") for a in argv)
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 4
    for role in ("leader", "worker"):
        (c,) = pod(lws, role)["containers"]
        assert c["resources"]["limits"] == {"google.com/tpu": "4"}
        assert {m["mountPath"] for m in c["volumeMounts"]} >= {"/dev/shm", "/model", "/compilation-cache"}


def test_vllm_group_restarts_together_on_its_own_slice():
    lws = rendered(STACK, "LeaderWorkerSet")
    # the whole group restarts together (LWS v0.9+: not while one of its pods is still pending)
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupAfterStart"
    assert lws["metadata"]["annotations"] == {
        "leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
    }
    # the stack rolls with surge onto its spare slice (tests/components/backends/test_rollout.py)
    assert lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {"maxUnavailable": 0, "maxSurge": 1}


def test_vllm_probes_tolerate_long_loads_without_a_fixed_delay():
    (c,) = pod(rendered(STACK, "LeaderWorkerSet"), "leader")["containers"]
    assert all("initialDelaySeconds" not in c[p] for p in ("startupProbe", "readinessProbe", "livenessProbe"))
    startup = c["startupProbe"]
    assert startup["httpGet"]["path"] == "/health"
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 3600
    assert "127.0.0.1:8000/health" in c["readinessProbe"]["exec"]["command"][2]  # and progress: test_vllm_progress


def test_vllm_workers_join_the_leaders_ray_cluster_with_tolerant_health_checks():
    lws = rendered(STACK, "LeaderWorkerSet")
    (leader,) = pod(lws, "leader")["containers"]
    (worker,) = pod(lws, "worker")["containers"]
    assert "leader --ray_cluster_size=$(LWS_GROUP_SIZE)" in leader["args"][0]
    assert "worker --ray_address=$(LWS_LEADER_ADDRESS)" in worker["args"][0]
    for c in (leader, worker):
        env = {e["name"]: e.get("value") for e in c["env"]}
        assert env["TPU_MULTIHOST_BACKEND"] == "ray"
        assert env["RAY_health_check_failure_threshold"] == "100"
        assert env["HF_HUB_OFFLINE"] == "1"


def test_vllm_service_selects_the_leaders():
    svc = rendered(STACK, "Service")
    assert svc["spec"]["selector"] == {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"}
    assert pod(rendered(STACK, "LeaderWorkerSet"), "leader") is not None
    leader_labels = rendered(STACK, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"][
        "labels"
    ]
    assert leader_labels["role"] == "leader"


def test_vllm_weights_come_read_only_through_gcs_fuse_with_parallel_downloads():
    lws = rendered(STACK, "LeaderWorkerSet")
    volumes = {v["name"]: v for v in pod(lws, "leader")["volumes"]}
    weights = volumes["model-weights"]["csi"]
    assert weights["driver"] == "gcsfuse.csi.storage.gke.io" and weights["readOnly"] is True
    options = weights["volumeAttributes"]["mountOptions"].split(",")
    assert "file-cache:enable-parallel-downloads:true" in options
    assert "only-dir=llama-3.3-70b-instruct" in options
    assert serve_argv(lws)[2] == "/model"
    annotations = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["annotations"]
    assert annotations["gke-gcsfuse/volumes"] == "true"


def test_vllm_compilation_cache_is_one_folder_per_leaderworkerset_in_scratch():
    volumes = {v["name"]: v for v in pod(rendered(STACK, "LeaderWorkerSet"), "worker")["volumes"]}
    cache = volumes["compilation-cache"]["csi"]
    assert cache["readOnly"] is False
    assert cache["volumeAttributes"]["bucketName"].endswith("-scratch")
    assert "only-dir=vllm-compilation-cache/vllm" in cache["volumeAttributes"]["mountOptions"]


def test_vllm_runai_streamer_reads_gs_directly_without_a_weights_volume():
    spec = leader_worker_set_spec(args_of(loader=WeightsLoader.RUNAI_STREAMER))
    leader = spec["leaderWorkerTemplate"]["leaderTemplate"].spec
    assert [v.name for v in leader.volumes] == ["dshm", "compilation-cache"]
    script = leader.containers[0].args[0]
    assert "vllm serve gs://weights/llama-3.3-70b-instruct" in script and "--load-format=runai_streamer" in script


def test_vllm_hugging_face_token_is_only_a_secret_reference():
    cfg = load(
        with_serving(
            VLLM, loader="hugging-face", model="meta-llama/Llama-3.3-70B-Instruct", hfTokenSecret={"name": "hf"}
        )
    )
    assert cfg.serving.hf_token_secret.key == "token"
    from tpu_serving.backends.vllm.args import SecretKey
    from tpu_serving.backends.vllm.pods import environment

    env = environment(
        args_of(loader=WeightsLoader.HUGGING_FACE, weights_bucket=None, hf_token_secret=SecretKey("hf", "token"))
    )
    (token,) = [e for e in env if e.name == "HF_TOKEN"]
    assert token.value is None and token.value_from.secret_key_ref.name == "hf"
    assert "HF_HUB_OFFLINE" not in {e.name for e in env}


def test_vllm_single_host_slice_runs_without_ray():
    spec = leader_worker_set_spec(args_of(shape=catalog.slice_shape("ct6e-standard-8t", "2x4")))
    template = spec["leaderWorkerTemplate"]
    assert template["size"] == 1 and "leaderTemplate" not in template
    script = template["workerTemplate"].spec.containers[0].args[0]
    assert script.startswith("exec vllm serve") and "ray" not in script


def test_vllm_parallelism_must_use_the_slice_exactly():
    assert parallelism_problems("engine", VllmEngineSettings(), V5E16) == []
    assert (
        parallelism_problems("engine", VllmEngineSettings(tensor_parallel_size=4, pipeline_parallel_size=4), V5E16)
        == []
    )
    (problem,) = parallelism_problems("engine", VllmEngineSettings(pipeline_parallel_size=3), V5E16)
    assert problem.startswith("engine.pipeline_parallel_size: tensor 5 x pipeline 3 = 15 chips")  # Python's names
    assert "4 x 4" in problem
    from pydantic.alias_generators import to_camel

    (stack,) = parallelism_problems("engine", VllmEngineSettings(tensor_parallel_size=3), V5E16, to_camel)
    assert stack.startswith("engine.tensorParallelSize: tensor 3 x pipeline 1 = 3 chips")  # a stack file's keys


def test_vllm_extra_args_are_flags_the_library_does_not_own():
    assert extra_args_problem(["--enable-prefix-caching", "--max-num-seqs=256"]) == ""
    assert "each must be" in extra_args_problem(["enable-prefix-caching"])
    assert "set by the component" in extra_args_problem(["--port=9000"])
    assert {"--tensor-parallel-size", "--model", "--port"} <= LIBRARY_FLAGS


def test_vllm_component_refuses_inconsistent_arguments():
    from tpu_serving.backends.vllm import VllmServing
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        VllmServing("x", args_of(engine=VllmEngineSettings(tensor_parallel_size=3), weights_bucket=None))
    text = str(err.value)
    assert (
        "weights_bucket" in text and "engine.tensor_parallel_size: tensor 3" in text
    )  # Python names for Python callers


def test_vllm_service_is_not_named_like_the_leaderworkerset():
    """LWS creates the headless Service that gives the group's pods their DNS names, named after the
    LeaderWorkerSet, only when no Service of that name exists (lws v0.10.0 controller_utils.go)."""
    from tpu_serving.backends.vllm import VllmServing
    from tpu_serving.common.validation import ArgumentsError

    objects = kubernetes_objects(plan_of(STACK))
    (lws_obj,) = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    services = {o["metadata"]["name"] for o in objects if o["kind"] == "Service"}
    assert lws_obj["metadata"]["name"] not in services and "vllm-api" in services
    with pytest.raises(ArgumentsError) as err:
        VllmServing("x", args_of(name="serve", service_name="serve"))
    assert "service_name = 'serve'" in str(err.value) and "headless Service" in str(err.value)


# ------------------------------------------------------------------------- diffs


def test_vllm_diff_one_setting_changes_only_the_leaderworkerset():
    base = plan_of(STACK).as_json()
    head = plan_edited(STACK, serving=lambda s: s["engine"].update(maxModelLen=16384)).as_json()
    diff = diff_plans(STACK, base, head)
    assert diff.warnings == [] and not diff.added and not diff.removed
    (change,) = diff.changed
    assert change.type == LWS_TYPE
    assert {f[0].split(".")[-1] for f in change.fields} == {"args[0]"}
    assert any("--max-model-len=16384" in str(f[2]) for f in change.fields)


@pytest.mark.parametrize(
    ("image", "says"),
    [
        ("docker.io/vllm/vllm-tpu:v0.21.0", "is release v0.21.0, but the pods' flags and environment are built for"),
        ("docker.io/vllm/vllm-tpu@sha256:" + "a" * 64, "names no release (a digest alone)"),
        ("docker.io/vllm/vllm-tpu:latest", "uses the mutable tag `latest`, but the pods' flags"),
        ("docker.io/vllm/vllm-tpu", "has no tag, but the pods' flags"),
    ],
)
def test_vllm_an_image_of_another_release_is_refused_naming_the_key_and_the_pinned_release(image, says):
    pin = PINS["vllm-tpu"]
    with pytest.raises(ConfigError) as err:
        load(with_serving(VLLM, images={"vllm": image}))
    assert "serving.images.vllm" in str(err.value) and says in str(err.value)
    assert f"valid: an image tagged {pin.version}" in str(err.value)


@pytest.mark.parametrize(
    "image",
    [
        "us-docker.pkg.dev/my-project/mirror/vllm-tpu:{v}",  # a registry mirror of the pinned release
        "docker.io/vllm/vllm-tpu:{v}@sha256:" + "b" * 64,  # the release with its digest
    ],
)
def test_vllm_an_image_of_the_pinned_release_is_accepted_from_a_mirror_or_with_its_digest(image):
    image = image.format(v=PINS["vllm-tpu"].version)
    assert load(with_serving(VLLM, images={"vllm": image})).serving.images.vllm == image


def test_vllm_compilation_cache_refuses_an_age_rule_on_its_bucket():
    """The scratch bucket's age rule would delete the XLA compilation cache, written once and then only read."""

    def aged(buckets: list) -> None:
        next(b for b in buckets if b["purpose"] == "scratch")["scratchTtlDays"] = 30

    with pytest.raises(ConfigError) as err:
        plan_edited("vllm-llama33-70b-v5e16", buckets=aged)
    assert "the scratch bucket's scratchTtlDays = 30 would delete the XLA compilation cache" in str(err.value)
    lifecycle = [
        r.inputs.get("lifecycleRules")
        for r in plan_of("vllm-llama33-70b-v5e16").of_type("gcp:storage/bucket:Bucket")
        if r.inputs["labels"]["purpose"] == "scratch"
    ]
    assert lifecycle == [None]


def test_vllm_groups_pinned_to_the_existing_node_pools():
    """On an existing cluster every pod of a group takes only the stack's named pools (tpuSlices[].existingNodePools),
    never another tenant's pool of the same shape (GKE review G2); a created cluster's pools are all the stack's."""
    from tpu_serving_tools.preview.offline import kubernetes_objects

    def pools(stack: str) -> list[list[str] | None]:
        (lws,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "LeaderWorkerSet"]
        template = lws["spec"]["leaderWorkerTemplate"]
        found = []
        for pod in (template.get("leaderTemplate", template["workerTemplate"]), template["workerTemplate"]):
            affinity = pod["spec"].get("affinity", {}).get("nodeAffinity")
            if affinity is None:
                found.append(None)
                continue
            (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            (expr,) = term["matchExpressions"]
            assert (expr["key"], expr["operator"]) == ("cloud.google.com/gke-nodepool", "In")
            found.append(expr["values"])
        return found

    assert pools("vllm-llama33-70b-existing") == [["tpu-v5e16-a", "tpu-v5e16-b", "tpu-v5e16-spare"]] * 2
    assert pools("vllm-llama33-70b-v5e16") == [None, None]


def test_vllm_unknown_vllm_model_is_named():
    """vllm.settings.model_size: the message names the served model the library does not know."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["servedModelName"] = "acme/Secret-13B"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any('servedModelName "acme/Secret-13B" is not a model the library knows' in p for p in err.value.problems)


def test_vllm_hugging_face_token_comes_from_the_named_secret_key():
    """vllm.pods.environment (mutmut_29): HF_TOKEN reads the secret's key the settings name."""
    from tpu_serving.backends.vllm.args import SecretKey, WeightsLoader
    from tpu_serving.backends.vllm.pods import environment

    args = _vllm_args(
        loader=WeightsLoader.HUGGING_FACE,
        hf_token_secret=SecretKey(name="hf", key="token"),
    )
    (token,) = [e for e in environment(args) if e.name == "HF_TOKEN"]
    ref = token.value_from.secret_key_ref  # type: ignore[union-attr]
    assert (ref.name, ref.key) == ("hf", "token")  # type: ignore[union-attr]


# HTTP keep-alive of the servers a gateway's load balancer reaches (GKE review G3): vLLM closed idle connections
# after 5 s while the load balancer's proxies keep them 600 s, so a request sent on a connection the server had just
# closed failed with a 502.


VLLM_STACKS = (
    "vllm-llama33-70b-v5e16",
    "vllm-llama33-70b-existing",
    "vllm-llama31-405b-v6e16",
    "vllm-llama33-70b-disagg-v6e8x2",
)


def pod_templates(stack: str) -> list[dict]:
    out = []
    for o in kubernetes_objects(plan_of(stack)):
        if o["kind"] == "LeaderWorkerSet":
            specs = [o["spec"]]
        elif o["kind"] == "DisaggregatedSet":
            specs = [r["spec"] for r in o["spec"]["roles"]]
        else:
            continue
        for spec in specs:
            t = spec["leaderWorkerTemplate"]
            out += [t[k]["spec"] for k in ("leaderTemplate", "workerTemplate") if k in t]
    return out


def test_vllm_keepalive_outlasts_the_load_balancers_on_every_vllm_server():
    assert SERVER_KEEPALIVE_SECONDS > LB_BACKEND_KEEPALIVE_SECONDS == 600
    for stack in VLLM_STACKS:
        pods = pod_templates(stack)
        assert pods, stack
        for pod in pods:
            (engine,) = [c for c in pod["containers"] if c["name"].startswith("vllm")]
            env = {e["name"]: e.get("value") for e in engine.get("env", [])}
            assert int(env["VLLM_HTTP_TIMEOUT_KEEP_ALIVE"]) == SERVER_KEEPALIVE_SECONDS, stack


# VllmServing's registered outputs, held to the resources of the same plan they name.


@pytest.mark.parametrize("stack", STACKS)
def test_vllm_outputs_name_its_service_and_leader_pod(stack: str):
    plan = plan_of(stack)
    for vllm in _components(plan, "VllmServing"):
        out = vllm.registered_outputs or {}
        below = _descendants(plan, vllm)
        services = {r.inputs["metadata"]["name"]: r for r in below if r.type == "kubernetes:core/v1:Service"}
        assert out["service"] in services
        namespace = services[out["service"]].inputs["metadata"]["namespace"]
        assert out["portForward"].startswith(f"kubectl -n {namespace} port-forward svc/{out['service']} ")
        # The leader of group 0 is the pod `<lws>-0` (lws v0.10.0 pkg/controllers/leaderworkerset_controller.go
        # names the leader StatefulSet after the LWS; a StatefulSet's pods are `<set>-<ordinal>`).
        lws = [r.inputs["metadata"]["name"] for r in below if r.type.endswith(":LeaderWorkerSet")]
        assert out["leaderPod"] in {f"{name}-0" for name in lws}
