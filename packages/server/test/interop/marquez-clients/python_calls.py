"""Calls every public method of marquez-python's MarquezClient against a server, in an order where each call has
what it needs (a namespace before its datasets, a run before its transitions), and prints one JSON line per
call: {"call", "pass", "status", "error"}. A call passes when the client returns without raising and the answer
says what was asked (the name, the state); "status" is the HTTP status of a call the server refused.

Usage: python python_calls.py URL SUFFIX   (SUFFIX keeps the names of one run apart from another's)
"""
import json
import sys
import uuid
from datetime import datetime, timedelta, timezone

from marquez_client import MarquezClient
from marquez_client.models import DatasetId, DatasetType, JobType

url, suffix = sys.argv[1], sys.argv[2]
client = MarquezClient(url=url)
ns = f"marquez-python-{suffix}"
source = f"warehouse-{suffix}"
tag = f"PYTAG_{suffix}".upper().replace("-", "_")
job = "daily_totals"
inputs, output = "public.orders", "public.totals"
t0 = datetime.now(timezone.utc).replace(microsecond=0)


def at(minutes):
    return (t0 + timedelta(minutes=minutes)).isoformat()


def record(call, check):
    try:
        answer = check()
        if answer is False:
            raise AssertionError("the answer does not say what was asked")
        print(json.dumps({"call": call, "pass": True, "status": None, "error": None}), flush=True)
    except Exception as error:  # noqa: BLE001 - every failure of a call is its result
        cause = error.__cause__ if error.__cause__ is not None else error
        response = getattr(cause, "response", None)
        message = f"{type(error).__name__}: {error}"
        if response is not None:
            message += f" ({response.status_code} {response.text[:300]})"
        print(json.dumps({"call": call, "pass": False,
                          "status": response.status_code if response is not None else None,
                          "error": message[:600]}), flush=True)


runs = {}
versions = {}

record("create_namespace", lambda: client.create_namespace(ns, "owner", "Marquez client calls")["name"] == ns)
record("get_namespace", lambda: client.get_namespace(ns)["name"] == ns)
record("list_namespaces", lambda: any(n["name"] == ns for n in client.list_namespaces(limit=1000)["namespaces"]))
record("create_source", lambda: client.create_source(
    source, "POSTGRESQL", "jdbc:postgresql://localhost:5432/shop", "the shop")["name"] == source)
record("get_source", lambda: client.get_source(source)["type"] == "POSTGRESQL")
record("list_sources", lambda: any(s["name"] == source for s in client.list_sources(limit=1000)["sources"]))
fields = [{"name": "id", "type": "INTEGER", "tags": [], "description": "the key"},
          {"name": "total", "type": "DECIMAL", "tags": [], "description": None}]
record("create_dataset", lambda: client.create_dataset(
    ns, inputs, DatasetType.DB_TABLE, inputs, source, description="one row per order", fields=fields)["name"] == inputs)
record("create_dataset(output)", lambda: client.create_dataset(
    ns, output, DatasetType.DB_TABLE, output, source, fields=[{"name": "day", "type": "DATE", "tags": []}])["name"] == output)


def get_dataset():
    dataset = client.get_dataset(ns, inputs)
    versions["current"] = dataset.get("currentVersion")
    return [f["name"] for f in dataset["fields"]] == ["id", "total"]


record("get_dataset", get_dataset)
record("list_datasets", lambda: {d["name"] for d in client.list_datasets(ns)["datasets"]} == {inputs, output})
record("list_dataset_versions", lambda: len(client.list_dataset_versions(ns, inputs)["versions"]) >= 1)
record("get_dataset_version", lambda: client.get_dataset_version(ns, inputs, versions["current"])["name"] == inputs)
record("create_tag", lambda: client.create_tag(tag, "a tag")["name"] == tag)
record("list_tags", lambda: any(t["name"] == tag for t in client.list_tags(limit=1000)["tags"]))
record("tag_dataset", lambda: tag in client.tag_dataset(ns, inputs, tag)["tags"])
record("tag_dataset_field", lambda: any(
    tag in f["tags"] for f in client.tag_dataset_field(ns, inputs, "id", tag)["fields"] if f["name"] == "id"))
record("create_job", lambda: client.create_job(
    ns, job, JobType.BATCH, location="https://git.example/etl/daily_totals.py",
    inputs=[DatasetId(ns, inputs)], outputs=[DatasetId(ns, output)], description="sums a day")["name"] == job)
record("get_job", lambda: [i["name"] for i in client.get_job(ns, job)["inputs"]] == [inputs])
record("list_jobs", lambda: any(j["name"] == job for j in client.list_jobs(ns)["jobs"]))


def create_run(key, **options):
    run = client.create_job_run(ns, job, **options)
    runs[key] = run["id"]
    return run["state"] == ("RUNNING" if options.get("mark_as_running") else "NEW")


record("create_job_run", lambda: create_run(
    "completed", run_id=str(uuid.uuid4()), nominal_start_time=at(0), nominal_end_time=at(60),
    run_args={"day": t0.date().isoformat()}))
record("create_job_run(mark_as_running)", lambda: create_run("failed", mark_as_running=True))
record("get_job_run", lambda: client.get_job_run(runs["completed"])["state"] == "NEW")
record("list_job_runs", lambda: runs["completed"] in [r["id"] for r in client.list_job_runs(ns, job)["runs"]])
record("mark_job_run_as_started", lambda: client.mark_job_run_as_started(runs["completed"], at(1))["state"] == "RUNNING")
record("mark_job_run_as_completed",
       lambda: client.mark_job_run_as_completed(runs["completed"], at(2))["state"] == "COMPLETED")
record("mark_job_run_as_failed", lambda: client.mark_job_run_as_failed(runs["failed"], at(3))["state"] == "FAILED")


def abort():
    runs["aborted"] = client.create_job_run(ns, job)["id"]
    return client.mark_job_run_as_aborted(runs["aborted"], at(4))["state"] == "ABORTED"


record("mark_job_run_as_aborted", abort)
record("list_events", lambda: "events" in client.list_events())
record("get_column_lineage_by_dataset", lambda: "graph" in client.get_column_lineage_by_dataset(ns, output))
record("get_column_lineage_by_dataset_field",
       lambda: "graph" in client.get_column_lineage_by_dataset_field(ns, output, "day"))
record("get_column_lineage_by_job", lambda: "graph" in client.get_column_lineage_by_job(ns, job))
