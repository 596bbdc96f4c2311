"""The route by which the API server reaches a controller's webhook in the e2e harness: a process listening on its
kwok pod's stand-in address (127.x; the pod's own IP is in 198.18.0.0/15), a Service whose ClusterIP is loopback,
the harness's forwarder from the ClusterIP port to the stand-in. A ValidatingWebhookConfiguration naming the Service
is called and its refusal reaches the client; without the forwarder (the planted break) the API server cannot call
it. The pods' IPs are their Service's endpoints. Marked ``e2e``."""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import threading
from collections.abc import Iterator

import pytest

from tests.conftest import require_toolchain
from tpu_serving_tools.e2e import addresses, nodes, pki
from tpu_serving_tools.e2e.controlplane import ControlPlane
from tpu_serving_tools.e2e.kube import ApiError, Obj, wait_for
from tpu_serving_tools.e2e.serviceproxy import Forwarder, target_port

pytestmark = pytest.mark.e2e

CONTAINER = {"name": "hook", "image": "example.invalid/hook:1", "ports": [{"name": "https", "containerPort": 8443}]}


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    require_toolchain()
    with ControlPlane(run_timeout=600) as plane:
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a"))
        yield plane


def webhook_pod(cp: ControlPlane, ns: str) -> tuple[Obj, Obj]:
    """A Deployment's pod (its IP) and the Service selecting it, in namespace ``ns``."""
    kube = cp.kube
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    template = {"metadata": {"labels": {"app": "hook"}}, "spec": {"containers": [CONTAINER]}}
    spec = {"replicas": 1, "selector": {"matchLabels": {"app": "hook"}}, "template": template}
    kube.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hook", "namespace": ns},
                 "spec": spec})  # fmt: skip
    service = kube.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook", "namespace": ns},
                           "spec": {"selector": {"app": "hook"}, "ports": [{"port": 443, "targetPort": "https"}]}})  # fmt: skip
    pod: Obj = wait_for(f"the pod of {ns}/hook with an IP", lambda: next(
        (p for p in kube.list("v1", "Pod", ns) if (p.get("status") or {}).get("podIP")), None), timeout=60)  # fmt: skip
    return pod, service


def serve_webhook(cp: ControlPlane, ip: str, ns: str) -> http.server.ThreadingHTTPServer:
    """An HTTPS admission webhook on ``ip``:8443 that refuses everything, naming the address it answered on."""
    pair = pki.issue(cp.pki.ca, cp.directory / "pki", f"hook-{ns}", common_name="hook", sans=(f"hook.{ns}.svc",),
                     server=True)  # fmt: skip

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status = {"message": f"refused by the webhook on {ip}", "code": 403}
            answer = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                      "response": {"uid": review["request"]["uid"], "allowed": False, "status": status}}  # fmt: skip
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer((ip, 8443), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pair.cert), str(pair.key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def register(cp: ControlPlane, ns: str) -> None:
    ca = base64.b64encode(cp.pki.ca.cert.read_bytes()).decode()
    hook = {
        "name": f"{ns}.e2e.example.com",
        "clientConfig": {
            "service": {"namespace": ns, "name": "hook", "port": 443, "path": "/validate"},
            "caBundle": ca,
        },
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    cp.kube.create({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                    "metadata": {"name": ns}, "webhooks": [hook]})  # fmt: skip


def create_config_map(cp: ControlPlane, ns: str) -> str:
    """The API server's refusal of a ConfigMap in ``ns`` (once the webhook configuration is in force)."""

    def attempt() -> str:
        try:
            cp.kube.create(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-", "namespace": ns}}
            )
        except ApiError as err:
            return err.message
        return ""

    message: str = wait_for(f"a ConfigMap in {ns} refused", attempt, timeout=30)
    return message


def test_e2e_webhook_on_a_pod_ip_is_called_through_its_service(cp: ControlPlane):
    pod, service = webhook_pod(cp, "hook")
    ip = cp.addresses.stand_in(pod["status"]["podIP"])
    server = serve_webhook(cp, ip, "hook")
    port = target_port(service["spec"]["ports"][0], [CONTAINER])
    forwarder = Forwarder((service["spec"]["clusterIP"], 443), lambda: [(ip, port)]).start()
    try:
        register(cp, "hook")
        message = create_config_map(cp, "hook")
    finally:
        forwarder.stop()
        server.shutdown()
        server.server_close()
    assert message == f'admission webhook "hook.e2e.example.com" denied the request: refused by the webhook on {ip}'


def test_e2e_planted_webhook_without_forwarder_cannot_be_called(cp: ControlPlane):
    pod, service = webhook_pod(cp, "hook-unforwarded")
    server = serve_webhook(cp, cp.addresses.stand_in(pod["status"]["podIP"]), "hook-unforwarded")
    try:
        register(cp, "hook-unforwarded")
        message = create_config_map(cp, "hook-unforwarded")
    finally:
        server.shutdown()
        server.server_close()
    assert message.startswith('Internal error occurred: failed calling webhook "hook-unforwarded.e2e.example.com"')
    assert f"{service['spec']['clusterIP']}:443" in message and "connection refused" in message


def test_e2e_endpoint_slices_hold_the_pod_ips(cp: ControlPlane):
    """Pod IPs are not loopback (an EndpointSlice may not hold one), so a Service's pods are its endpoints, which the
    Pulumi provider's Service await needs."""
    pod, _ = webhook_pod(cp, "hook-slices")
    ip = pod["status"]["podIP"]
    assert ip.startswith(addresses.POD_PREFIX)

    def addresses_of_slices() -> list[str]:
        slices = cp.kube.list("discovery.k8s.io/v1", "EndpointSlice", "hook-slices")
        return [a for s in slices for e in s.get("endpoints") or [] for a in e.get("addresses") or []]

    assert wait_for("the Service's EndpointSlice", addresses_of_slices, timeout=30) == [ip]
