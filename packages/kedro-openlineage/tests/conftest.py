"""Fixtures: a real Headwater server built from this repository, a fresh Kedro project, and `kedro run`."""

from __future__ import annotations

import json
import re
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from kedro_project import write_project

# Great Expectations reports usage to its service unless told not to; tests talk only to loopback.
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

REPO = Path(__file__).resolve().parents[3]
SERVER_MAIN = REPO / "packages" / "server" / "dist" / "cli" / "main.js"
KEDRO = Path(sys.executable).parent / "kedro"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Headwater:
    """A `headwater serve` process on a free loopback port with its own embedded store."""

    def __init__(self, data_dir: Path, port: int | None = None, strict: bool = False) -> None:
        self.strict = strict
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        self.process: subprocess.Popen[str] | None = None

    def start(self, timeout_s: float = 60.0) -> "Headwater":
        self.process = subprocess.Popen(
            ["node", str(SERVER_MAIN), "serve", "--port", str(self.port), "--data-dir", str(self.data_dir),
             *(["--strict"] if self.strict else [])],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"headwater serve exited: {self.process.stdout.read()}")  # type: ignore[union-attr]
            try:
                self.get("/api/v1/namespaces")
                return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"headwater serve did not answer on {self.url} within {timeout_s}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def get(self, path: str, **query: Any) -> Any:
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
            return json.loads(response.read())

    def runs(self, namespace: str, job: str) -> list[dict[str, Any]]:
        quoted = urllib.parse.quote(job, safe="")
        return self.get(f"/api/v1/namespaces/{namespace}/jobs/{quoted}/runs")["runs"]

    def run_state(self, namespace: str, job: str) -> str:
        runs = self.runs(namespace, job)
        assert len(runs) >= 1, f"no runs of {namespace}/{job} in Headwater"
        return runs[0]["state"]

    def wait_for_run_state(self, namespace: str, job: str, state: str, timeout_s: float = 10.0) -> None:
        # HTTP delivery is asynchronous but ends before `kedro run` exits; the server commits in small batches.
        deadline = time.monotonic() + timeout_s
        seen = None
        while time.monotonic() < deadline:
            try:
                seen = self.run_state(namespace, job)
            except (AssertionError, urllib.error.HTTPError):
                seen = None
            if seen == state:
                return
            time.sleep(0.2)
        raise AssertionError(f"{namespace}/{job}: latest run is {seen}, expected {state}")

    def downstream(self, namespace: str, dataset: str) -> set[str]:
        """The node ids reachable downstream of a dataset in GET /api/v1/lineage."""
        graph = self.get("/api/v1/lineage", nodeId=f"dataset:{namespace}:{dataset}", depth=50)["graph"]
        edges = {node["id"]: [edge["destination"] for edge in node["outEdges"]] for node in graph}
        start = f"dataset:{namespace}:{dataset}"
        seen, todo = {start}, [start]
        while todo:
            for nxt in edges.get(todo.pop(), []):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen


@pytest.fixture(scope="session")
def headwater(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Headwater]:
    if not SERVER_MAIN.exists():
        message = f"{SERVER_MAIN} is missing: run `npm run build` at the repository root (ci/run-tests.sh does)."
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = Headwater(tmp_path_factory.mktemp("headwater")).start()
    yield server
    server.stop()


@dataclass
class KedroResult:
    returncode: int
    output: str
    seconds: float
    project: Path

    def events(self) -> list[dict[str, Any]]:
        """The file sink, one event a line."""
        path = self.project / ".viz" / "lineage_events.json"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class Project:
    def __init__(self, root: Path, namespace: str) -> None:
        self.root = root
        self.namespace = namespace

    def run(self, *args: str, url: str | None = None, timeout_s: float = 180, **env: str) -> KedroResult:
        environment = {
            **os.environ,
            "KEDRO_DISABLE_TELEMETRY": "true",
            "DO_NOT_TRACK": "1",
            "OPENLINEAGE_NAMESPACE": self.namespace,
            "COLUMNS": "200",
            **env,
        }
        environment.pop("OPENLINEAGE_URL", None)
        if url:
            environment["OPENLINEAGE_URL"] = url
        started = time.monotonic()
        done = subprocess.run([str(KEDRO), "run", *args], cwd=self.root, env=environment, capture_output=True,
                              text=True, timeout=timeout_s, check=False)
        return KedroResult(done.returncode, done.stdout + done.stderr, time.monotonic() - started, self.root)

    def write_config(self, text: str, env: str = "local") -> None:
        (self.root / "conf" / env / "openlineage.yml").write_text(text, encoding="utf-8")

    @property
    def spool(self) -> Path:
        return self.root / ".viz" / "openlineage_spool.ndjson"


@pytest.fixture
def project(tmp_path: Path, request: pytest.FixtureRequest) -> Project:
    root = write_project(tmp_path / "lineage-demo")
    # A git checkout, so that the source code location facet has something to say.
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-q", "-m", "demo"], check=True)
    namespace = "kedro-" + re.sub(r"[^A-Za-z0-9.-]+", "-", request.node.name).strip("-")
    return Project(root, namespace)


class HangingServer:
    """Accepts connections and never answers: a backend that is up but stuck."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        self.socket.settimeout(0.2)
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except (TimeoutError, OSError):
                continue
            self._held.append(connection)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for connection in self._held:
            connection.close()
        self.socket.close()


@pytest.fixture
def hanging_server() -> Iterator[HangingServer]:
    server = HangingServer()
    yield server
    server.close()


@pytest.fixture
def strict_headwater(tmp_path: Path) -> Iterator[Headwater]:
    """A Headwater in strict mode: it rejects what the official OpenLineage schemas reject."""
    if not SERVER_MAIN.exists():
        pytest.fail(f"{SERVER_MAIN} is missing: run `npm run build` at the repository root.")
    server = Headwater(tmp_path / "headwater-strict", strict=True).start()
    yield server
    server.stop()
    shutil.rmtree(server.data_dir, ignore_errors=True)



def _missing(message: str) -> None:
    """A test needs what is not installed: in CI a failure (CI must run it), elsewhere a skip saying so."""
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI=true but {message}")
    pytest.skip(message)


def great_expectations() -> Any:
    """GX Core, which ci/run-tests.sh installs (the `test` extra)."""
    try:
        import great_expectations as gx
    except ImportError:
        _missing("great_expectations is not installed: pip install 'great_expectations>=1,<2' (ci/run-tests.sh "
                 "does) to run the Great Expectations tests")
    return gx


def pyspark() -> Any:
    """PySpark, which ci/run-tests.sh installs (the `test` extra), and the Java 17 it needs."""
    try:
        import pyspark as spark
    except ImportError:
        _missing("pyspark is not installed: pip install 'pyspark>=4,<5' (ci/run-tests.sh does) to run the Spark test")
    if shutil.which("java") is None:
        _missing("java is missing: Spark needs Java 17 (apt-get install -y openjdk-17-jre-headless)")
    return spark
