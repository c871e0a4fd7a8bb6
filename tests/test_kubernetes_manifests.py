"""deploy/kubernetes holds together: every document is a valid object of the Kubernetes API
(strict: an unknown field fails), the kustomization lists every file, the app's containers are
given only variables config/settings.py reads, the Secret holds placeholders, sandboxd runs
every kernel under gVisor on the sandbox node pool, every workload has probes and resource
limits, and Services and NetworkPolicies select pods that exist, on ports they open. (No
cluster here: the files are read, not applied.)"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from tests.test_compose_file import settings_reads

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.35.0"
APP_IMAGE = "ai-data-analyst"  # the project's Dockerfile's image, as docker-compose.yml names it
NAMESPACE = "analyst"
# Read by boto3 in sandboxd's S3 snapshot store, not by settings.py.
BOTO3_READS = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
PROVIDER_ROUTER = ROOT / "analyst" / "turns" / "agent" / "providers" / "router.py"
PLACEHOLDER = re.compile(r"(^$)|change-me")
WORKLOADS = ("Deployment", "StatefulSet")
# README's figure for one idle pooled sandbox (158 MiB under bubblewrap, 187 MiB under gVisor).
IDLE_SANDBOX_BYTES = 160 << 20


def documents() -> list[tuple[str, dict]]:
    found = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            found += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


DOCUMENTS = documents()


def objects(kind: str) -> list[dict]:
    return [doc for _, doc in DOCUMENTS if doc["kind"] == kind]


def named(kind: str, name: str) -> dict:
    (found,) = [doc for doc in objects(kind) if doc["metadata"]["name"] == name]
    return found


def pod_templates() -> Iterator[tuple[str, dict]]:
    """Every pod template: (the workload's name, its template), Jobs included."""
    for doc in objects("Deployment") + objects("StatefulSet") + objects("Job"):
        yield doc["metadata"]["name"], doc["spec"]["template"]


def containers(template: dict, init: bool = True) -> list[dict]:
    spec = template["spec"]
    return spec["containers"] + (spec.get("initContainers", []) if init else [])


def app_containers() -> Iterator[tuple[str, dict]]:
    for name, template in pod_templates():
        for container in containers(template):
            if container["image"].split(":")[0] == APP_IMAGE:
                yield f"{name}/{container['name']}", container


def provider_reads() -> set[str]:
    """The providers' keys and base URLs, which the model router reads from the environment."""
    tree = ast.parse(PROVIDER_ROUTER.read_text())
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[A-Z]+_(API_KEY|BASE_URL)", node.value)
    }


def config() -> dict[str, str]:
    return named("ConfigMap", "analyst-config")["data"]


def environment(container: dict) -> dict[str, str | None]:
    """The variables a container gets (ConfigMap values, None for a Secret's), env over envFrom."""
    env: dict[str, str | None] = {}
    for source in container.get("envFrom", []):
        assert set(source) == {"configMapRef"}, "secrets go by name through env, not envFrom"
        env.update(named("ConfigMap", source["configMapRef"]["name"])["data"])
    for item in container.get("env", []):
        env[item["name"]] = item.get("value")
    return env


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def pods_selected(selector: dict[str, str]) -> list[dict]:
    return [template for _, template in pod_templates() if selects(selector, template["metadata"]["labels"])]


def ports_of(templates: list[dict]) -> set[int | str]:
    ports: set[int | str] = set()
    for template in templates:
        for container in containers(template, init=False):
            for port in container.get("ports", []):
                ports |= {port["containerPort"], port.get("name", port["containerPort"])}
    return ports


def sandboxd() -> dict:
    return named("StatefulSet", "sandboxd")["spec"]["template"]


@pytest.mark.parametrize(
    ("path", "document"), DOCUMENTS, ids=[f"{p}:{d['kind']}/{d['metadata']['name']}" for p, d in DOCUMENTS]
)
def test_each_document_is_a_valid_kubernetes_object(path, document):
    try:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        pytest.fail(f"{path}: {document['kind']} {document['metadata']['name']}: {exc.message} at {exc.path}")


def test_the_validation_refuses_an_unknown_field():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}, "spec": {"portz": []}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(service, KUBERNETES_VERSION, strict=True)


def test_the_kustomization_lists_every_file():
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    files = {path.name for path in MANIFESTS.glob("*.y*ml")} - {"kustomization.yaml"}
    assert sorted(kustomization["resources"]) == sorted(files)
    assert kustomization["namespace"] == NAMESPACE
    assert [image["name"] for image in kustomization["images"]] == [APP_IMAGE]


@pytest.mark.skipif(not shutil.which("kubectl"), reason="kubectl is not installed")
def test_kustomize_builds_it_with_the_image_named_once():
    built = subprocess.run(
        ["kubectl", "kustomize", str(MANIFESTS)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    images = [
        c["image"]
        for d in yaml.safe_load_all(built)
        if d["kind"] in (*WORKLOADS, "Job")
        for c in containers(d["spec"]["template"])
    ]
    assert APP_IMAGE not in images, "every app container's image is set by the kustomization"


def test_every_object_is_in_the_namespace():
    for path, document in DOCUMENTS:
        if document["kind"] != "Namespace":
            assert document["metadata"].get("namespace") == NAMESPACE, (path, document["metadata"]["name"])
    assert [doc["metadata"]["name"] for doc in objects("Namespace")] == [NAMESPACE]


def test_the_app_containers_are_the_projects_image():
    names = {name for name, _ in app_containers()}
    assert names == {"web/migrate", "web/web", "worker/worker", "beat/beat", "sandboxd/sandboxd"}


def test_every_variable_passed_is_one_the_settings_read():
    reads = settings_reads() | provider_reads() | BOTO3_READS
    unknown = set(config()) - reads
    assert not unknown, f"the ConfigMap sets {sorted(unknown)}, which config/settings.py never reads"
    for name, container in app_containers():
        unknown = set(environment(container)) - reads
        assert not unknown, f"{name} is given {sorted(unknown)}, which config/settings.py never reads"


@pytest.mark.parametrize(
    ("container", "needs"),
    [
        ("web/web", {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SANDBOXD_URL", "SANDBOXD_TOKEN"}),
        ("web/migrate", {"SECRET_KEY", "DATABASE_URL"}),
        ("worker/worker", {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SANDBOXD_URL", "SANDBOXD_TOKEN"}),
        ("beat/beat", {"SECRET_KEY", "DATABASE_URL", "REDIS_URL"}),
        ("sandboxd/sandboxd", {"SECRET_KEY", "SANDBOXD_URL", "SANDBOXD_TOKEN", *BOTO3_READS}),
    ],
)
def test_each_container_is_given_what_it_needs(container, needs):
    env = environment(dict(app_containers())[container])
    assert not needs - set(env), f"{container} lacks {sorted(needs - set(env))}"


def test_only_sandboxd_gets_the_snapshot_stores_credentials():
    for name, container in app_containers():
        if name != "sandboxd/sandboxd":
            assert not BOTO3_READS & set(environment(container)), name


def test_every_secret_holds_placeholders_only():
    assert objects("Secret")
    for secret in objects("Secret"):
        assert "data" not in secret, "base64 data hides what it holds: stringData only"
        for key, value in secret["stringData"].items():
            assert PLACEHOLDER.search(value), f"{secret['metadata']['name']}.{key} is not a placeholder"


def test_every_secret_a_container_reads_exists():
    secrets = {doc["metadata"]["name"]: doc["stringData"] for doc in objects("Secret")}
    for name, template in pod_templates():
        for container in containers(template):
            for item in container.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in secrets[ref["name"]], (name, item["name"])


def test_every_kernel_runs_under_gvisor_on_the_sandbox_pool():
    template = sandboxd()
    spec, (container,) = template["spec"], template["spec"]["containers"]
    env = environment(container)
    assert env["SANDBOXD_DRIVER"] == "gvisor", "each kernel its own gVisor sandbox"
    # Nested gVisor does not start, nor bubblewrap's namespaces inside it: the pod is not in one.
    assert spec.get("runtimeClassName") is None
    mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in spec["volumes"]}
    assert volumes[mounts["/usr/local/bin/runsc"]]["hostPath"]["type"] == "File", "the node's runsc"
    (label,) = spec["nodeSelector"].items()
    assert {"key": label[0], "operator": "Equal", "value": label[1], "effect": "NoSchedule"} in spec[
        "tolerations"
    ], "the pool is tainted for sandboxes: only sandboxd tolerates it"
    for name, other in pod_templates():
        if name != "sandboxd":
            assert label[0] not in other["spec"].get("nodeSelector", {}), name
            assert not other["spec"].get("tolerations"), name
    assert not spec["automountServiceAccountToken"], "no API token within reach of a kernel"


def test_sandboxd_runs_privileged_and_nothing_else_does():
    for name, template in pod_templates():
        for container in containers(template):
            privileged = container.get("securityContext", {}).get("privileged", False)
            assert privileged == (name == "sandboxd"), f"{name}/{container['name']}"


@pytest.mark.parametrize("kind", WORKLOADS)
def test_every_workload_has_probes_and_resource_limits(kind):
    served = [service["spec"]["selector"] for service in objects("Service")]
    for workload in objects(kind):
        template = workload["spec"]["template"]
        behind_a_service = any(selects(s, template["metadata"]["labels"]) for s in served)
        for container in containers(template):
            where = f"{workload['metadata']['name']}/{container['name']}"
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(bound, {})), f"{where} has no {bound}"
            if container in template["spec"].get("initContainers", []):
                continue
            assert "livenessProbe" in container, f"{where} has no liveness probe"
            if behind_a_service:
                assert "readinessProbe" in container, f"{where} is served without a readiness probe"


def probe_paths(container: dict) -> set[str]:
    return {
        container[probe]["httpGet"]["path"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe")
        if "httpGet" in container.get(probe, {})
    }


def test_each_probe_asks_its_own_process():
    workloads = {name: template for name, template in pod_templates()}
    (web,) = workloads["web"]["spec"]["containers"]
    assert probe_paths(web) == {"/livez"}
    allowed = config()["ALLOWED_HOSTS"].split(",")
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        headers = {h["name"]: h["value"] for h in web[probe]["httpGet"].get("httpHeaders", [])}
        assert headers.get("Host") in allowed, f"web's {probe} sends a host Django refuses"
    (sandboxd_container,) = workloads["sandboxd"]["spec"]["containers"]
    assert probe_paths(sandboxd_container) == {"/health"}
    (worker,) = workloads["worker"]["spec"]["containers"]
    ping = " ".join(worker["livenessProbe"]["exec"]["command"])
    assert "inspect ping" in ping and '-d "celery@$HOSTNAME"' in ping, "this pod's worker, not any"


def test_sandboxd_is_sized_for_its_sandboxes():
    env = environment(sandboxd()["spec"]["containers"][0])
    kernels = int(env["SANDBOXD_MAX_SANDBOXES"]) + int(env["SANDBOXD_POOL_MAX"])
    resources = sandboxd()["spec"]["containers"][0]["resources"]
    request, limit = (quantity(resources[bound]["memory"]) for bound in ("requests", "limits"))
    assert request >= kernels * IDLE_SANDBOX_BYTES, f"{kernels} idle sandboxes need {kernels * 160} MiB"
    assert limit >= request + quantity(env["SANDBOXD_MEMORY_LIMIT"]), "room for one sandbox at its limit"


def quantity(value: str) -> int:
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    number, unit = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", value).groups()
    return int(float(number) * units.get(unit, 1))


def test_web_and_worker_talk_to_the_one_sandboxd_pod():
    statefulset = named("StatefulSet", "sandboxd")
    assert statefulset["spec"]["replicas"] == 1, "placing sessions across sandboxd pods is not built"
    service = named("Service", statefulset["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None", "headless: each pod has a name of its own"
    url = urlsplit(config()["SANDBOXD_URL"])
    assert url.hostname == f"sandboxd-0.{service['metadata']['name']}"
    assert url.port == service["spec"]["ports"][0]["port"]
    # sandboxd listens on its own SANDBOXD_URL's host: every address of its pod, the same port.
    own = urlsplit(environment(sandboxd()["spec"]["containers"][0])["SANDBOXD_URL"])
    assert (own.hostname, own.port) == ("0.0.0.0", url.port)
    assert url.port in ports_of([sandboxd()])


def test_the_addresses_name_the_services_that_serve_them():
    services = {service["metadata"]["name"]: service for service in objects("Service")}
    secrets = named("Secret", "analyst-secrets")["stringData"]
    database = urlsplit(secrets["DATABASE_URL"])
    postgres = {
        e["name"]: e
        for e in named("StatefulSet", "postgres")["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert database.username == postgres["POSTGRES_USER"]["value"]
    assert database.path[1:] == postgres["POSTGRES_DB"]["value"]
    assert database.password == secrets[postgres["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"]]
    for url in (secrets["DATABASE_URL"], config()["REDIS_URL"], config()["SANDBOXD_S3_ENDPOINT_URL"]):
        parts = urlsplit(url)
        assert parts.port in [p["port"] for p in services[parts.hostname]["spec"]["ports"]], url


def test_redis_keeps_an_append_only_file_on_its_volume():
    statefulset = named("StatefulSet", "redis")
    (container,) = statefulset["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    claims = {claim["metadata"]["name"] for claim in statefulset["spec"]["volumeClaimTemplates"]}
    assert {m["name"] for m in container["volumeMounts"] if m["mountPath"] == "/data"} <= claims
    assert "/data" in {m["mountPath"] for m in container["volumeMounts"]}


def test_web_and_worker_share_the_media_volume():
    claim = named("PersistentVolumeClaim", "media")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"], "pods on several nodes mount it"
    media_root = config()["MEDIA_ROOT"]
    for name in ("web", "worker"):
        spec = named("Deployment", name)["spec"]["template"]["spec"]
        claims = {
            v["name"]: v["persistentVolumeClaim"]["claimName"]
            for v in spec["volumes"]
            if "persistentVolumeClaim" in v
        }
        mounts = {m["mountPath"]: m["name"] for m in spec["containers"][0]["volumeMounts"]}
        assert claims[mounts[media_root]] == "media", name


@pytest.mark.parametrize("service", objects("Service"), ids=lambda s: s["metadata"]["name"])
def test_each_service_selects_pods_on_ports_they_open(service):
    pods = pods_selected(service["spec"]["selector"])
    assert pods, f"Service {service['metadata']['name']} selects no pod"
    for port in service["spec"]["ports"]:
        assert port["targetPort"] in ports_of(pods), f"no selected pod opens {port['targetPort']}"


@pytest.mark.parametrize("policy", objects("NetworkPolicy"), ids=lambda p: p["metadata"]["name"])
def test_each_network_policy_selects_pods_on_ports_they_open(policy):
    spec = policy["spec"]
    targets = pods_selected(spec["podSelector"]["matchLabels"])
    assert targets, f"NetworkPolicy {policy['metadata']['name']} selects no pod"
    for rule in spec.get("ingress", []):
        for peer in rule.get("from", []):
            assert pods_selected(peer["podSelector"]["matchLabels"]), f"no pod is {peer}"
        for port in rule.get("ports", []):
            assert port["port"] in ports_of(targets), f"{policy['metadata']['name']}: nothing opens {port}"
    for rule in spec.get("egress", []):
        for peer in rule.get("to", []):
            if "namespaceSelector" in peer:
                continue  # another namespace's pods (DNS)
            peers = pods_selected(peer["podSelector"]["matchLabels"])
            assert peers, f"no pod is {peer}"
            for port in rule.get("ports", []):
                assert port["port"] in ports_of(peers), f"{policy['metadata']['name']}: nothing opens {port}"


def peer_components(rules: list[dict], side: str) -> set[str]:
    return {
        peer["podSelector"]["matchLabels"].get("app.kubernetes.io/component", "")
        for rule in rules
        for peer in rule.get(side, [])
        if "namespaceSelector" not in peer
    }


def test_only_web_and_worker_reach_sandboxd_and_it_reaches_only_the_store_and_dns():
    policies = objects("NetworkPolicy")
    (policy,) = [p for p in policies if sandboxd() in pods_selected(p["spec"]["podSelector"]["matchLabels"])]
    spec = policy["spec"]
    assert set(spec["policyTypes"]) == {"Ingress", "Egress"}
    assert all(rule.get("from") for rule in spec["ingress"]), "a rule without from admits every pod"
    assert peer_components(spec["ingress"], "from") == {"web", "worker"}
    assert all(rule.get("to") for rule in spec["egress"]), "a rule without to lets it reach anything"
    assert peer_components(spec["egress"], "to") == {"minio"}
    outside = [peer for rule in spec["egress"] for peer in rule["to"] if "namespaceSelector" in peer]
    assert outside == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]
    (dns_rule,) = [rule for rule in spec["egress"] if rule["to"][0].get("namespaceSelector")]
    assert {port["port"] for port in dns_rule["ports"]} == {53}
