"""deploy/kubernetes/ made playable by `podman kube play` (podman 4.3), changing only what podman
lacks or this machine cannot have, each change named here:

- podman plays Pods, Deployments, ConfigMaps, Secrets and PersistentVolumeClaims. A StatefulSet
  (redis, postgres, sandboxd) is played as a Deployment of the same pod template, its
  volumeClaimTemplates as claims of their own; Services, the Namespace, NetworkPolicies, the
  Ingress and the bucket's Job are left to a real cluster (``LEFT_TO_A_CLUSTER``).
- Services' names are what the pods dial (redis, postgres, sandboxd-0.sandboxd): with no
  Services, every pod gets them as hostAliases, each pod a fixed address on a network of its own.
- MinIO's image cannot be pulled here: snapshots stay on sandboxd's own volume (local store).
- Images by the names `make image` and scripts/build-service-images give them; the node's runsc
  from where this machine has it. podman publishes every containerPort on the host: each is
  published on 127.0.0.1 only, on a free port (web's on the one the test reads).
- podman 4.3 gives a pod's init containers the pod's restart policy: under a Deployment's
  "Always" web's migrations start again as they end, and podman, removing them, fails. A pod
  with init containers is played with "OnFailure" (Kubernetes allows only "Always" there).
- podman 4.3 keeps a played Secret as YAML but reads a secretKeyRef's Secret as JSON, and fails:
  the Secrets are made beforehand as podman secrets holding that JSON (``podman_secrets``).
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import json
import socket
from pathlib import Path
from typing import Any

import yaml

MANIFESTS = Path(__file__).resolve().parent.parent.parent / "deploy" / "kubernetes"
PLAYED = ("ConfigMap", "Secret", "PersistentVolumeClaim", "Deployment", "StatefulSet")
LEFT_TO_A_CLUSTER = ("Namespace", "Service", "NetworkPolicy", "Ingress", "Job")
NOT_HERE = {"minio"}
# podman 4.3 removes a pod's "once" init containers (Kubernetes' kind) as the pod starts, and fails
# when one still runs (web's migrations do): played as podman's "always" kind, run at every start.
INIT_TYPE = "io.podman.annotations.init.container.type"  # its image cannot be pulled here
IMAGES = {
    "ai-data-analyst": "localhost/ai-data-analyst:latest",
    "redis:7-alpine": "localhost/analyst-redis:7",
    "postgres:16": "localhost/analyst-postgres:15",
}
# The order pods are played in, and so the address each gets.
ORDER = ("redis", "postgres", "sandboxd", "web", "worker", "beat")
# What each pod is reached by, as the Services and the StatefulSet's headless names give it.
NAMES = {"redis": ["redis"], "postgres": ["postgres"], "sandboxd": ["sandboxd-0.sandboxd", "sandboxd"]}


def documents() -> list[dict[str, Any]]:
    found = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            found += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


def left_out() -> list[str]:
    """Every object podman does not play here, as ``Kind/name``."""
    return [
        f"{doc['kind']}/{doc['metadata']['name']}"
        for doc in documents()
        if doc["kind"] not in PLAYED or doc["metadata"]["name"] in NOT_HERE
    ]


def playable(*, subnet: str, web_port: int, runsc: str) -> tuple[str, list[str]]:
    """The YAML to play and the pods' addresses, in the order podman takes them (``--ip``)."""
    hosts = list(ipaddress.ip_network(subnet).hosts())
    address = {name: str(hosts[10 + index]) for index, name in enumerate(ORDER)}
    aliases = [{"ip": address[pod], "hostnames": names} for pod, names in NAMES.items()]
    config: list[dict[str, Any]] = []
    workloads: dict[str, dict[str, Any]] = {}
    for source in documents():
        kind, name = source["kind"], source["metadata"]["name"]
        if kind not in PLAYED or name in NOT_HERE:
            continue
        doc = copy.deepcopy(source)
        doc["metadata"].pop("namespace", None)
        if kind == "Secret":
            continue  # made with secrets(), below
        if kind == "ConfigMap":
            doc["data"].update(SANDBOXD_SNAPSHOT_STORE="local", ALLOWED_HOSTS="127.0.0.1,localhost")
        if kind in ("Deployment", "StatefulSet"):
            config += _as_deployment(doc)
            _adapt_pod(doc["spec"]["template"]["spec"], aliases=aliases, runsc=runsc)
            _publish(doc["spec"]["template"]["spec"], web_port if name == "web" else None)
            if doc["spec"]["template"]["spec"].get("initContainers"):
                doc["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
            workloads[name] = doc
        else:
            config.append(doc)
    played = config + [workloads[name] for name in ORDER]
    return yaml.safe_dump_all(played, sort_keys=False), [address[name] for name in ORDER]


def podman_secrets() -> dict[str, str]:
    """Each Secret's name and what podman 4.3's secretKeyRef reads: a JSON map of its keys to
    their base64 values."""
    made = {}
    for doc in documents():
        if doc["kind"] == "Secret":
            plain = doc.get("stringData", {})
            encoded = {key: base64.b64encode(value.encode()).decode() for key, value in plain.items()}
            made[doc["metadata"]["name"]] = json.dumps(doc.get("data", {}) | encoded)
    return made


def _as_deployment(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A StatefulSet becomes a Deployment of one pod; its claim templates, claims it names."""
    claims = []
    if doc["kind"] == "StatefulSet":
        spec = doc["spec"]
        doc["kind"] = "Deployment"
        spec.pop("serviceName", None)
        for template in spec.pop("volumeClaimTemplates", []):
            claim = f"{template['metadata']['name']}-{doc['metadata']['name']}-0"
            claims.append(
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim}}
                | {"spec": template["spec"]}
            )
            spec["template"]["spec"].setdefault("volumes", []).append(
                {"name": template["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim}}
            )
    doc["spec"]["replicas"] = 1
    return claims


def _adapt_pod(pod: dict[str, Any], *, aliases: list[dict[str, Any]], runsc: str) -> None:
    pod["hostAliases"] = aliases
    for container in pod.get("initContainers", []) + pod["containers"]:
        container["image"] = IMAGES.get(container["image"], container["image"])
    for volume in pod.get("volumes", []):
        if volume.get("hostPath", {}).get("path") == "/usr/local/bin/runsc":
            volume["hostPath"]["path"] = runsc


def _publish(pod: dict[str, Any], web_port: int | None) -> None:
    """podman 4.3 publishes every containerPort on the host, on that port of every address: each
    on 127.0.0.1 instead, web's on ``web_port`` and the others' on free ports."""
    for container in pod["containers"]:
        for exposed in container.get("ports", []):
            port = web_port if web_port and exposed["containerPort"] == 8000 else _free_port()
            exposed.update(hostPort=port, hostIP="127.0.0.1")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
