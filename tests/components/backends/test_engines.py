"""Engine conformance (``make check``'s ``engines``): vLLM TPU containers against the image's release tables."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import disagg_multi_host_plan
from tpu_serving_tools.conformance import category, table
from tpu_serving_tools.conformance import vllm as conformance
from tpu_serving_tools.runtime.planview import PlanView

VLLM_STACKS = ["vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16"]


def _view(stack: str) -> PlanView:
    return PlanView(copy.deepcopy(plan_of(stack).as_json()))


def _containers(view: PlanView) -> list[dict]:
    (lws,) = [r["inputs"] for r in view.resources if r["type"].endswith(":LeaderWorkerSet")]
    t = lws["spec"]["leaderWorkerTemplate"]
    return [c for role in ("leaderTemplate", "workerTemplate") for c in t[role]["spec"]["containers"]]


@pytest.mark.parametrize("stack", VLLM_STACKS)
def test_engines_every_vllm_container_sets_only_what_its_release_reads(stack):
    result = conformance.findings(_view(stack))
    assert len(result) == 2  # leader and worker
    assert [f for f in result if not f.ok] == []
    assert category.check(_view(stack)).failures() == []


def test_engines_a_variable_nothing_reads_fails():
    view = _view(VLLM_STACKS[0])
    for c in _containers(view):
        c["env"].append({"name": "TPU_BACKEND_TYPE", "value": "jax"})
        c["env"].append({"name": "RAY_num_heartbeats_timeout", "value": "300000"})
    reasons = [f.reason for f in category.check(view).failures()]
    assert len(reasons) == 2 and all("env TPU_BACKEND_TYPE: read by nothing" in r for r in reasons)
    assert all("env RAY_num_heartbeats_timeout: read by nothing" in r for r in reasons)


def test_engines_a_misspelt_serve_flag_and_a_foreign_image_fail():
    view = _view(VLLM_STACKS[0])
    leader = _containers(view)[0]
    leader["args"][0] = leader["args"][0].replace("--max-model-len=", "--max-model-length=")
    leader["image"] = "docker.io/vllm/vllm-tpu:v0.32.0"
    (failure,) = category.check(view).failures()
    assert "vllm serve --max-model-length: no such flag in vllm 0.29.0" in failure.reason
    assert "is not vllm/vllm-tpu:v0.29.0" in failure.reason


@pytest.mark.parametrize("removed", ["--max-num-partial-prefills=2", "--calculate-kv-scales"])
def test_engines_an_extra_arg_vllm_removed_since_the_last_pin_fails(removed):
    """A stack's ``engine.extraArgs`` with a flag vLLM had at 0.21.0 (the previous pin) and dropped by 0.29.0:
    the preview accepts it (the library does not own it), the engine conformance refuses it, as ``vllm serve``
    would at start."""
    from tests.fixtures.configs import plan_edited

    flag = removed.split("=", 1)[0]
    assert flag in table.load("vllm-0.21.0").flags and flag not in conformance.tables().vllm.flags

    def add(serving: dict) -> None:
        serving["engine"]["extraArgs"].append(removed)

    view = PlanView(plan_edited(VLLM_STACKS[1], serving=add).as_json())
    failures = category.check(view).failures()
    assert [f.subject for f in failures] == [
        "engine vllm-llama405b/vllm leader vllm-leader"
    ]  # the worker runs no vllm serve
    assert failures[0].reason == f"vllm serve {flag}: no such flag in vllm {conformance.PINS.vllm_tpu}"


def test_engines_ray_bootstrap_waits_the_startup_window_with_a_flag_the_script_takes():
    """multi-node-serving.sh gives up after ray_init_timeout (300 s by default); the group may take its whole
    startup window to come up, so leader and worker wait that long."""
    plan = plan_of(VLLM_STACKS[0])
    leader, worker = _containers(PlanView(plan.as_json()))
    (lws,) = [r for r in plan.resources if r.type.endswith(":LeaderWorkerSet")]
    window = lws.inputs["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["startupProbe"]
    seconds = window["periodSeconds"] * window["failureThreshold"]
    assert f"--ray_init_timeout={seconds}" in leader["args"][0] and f"--ray_init_timeout={seconds}" in worker["args"][0]
    assert "--ray_init_timeout" in conformance.RAY_BOOTSTRAP_FLAGS


@pytest.mark.parametrize(
    "name", ["vllm-0.29.0", "tpu-inference-0.29.0", "ray-2.60.0", "vllm-0.21.0", "tpu-inference-0.21.0"]
)
def test_engines_tables_carry_their_provenance(name):
    t = table.load(name)
    assert t.source["artefact"].startswith("PyPI ") and len(t.source["sha256"]) == 64
    assert t.source["by"] == "tools/conformance/extract_vllm.py" and t.source["extracted"]
    assert t.flags or t.env


def test_engines_vllm_tables_name_the_front_end_file_they_read():
    """vLLM moved the front end's flags (``FrontendArgs``) from ``entrypoints/openai/`` to ``entrypoints/launchers/``
    between vllm-tpu 0.27.0 and 0.29.0; the extractor reads whichever the wheel has and the table says which."""
    from tpu_serving_tools.conformance.extract_vllm import CLI_ARGS, cli_args_files

    old, new = table.load("vllm-0.21.0"), table.load("vllm-0.29.0")
    assert "vllm/entrypoints/openai/cli_args.py" in old.source["files"].split(", ")
    assert "vllm/entrypoints/launchers/cli_args.py" in new.source["files"].split(", ")
    assert {"--port", "--allowed-origins", "--api-key"} <= new.flags  # FrontendArgs fields, read from launchers/
    assert cli_args_files(["vllm/envs.py", *CLI_ARGS[1:]]) == list(CLI_ARGS[1:])
    assert cli_args_files(["vllm/envs.py", *CLI_ARGS]) == list(CLI_ARGS)
    with pytest.raises(ValueError, match="front end's flags"):
        cli_args_files(["vllm/envs.py"])


def test_engines_versions_that_must_agree_do_agree():
    """The image tag, the vllm-tpu wheel, the tpu-inference release it requires and the tables are one chain;
    the library's default image is that image."""
    from tpu_serving.backends.vllm.facts import DEFAULT_IMAGE

    pins = conformance.PINS
    assert pins.image.endswith(f":v{pins.vllm_tpu}")
    t = conformance.tables()
    assert (t.vllm.version, t.tpu_inference.version, t.ray.version) == (pins.vllm_tpu, pins.tpu_inference, pins.ray)
    assert DEFAULT_IMAGE.endswith(pins.image), (DEFAULT_IMAGE, pins.image)


def _epp(view: PlanView) -> dict:
    (dep,) = [
        r["inputs"] for r in view.resources if r["inputs"].get("kind") == "Deployment" and "epp" in str(r["inputs"])
    ]
    return dep["spec"]["template"]["spec"]["containers"][0]


def _epp_config(view: PlanView) -> dict:
    (cm,) = [
        r["inputs"]
        for r in view.resources
        if r["inputs"].get("kind") == "ConfigMap" and r["inputs"]["metadata"]["name"].endswith("-epp")
    ]
    return cm["data"]


def test_engines_the_endpoint_picker_passes_only_its_release_flags():
    from tpu_serving.traffic.gateway import EPP_IMAGE
    from tpu_serving_tools.conformance import epp

    assert EPP_IMAGE == epp.EPP_IMAGE  # the library's pin is the release the table describes
    view = _view("vllm-llama33-70b-v5e16")
    (finding,) = epp.findings(view)
    assert finding.ok and "9 flags, each the EPP's; its configuration the v0.10.0 format" in finding.reason
    # gateway-api-inference-extension v1.3.1's EPP had it; llm-d-router v0.10.0 reads metrics per the config file
    _epp(view)["args"].append("--model-server-metrics-port=8000")
    (finding,) = epp.findings(view)
    assert not finding.ok and finding.reason == "--model-server-metrics-port: no such flag in the EPP v0.10.0"
    t = table.load("epp-v0.10.0")
    assert "llm-d/llm-d-router@v0.10.0" in t.source["artefact"] and "pkg/epp/server/options.go" in t.source["artefact"]
    assert {"--zap-encoder", "--v", "--pool-group", "--grpc-health-port"} <= t.flags  # zap, logging and options.go


def test_engines_the_endpoint_picker_image_is_the_release_through_a_mirror_too():
    from tpu_serving_tools.conformance import epp

    mirror = "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0"
    assert epp.is_release_image(mirror) and epp.is_release_image(mirror + "@sha256:" + "a" * 64)
    assert epp.is_release_image(epp.EPP_IMAGE)
    assert not epp.is_release_image(mirror.replace("v0.10.0", "v0.9.0"))
    assert not epp.is_release_image("ghcr.io/llm-d/other-endpoint-picker:v0.10.0")


def test_engines_the_endpoint_picker_refuses_its_deprecated_metric_flags_and_the_old_image():
    from tpu_serving_tools.conformance import epp

    view = _view("vllm-llama33-70b-v5e16")
    # in the release's flag set, but Options.Validate refuses them when set (options.go deprecatedMetricFlags)
    _epp(view)["args"].append("--total-queued-requests-metric=vllm:num_requests_waiting")
    (finding,) = epp.findings(view)
    assert finding.reason == "--total-queued-requests-metric: refused by the EPP v0.10.0 when set"
    view = _view("vllm-llama33-70b-v5e16")
    _epp(view)["image"] = "registry.k8s.io/gateway-api-inference-extension/epp:v1.3.1"
    (finding,) = epp.findings(view)
    assert not finding.ok and "is not ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0" in finding.reason


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda t: t.replace("llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1"),
            "config apiVersion inference.networking.x-k8s.io/v1alpha1: deprecated in the EPP v0.10.0, "
            "use llm-d.ai/v1alpha1",
        ),
        (
            lambda t: t.replace("type: queue-scorer", "type: queue-depth-scorer"),
            "plugin type queue-depth-scorer: not registered in the EPP v0.10.0",
        ),
        (
            lambda t: t.replace("type: queue-scorer", "type: session-affinity-scorer"),
            "plugin type session-affinity-scorer: alpha, refused without --allow-experimental-plugins",
        ),
        (lambda t: t + "scheduling: {}\n", "config key scheduling: no such key in the EPP v0.10.0"),
    ],
)
def test_engines_the_endpoint_picker_configuration_is_the_release_format(edit, problem):
    from tpu_serving_tools.conformance import epp

    view = _view("vllm-llama33-70b-v5e16")
    data = _epp_config(view)
    data["default-plugins.yaml"] = edit(data["default-plugins.yaml"])
    (finding,) = epp.findings(view)
    assert not finding.ok and finding.reason == problem


def test_engines_the_endpoint_picker_config_file_must_be_mounted():
    from tpu_serving_tools.conformance import epp

    view = _view("vllm-llama33-70b-v5e16")
    data = _epp_config(view)
    data["plugins.yaml"] = data.pop("default-plugins.yaml")
    (finding,) = epp.findings(view)
    assert finding.reason == "config file /config/default-plugins.yaml: no mounted ConfigMap of the plan holds it"
    # an alpha plugin passes with the flag that admits them
    view = _view("vllm-llama33-70b-v5e16")
    data = _epp_config(view)
    data["default-plugins.yaml"] = data["default-plugins.yaml"].replace("queue-scorer", "session-affinity-scorer")
    _epp(view)["args"].append("--allow-experimental-plugins")
    (finding,) = epp.findings(view)
    assert finding.ok, finding.reason


def test_engines_the_endpoint_picker_table_extraction_reads_the_go_sources():
    """The extractor's parsers, on excerpts written as llm-d-router v0.10.0 writes them (options.go, logging
    options, endpointpickerconfig_types.go, configloader.go)."""
    from tpu_serving_tools.conformance import extract_epp as x

    options = """
var deprecatedMetricFlags = map[string]struct{}{
	"total-queued-requests-metric":     {},
	"cache-info-metric":                {},
}

func (opts *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&opts.GRPCPort, "grpc-port", opts.GRPCPort, "gRPC port used for communicating with Envoy proxy.")
	fs.StringVar(&opts.PoolGroup, "pool-group", opts.PoolGroup,
		"Kubernetes resource group")
	fs.IntSliceVar(&opts.EndpointTargetPorts, "endpoint-target-ports", opts.EndpointTargetPorts, "ports")
	fs.IntVarP(&opts.LogVerbosity, "v", "v", opts.LogVerbosity, "verbosity")
}
"""
    assert x.flags(options) == {"--grpc-port", "--pool-group", "--endpoint-target-ports", "--v"}
    assert x.rejected_flags(options) == {"--total-queued-requests-metric", "--cache-info-metric"}
    types = """
type EndpointPickerConfig struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	FeatureGates FeatureGates `json:"featureGates,omitempty"`
	Plugins []PluginSpec `json:"plugins"`
}

type PluginSpec struct {
	Name string `json:"name"`
}
"""
    assert x.config_keys(types) == {"apiVersion", "kind", "featureGates", "plugins"}
    register = (
        'const GroupName = "llm-d.ai"\nvar GroupVersion = v1.GroupVersion{Group: GroupName, Version: "v1alpha1"}\n'
    )
    loader = 'deprecatedSchemeGroupVersion = schema.GroupVersion{Group: "inference.networking.x-k8s.io", Version: "v1alpha1"}'
    assert x.api_versions(register, loader) == ("llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1")
    t = table.load("epp-v0.10.0")
    assert t.source["by"] == "tools/conformance/extract_epp.py" and "controller-runtime@v0.23.3" in t.source["artefact"]
    assert {"queue-scorer", "metrics-data-source"} <= set(t.choices["plugins.type"])
    assert "session-affinity-scorer" in t.choices["plugins.type alpha"]


def test_engines_saxml_containers_use_their_release_flags_and_environment():
    from tpu_serving_tools.conformance import saxml

    view = _view("saxml-175b-v5e32x2")
    found = saxml.findings(view)
    assert len(found) == 3 and all(f.ok for f in found), [f.reason for f in found]
    (js,) = [r["inputs"] for r in view.resources if r["inputs"].get("kind") == "JobSet"]
    server = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    server["args"].append("--sax_cells=/sax/x")
    server["env"].append({"name": "SAX_CELL_ROOT", "value": "x"})
    (bad,) = [f for f in saxml.findings(view) if not f.ok]
    assert "--sax_cells: no such flag in saxml v1.1.0" in bad.reason and "env SAX_CELL_ROOT" in bad.reason
    assert table.load("saxml-v1.1.0").source["artefact"].startswith("google/saxml@v1.1.0 (")


def test_engines_gcsfuse_mount_options_are_options_of_the_release():
    from tpu_serving_tools.conformance import gcsfuse

    view = _view("vllm-llama33-70b-v5e16")
    found = gcsfuse.findings(view)
    assert len(found) == 2 and all(f.ok for f in found)  # weights and compilation cache
    t = table.load(f"gcsfuse-{gcsfuse.GCSFUSE_TAG}")
    assert gcsfuse.option_problem("metadata-cache:ttl-secs:-1", t) == ""
    assert gcsfuse.option_problem("only-dir=x", t) == ""
    assert gcsfuse.option_problem("file-cache:max-size:-1", t) == "file-cache:max-size: no such config entry"
    assert gcsfuse.option_problem("implicit-dir", t) == "implicit-dir: no such flag"
    lws = next(r["inputs"] for r in view.resources if r["inputs"].get("kind") == "LeaderWorkerSet")
    weights = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["volumes"][1]["csi"]["volumeAttributes"]
    weights["mountOptions"] += ",metadata-cache:ttl:-1"
    assert any("metadata-cache:ttl: no such config entry" in f.reason for f in gcsfuse.findings(view) if not f.ok)


def test_engines_flags_the_library_refuses_in_extra_args_exist_in_the_pinned_release():
    """Every flag vLLM's extraArgs refuse by name is one `vllm serve` of the pinned release registers (its
    conformance table, read from the wheels): a refusal names a real flag, not a guess."""
    from tpu_serving.backends.vllm.facts import ENGINE_FLAGS, PARALLEL_FLAGS_ALLOWED, SERVING_FLAGS, TOPOLOGY_FLAGS

    flags = conformance.tables().vllm.flags
    named = set(ENGINE_FLAGS) | SERVING_FLAGS | TOPOLOGY_FLAGS | PARALLEL_FLAGS_ALLOWED
    assert named and not named - flags, sorted(named - flags)


def test_engines_connector_inits_tells_a_connector_that_skips_its_base_initializer():
    """The extractor's reading of a KV connector module: a ``*Connector*`` class whose ``__init__`` runs its base's
    (``super().__init__`` or ``Base.__init__``) and one whose ``__init__`` does not (tpu-inference 0.29.0's
    ``TPUConnectorHMA``); a class without an ``__init__`` of its own is left out."""
    from tpu_serving_tools.conformance.extract_vllm import connector_inits

    source = (
        "class AConnector(Base):\n    def __init__(self, c):\n        super().__init__(c)\n"
        "class BConnector(AConnector):\n    def __init__(self, c):\n        self.x = None\n"
        "class CConnector(Base):\n    def __init__(self, c):\n        Base.__init__(self, c)\n"
        "class DConnector(AConnector):\n    pass\n"
    )
    assert connector_inits(source, "m.py") == {
        "connector AConnector": "base initialized: m.py l.2",
        "connector BConnector": "base not initialized: m.py l.5",
        "connector CConnector": "base initialized: m.py l.8",
    }


DISAGG_STACK = "vllm-llama33-70b-disagg-v6e8x2"


def _replace_connector(view: PlanView, old: str, new: str) -> int:
    """Every vLLM container's ``--kv-transfer-config`` of ``view`` naming ``new`` for ``old``; how many changed."""
    changed = 0
    for _, c in conformance._containers(view):
        args = c.get("args") or c.get("command") or []
        for i, arg in enumerate(args):
            if f'"kv_connector":"{old}"' in str(arg):
                args[i] = str(arg).replace(f'"kv_connector":"{old}"', f'"kv_connector":"{new}"')
                changed += 1
    return changed


def test_engines_the_kv_connector_is_one_the_pinned_tpu_inference_starts():
    """Each role's ``--kv-transfer-config`` names a connector whose ``__init__`` runs ``KVConnectorBase_V1``'s in the
    pinned tpu-inference (read from the wheel: ``connector TPUConnector`` of tpu-inference-0.29.0.json); the HMA
    connector of 0.27.0 to 0.29.0, which skips it and fails EngineCore at start, or one the table does not know,
    fails the check."""
    view = _view(DISAGG_STACK)
    result = conformance.findings(view)
    assert len(result) == 2 and [f for f in result if not f.ok] == []  # prefill and decode: one pod per group
    # roles over two VMs: prefill and decode, leader and worker
    multi_host = conformance.findings(PlanView(copy.deepcopy(disagg_multi_host_plan().as_json())))
    assert len(multi_host) == 4 and [f for f in multi_host if not f.ok] == []
    assert conformance.tables().tpu_inference.facts["connector TPUConnector"].startswith("base initialized")
    for new, why in (("TPUConnectorHMA", "base not initialized: tpu_inference/distributed/tpu_connector_hma.py"),
                     ("NoSuchConnector", "no such connector in the table's files")):  # fmt: skip
        bad = _view(DISAGG_STACK)
        assert _replace_connector(bad, "TPUConnector", new) >= 2  # the leaders of both roles pass it
        reasons = [f.reason for f in conformance.findings(bad) if not f.ok]
        assert reasons and all(
            f"kv_connector {new}: does not start in tpu-inference 0.29.0 ({why}" in r for r in reasons
        )


def _serving_namespace(plan: dict) -> str:
    kinds = ("LeaderWorkerSet", "DisaggregatedSet", "JobSet")
    return next(r["inputs"]["metadata"]["namespace"] for r in plan["resources"] if r["inputs"].get("kind") in kinds)


@pytest.mark.parametrize(
    "stack",
    ["vllm-llama33-70b-v6e8", "vllm-llama33-70b-disagg-v6e8x2", "llama31-405b-v6e16", "saxml-175b-v5e32x2"],
)
def test_engines_same_named_servings_of_two_namespaces_are_each_checked(stack):
    """Library review 4, m4: two default-named VllmServing in two namespaces shared one subject, and the count
    dropped by one. Every engine subject (vLLM, the endpoint picker, JetStream, Saxml, GCS FUSE volumes) names its
    namespace, so the twin's findings are as many as the first's, each under its own namespace."""
    from tests.fixtures.twin import twin_namespace

    plan = plan_of(stack).as_json()
    ns = _serving_namespace(plan)
    one = [f.subject for f in category.check(PlanView(plan)).findings]
    both = [f.subject for f in category.check(PlanView(twin_namespace(plan, ns, "second"))).findings]
    assert one and all(s.startswith(f"engine {ns}/") for s in one), one
    assert sorted(both) == sorted(one + [s.replace(f"engine {ns}/", "engine second/", 1) for s in one])


def test_engines_vllm_metrics_the_extractor_reads_the_loggers_constructors_names_and_kinds():
    from tpu_serving_tools.conformance.extract_vllm import logger_metrics

    source = """
class PrometheusStatLogger:
    _gauge_cls = Gauge

    def __init__(self):
        g = self._gauge_cls(name="vllm:num_requests_running", documentation="x")
        c = self._counter_cls(name="vllm:generation_tokens", documentation="x")
        h = Histogram(name="vllm:e2e_request_latency_seconds", documentation="x", buckets=[1])
        other = self._gauge_cls(name="not_vllm", documentation="x")
        doc = make(name="vllm:not_a_metric")

    def log_metrics_info(self, type):
        name = None
        if type == "cache_config":
            name = "vllm:cache_config_info"
        self._gauge_cls(name=name, documentation="x")
"""
    assert logger_metrics(source) == {
        "vllm:num_requests_running": "gauge",
        "vllm:generation_tokens": "counter",
        "vllm:e2e_request_latency_seconds": "histogram",
        "vllm:cache_config_info": "gauge",
    }


def test_engines_vllm_metrics_the_table_holds_the_wheels_logger_metrics_with_its_provenance():
    t = table.load("vllm-0.29.0")
    assert "vllm/v1/metrics/loggers.py" in t.source["files"].split(", ")
    assert t.source["sha256"] == "82a17acc30f67725e41d0676c0c86b51aedd0f97d4d4da2caad82750e5e2e4f1"
    assert len(t.metrics) == 39
    assert {t.metrics[m] for m in ("vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")} == {"gauge"}


def test_engines_vllm_metrics_the_librarys_vllm_metrics_are_the_wheels():
    """Every metric the library names (VllmMetric, the signals, the kinds table) is one vLLM 0.29.0 registers, of the
    kind the library says; but three names of older releases the kinds table keeps so as to refuse them as no gauge,
    and the TPU connector's transfer time, which tpu-inference registers (not vLLM's logger)."""
    from tpu_serving.backends.vllm.disagg_backend import TRANSFER_TIME
    from tpu_serving.backends.vllm.facts import METRIC_KINDS, SIGNALS, VllmMetric

    t = table.load("vllm-0.29.0")
    assert {m.value: t.metrics.get(m.value) for m in VllmMetric if m.value not in t.metrics} == {}
    signals = {v.removesuffix("_total") for v in vars(SIGNALS).values() if isinstance(v, str) and v.startswith("vllm:")}
    assert signals <= set(t.metrics), signals - set(t.metrics)
    older = {"vllm:time_per_output_token_seconds", "vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits"}
    assert {m for m in METRIC_KINDS if m not in t.metrics} == older
    assert {m: str(k) for m, k in METRIC_KINDS.items() if m in t.metrics} == {
        m: t.metrics[m] for m in METRIC_KINDS if m in t.metrics
    }
    assert TRANSFER_TIME not in t.metrics
