"""Turns one `kedro run` into OpenLineage run events.

Mapping:
- the run: job `<project>.<pipeline>` (pipelines joined with `+`, `__default__` when none is named), run id a
  UUID derived from Kedro's run id (uuid5), START then COMPLETE or FAIL;
- each node: job = the node's full name, run id uuid5(Kedro run id, node name), a `parent` facet naming the run
  (also as `root`), START then COMPLETE or FAIL (with `errorMessage`: the Python traceback);
- a node that never started because the run failed gets ABORT; a node that started and never finished gets FAIL
  with the run's error.

The tracker lives in the process that called `before_pipeline_run`. It receives node records (plain dicts) from the
hooks in the same process or, for ParallelRunner, from the workers' outbox files; so it never needs the data.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import attr
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.generated import (
    column_lineage_dataset,
    data_quality_assertions_dataset,
    documentation_dataset,
    error_message_run,
    execution_parameters_run,
    job_type_job,
    output_statistics_output_dataset,
    ownership_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
    source_code_location_job,
    symlinks_dataset,
)
from openlineage.client.generated.base import BaseFacet, DatasetFacet, JobFacet, RunFacet
from openlineage.client.serde import Serde

from . import __version__

PRODUCER = f"https://github.com/headwater/headwater/tree/v{__version__}/packages/kedro-openlineage"
SCHEMA_BASE = f"{PRODUCER}/schemas"
_RUN_ID_NAMESPACE = uuid.UUID("6f1d4c3e-2b7a-5e0c-9d61-0a4c7e1b2f38")
#: Longest value of a parameter sent in the executionParameters facet; longer values are cut with an ellipsis.
MAX_PARAMETER_CHARS = 1000


def run_uuid(kedro_run_id: str, node_name: str | None = None) -> str:
    """The OpenLineage run id of a `kedro run` (or of one node in it): stable for the same Kedro run id."""
    key = kedro_run_id if node_name is None else f"{kedro_run_id}\x00{node_name}"
    return str(uuid.uuid5(_RUN_ID_NAMESPACE, key))


def runner_name(runner: Any) -> str | None:
    """`SequentialRunner` from the runner, its class path or its repr (Kedro passes any of these)."""
    if runner is None:
        return None
    text = runner if isinstance(runner, str) else type(runner).__name__
    found = re.search(r"([A-Za-z_][A-Za-z0-9_]*Runner)", text)
    return found.group(1) if found else text


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


@attr.define
class KedroRunFacet(RunFacet):
    """What Kedro says about the run: its own run id, environment, runner, pipelines and the filters of a
    partial run."""

    runId: str  # noqa: N815
    kedroVersion: str  # noqa: N815
    env: str | None = attr.field(default=None)
    runner: str | None = attr.field(default=None)
    pipelineNames: list[str] | None = attr.field(factory=list)  # noqa: N815
    filters: dict[str, Any] | None = attr.field(factory=dict)

    @staticmethod
    def _get_schema() -> str:
        return f"{SCHEMA_BASE}/KedroRunFacet.json#/$defs/KedroRunFacet"


@attr.define
class KedroDatasetFacet(DatasetFacet):
    """The catalog entry behind a dataset: its Kedro type, the transcoded entries folded into it, and the
    `metadata.kedro.consumers` list."""

    type: str  # noqa: A003
    catalogNames: list[str] | None = attr.field(factory=list)  # noqa: N815
    memory: bool | None = attr.field(default=None)
    consumers: list[str] | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return f"{SCHEMA_BASE}/KedroDatasetFacet.json#/$defs/KedroDatasetFacet"


@attr.define
class ParentJobFacet(JobFacet):
    """The pipeline or modular pipeline job a node or modular pipeline belongs to, on its JobEvent (a JobEvent has
    no run, so no ParentRunFacet): `{"job": {"namespace", "name"}}`. Headwater makes it one of the job's parents, so
    a pushed pipeline knows its nodes before any run."""

    job: dict[str, str]

    @staticmethod
    def _get_schema() -> str:
        return f"{SCHEMA_BASE}/ParentJobFacet.json#/$defs/ParentJobFacet"


def _own(facet: BaseFacet) -> BaseFacet:
    facet._producer = PRODUCER  # noqa: SLF001 - the spec's `_producer`; set per facet, not process-wide
    return facet


@dataclass
class DatasetInfo:
    """What the catalog says about one OpenLineage dataset (possibly several transcoded entries)."""

    name: str
    type: str
    catalog_names: list[str] = field(default_factory=list)
    storage: tuple[str, str] | None = None
    local_file: str | None = None
    memory: bool = False
    owner: str | None = None
    description: str | None = None
    consumers: list[str] | None = None


@dataclass
class NodeInfo:
    name: str
    inputs: list[str]
    outputs: list[str]
    source_path: str | None = None
    #: The node's Kedro namespace (its modular pipelines, outermost first, joined by dots); None outside any.
    namespace: str | None = None
    #: Kedro-Viz's id of the node (sha1 of str(node)), for the Kedro-Viz events file.
    viz_id: str | None = None


@dataclass
class RunInfo:
    namespace: str
    job_name: str
    kedro_run_id: str
    kedro_version: str
    run_params: dict[str, Any]
    nodes: dict[str, NodeInfo]
    datasets: dict[str, DatasetInfo]
    parameters: dict[str, Any] = field(default_factory=dict)
    git: dict[str, str] | None = None


@dataclass
class _NodeState:
    started: bool = False
    ended: bool = False
    start_record: dict[str, Any] | None = None


def _format_value(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=repr)
    except Exception:  # noqa: BLE001
        text = repr(value)
    return text if len(text) <= MAX_PARAMETER_CHARS else text[: MAX_PARAMETER_CHARS - 1] + "…"


def flatten_parameters(parameters: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in parameters.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten_parameters(value, f"{path}."))
        else:
            flat[path] = value
    return flat


class RunTracker:
    """Builds and emits the events of one run; thread-safe (ThreadRunner calls hooks from several threads)."""

    def __init__(self, info: RunInfo, emit: Callable[[dict[str, Any]], None], keep_events: bool = False) -> None:
        self.info = info
        self._emit = emit
        #: The events emitted, in order, when asked to keep them (for the Kedro-Viz file).
        self.events: list[dict[str, Any]] | None = [] if keep_events else None
        self.run_id = run_uuid(info.kedro_run_id)
        self._lock = threading.Lock()
        self._nodes: dict[str, _NodeState] = {name: _NodeState() for name in info.nodes}
        self._loading: str | None = None
        self._run_assertions: dict[str, list[dict[str, Any]]] = {}
        self._finished = False

    # -- records from the hooks ------------------------------------------------------------------------------

    def start(self) -> None:
        self._send(RunState.START, self._parent_job(), Run(runId=self.run_id, facets=self._parent_run_facets()))

    def handle(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        name = record.get("node", "")
        with self._lock:
            if self._finished:
                return
            if kind == "assertions" and not name:
                for dataset, assertions in record.get("assertions", {}).items():
                    self._run_assertions.setdefault(dataset, []).extend(assertions)
                return
            state = self._nodes.get(name)
            if state is None:
                return  # a node outside this run's (filtered) pipeline
            if kind == "loading":
                self._loading = name
                return
            if kind == "start" and not state.started:
                state.started, state.start_record = True, record
                self._node_event(RunState.START, name, record)
            elif kind in ("complete", "fail") and not state.ended:
                if not state.started:
                    # Records may arrive out of order from workers: the node did start.
                    state.started = True
                    self._node_event(RunState.START, name, {"time": record.get("start_time", record.get("time"))})
                state.ended = True
                self._node_event(RunState.COMPLETE if kind == "complete" else RunState.FAIL, name, record)

    def finish(self, error: BaseException | None = None, traceback_text: str | None = None) -> None:
        """Ends every node run still open (ABORT or FAIL when the run failed) and then the run itself."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
            failed = error is not None
            message = f"{type(error).__name__}: {error}" if error is not None else ""
            for name, state in self._nodes.items():
                if state.ended:
                    continue
                if state.started or (failed and name == self._loading):
                    if not state.started:
                        self._node_event(RunState.START, name, {"time": now()})
                    record = {"time": now(), "error": f"The node did not finish: {message}" if failed else "",
                              "traceback": traceback_text}
                    self._node_event(RunState.FAIL if failed else RunState.COMPLETE, name, record)
                elif failed:
                    self._node_event(RunState.ABORT, name, {"time": now()})
                state.ended = True
            facets = self._parent_run_facets(final=True)
            if failed:
                facets["errorMessage"] = _own(error_message_run.ErrorMessageRunFacet(
                    message=message, programmingLanguage="python", stackTrace=traceback_text))
            inputs = [self._input(name, {}, assertions) for name, assertions in self._run_assertions.items()]
            self._send(RunState.FAIL if failed else RunState.COMPLETE, self._parent_job(),
                       Run(runId=self.run_id, facets=facets), inputs=inputs)

    # -- building events ---------------------------------------------------------------------------------------

    def _send(self, state: RunState, job: Job, run: Run, *, time: str | None = None,
              inputs: Iterable[InputDataset] = (), outputs: Iterable[OutputDataset] = ()) -> None:
        event = RunEvent(eventType=state, eventTime=time or now(), run=run, job=job, producer=PRODUCER,
                         inputs=list(inputs), outputs=list(outputs))
        emitted = Serde.to_dict(event)
        if self.events is not None:
            self.events.append(emitted)
        self._emit(emitted)

    def _parent_job(self) -> Job:
        facets: dict[str, Any] = {
            "jobType": _own(job_type_job.JobTypeJobFacet(processingType="BATCH", integration="KEDRO", jobType="PIPELINE")),
        }
        git = self.info.git
        if git:
            facets["sourceCodeLocation"] = _own(source_code_location_job.SourceCodeLocationJobFacet(
                type="git", url=git["url"], repoUrl=git.get("repoUrl"), path=git.get("path"),
                version=git.get("version"), branch=git.get("branch")))
        return Job(namespace=self.info.namespace, name=self.info.job_name, facets=facets)

    def _parent_run_facets(self, final: bool = False) -> dict[str, Any]:
        params = self.info.run_params
        filters = {
            key: params.get(key)
            for key in ("tags", "from_nodes", "to_nodes", "node_names", "from_inputs", "to_outputs", "namespaces",
                        "load_versions", "runtime_params", "only_missing_outputs")
            if params.get(key)
        }
        facets: dict[str, Any] = {
            "processing_engine": _own(processing_engine_run.ProcessingEngineRunFacet(
                version=self.info.kedro_version, name="kedro", openlineageAdapterVersion=__version__)),
            "kedro": _own(KedroRunFacet(
                runId=self.info.kedro_run_id, kedroVersion=self.info.kedro_version, env=params.get("env"),
                runner=runner_name(params.get("runner")), pipelineNames=list(params.get("pipeline_names") or []),
                filters=json.loads(json.dumps(filters, default=str)))),
        }
        if self.info.parameters and not final:
            facets["executionParameters"] = _own(execution_parameters_run.ExecutionParametersRunFacet(parameters=[
                execution_parameters_run.ExecutionParameter(key=key, value=_format_value(value))
                for key, value in sorted(flatten_parameters(self.info.parameters).items())
            ]))
        return facets

    def _node_event(self, state: RunState, name: str, record: dict[str, Any]) -> None:
        node = self.info.nodes[name]
        namespace = self.info.namespace
        run_facets: dict[str, Any] = {
            "parent": _own(parent_run.ParentRunFacet(
                run=parent_run.Run(runId=self.run_id),
                job=parent_run.Job(namespace=namespace, name=self.info.job_name),
                root=parent_run.Root(run=parent_run.RootRun(runId=self.run_id),
                                     job=parent_run.RootJob(namespace=namespace, name=self.info.job_name)))),
        }
        if record.get("params"):
            run_facets["executionParameters"] = _own(execution_parameters_run.ExecutionParametersRunFacet(parameters=[
                execution_parameters_run.ExecutionParameter(key=key, value=value)
                for key, value in sorted(record["params"].items())
            ]))
        if state == RunState.FAIL:
            run_facets["errorMessage"] = _own(error_message_run.ErrorMessageRunFacet(
                message=record.get("error") or "The node failed.", programmingLanguage="python",
                stackTrace=record.get("traceback")))
        described_inputs = record.get("inputs") or {}
        described_outputs = record.get("outputs") or {}
        assertions = record.get("assertions") or {}
        columns = record.get("columns") or {}
        input_names = _unique(n for n in node.inputs if n in self.info.datasets)
        output_names = _unique(n for n in node.outputs if n in self.info.datasets)
        inputs = [self._input(n, _merge(described_inputs, n), assertions.get(n)) for n in input_names]
        outputs = []
        for dataset in output_names:
            output = self._output(dataset, _merge(described_outputs, dataset), state == RunState.COMPLETE,
                                  assertions.get(dataset) if dataset not in input_names else None,
                                  _merge_columns(columns, dataset))
            outputs.append(output)
        for dataset, extra in assertions.items():
            if dataset not in input_names and dataset not in output_names:
                inputs.append(self._input(dataset, {}, extra))
        self._send(state, self._node_job(name),
                   Run(runId=run_uuid(self.info.kedro_run_id, name), facets=run_facets), time=record.get("time"),
                   inputs=inputs, outputs=outputs)

    def _node_job(self, name: str) -> Job:
        node = self.info.nodes[name]
        facets: dict[str, Any] = {
            "jobType": _own(job_type_job.JobTypeJobFacet(processingType="BATCH", integration="KEDRO", jobType="NODE")),
        }
        git = self.info.git
        if git and node.source_path:
            facets["sourceCodeLocation"] = _own(source_code_location_job.SourceCodeLocationJobFacet(
                type="git", url=git["url"], repoUrl=git.get("repoUrl"), path=node.source_path,
                version=git.get("version"), branch=git.get("branch")))
        return Job(namespace=self.info.namespace, name=name, facets=facets)

    def structure_events(self) -> list[dict[str, Any]]:
        """The pipeline without a run: a DatasetEvent per dataset, a JobEvent per node (its declared inputs and
        outputs), one per modular pipeline (Kedro namespace) and one for the pipeline's job, with the same static
        facets the run events carry. Each JobEvent but the pipeline's names its parent in `headwater_parentJob`: a
        node its innermost modular pipeline, a modular pipeline the one around it, the outermost the pipeline."""
        time = now()
        events: list[Any] = [
            DatasetEvent(eventTime=time, producer=PRODUCER, dataset=StaticDataset(
                namespace=self.info.namespace, name=name, facets=self._static_facets(name)))
            for name in sorted(self.info.datasets)
        ]
        for name, node in self.info.nodes.items():
            job = self._node_job(name)
            job.facets["headwater_parentJob"] = self._parent_facet(node.namespace)
            events.append(JobEvent(
                eventTime=time, producer=PRODUCER, job=job,
                inputs=[InputDataset(namespace=self.info.namespace, name=n, facets=self._static_facets(n))
                        for n in node.inputs],
                outputs=[OutputDataset(namespace=self.info.namespace, name=n, facets=self._static_facets(n))
                         for n in node.outputs]))
        for namespace in self.modular_pipelines():
            outer = namespace.rpartition(".")[0] or None
            events.append(JobEvent(eventTime=time, producer=PRODUCER, job=Job(
                namespace=self.info.namespace, name=self._modular_pipeline_job(namespace), facets={
                    "jobType": _own(job_type_job.JobTypeJobFacet(processingType="BATCH", integration="KEDRO",
                                                                 jobType="MODULAR_PIPELINE")),
                    "headwater_parentJob": self._parent_facet(outer)})))
        events.append(JobEvent(eventTime=time, producer=PRODUCER, job=self._parent_job()))
        return [Serde.to_dict(event) for event in events]

    def modular_pipelines(self) -> list[str]:
        """Every Kedro namespace of the pipeline's nodes and each one around it (`a.b` gives `a` and `a.b`), sorted."""
        found: set[str] = set()
        for node in self.info.nodes.values():
            parts = (node.namespace or "").split(".") if node.namespace else []
            found.update(".".join(parts[:depth]) for depth in range(1, len(parts) + 1))
        return sorted(found)

    def _modular_pipeline_job(self, namespace: str) -> str:
        # Under the pipeline's job name: one modular pipeline may sit in several registered pipelines, each with its
        # own nodes (a filtered pipeline), and `<project>.<namespace>` would be the job of a pipeline registered
        # under the namespace's name, as Kedro's templates do.
        return f"{self.info.job_name}.{namespace}"

    def _parent_facet(self, namespace: str | None) -> BaseFacet:
        name = self._modular_pipeline_job(namespace) if namespace else self.info.job_name
        return _own(ParentJobFacet(job={"namespace": self.info.namespace, "name": name}))

    def _static_facets(self, name: str) -> dict[str, Any]:
        info = self.info.datasets.get(name)
        if info is None:
            return {}
        facets: dict[str, Any] = {
            "kedro": _own(KedroDatasetFacet(type=info.type, catalogNames=sorted(info.catalog_names),
                                            memory=info.memory or None, consumers=info.consumers)),
        }
        if info.storage:
            facets["symlinks"] = _own(symlinks_dataset.SymlinksDatasetFacet(identifiers=[
                symlinks_dataset.Identifier(namespace=info.storage[0], name=info.storage[1], type="file")]))
        if info.owner:
            facets["ownership"] = _own(ownership_dataset.OwnershipDatasetFacet(
                owners=[ownership_dataset.Owner(name=info.owner)]))
        if info.description:
            facets["documentation"] = _own(documentation_dataset.DocumentationDatasetFacet(
                description=info.description))
        return facets

    def _input(self, name: str, described: dict[str, Any], assertions: list[dict[str, Any]] | None) -> InputDataset:
        facets = self._static_facets(name)
        if described.get("schema"):
            facets["schema"] = _schema(described["schema"])
        input_facets: dict[str, Any] = {}
        if assertions:
            input_facets["dataQualityAssertions"] = _assertions(assertions)
        return InputDataset(namespace=self.info.namespace, name=name, facets=facets, inputFacets=input_facets)

    def _output(self, name: str, described: dict[str, Any], complete: bool, assertions: list[dict[str, Any]] | None,
                columns: dict[str, list[str]]) -> OutputDataset:
        facets = self._static_facets(name)
        output_facets: dict[str, Any] = {}
        if described.get("schema"):
            facets["schema"] = _schema(described["schema"])
        if columns:
            facets["columnLineage"] = _own(column_lineage_dataset.ColumnLineageDatasetFacet(fields={
                column: column_lineage_dataset.Fields(
                    inputFields=[column_lineage_dataset.InputField(
                        namespace=self.info.namespace, name=source, field=column,
                        transformations=[column_lineage_dataset.Transformation(
                            type="DIRECT", subtype="IDENTITY",
                            description="inferred: same column name and type in input and output")])
                        for source in sources],
                    transformationType="IDENTITY",
                    transformationDescription="inferred by kedro-openlineage from matching schemas")
                for column, sources in sorted(columns.items())
            }))
        if assertions:
            # The 1-1-0 facet is defined for inputs; on an output it travels as a dataset facet, which servers read.
            facets["dataQualityAssertions"] = _assertions(assertions)
        if complete:
            info = self.info.datasets.get(name)
            size = None
            if info and info.local_file:
                try:
                    size = os.path.getsize(info.local_file)
                except OSError:
                    size = None
            if described.get("rows") is not None or size is not None:
                output_facets["outputStatistics"] = _own(
                    output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                        rowCount=described.get("rows"), size=size))
        return OutputDataset(namespace=self.info.namespace, name=name, facets=facets, outputFacets=output_facets)


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _merge(described: dict[str, Any], dataset: str) -> dict[str, Any]:
    """The description of a dataset from its catalog entries (transcoded entries share one dataset)."""
    merged: dict[str, Any] = {}
    for entry, value in described.items():
        if entry.split("@", 1)[0] == dataset and value:
            merged = {**value, **merged} if merged else dict(value)
    return merged


def _merge_columns(columns: dict[str, dict[str, list[str]]], dataset: str) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for entry, value in columns.items():
        if entry.split("@", 1)[0] == dataset:
            for column, sources in value.items():
                merged[column] = _unique([*merged.get(column, []), *(s.split("@", 1)[0] for s in sources)])
    return merged


def _schema(fields: list[list[str]]) -> BaseFacet:
    return _own(schema_dataset.SchemaDatasetFacet(fields=[
        schema_dataset.SchemaDatasetFacetFields(name=name, type=kind) for name, kind in fields]))


def _assertions(items: list[dict[str, Any]]) -> BaseFacet:
    return _own(data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(assertions=[
        data_quality_assertions_dataset.Assertion(
            assertion=str(item["assertion"]), success=bool(item["success"]), column=item.get("column"),
            severity=item.get("severity"), name=item.get("name"), description=item.get("description"),
            expected=None if item.get("expected") is None else str(item["expected"]),
            actual=None if item.get("actual") is None else str(item["actual"]))
        for item in items
    ]))
