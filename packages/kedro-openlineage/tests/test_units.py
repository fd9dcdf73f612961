"""The pieces on their own: settings, naming, schema inference and the emitter against a real local HTTP server."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pytest

from conftest import free_port
from kedro_openlineage.config import ConfigError, Settings, settings_from
from kedro_openlineage.emitter import Emitter
from kedro_openlineage.naming import dataset_name, is_parameter, storage_name
from kedro_openlineage.observe import describe, passthrough_columns
from kedro_openlineage.tracker import run_uuid, runner_name


def test_variables_win_over_the_file_and_the_client_transport_block_is_read() -> None:
    file = {"transport": {"type": "http", "url": "http://file:5000", "timeout": 3, "auth": {"apiKey": "from-file"}},
            "namespace": "from-file", "shutdown_timeout": 4}
    settings = settings_from(file, env={})
    assert (settings.url, settings.timeout_s, settings.api_key, settings.namespace, settings.shutdown_timeout_s) == (
        "http://file:5000", 3.0, "from-file", "from-file", 4.0)
    settings = settings_from(file, env={"OPENLINEAGE_URL": "http://env:5000", "OPENLINEAGE_API_KEY": "k",
                                        "OPENLINEAGE_NAMESPACE": "env-ns"})
    assert (settings.url, settings.api_key, settings.namespace) == ("http://env:5000", "k", "env-ns")
    assert settings_from({}, env={}) == Settings()
    assert settings_from({"file": False}, env={}).file_path is None
    assert settings_from({}, env={"OPENLINEAGE_DISABLED": "true"}).disabled is True


@pytest.mark.parametrize(("config", "message"), [
    ({"urll": "http://x"}, "unknown key(s) urll"),
    ({"timeout": "soon"}, "timeout must be a number of seconds"),
    ({"timeout": 0}, "more than 0"),
    ({"transport": {"type": "kafka"}}, "transport.type 'kafka' is not supported"),
    ({"url": "localhost:5000"}, "must start with http:// or https://"),
])
def test_bad_settings_are_named(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings_from(config, env={})


class FakeDataset:
    """Stands in for a file-backed catalog entry: the attributes kedro-datasets sets."""

    def __init__(self, protocol: str, filepath: str, **options: Any) -> None:
        self._protocol, self._filepath, self._storage_options = protocol, filepath, options


@pytest.mark.parametrize(("protocol", "filepath", "options", "expected"), [
    ("file", "data/a.csv", {}, ("file", "/project/data/a.csv")),
    ("file", "/abs/b.parquet", {}, ("file", "/abs/b.parquet")),
    ("s3", "bucket/raw/c.csv", {}, ("s3://bucket", "raw/c.csv")),
    ("gcs", "bucket/d.parquet", {}, ("gs://bucket", "d.parquet")),
    ("abfs", "container/e/f.csv", {"account_name": "acct"}, ("abfss://container@acct.dfs.core.windows.net", "e/f.csv")),
])
def test_storage_names_follow_the_naming_spec(protocol, filepath, options, expected) -> None:
    found = storage_name(FakeDataset(protocol, filepath, **options), "/project")
    assert (found.namespace, found.name) == expected


def test_an_abfs_path_without_an_account_has_no_storage_name_and_memory_has_none() -> None:
    assert storage_name(FakeDataset("abfs", "container/x.csv"), "/p") is None
    assert storage_name(object(), "/p") is None


def test_transcoding_and_parameters() -> None:
    assert dataset_name("x@pandas") == dataset_name("x@spark") == "x"
    assert is_parameter("params:a.b") and is_parameter("parameters") and not is_parameter("paramsx")


def test_run_ids_are_stable_uuids_per_kedro_run_and_node() -> None:
    assert run_uuid("2026-12-01T10.00.00.000Z") == run_uuid("2026-12-01T10.00.00.000Z")
    assert run_uuid("2026-12-01T10.00.00.000Z") != run_uuid("2026-12-01T10.00.00.001Z")
    assert run_uuid("r", "a") != run_uuid("r", "b") != run_uuid("r")
    assert runner_name("<kedro.runner.thread_runner.ThreadRunner object at 0x1>") == "ThreadRunner"


def test_passthrough_columns_match_name_and_type() -> None:
    left = describe(pd.DataFrame({"id": [1, 2], "name": ["a", "b"]}))
    right = describe(pd.DataFrame({"id": [1], "score": [0.5]}))
    out = describe(pd.DataFrame({"id": [1], "name": ["a"], "score": ["0.5"], "new": [1]}))
    assert out["rows"] == 1
    # score changed type (float -> str): not a passthrough; new has no source.
    assert passthrough_columns({"left": left, "right": right}, {"out": out}) == {
        "out": {"id": ["left", "right"], "name": ["left"]}}
    assert describe([1, 2]) is None


class Recorder:
    """A real HTTP server on loopback that records what it receives and answers a chosen status."""

    def __init__(self, port: int | None = None, status: int = 201) -> None:
        self.events: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = status
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                recorder.events.append(json.loads(body))
                recorder.headers.append(dict(self.headers))
                self.send_response(recorder.status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port or 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


def event(n: int) -> dict[str, Any]:
    return {"eventType": "START", "eventTime": "2026-12-01T10:00:00Z", "n": n, "producer": "p", "schemaURL": "s",
            "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}}


def test_the_emitter_sends_writes_the_file_and_authenticates(tmp_path: Path, recorder: Recorder) -> None:
    emitter = Emitter(Settings(url=recorder.url, api_key="secret"), tmp_path)
    for n in range(5):
        emitter.emit(event(n))
    emitter.close()
    assert [e["n"] for e in recorder.events] == [0, 1, 2, 3, 4]
    assert {h["Authorization"] for h in recorder.headers} == {"Bearer secret"}
    lines = (tmp_path / ".viz/lineage_events.json").read_text().splitlines()
    assert [json.loads(line)["n"] for line in lines] == [0, 1, 2, 3, 4]
    assert emitter.stats["sent"] == 5 and not (tmp_path / ".viz/openlineage_spool.ndjson").exists()


def test_a_rejecting_server_spools_and_a_later_emitter_replays_in_order(tmp_path: Path) -> None:
    port = free_port()
    rejecting = Recorder(port, status=400)
    try:
        first = Emitter(Settings(url=rejecting.url), tmp_path)
        for n in range(3):
            first.emit(event(n))
        first.close()
    finally:
        rejecting.close()
    # Only the first attempt reached the server; the sink was then marked down and the rest went straight to the spool.
    assert len(rejecting.events) == 1
    assert [json.loads(line)["n"] for line in (tmp_path / ".viz/openlineage_spool.ndjson").read_text().splitlines()] == [0, 1, 2]

    accepting = Recorder(port)
    try:
        second = Emitter(Settings(url=accepting.url), tmp_path)
        second.emit(event(3))
        second.close()
    finally:
        accepting.close()
    assert [e["n"] for e in accepting.events] == [0, 1, 2, 3]
    assert second.stats["replayed"] == 3
    assert not (tmp_path / ".viz/openlineage_spool.ndjson").exists()
    # The file sink holds the last run only.
    assert [json.loads(line)["n"] for line in (tmp_path / ".viz/lineage_events.json").read_text().splitlines()] == [3]


def test_close_is_bounded_when_the_server_never_answers(tmp_path: Path, hanging_server) -> None:
    emitter = Emitter(Settings(url=hanging_server.url, timeout_s=5, shutdown_timeout_s=0.5), tmp_path)
    for n in range(4):
        emitter.emit(event(n))
    started = time.monotonic()
    emitter.close()
    assert time.monotonic() - started < 1.5
    spooled = [json.loads(line)["n"] for line in (tmp_path / ".viz/openlineage_spool.ndjson").read_text().splitlines()]
    # The event in flight counts as undelivered: it is spooled too (it may also arrive; servers deduplicate).
    assert spooled == [0, 1, 2, 3]
    lines = (tmp_path / ".viz/lineage_events.json").read_text().splitlines()
    assert sorted(json.loads(line)["n"] for line in lines) == [0, 1, 2, 3]


def test_events_of_one_run_arrive_in_order_while_runs_go_in_parallel(tmp_path: Path, recorder: Recorder) -> None:
    emitter = Emitter(Settings(url=recorder.url, concurrency=4), tmp_path)
    for n in range(60):
        emitter.emit({**event(n), "run": {"runId": f"run-{n % 5}"}})
    emitter.close()
    assert sorted(e["n"] for e in recorder.events) == list(range(60))
    for run in range(5):
        arrived = [e["n"] for e in recorder.events if e["run"]["runId"] == f"run-{run}"]
        assert arrived == sorted(arrived), run
    assert settings_from({"concurrency": 8}, env={}).concurrency == 8
    with pytest.raises(ConfigError, match="concurrency must be a whole number from 1 to 32"):
        settings_from({"concurrency": 0}, env={})
