"""Edges the mutation sample of 2026-11-25 (make mutate SAMPLE=120 SEED=25) found untested: each test below
fails with the mutant it names in its docstring."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

import pytest

from tests.fixtures.configs import SERVING, VLLM, load
from tpu_serving import catalog
from tpu_serving.common.settings import described
from tpu_serving.config import ConfigError


def test_edges_dns_name_honours_its_limit():
    """naming.dns_name passes ``limit`` on (a GKE cluster name is at most 40 characters, a label 63)."""
    from tpu_serving.common.naming import NameError_, NameLimit, dns_name

    assert dns_name("a" * 41) == "a" * 41
    with pytest.raises(NameError_):
        dns_name("a" * 41, limit=NameLimit.GKE_CLUSTER)


def test_edges_kubeconfig_tells_how_to_install_the_auth_plugin():
    """cluster.kubeconfig: the exec entry's ``installHint`` (client.authentication.k8s.io/v1beta1 spells it so)."""
    from tpu_serving.platform.cluster import kubeconfig

    exec_ = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))["users"][0]["user"]["exec"]
    assert exec_["installHint"].startswith("Install gke-gcloud-auth-plugin")


def test_edges_saxml_pins_name_the_newest_release_as_upstream_tags_it():
    """versions._saxml: the newest Saxml release is the tag v1.2.0, which the preview names."""
    from tpu_serving.catalog.versions import PINS

    assert {PINS[k].newest for k in ("sax-admin-server", "sax-model-server", "sax-http")} == {"v1.2.0"}


def test_edges_reserved_tpu_prices_are_per_chip_hour():
    """prices._tpu_prices: a reserved slice is priced per chip-hour, as the on-demand one."""
    from tpu_serving.catalog.capacity import Capacity
    from tpu_serving.catalog.prices import TPU_CHIP_HOUR

    assert {p.unit for (_, cap), p in TPU_CHIP_HOUR.items() if cap == Capacity.RESERVATION} == {"chip-hour"}


def test_edges_maxtext_float32_weights_are_fp32():
    """models.maxtext_precision: unquantized float32 weights take four bytes a parameter."""
    from tpu_serving.catalog.models import maxtext_precision

    assert maxtext_precision(None, "float32") == "fp32"
    assert maxtext_precision(None, "bfloat16") == "bf16"


def test_edges_long_values_are_cut_at_sixty_characters():
    """validation._shown: a value's repr over 60 characters is cut to 57 and ``...``."""
    from tpu_serving.common.validation import _shown

    assert _shown("x" * 58) == repr("x" * 58)  # 60 characters with the quotes
    assert _shown("x" * 59) == repr("x" * 59)[:57] + "..."


def test_edges_unknown_backend_is_named():
    """config.errors.describe: the unknown backend's name comes from the error's context."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["backend"] = "vlm"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any(p.startswith('tpu-serving:serving.backend = "vlm": unknown serving backend') for p in err.value.problems)


def test_edges_jetstream_parallelism_message_gives_the_product():
    """jetstream.checks._parallelism_problems: the message names each ici degree against the slice's chips."""
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:serving"]["maxtext"].update(
        iciFsdpParallelism=2, iciAutoregressiveParallelism=1, iciTensorParallelism=4
    )
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any("ici parallelism 2 x 1 x 4 does not match the 16 chips" in p for p in err.value.problems)


def test_edges_saxml_reads_the_minor_of_a_gke_version():
    """saxml.checks._minor: ``1.27.2-gke.2100`` is GKE 1.27 (the part before ``-``)."""
    from tpu_serving.backends.saxml.checks import _minor

    assert _minor("1.27.2-gke.2100") == (1, 27)
    assert _minor("1.28-gke.1") == (1, 28)


def test_edges_unknown_vllm_model_is_named():
    """vllm.settings.model_size: the message names the served model the library does not know."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["servedModelName"] = "acme/Secret-13B"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any('servedModelName "acme/Secret-13B" is not a model the library knows' in p for p in err.value.problems)


def test_edges_vllm_token_without_hugging_face_loader_is_refused_in_python():
    """vllm.args.VllmServingArgs.problems: a token secret with another loader, in Python's spelling."""
    from tpu_serving.backends.vllm.args import SecretKey

    args = _vllm_args(
        hf_token_secret=SecretKey(name="hf", key="token"),
    )
    assert "hf_token_secret: only the hugging-face loader reads a token" in args.problems()


def _vllm_args(**changes: object):
    """Valid vLLM serving arguments for a v5e-16 slice, with ``changes``."""
    from tpu_serving.backends.vllm.args import VllmServingArgs
    from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision

    base: dict[str, object] = dict(
        namespace="ns",
        service_account="sa",
        shape=catalog.resolve_slice_name("v5litepod-16"),
        model="m",
        served_model_name="x",
        model_size=ModelSize(8, WeightPrecision.BF16, Attention(layers=32, kv_heads=8, head_dim=128)),  # "x": unknown
        weights_bucket="b",
    )
    return VllmServingArgs(**{**base, **changes})  # type: ignore[arg-type]


# Survivors of the second sample (make mutate SAMPLE=100 SEED=26, at b9dcd64).


@dataclass(frozen=True)
class _Item:
    size: int = described("Size.", default=1, ge=1)


@dataclass(frozen=True)
class _Holder:
    items: tuple[_Item, ...] = described("Items.", default=())


def test_edges_settings_tuple_items_become_their_dataclass():
    """settings.to_settings (mutmut_17): a tuple of settings dataclasses comes back as those dataclasses, not as the
    stack file's models."""
    from tpu_serving.common.settings import settings_model, to_settings

    model = settings_model(_Holder, "HolderConfig").model_validate({"items": [{"size": 2}, {}]})
    assert to_settings(model, _Holder) == _Holder(items=(_Item(2), _Item(1)))


def test_edges_component_names_itself_and_the_expected_class():
    """identity.WorkloadIdentity (mutmut_9) and validation._fields_of (mutmut_11): a value that is neither the
    arguments' class nor a mapping is refused in the component's and the class's own names."""
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.tenancy.identity import WorkloadIdentity

    with pytest.raises(ArgumentsError) as err:
        WorkloadIdentity("wi", 5)  # type: ignore[arg-type]
    text = str(err.value)
    assert text.startswith("invalid arguments of WorkloadIdentity 'wi': 1 problem")
    assert "must be a WorkloadIdentityArgs or a mapping of its fields" in text


def test_edges_declared_checks_hold_for_python_arguments():
    """validation._dataclass (mutmut_16): a field's declared ``check`` runs on a component's arguments too
    (here the vLLM engine's extra arguments, as the stack file's serving.engine.extraArgs)."""
    import dataclasses

    from tpu_serving.backends.vllm.args import VllmEngineSettings, VllmServingArgs
    from tpu_serving.common.validation import ArgumentsError, check_arguments

    args = _vllm_args()
    check_arguments("VllmServing", args, VllmServingArgs)
    bad = dataclasses.replace(args, engine=VllmEngineSettings(extra_args=("-x",)))
    with pytest.raises(ArgumentsError) as err:
        check_arguments("VllmServing", bad, VllmServingArgs)
    assert "engine.extra_args: [0]: each must be `--flag`" in str(err.value) and "-x" not in str(err.value)


def test_edges_inference_pool_version_gate_names_the_version():
    """config.checks.gateway_problems (mutmut_28): the refused minMasterVersion is quoted as the stack gives it."""
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:cluster"]["minMasterVersion"] = "1.30.1-gke.1"
    cfg["tpu-serving:gateway"] = {"inferencePool": True}
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any(
        p.startswith('tpu-serving:cluster.minMasterVersion = "1.30.1-gke.1": gateway.inferencePool needs GKE')
        for p in err.value.problems
    ), err.value.problems


def test_edges_saxml_privileged_always_and_never():
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


def test_edges_vllm_hugging_face_token_comes_from_the_named_secret_key():
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


def test_edges_saxml_examples_are_the_seeds_http_calls(seeds):
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


def test_edges_pathways_batch_head_adds_the_namespace_default_container():
    """pathways_job.checks._head_fit_problems (mutmut_11): the batch head also holds the user's container, which
    the namespace's LimitRange sizes (its defaults, read from a previewed plan)."""
    import re

    from tests.conftest import plan_of
    from tests.fixtures.configs import with_serving
    from tpu_serving_tools.preview.offline import kubernetes_objects

    def need(**serving: object) -> tuple[float, float]:
        with pytest.raises(ConfigError) as err:
            load(with_serving(headPool={"machineType": "e2-small"}, **serving))
        (p,) = [p for p in err.value.problems if "headPool.machineType" in p]
        m = re.search(r"the head needs ([\d.]+) CPU and ([\d.]+) GiB", p)
        assert m, p
        return float(m.group(1)), float(m.group(2))

    (limit_range,) = [o for o in kubernetes_objects(plan_of("pathwaysjob-batch-v6e16")) if o["kind"] == "LimitRange"]
    (default,) = [lim["defaultRequest"] for lim in limit_range["spec"]["limits"] if lim["type"] == "Container"]
    assert (default["cpu"], default["memory"]) == ("250m", "512Mi")
    interactive = need()
    batch = need(workload="batch", container={"image": "python:3.11", "command": ["python", "-c", "1"]})
    assert batch[0] - interactive[0] == pytest.approx(0.25)
    assert batch[1] - interactive[1] == pytest.approx(0.5, abs=0.06)
