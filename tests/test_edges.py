"""Edges the mutation sample of 2026-11-25 (make mutate SAMPLE=120 SEED=25) found untested: each test below
fails with the mutant it names in its docstring."""

from __future__ import annotations

import copy
import json

import pytest

from tests.fixtures.configs import SERVING, VLLM, load
from tpu_serving import catalog
from tpu_serving.config import ConfigError


def test_edges_dns_name_honours_its_limit():
    """naming.dns_name passes ``limit`` on (a GKE cluster name is at most 40 characters, a label 63)."""
    from tpu_serving.naming import NameError_, NameLimit, dns_name

    assert dns_name("a" * 41) == "a" * 41
    with pytest.raises(NameError_):
        dns_name("a" * 41, limit=NameLimit.GKE_CLUSTER)


def test_edges_kubeconfig_tells_how_to_install_the_auth_plugin():
    """cluster.kubeconfig: the exec entry's ``installHint`` (client.authentication.k8s.io/v1beta1 spells it so)."""
    from tpu_serving.cluster import kubeconfig

    exec_ = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))["users"][0]["user"]["exec"]
    assert exec_["installHint"].startswith("Install gke-gcloud-auth-plugin")


def test_edges_saxml_pins_name_the_newest_release_as_upstream_tags_it():
    """versions._saxml: the newest Saxml release is the tag v1.2.0, which the preview names."""
    from tpu_serving.versions import PINS

    assert {PINS[k].newest for k in ("sax-admin-server", "sax-model-server", "sax-http")} == {"v1.2.0"}


def test_edges_reserved_tpu_prices_are_per_chip_hour():
    """prices._tpu_prices: a reserved slice is priced per chip-hour, as the on-demand one."""
    from tpu_serving.capacity import Capacity
    from tpu_serving.prices import TPU_CHIP_HOUR

    assert {p.unit for (_, cap), p in TPU_CHIP_HOUR.items() if cap == Capacity.RESERVATION} == {"chip-hour"}


def test_edges_maxtext_float32_weights_are_fp32():
    """models.maxtext_precision: unquantized float32 weights take four bytes a parameter."""
    from tpu_serving.models import maxtext_precision

    assert maxtext_precision(None, "float32") == "fp32"
    assert maxtext_precision(None, "bfloat16") == "bf16"


def test_edges_long_values_are_cut_at_sixty_characters():
    """validation._shown: a value's repr over 60 characters is cut to 57 and ``...``."""
    from tpu_serving.validation import _shown

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
    from tpu_serving.backends.vllm.args import SecretKey, VllmServingArgs

    args = VllmServingArgs(
        namespace="ns",
        service_account="sa",
        shape=catalog.resolve_slice_name("v5litepod-16"),
        model="m",
        served_model_name="x",
        weights_bucket="b",
        hf_token_secret=SecretKey(name="hf", key="token"),
    )
    assert "hf_token_secret: only the hugging-face loader reads a token" in args.problems()
