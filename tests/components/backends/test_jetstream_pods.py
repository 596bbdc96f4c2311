"""The JetStream + Pathways group's pod builders (tpu_serving.backends.jetstream.pods): MaxText's arguments, the
LeaderWorkerSet's spec, and what restarts a container, and so the whole group."""

from tests.components.backends.test_jetstream import serving_args
from tpu_serving.backends.jetstream.facts import HTTP_PORT, JAX_PORT
from tpu_serving.backends.jetstream.pods import leader_containers


def _container(name: str):
    return next(c for c in leader_containers(serving_args()) if c.name == name)


def test_jetstream_pods_jax_restarting_probes_reach_its_own_port():
    jax = _container("jax-tpu")
    # The probes that restart jax-tpu (and so recreate the group) never go through jetstream-http's port.
    for probe in (jax.startup_probe, jax.liveness_probe):
        assert probe.http_get is None
        assert probe.tcp_socket.port == JAX_PORT
    assert jax.liveness_probe.failure_threshold == 10 and jax.startup_probe.failure_threshold == 720
    # Readiness, which restarts nothing, stays on the serving path.
    assert jax.readiness_probe.http_get.port == HTTP_PORT
    # And the HTTP front restarts on nothing of its own: a hang takes the leader out of the Service only.
    http = _container("jetstream-http")
    assert http.liveness_probe is None and http.startup_probe is None
    assert http.readiness_probe.tcp_socket.port == HTTP_PORT


def test_pathways_builder_maxtext_args_order_and_omissions():
    from tpu_serving.backends.jetstream.pods import maxtext_args
    from tpu_serving.catalog import slice_shape

    v6e8, v5e16 = slice_shape("ct6e-standard-4t", "2x4"), slice_shape("ct5lp-hightpu-4t", "4x4")
    args = maxtext_args(serving_args().maxtext, "gs://b/ckpt", "interleaved", v6e8)
    assert args[:3] == ["MaxText/configs/base.yml", "model_name=m", "load_parameters_path=gs://b/ckpt"]
    assert "scan_layers=false" in args and not any(a.startswith(("quantization=", "inference_server=")) for a in args)
    # MaxText's disaggregated servers hard-code their slices (maxengine_config.py get_server_config).
    assert "inference_server=ExperimentalMaxtextDisaggregatedServer_8" in maxtext_args(
        serving_args().maxtext, "gs://b/ckpt", "disaggregated", v6e8
    )
    assert "inference_server=ExperimentalMaxtextDisaggregatedServer_16" in maxtext_args(
        serving_args().maxtext, "gs://b/ckpt", "disaggregated", v5e16
    )


def test_pathways_component_autoscaled_leaves_replicas_to_the_hpa():
    from tpu_serving.backends.jetstream.pods import leader_worker_set_spec

    assert "replicas" not in leader_worker_set_spec(serving_args(replicas=2, autoscaled=True))
    assert leader_worker_set_spec(serving_args(replicas=2))["replicas"] == 2
