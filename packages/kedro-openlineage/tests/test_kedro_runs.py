"""`kedro run` of a real project with the plugin installed, against a real Headwater server."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
from collections import defaultdict
from typing import Any

import pytest

from conftest import KEDRO, Headwater, free_port, great_expectations, pyspark
from kedro_openlineage.tracker import run_uuid

NODES = ["ingestion.type_companies", "ingestion.filter_rated", "ingestion.join_reviews", "check", "summarise"]
PARENT = "lineage_demo.__default__"


def by_job(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    jobs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        jobs[event["job"]["name"]].append(event)
    return jobs


def states(events: list[dict[str, Any]]) -> list[str]:
    return [event["eventType"] for event in events]


def dataset(event: dict[str, Any], side: str, name: str) -> dict[str, Any]:
    found = [d for d in event[side] if d["name"] == name]
    assert len(found) == 1, f"{name} in {side} of {event['job']['name']} {event['eventType']}: {event[side]}"
    return found[0]


def check_parent_links(events: list[dict[str, Any]], namespace: str) -> str:
    parent = [e for e in events if e["job"]["name"].startswith("lineage_demo.")]
    parent_run = parent[0]["run"]["runId"]
    assert {e["run"]["runId"] for e in parent} == {parent_run}
    kedro_run_id = parent[0]["run"]["facets"]["kedro"]["runId"]
    assert parent_run == run_uuid(kedro_run_id)
    for event in events:
        if event in parent:
            continue
        facet = event["run"]["facets"]["parent"]
        assert facet["run"]["runId"] == parent_run
        assert (facet["job"]["namespace"], facet["job"]["name"]) == (namespace, parent[0]["job"]["name"])
        assert facet["root"]["run"]["runId"] == parent_run
        assert event["run"]["runId"] == run_uuid(kedro_run_id, event["job"]["name"])
    return parent_run


@pytest.mark.parametrize("runner", ["SequentialRunner", "ThreadRunner", "ParallelRunner", "ParallelRunner:spawn"])
def test_a_full_run_reaches_the_file_and_headwater(project, headwater: Headwater, runner: str) -> None:
    # ParallelRunner:spawn starts workers that share no memory with the parent (Kedro's KEDRO_MP_CONTEXT).
    runner, _, context = runner.partition(":")
    result = project.run("--runner", runner, url=headwater.url, **({"KEDRO_MP_CONTEXT": context} if context else {}))
    assert result.returncode == 0, result.output
    events = result.events()
    ns = project.namespace
    jobs = by_job(events)

    # The parent opens first and closes last, whatever the runner; every node has START then COMPLETE.
    assert events[0]["job"]["name"] == PARENT and events[0]["eventType"] == "START"
    assert events[-1]["job"]["name"] == PARENT and events[-1]["eventType"] == "COMPLETE"
    assert sorted(jobs) == sorted([PARENT, *NODES])
    for name in NODES:
        assert states(jobs[name]) == ["START", "COMPLETE"], name
    parent_run = check_parent_links(events, ns)
    assert events[0]["run"]["facets"]["kedro"]["runner"] == runner
    assert all(e["job"]["namespace"] == ns for e in events)

    # Naming: catalog names in the project namespace, symlinks to the file, one dataset for x@pandas and x@raw.
    typed = dataset(jobs["ingestion.type_companies"][1], "outputs", "ingestion.typed_companies")
    assert typed["namespace"] == ns
    assert typed["facets"]["kedro"]["catalogNames"] == ["ingestion.typed_companies@pandas", "ingestion.typed_companies@raw"]
    assert typed["facets"]["symlinks"]["identifiers"] == [{
        "namespace": "file", "name": str(project.root / "data/02_intermediate/typed_companies.parquet"), "type": "file"}]
    assert dataset(jobs["ingestion.filter_rated"][1], "inputs", "ingestion.typed_companies")["facets"]["kedro"][
        "catalogNames"] == typed["facets"]["kedro"]["catalogNames"]
    rated = dataset(jobs["ingestion.filter_rated"][1], "outputs", "ingestion.rated")
    assert rated["facets"]["kedro"]["memory"] is True and "symlinks" not in rated["facets"]
    assert rated["outputFacets"]["outputStatistics"]["rowCount"] == 3

    # Facets from data and catalog metadata; metadata.kedro-viz never leaves the project.
    model_input = dataset(jobs["ingestion.join_reviews"][1], "outputs", "model_input")
    assert [f["name"] for f in model_input["facets"]["schema"]["fields"]] == ["id", "name", "rating", "stars"]
    assert model_input["outputFacets"]["outputStatistics"]["rowCount"] == 3
    assert model_input["outputFacets"]["outputStatistics"]["size"] == (project.root / "data/03_primary/model_input.parquet").stat().st_size
    assert model_input["facets"]["ownership"]["owners"] == [{"name": "data-team@example.com"}]
    assert model_input["facets"]["documentation"]["description"] == "Features fed into training"
    assert model_input["facets"]["kedro"]["consumers"] == ["training"]
    raw_text = (project.root / ".viz/lineage_events.json").read_text()
    assert "preview_args" not in raw_text and '"layer"' not in raw_text
    lineage = model_input["facets"]["columnLineage"]["fields"]
    assert [f["name"] for f in lineage["stars"]["inputFields"]] == ["reviews"]
    assert sorted(f["name"] for f in lineage["id"]["inputFields"]) == ["ingestion.rated", "reviews"]
    assert "inferred" in lineage["stars"]["transformationDescription"]

    # Parameters, Kedro version and source location.
    parameters = {p["key"]: p["value"] for p in events[0]["run"]["facets"]["executionParameters"]["parameters"]}
    assert parameters == {"fail": "false", "ingestion.min_rating": "3"}
    node_parameters = jobs["ingestion.filter_rated"][0]["run"]["facets"]["executionParameters"]["parameters"]
    assert node_parameters == [{"key": "ingestion.min_rating", "value": "3"}]
    import kedro

    assert events[0]["run"]["facets"]["processing_engine"]["version"] == kedro.__version__
    head = subprocess.run(["git", "-C", str(project.root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    location = jobs["ingestion.join_reviews"][0]["job"]["facets"]["sourceCodeLocation"]
    assert location["type"] == "git" and location["version"] == head
    assert location["path"] == "src/lineage_demo/pipelines/ingestion.py"

    # Quality results recorded by the node travel on its COMPLETE event.
    quality = dataset(jobs["check"][1], "inputs", "model_input")["inputFacets"]["dataQualityAssertions"]
    assert [(a["name"], a["success"], a["severity"]) for a in quality["assertions"]] == [
        ("stars_present", True, "warn"), ("enough_rows", True, "error")]

    # What Headwater shows: the lineage is connected end to end and every run is COMPLETED.
    headwater.wait_for_run_state(ns, PARENT, "COMPLETED")
    reachable = headwater.downstream(ns, "companies")
    assert {f"dataset:{ns}:{name}" for name in ["ingestion.typed_companies", "ingestion.rated", "model_input",
                                                  "checked", "report"]} <= reachable
    assert {f"job:{ns}:{name}" for name in NODES} <= reachable
    assert headwater.runs(ns, PARENT)[0]["id"] == parent_run
    for name in NODES:
        headwater.wait_for_run_state(ns, name, "COMPLETED")
    assert not project.spool.exists()


@pytest.mark.parametrize("runner", ["SequentialRunner", "ParallelRunner"])
def test_a_failing_node_fails_its_run_and_aborts_the_rest(project, headwater: Headwater, runner: str) -> None:
    result = project.run("--runner", runner, "--params", "fail=true", url=headwater.url)
    assert result.returncode != 0
    assert "check failed on purpose" in result.output
    events = result.events()
    jobs = by_job(events)
    ns = project.namespace
    check_parent_links(events, ns)

    assert states(jobs["check"]) == ["START", "FAIL"]
    error = jobs["check"][1]["run"]["facets"]["errorMessage"]
    assert error["message"] == "ValueError: check failed on purpose: the fail parameter is set"
    assert error["programmingLanguage"] == "python"
    assert "Traceback (most recent call last)" in error["stackTrace"]
    assert 'raise ValueError("check failed on purpose' in error["stackTrace"]
    # The assertions recorded before the failure still arrive.
    assert dataset(jobs["check"][1], "inputs", "model_input")["inputFacets"]["dataQualityAssertions"]
    assert states(jobs["summarise"]) == ["ABORT"]
    for name in NODES[:3]:
        assert states(jobs[name]) == ["START", "COMPLETE"]
    assert states(jobs[PARENT]) == ["START", "FAIL"]
    assert "check failed on purpose" in jobs[PARENT][1]["run"]["facets"]["errorMessage"]["message"]

    headwater.wait_for_run_state(ns, PARENT, "FAILED")
    headwater.wait_for_run_state(ns, "check", "FAILED")
    headwater.wait_for_run_state(ns, "summarise", "ABORTED")
    headwater.wait_for_run_state(ns, "ingestion.join_reviews", "COMPLETED")


def test_failed_assertions_show_in_headwater_root_cause(project, headwater: Headwater) -> None:
    # Globex (rating 2) has no review, so the warn-level not_null assertion on stars fails.
    result = project.run("--params", "ingestion.min_rating=2", url=headwater.url)
    assert result.returncode == 0, result.output
    ns = project.namespace
    headwater.wait_for_run_state(ns, PARENT, "COMPLETED")
    answer = headwater.get("/api/v1/analysis/root-cause", nodeId=f"dataset:{ns}:report")
    failed = [c for c in answer["causes"] if c["kind"] == "failedAssertion"]
    assert [c["nodeId"] for c in failed] == [f"dataset:{ns}:model_input"]
    assert [(a["assertion"], a["column"], a["severity"], a["expected"], a["actual"]) for a in failed[0]["assertions"]] == [
        ("not_null", "stars", "warn", "0", "1")]


def test_backend_down_spools_and_replay_sends_later(project, headwater: Headwater) -> None:
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = project.run(url=down)
    assert result.returncode == 0, result.output
    assert "could not send to" in result.output
    events = result.events()
    assert len(events) == 12
    spooled = project.spool.read_text().splitlines()
    assert len(spooled) == len(events)
    parent_run = events[0]["run"]["runId"]

    replay = subprocess.run([str(KEDRO), "openlineage", "replay"], cwd=project.root, capture_output=True, text=True,
                            env={**project_env(project), "OPENLINEAGE_URL": headwater.url}, timeout=120, check=False)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "replayed 12 event(s), 0 still spooled" in replay.stdout
    assert not project.spool.exists()
    headwater.wait_for_run_state(project.namespace, PARENT, "COMPLETED")
    assert headwater.runs(project.namespace, PARENT)[0]["id"] == parent_run
    # Replaying did not rewrite the last run's file.
    assert result.events() == events


def project_env(project) -> dict[str, str]:
    import os

    return {**os.environ, "KEDRO_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1",
            "OPENLINEAGE_NAMESPACE": project.namespace}


def test_a_stuck_backend_delays_the_run_only_within_the_bound(project, headwater: Headwater, hanging_server) -> None:
    project.write_config("timeout: 1\nshutdown_timeout: 2\nretry_after: 30\n")
    baseline = project.run()  # file sink only
    assert baseline.returncode == 0, baseline.output
    stuck = project.run(url=hanging_server.url)
    assert stuck.returncode == 0, stuck.output
    # One request times out (1 s), the sink is then marked down; the end of the run waits at most 2 s.
    assert stuck.seconds - baseline.seconds < 1 + 2 + 3, (stuck.seconds, baseline.seconds)
    events = stuck.events()
    assert len(events) == 12
    assert len(project.spool.read_text().splitlines()) == 12
    stuck_run = events[0]["run"]["runId"]

    # The next run, with the backend back, replays the spool first and then sends its own events.
    later = project.run(url=headwater.url)
    assert later.returncode == 0, later.output
    assert not project.spool.exists()
    headwater.wait_for_run_state(project.namespace, PARENT, "COMPLETED")
    runs = headwater.runs(project.namespace, PARENT)
    assert {run["id"] for run in runs} == {stuck_run, later.events()[0]["run"]["runId"]}
    assert {run["state"] for run in runs} == {"COMPLETED"}


def test_partial_runs(project, headwater: Headwater) -> None:
    ns = project.namespace
    first = project.run("--pipeline", "ingestion", url=headwater.url)
    assert first.returncode == 0, first.output
    jobs = by_job(first.events())
    assert sorted(jobs) == sorted(["lineage_demo.ingestion", *NODES[:3]])
    assert jobs["lineage_demo.ingestion"][0]["run"]["facets"]["kedro"]["pipelineNames"] == ["ingestion"]

    second = project.run("--nodes", "ingestion.type_companies,ingestion.filter_rated", url=headwater.url)
    assert second.returncode == 0, second.output
    jobs = by_job(second.events())
    assert sorted(jobs) == sorted([PARENT, "ingestion.type_companies", "ingestion.filter_rated"])
    assert all(states(jobs[name]) == ["START", "COMPLETE"] for name in jobs)
    filters = jobs[PARENT][0]["run"]["facets"]["kedro"]["filters"]
    assert filters["node_names"] == ["ingestion.type_companies", "ingestion.filter_rated"]

    third = project.run("--tags", "quality", url=headwater.url)
    assert third.returncode == 0, third.output
    jobs = by_job(third.events())
    assert sorted(jobs) == sorted([PARENT, "check"])
    assert jobs[PARENT][0]["run"]["facets"]["kedro"]["filters"]["tags"] == ["quality"]

    headwater.wait_for_run_state(ns, "lineage_demo.ingestion", "COMPLETED")
    headwater.wait_for_run_state(ns, PARENT, "COMPLETED")
    assert len(headwater.runs(ns, PARENT)) == 2
    assert len(headwater.runs(ns, "ingestion.type_companies")) == 2
    assert len(headwater.runs(ns, "check")) == 1
    # summarise was in none of the three partial runs.
    assert not _job_exists(headwater, ns, "summarise")


def _job_exists(headwater: Headwater, namespace: str, job: str) -> bool:
    import urllib.error

    try:
        headwater.runs(namespace, job)
        return True
    except urllib.error.HTTPError:
        return False


def test_static_push_sends_the_structure_before_any_run(project, headwater: Headwater) -> None:
    ns = project.namespace
    push = subprocess.run([str(KEDRO), "openlineage", "push"], cwd=project.root, capture_output=True, text=True,
                          env={**project_env(project), "OPENLINEAGE_URL": headwater.url}, timeout=120, check=False)
    assert push.returncode == 0, push.stdout + push.stderr
    # Five nodes, the ingestion modular pipeline and the pipeline.
    assert "pushed 7 job(s) and 7 dataset(s)" in push.stdout and "14 event(s) sent, 0 spooled" in push.stdout
    assert not (project.root / ".viz/lineage_events.json").exists()
    reachable = set()
    deadline = time.monotonic() + 10
    while f"dataset:{ns}:report" not in reachable and time.monotonic() < deadline:
        try:
            reachable = headwater.downstream(ns, "companies")
        except urllib.error.HTTPError:
            time.sleep(0.2)
    assert {f"job:{ns}:{name}" for name in NODES} | {f"dataset:{ns}:report"} <= reachable
    model_input = headwater.get(f"/api/v1/namespaces/{ns}/datasets/model_input")
    assert model_input["description"] == "Features fed into training"
    assert model_input["facets"]["symlinks"]["identifiers"][0]["name"] == str(
        project.root / "data/03_primary/model_input.parquet")
    # Structure only: the jobs exist and have no runs yet.
    assert headwater.runs(ns, PARENT) == []
    assert headwater.runs(ns, "check") == []

    down = subprocess.run([str(KEDRO), "openlineage", "push"], cwd=project.root, capture_output=True, text=True,
                          env={**project_env(project), "OPENLINEAGE_URL": f"http://127.0.0.1:{free_port()}"},
                          timeout=120, check=False)
    assert down.returncode != 0
    assert "0 event(s) sent, 14 spooled" in down.stdout and "kedro openlineage replay" in down.stderr


def test_kedro_viz_workflow_view_reads_the_runs_its_own_hook_skips(project, headwater: Headwater) -> None:
    from kedro_viz.api.rest.responses.run_events import transform_events_to_structured_format

    viz_file = project.root / ".viz/kedro_pipeline_events.json"
    # Kedro-Viz's hook skips non-sequential runs; the plugin writes the file from its OpenLineage events instead.
    result = project.run("--runner", "ThreadRunner", "--params", "fail=true", url=headwater.url)
    assert result.returncode != 0
    assert "Workflow tracking is disabled for non-sequential runners" in result.output
    status = transform_events_to_structured_format(json.loads(viz_file.read_text()))
    nodes = {node_id: info.status.value for node_id, info in status.nodes.items()}
    ids = viz_ids_of(project)
    assert nodes == {ids["ingestion.type_companies"]: "success", ids["ingestion.filter_rated"]: "success",
                     ids["ingestion.join_reviews"]: "success", ids["check"]: "failed"}
    assert status.nodes[ids["check"]].error.message == "ValueError: check failed on purpose: the fail parameter is set"
    assert status.pipeline.status.value == "failed"
    saved = {info.name: info.size for info in status.datasets.values()}
    assert saved["model_input"] == (project.root / "data/03_primary/model_input.parquet").stat().st_size

    # A full sequential run is Kedro-Viz's own: the plugin leaves the file to its hook (which lists parameters).
    viz_file.unlink()
    full = project.run(url=headwater.url)
    assert full.returncode == 0, full.output
    written = json.loads(viz_file.read_text())
    assert any(e.get("dataset") == "params:fail" for e in written)


def viz_ids_of(project) -> dict[str, str]:
    """Kedro-Viz's ids of the nodes, computed by Kedro-Viz from the project's own pipeline."""
    code = (
        "import sys; from kedro.framework.startup import bootstrap_project; bootstrap_project(sys.argv[1]);"
        "from kedro.framework.project import pipelines; from kedro_viz.integrations.kedro.hooks_utils import hash_node;"
        "import json; print(json.dumps({n.name: hash_node(n) for n in pipelines['__default__'].nodes}))"
    )
    import sys

    done = subprocess.run([sys.executable, "-c", code, str(project.root)], capture_output=True, text=True,
                          cwd=project.root, env=project_env(project), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_kedro_catalog_validation_failures_become_failed_assertions(project, headwater: Headwater) -> None:
    # min_rating 1 lets Hooli (rating 1) through; model_input's validator rejects it on save.
    result = project.run("--params", "ingestion.min_rating=1", url=headwater.url)
    assert result.returncode != 0
    assert "Validation failed for dataset 'model_input' on save" in result.output
    jobs = by_job(result.events())
    ns = project.namespace
    assert states(jobs["ingestion.join_reviews"]) == ["START", "FAIL"]
    failed = jobs["ingestion.join_reviews"][1]
    assert failed["run"]["facets"]["errorMessage"]["message"].startswith("Saving the outputs failed: DataValidationError")
    quality = dataset(failed, "outputs", "model_input")["facets"]["dataQualityAssertions"]["assertions"]
    assert quality == [{
        "assertion": "greater_than_or_equal_to(2)", "success": False, "column": "rating", "severity": "error",
        "name": "lineage_demo.validators.ratings_at_least_2", "description": "rating below 2 (on save)",
        "expected": "0 failing cases", "actual": "1 failing case (e.g. 1.0)", "params": {}}]
    assert states(jobs["check"]) == ["ABORT"] and states(jobs["summarise"]) == ["ABORT"]
    headwater.wait_for_run_state(ns, "ingestion.join_reviews", "FAILED")
    answer = headwater.get("/api/v1/analysis/root-cause", nodeId=f"dataset:{ns}:model_input")
    assertions = [a for c in answer["causes"] if c["kind"] == "failedAssertion" for a in c["assertions"]]
    assert [(a["assertion"], a["column"], a["actual"]) for a in assertions] == [
        ("greater_than_or_equal_to(2)", "rating", "1 failing case (e.g. 1.0)")]


def test_every_kind_of_event_passes_a_strict_server(project, strict_headwater: Headwater) -> None:
    # Strict Headwater validates each event and facet against the published schemas and answers 4xx otherwise; a
    # rejected event would be spooled.
    ns = project.namespace
    assert project.run(url=strict_headwater.url).returncode == 0
    assert project.run("--runner", "ParallelRunner", "--params", "fail=true", url=strict_headwater.url).returncode != 0
    push = subprocess.run([str(KEDRO), "openlineage", "push"], cwd=project.root, capture_output=True, text=True,
                          env={**project_env(project), "OPENLINEAGE_URL": strict_headwater.url}, timeout=120,
                          check=False)
    assert push.returncode == 0, push.stdout + push.stderr
    assert not project.spool.exists()
    strict_headwater.wait_for_run_state(ns, PARENT, "FAILED")
    assert [run["state"] for run in strict_headwater.runs(ns, PARENT)] == ["FAILED", "COMPLETED"]
    # The ABORT of a node that never started is its newest run: Headwater orders runs by start, else by end.
    assert [run["state"] for run in strict_headwater.runs(ns, "summarise")] == ["ABORTED", "COMPLETED"]


def test_a_bad_openlineage_yml_turns_the_plugin_off_and_the_run_goes_on(project) -> None:
    project.write_config("timeout: soon\n")
    result = project.run()
    assert result.returncode == 0, result.output
    assert "kedro-openlineage is off for this run" in result.output
    assert "timeout must be a number of seconds" in result.output
    assert not (project.root / ".viz/lineage_events.json").exists()


def test_headwater_ingest_reads_the_file_sink(project, headwater: Headwater) -> None:
    from conftest import SERVER_MAIN

    result = project.run()  # no URL: the file sink alone
    assert result.returncode == 0, result.output
    assert not project.spool.exists()
    ingest = subprocess.run(["node", str(SERVER_MAIN), "ingest", str(project.root / ".viz/lineage_events.json"),
                             "--url", headwater.url], capture_output=True, text=True, timeout=60, check=False)
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    assert "12 events read from 1 file: 12 stored, 0 failed" in ingest.stdout + ingest.stderr
    headwater.wait_for_run_state(project.namespace, PARENT, "COMPLETED")
    assert headwater.runs(project.namespace, PARENT)[0]["id"] == result.events()[0]["run"]["runId"]


def test_declared_against_observed_lineage_after_a_partial_run(project, headwater: Headwater) -> None:
    ns = project.namespace
    push = subprocess.run([str(KEDRO), "openlineage", "push"], cwd=project.root, capture_output=True, text=True,
                          env={**project_env(project), "OPENLINEAGE_URL": headwater.url}, timeout=120, check=False)
    assert push.returncode == 0, push.stdout + push.stderr
    # The push alone makes the pipeline the nodes' parent job.
    assert headwater.get(f"/api/v1/namespaces/{ns}/jobs/check")["parentJobName"] == PARENT
    result = project.run("--nodes", "ingestion.type_companies,ingestion.filter_rated", url=headwater.url)
    assert result.returncode == 0, result.output
    headwater.wait_for_run_state(ns, PARENT, "COMPLETED")
    headwater.wait_for_run_state(ns, "ingestion.filter_rated", "COMPLETED")
    answer = headwater.get("/api/v1/analysis/declared-lineage", nodeId=f"job:{ns}:{PARENT}")
    runs = {event["job"]["name"]: event["run"]["runId"] for event in result.events()}
    # The ingestion nodes sit under the pipeline (their runs name its run) and under its modular pipeline (the push).
    job = lambda name: f"job:{ns}:{name}"  # noqa: E731
    modular = f"{PARENT}.ingestion"
    assert [(j["job"], j["parents"], j["run"] and j["run"]["id"], j["declared"], j["observed"], j["notObserved"],
             j["undeclared"]) for j in answer["jobs"]] == [
        (job(PARENT), [], runs[PARENT], 0, 0, 0, 0),
        (job("check"), [job(PARENT)], None, 2, 0, 2, 0),
        (job("ingestion.filter_rated"), [job(PARENT), job(modular)], runs["ingestion.filter_rated"], 2, 2, 0, 0),
        (job("ingestion.join_reviews"), [job(modular)], None, 3, 0, 3, 0),
        (job("ingestion.type_companies"), [job(PARENT), job(modular)], runs["ingestion.type_companies"], 2, 2, 0, 0),
        (job(modular), [job(PARENT)], None, 0, 0, 0, 0),
        (job("summarise"), [job(PARENT)], None, 2, 0, 2, 0),
    ]
    edge = lambda job, direction, name: {"job": f"job:{ns}:{job}", "direction": direction,  # noqa: E731
                                         "dataset": f"dataset:{ns}:{name}"}
    assert answer["declaredNotObserved"] == [
        edge("check", "input", "model_input"), edge("check", "output", "checked"),
        edge("ingestion.join_reviews", "input", "ingestion.rated"), edge("ingestion.join_reviews", "input", "reviews"),
        edge("ingestion.join_reviews", "output", "model_input"),
        edge("summarise", "input", "checked"), edge("summarise", "output", "report"),
    ]
    assert answer["observedNotDeclared"] == []


def test_declared_lineage_below_nested_modular_pipelines_and_under_every_pipeline(project, headwater) -> None:
    ns = project.namespace
    job = lambda name: f"job:{ns}:{name}"  # noqa: E731

    def push(pipeline: str) -> None:
        result = subprocess.run([str(KEDRO), "openlineage", "push", "--pipeline", pipeline], cwd=project.root,
                                capture_output=True, text=True, timeout=120, check=False,
                                env={**project_env(project), "OPENLINEAGE_URL": headwater.url})
        assert result.returncode == 0, result.stdout + result.stderr

    def jobs(pipeline: str) -> list[tuple[str, list[str], int]]:
        answer = headwater.get("/api/v1/analysis/declared-lineage", nodeId=job(f"lineage_demo.{pipeline}"))
        return [(j["job"], j["parents"], j["declared"]) for j in answer["jobs"]]

    # `nested` wraps the ingestion modular pipeline in another: its nodes are two levels below the pipeline.
    push("nested")
    outer, inner = "lineage_demo.nested.outer", "lineage_demo.nested.outer.ingestion"
    assert jobs("nested") == [
        (job("lineage_demo.nested"), [], 0),
        (job(outer), [job("lineage_demo.nested")], 0),
        (job(inner), [job(outer)], 0),
        (job("outer.ingestion.filter_rated"), [job(inner)], 2),
        (job("outer.ingestion.join_reviews"), [job(inner)], 3),
        (job("outer.ingestion.type_companies"), [job(inner)], 2),
    ]
    # The same nodes in two registered pipelines: each pipeline lists them, through its own modular pipeline job.
    push("__default__")
    push("ingestion")
    push("reporting")
    ingestion = [job(f"ingestion.{name}") for name in ("filter_rated", "join_reviews", "type_companies")]
    assert jobs("ingestion") == [
        (job("lineage_demo.ingestion"), [], 0),
        *[(name, [job("lineage_demo.ingestion.ingestion")], 3 if "join" in name else 2) for name in ingestion],
        (job("lineage_demo.ingestion.ingestion"), [job("lineage_demo.ingestion")], 0),
    ]
    assert jobs("__default__") == [
        (job(PARENT), [], 0),
        (job("check"), [job(PARENT)], 2),
        *[(name, [job(f"{PARENT}.ingestion")], 3 if "join" in name else 2) for name in ingestion],
        (job(f"{PARENT}.ingestion"), [job(PARENT)], 0),
        (job("summarise"), [job(PARENT)], 2),
    ]
    assert [name for name, _, _ in jobs("reporting")] == [job("lineage_demo.reporting"), job("check"),
                                                          job("summarise")]
    # Marquez's API has room for one parent: the newest push's.
    assert headwater.get(f"/api/v1/namespaces/{ns}/jobs/check")["parentJobName"] == "lineage_demo.reporting"


def test_great_expectations_results_reach_headwater(project, headwater: Headwater) -> None:
    great_expectations()
    result = project.run("--pipeline", "gx", url=headwater.url)
    assert result.returncode == 0, result.output
    jobs = by_job(result.events())
    assert states(jobs["gx_check"]) == ["START", "COMPLETE"]
    facet = dataset(jobs["gx_check"][1], "inputs", "companies")["inputFacets"]["dataQualityAssertions"]
    suite = "Great Expectations suite companies_suite"
    assert [{k: v for k, v in a.items() if v not in (None, {})} for a in facet["assertions"]] == [
        {"assertion": "expect_column_values_to_not_be_null", "success": True, "column": "name", "severity": "error",
         "description": suite, "expected": "true", "actual": "0 unexpected of 5"},
        {"assertion": "expect_column_values_to_be_between", "success": False, "column": "rating", "severity": "warn",
         "name": "rating_in_range", "description": suite, "expected": "min_value=2, max_value=5",
         "actual": "1 unexpected of 5 (e.g. 1)"},
        {"assertion": "expect_table_row_count_to_be_between", "success": False, "severity": "error",
         "description": suite, "expected": "min_value=10", "actual": "5"},
    ]
    ns = project.namespace
    headwater.wait_for_run_state(ns, "gx_check", "COMPLETED")
    quality = headwater.get(f"/api/v1/namespaces/{ns}/datasets/companies/quality")
    assert [(a["assertion"], a["column"], a["name"], a["latest"]["success"], a["latest"]["severity"],
             a["latest"]["expected"], a["latest"]["actual"]) for a in quality["assertions"]] == [
        ("expect_column_values_to_be_between", "rating", "rating_in_range", False, "warn", "min_value=2, max_value=5",
         "1 unexpected of 5 (e.g. 1)"),
        ("expect_table_row_count_to_be_between", "", None, False, "error", "min_value=10", "5"),
        ("expect_column_values_to_not_be_null", "name", None, True, "error", "true", "0 unexpected of 5"),
    ]


def test_a_spark_dataframe_output_gets_its_schema(project, headwater: Headwater) -> None:
    pyspark()
    result = project.run("--pipeline", "spark", url=headwater.url)
    assert result.returncode == 0, result.output
    jobs = by_job(result.events())
    assert states(jobs["to_spark"]) == ["START", "COMPLETE"]
    output = dataset(jobs["to_spark"][1], "outputs", "spark_companies")
    assert [(f["name"], f["type"]) for f in output["facets"]["schema"]["fields"]] == [
        ("id", "bigint"), ("name", "string"), ("rating", "double")]
    # No row count: counting a Spark frame would run a job.
    assert "outputStatistics" not in output.get("outputFacets", {})
    ns = project.namespace
    headwater.wait_for_run_state(ns, "summarise_spark", "COMPLETED")
    fields = headwater.get(f"/api/v1/namespaces/{ns}/datasets/spark_companies")["fields"]
    assert [(f["name"], f["type"]) for f in fields] == [("id", "bigint"), ("name", "string"), ("rating", "double")]
