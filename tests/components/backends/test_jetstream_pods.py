"""The JetStream + Pathways group's pod builders: what restarts a container, and so the whole group."""

from tests.test_components import serving_args
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
