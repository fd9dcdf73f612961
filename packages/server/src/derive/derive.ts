import { readAssertions, type Unevaluated } from '../model/assertions.js';
import {
  codeLocationOf,
  DEFAULT_SOURCE_NAME,
  descriptionOf,
  jobTypeOf,
  nominalTimesOf,
  sourceNameOf,
} from '../model/describing-facets.js';
import { executionOf, unevaluatedOf } from '../model/execution.js';
import { DATASET_FIELD, datasetVersionUuid, jobVersionUuid, simpleJobName } from '../model/identity.js';
import {
  emptyChangeset,
  type Changeset,
  type DatasetSighting,
  type Direction,
  type FacetUpsert,
  type JobSighting,
} from '../store/changeset.js';
import { canonicalJson, contentHash64 } from '../core/ids.js';
import {
  declaredParentOf,
  type EventDataset,
  type FacetMap,
  type NormalizedEvent,
  type Ref,
} from '../model/normalize.js';
import { applyRunEvent, initialRunState, runStateOf, sameRunState } from '../model/run-state.js';
import {
  entityKey,
  type DatasetRow,
  type JobRow,
  type ModelState,
  type Ms,
  type NamespaceRow,
  type RunRow,
  type SourceRow,
} from '../store/model-state.js';

// Some times move on every event: updated_at of namespaces, datasets and jobs, and the time that guards a
// dataset's current version. Rewriting a row for that alone would cost a row per dataset per event, so the
// mirror keeps them exact and the store gets them when they have moved by this much, or with any other change.
const TIME_RESOLUTION_MS = 1_000;

const DEFAULT_SOURCE = { name: DEFAULT_SOURCE_NAME, type: 'POSTGRESQL', connectionUrl: '' };

type Json = Record<string, unknown>;
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Derives the lineage-model changes of a batch of NEW events (duplicates already removed), against the writer's
 * mirror `state`. It leaves the mirror's rows as they are (it changes copies, which the changeset holds), but it
 * is not pure: it hands out the ids of new rows by moving the mirror's counters (`state.next`) on, and fills the
 * mirror's memo of dataset version uuids. The caller (IngestPipeline) applies the changeset to the mirror with
 * {@link applyChangeset} as soon as it is derived, before the write commits, so that the next batch is derived on
 * top of it while this one is written; when a write fails, the pipeline rebuilds the mirror from the store. Runs
 * named by the events must have been loaded into `state.runs` first (readRuns in store/writer.ts, then
 * ModelState.addRuns). `firstSeq` is the id the first event is stored with: the history rows keep the arrival
 * order with it.
 */
export function deriveChanges(
  state: ModelState,
  events: readonly NormalizedEvent[],
  firstSeq: number,
): Changeset {
  const derivation = new Derivation(state);
  events.forEach((event, index) => derivation.add(event, firstSeq + index));
  derivation.finish();
  return derivation.changes;
}

class Derivation {
  readonly changes = emptyChangeset();
  readonly #state: ModelState;
  readonly #next: ModelState['next'];
  readonly #datasetsById = new Map<number, DatasetRow>();
  /** The event being derived and its arrival order, for the history rows. */
  #event: NormalizedEvent | undefined;
  #seq = 0;

  constructor(state: ModelState) {
    this.#state = state;
    this.#next = state.next;
  }

  add(event: NormalizedEvent, seq: number): void {
    const t = event.eventTime;
    this.#event = event;
    this.#seq = seq;
    if (event.kind === 'dataset') {
      if (event.dataset) this.#datasetMention(event.dataset, 1, t, event, null, null);
      return;
    }
    if (!event.job) return;
    const parent = event.run?.parent;
    // A JobEvent has no run, so no parent run; it may name its parent job (a pipeline's node) in parentJob.
    const parentJobRef =
      parent?.job ?? (event.kind === 'job' ? declaredParentOf(event.job.facets) : undefined);
    const job = this.#job(event.job, t, parentJobRef);
    const jobFacets = this.#facets(
      this.changes.jobFacets,
      'job',
      job.id,
      event.job.facets,
      t,
      event.run?.uuid ?? null,
    );
    const sighting = this.#jobSighting(job, 0, event.run?.uuid ?? null);
    sighting.facets = Object.fromEntries(jobFacets);
    if (parent && parent.runUuid !== event.run?.uuid) {
      const parentJob = this.#touchJob(parent.job, t);
      this.#jobSighting(parentJob, 1, parent.runUuid);
      if (parentJob.id !== job.id) sighting.parentJobId = parentJob.id;
    }
    if (event.kind === 'job') {
      if (parentJobRef) {
        const parentJob = this.#touchJob(parentJobRef, t);
        if (parentJob.id !== job.id) sighting.parentJobId = parentJob.id;
      }
      sighting.versionId = this.#jobEvent(event, job);
      return;
    }
    const run = event.run;
    if (!run) return;
    const runRow = this.#run(run.uuid, job, event);
    sighting.runFacets = Object.fromEntries(
      this.#facets(this.changes.runFacets, 'run', run.uuid, run.facets, t, null),
    );
    for (const input of event.inputs) this.#datasetMention(input, 0, t, event, runRow, job);
    for (const output of event.outputs) this.#datasetMention(output, 1, t, event, runRow, job);
    this.#afterRunEvent(runRow, job);
  }

  /** The history row of the current event for a job (the first one made for this event and kind). */
  #jobSighting(job: JobRow, kind: 0 | 1, runUuid: string | null): JobSighting {
    const event = this.#event!;
    const key = `${job.id}:${kind}:${event.hash}`;
    let sighting = this.changes.jobSightings.get(key);
    if (!sighting) {
      sighting = {
        jobId: job.id,
        kind,
        eventHash: event.hash,
        eventTime: event.eventTime,
        seq: this.#seq,
        runUuid,
        eventType: kind === 0 ? (event.eventType ?? null) : null,
        versionId: null,
        parentJobId: null,
        facets: {},
        runFacets: {},
      };
      this.changes.jobSightings.set(key, sighting);
    }
    return sighting;
  }

  /** Records that the current event named a dataset (the first sighting per event and kind is kept). */
  #datasetSighting(
    datasetId: number,
    kind: DatasetSighting['kind'],
    fields: Partial<Omit<DatasetSighting, 'datasetId' | 'kind' | 'eventHash' | 'eventTime' | 'seq'>>,
  ): void {
    const event = this.#event!;
    const key = `${datasetId}:${kind}:${event.hash}`;
    if (this.changes.datasetSightings.has(key)) return;
    this.changes.datasetSightings.set(key, {
      datasetId,
      kind,
      eventHash: event.hash,
      eventTime: event.eventTime,
      seq: this.#seq,
      jobId: fields.jobId ?? null,
      runUuid: fields.runUuid ?? null,
      versionId: fields.versionId ?? null,
      definesVersion: fields.definesVersion ?? false,
      modifies: fields.modifies ?? false,
      facets: fields.facets ?? {},
      ioFacets: fields.ioFacets ?? {},
    });
  }

  /** Decides which touched rows differ from what is stored. */
  finish(): void {
    const { changes } = this;
    const moved = (now: number | null, stored: number | null) =>
      now !== null && (stored === null || Math.abs(now - stored) >= TIME_RESOLUTION_MS);
    for (const [name, row] of changes.namespaces) {
      const old = this.#state.namespaces.get(name);
      if (
        !old ||
        old.isHidden !== row.isHidden ||
        old.createdAt !== row.createdAt ||
        moved(row.updatedAt, old.updatedAt)
      ) {
        changes.persist.namespaces.add(name);
      }
    }
    for (const [key, row] of changes.datasets) {
      const old = this.#state.datasets.get(key);
      if (
        !old ||
        !sameDataset(old, row) ||
        moved(row.updatedAt, old.storedUpdatedAt) ||
        moved(row.currentVersionTime, old.storedVersionTime)
      ) {
        changes.persist.datasets.add(key);
      }
    }
    for (const [key, row] of changes.jobs) {
      const old = this.#state.jobs.get(key);
      if (!old || !sameJob(old, row) || moved(row.updatedAt, old.storedUpdatedAt))
        changes.persist.jobs.add(key);
    }
    for (const [uuid, row] of changes.runs) {
      const old = this.#state.runs.get(uuid);
      if (
        !old ||
        !sameRunState(old.aggregate, row.aggregate) ||
        old.parentRunUuid !== row.parentRunUuid ||
        old.jobVersionId !== row.jobVersionId ||
        old.nominalStartTime !== row.nominalStartTime ||
        old.nominalEndTime !== row.nominalEndTime ||
        old.codeLocation !== row.codeLocation ||
        old.codeLocationAt !== row.codeLocationAt ||
        old.execution !== row.execution ||
        old.executionAt !== row.executionAt ||
        old.externalId !== row.externalId
      ) {
        changes.persist.runs.add(uuid);
      }
    }
  }

  // ---- namespaces, sources -------------------------------------------------------------------------------

  #namespace(name: string, t: Ms): NamespaceRow {
    let row = this.changes.namespaces.get(name);
    if (!row) {
      const known = this.#state.namespaces.get(name);
      row = known
        ? { ...known }
        : { id: this.#next.namespace++, name, createdAt: t, updatedAt: t, isHidden: false };
      this.changes.namespaces.set(name, row);
    }
    row.createdAt = Math.min(row.createdAt, t);
    row.updatedAt = Math.max(row.updatedAt, t);
    row.isHidden = false;
    return row;
  }

  #namespaceName(id: number): string {
    const known = this.#state.namespacesById.get(id);
    if (known) return known.name;
    for (const row of this.changes.namespaces.values()) if (row.id === id) return row.name;
    throw new Error(`namespace ${id} is unknown to the writer`);
  }

  #source(dataSource: Json | undefined, t: Ms): SourceRow {
    const name = sourceNameOf(dataSource);
    const uri = str(dataSource?.uri);
    const connectionUrl = uri ?? DEFAULT_SOURCE.connectionUrl;
    const type = uri ? sourceTypeOf(uri) : DEFAULT_SOURCE.type;
    const known = this.changes.sources.get(name) ?? this.#state.sources.get(name);
    // The type follows the URI's scheme, so the same URI keeps the type the source has: one declared through
    // Marquez's legacy PUT /api/v1/sources (POSTGRESQL for a jdbc:postgresql: URL) is not undone by the
    // dataSource facet of the datasets that name it.
    if (known && (t < known.updatedAt || known.connectionUrl === connectionUrl)) return known;
    const row: SourceRow = known
      ? { ...known, type, connectionUrl, updatedAt: t }
      : { id: this.#next.source++, name, type, connectionUrl, createdAt: t, updatedAt: t };
    this.changes.sources.set(name, row);
    return row;
  }

  // ---- jobs and runs ---------------------------------------------------------------------------------------

  #touchJob(ref: Ref, t: Ms): JobRow {
    const namespace = this.#namespace(ref.namespace, t);
    const key = entityKey(namespace.id, ref.name);
    let row = this.changes.jobs.get(key);
    if (!row) {
      const known = this.#state.jobs.get(key);
      row = known
        ? { ...known }
        : {
            id: this.#next.job++,
            namespaceId: namespace.id,
            name: ref.name,
            simpleName: ref.name,
            parentJobId: null,
            type: 'BATCH',
            integration: null,
            jobType: null,
            description: null,
            location: null,
            currentVersionId: null,
            currentVersionTime: null,
            isHidden: false,
            createdAt: t,
            updatedAt: t,
            storedUpdatedAt: null,
          };
      this.changes.jobs.set(key, row);
    }
    row.createdAt = Math.min(row.createdAt, t);
    return row;
  }

  #job(ref: Ref & { facets: FacetMap }, t: Ms, parentRef: Ref | undefined): JobRow {
    const parent =
      parentRef && (parentRef.namespace !== ref.namespace || parentRef.name !== ref.name)
        ? this.#touchJob(parentRef, t)
        : undefined;
    const row = this.#touchJob(ref, t);
    const newest = t >= row.updatedAt;
    row.updatedAt = Math.max(row.updatedAt, t);
    row.isHidden = false;
    if (parent && (newest || row.parentJobId === null)) {
      row.parentJobId = parent.id;
      row.simpleName = simpleJobName(ref.name, parent.name);
    }
    // What a facet describes follows the facet's newest value, as the merged facets do, in any arrival order,
    // and by the rules time travel reads the facets of a time with (model/describing-facets.ts).
    const { jobType, documentation, sourceCodeLocation } = ref.facets;
    if (jobType && this.#newestFacet('job', row.id, 'jobType', t)) {
      row.type = jobTypeOf(jobType);
      row.integration = str(jobType.integration) ?? row.integration;
      row.jobType = str(jobType.jobType) ?? row.jobType;
    }
    if (documentation && this.#newestFacet('job', row.id, 'documentation', t)) {
      row.description = descriptionOf(documentation);
    }
    if (sourceCodeLocation && this.#newestFacet('job', row.id, 'sourceCodeLocation', t)) {
      row.location = codeLocationOf(sourceCodeLocation);
    }
    return row;
  }

  #touchRun(uuid: string, jobId: number, t: Ms): RunRow {
    let run = this.changes.runs.get(uuid);
    if (!run) {
      const known = this.#state.runs.get(uuid);
      run = known
        ? { ...known, io: new Map(known.io) }
        : {
            uuid,
            externalId: null,
            jobId,
            parentRunUuid: null,
            jobVersionId: null,
            aggregate: initialRunState(undefined, t),
            nominalStartTime: null,
            nominalEndTime: null,
            codeLocation: null,
            codeLocationAt: null,
            execution: null,
            executionAt: null,
            io: new Map(),
          };
      this.changes.runs.set(uuid, run);
    }
    return run;
  }

  #run(uuid: string, job: JobRow, event: NormalizedEvent): RunRow {
    const t = event.eventTime;
    const run = this.#touchRun(uuid, job.id, t);
    const newest = t >= run.aggregate.lastEventAt;
    run.aggregate = applyRunEvent(run.aggregate, event.eventType, t);
    // A parent named before its own events created a placeholder under the parent's job; the run's own
    // events say which job it belongs to.
    run.jobId = job.id;
    if (run.externalId === null && event.run?.externalId !== undefined) run.externalId = event.run.externalId;
    const parent = event.run?.parent;
    if (parent && parent.runUuid !== uuid) {
      if (newest || run.parentRunUuid === null) run.parentRunUuid = parent.runUuid;
      // A parent run is known from the first event that names it, its own or a child's (a child may come before,
      // or without, any event of the parent's own: the placeholder keeps the link followable). Its first and
      // last event times take in its children's, so they do not depend on the order events arrive in.
      const parentRun = this.#touchRun(parent.runUuid, this.#touchJob(parent.job, t).id, t);
      parentRun.aggregate = applyRunEvent(parentRun.aggregate, undefined, t);
    }
    const location = event.job?.facets.sourceCodeLocation;
    if (location) {
      // The newest location the run's events give (equal times: the greater url, whatever the arrival order).
      const url = codeLocationOf(location);
      const at = run.codeLocationAt;
      if (at === null || t > at || (t === at && (url ?? '') > (run.codeLocation ?? ''))) {
        run.codeLocation = url;
        run.codeLocationAt = t;
      }
    }
    const execution = executionOf(event);
    if (execution !== undefined) {
      // The newest event that says wins (equal times: the greater outcome, whatever the arrival order).
      const at = run.executionAt;
      if (at === null || t > at || (t === at && execution > (run.execution ?? ''))) {
        run.execution = execution;
        run.executionAt = t;
      }
    }
    const nominal = event.run?.facets.nominalTime;
    if (nominal && (newest || run.nominalStartTime === null)) {
      const { startMs, endMs } = nominalTimesOf(nominal);
      run.nominalStartTime = startMs;
      run.nominalEndTime = endMs;
    }
    return run;
  }

  #afterRunEvent(run: RunRow, job: JobRow): void {
    const state = runStateOf(run.aggregate);
    if (state === 'NEW' || state === 'RUNNING') return;
    // The job version is what the run ran: the job's code location and the datasets it read and wrote.
    const inputs: Ref[] = [];
    const outputs: Ref[] = [];
    for (const key of run.io.keys()) {
      const [direction, id] = key.split(':');
      const dataset = this.#datasetsById.get(Number(id)) ?? this.#state.datasetsById.get(Number(id));
      if (!dataset) continue;
      const ref = { namespace: this.#namespaceName(dataset.namespaceId), name: dataset.name };
      (direction === '0' ? inputs : outputs).push(ref);
    }
    // The code the run says it ran; for a run that says nothing, the job's.
    const location = run.codeLocationAt !== null ? run.codeLocation : job.location;
    run.jobVersionId = this.#jobVersion(job, location, inputs, outputs, run.aggregate.firstEventAt);
    const terminalAt = run.aggregate.terminal!.at;
    if (job.currentVersionTime === null || terminalAt >= job.currentVersionTime) {
      job.currentVersionId = run.jobVersionId;
      job.currentVersionTime = terminalAt;
    }
  }

  /** The version of a job that ran the code at `location` and read and wrote these datasets. */
  #jobVersion(job: JobRow, location: string | null, inputs: Ref[], outputs: Ref[], t: Ms): number {
    const namespace = this.#namespaceName(job.namespaceId);
    const version = jobVersionUuid(namespace, job.name, location, inputs, outputs);
    const known = this.changes.jobVersions.get(version) ?? this.#state.jobVersions.get(version);
    if (known) return known.id;
    const id = this.#next.jobVersion++;
    this.changes.jobVersions.set(version, {
      id,
      jobId: job.id,
      version,
      location,
      inputs,
      outputs,
      createdAt: t,
    });
    return id;
  }

  /** A JobEvent declares a job's inputs and outputs without a run: static lineage. Returns the job version. */
  #jobEvent(event: NormalizedEvent, job: JobRow): number {
    const t = event.eventTime;
    const inputs: Ref[] = [];
    const outputs: Ref[] = [];
    for (const [direction, list, refs] of [
      [0, event.inputs, inputs],
      [1, event.outputs, outputs],
    ] as const) {
      for (const dataset of list) {
        this.#datasetMention(dataset, direction, t, event, null, job);
        refs.push({ namespace: dataset.namespace, name: dataset.name });
      }
    }
    // A JobEvent's version is the code its own facets name.
    const location = event.job?.facets.sourceCodeLocation;
    const versionId = this.#jobVersion(job, location ? codeLocationOf(location) : null, inputs, outputs, t);
    if (job.currentVersionTime === null || t >= job.currentVersionTime) {
      job.currentVersionId = versionId;
      job.currentVersionTime = t;
    }
    return versionId;
  }

  // ---- datasets --------------------------------------------------------------------------------------------

  #touchDataset(ref: Ref, t: Ms, dataSource: Json | undefined): DatasetRow {
    const namespace = this.#namespace(ref.namespace, t);
    const key = entityKey(namespace.id, ref.name);
    let row = this.changes.datasets.get(key);
    if (!row) {
      const known = this.#state.datasets.get(key);
      row = known
        ? { ...known }
        : {
            id: this.#next.dataset++,
            namespaceId: namespace.id,
            name: ref.name,
            sourceId: this.#source(dataSource, t).id,
            description: null,
            currentVersionId: null,
            currentVersionTime: null,
            lifecycleState: null,
            lastModifiedAt: null,
            isHidden: false,
            createdAt: t,
            updatedAt: t,
            storedUpdatedAt: null,
            storedVersionTime: null,
          };
      this.changes.datasets.set(key, row);
      this.#datasetsById.set(row.id, row);
    }
    row.createdAt = Math.min(row.createdAt, t);
    return row;
  }

  #dataset(ref: Ref, t: Ms, facets: FacetMap): DatasetRow {
    const dataSource = facets.dataSource;
    const row = this.#touchDataset(ref, t, dataSource);
    row.updatedAt = Math.max(row.updatedAt, t);
    row.isHidden = false;
    if (dataSource && this.#newestFacet('dataset', row.id, 'dataSource', t)) {
      row.sourceId = this.#source(dataSource, t).id;
    }
    const documentation = facets.documentation;
    if (documentation && this.#newestFacet('dataset', row.id, 'documentation', t)) {
      row.description = descriptionOf(documentation);
    }
    return row;
  }

  /**
   * Whether a value of an entity's facet at `t` is (so far) its newest: call before the event's facets are
   * staged. The mirror knows the describing facets of every entity from the start (ModelState.load).
   */
  #newestFacet(kind: 'job' | 'dataset', entity: number, name: string, t: Ms): boolean {
    const key = `${kind}:${entity}:${name}`;
    const latest = this.changes.facetTimes.get(key) ?? this.#state.facets.get(key);
    return latest === undefined || t >= latest.latestAt;
  }

  #datasetMention(
    mention: EventDataset,
    direction: Direction,
    t: Ms,
    event: NormalizedEvent,
    run: RunRow | null,
    job: JobRow | null,
  ): void {
    const dataset = this.#dataset(mention, t, mention.facets);
    const hashes = this.#facets(
      this.changes.datasetFacets,
      'dataset',
      dataset.id,
      mention.facets,
      t,
      run?.uuid ?? null,
    );
    const { schema, lifecycleStateChange, storage, symlinks } = mention.facets;
    const definesVersion = (schema ?? lifecycleStateChange ?? storage ?? symlinks) !== undefined;
    const versionId = this.#datasetVersion(
      dataset,
      mention,
      hashes,
      t,
      direction === 1 ? (run?.uuid ?? null) : null,
      definesVersion,
    );
    const completes = event.eventType === 'COMPLETE' || event.kind === 'dataset';
    const modifies = direction === 1 && completes;
    if (modifies && (dataset.lastModifiedAt === null || t > dataset.lastModifiedAt)) {
      dataset.lastModifiedAt = t;
    }
    this.#datasetSighting(dataset.id, event.kind === 'dataset' ? 2 : direction, {
      jobId: job?.id ?? null,
      runUuid: run?.uuid ?? null,
      versionId,
      definesVersion,
      modifies,
      facets: Object.fromEntries(hashes),
      ioFacets: run ? mention.ioFacets : {},
    });
    if (run) this.#runIo(run, direction, dataset.id, versionId, mention.ioFacets, t);
    if (direction === 1) this.#columnLineage(dataset, mention.facets.columnLineage, t);
    this.#symlinks(dataset, mention.facets.symlinks, t);
    if (run) this.#quality(run.uuid, dataset.id, mention, unevaluatedOf(event), t);
  }

  #datasetVersion(
    dataset: DatasetRow,
    mention: EventDataset,
    hashes: ReadonlyMap<string, string>,
    t: Ms,
    writtenBy: string | null,
    definesVersion: boolean,
  ): number {
    const { facets } = mention;
    const schema = facets.schema;
    const lifecycle = facets.lifecycleStateChange;
    const storage = facets.storage;
    const symlinks = facets.symlinks;
    // An event that does not describe the dataset says nothing of its version: it names the current one.
    if (!definesVersion && dataset.currentVersionId !== null) return dataset.currentVersionId;
    const lifecycleState = str(lifecycle?.lifecycleStateChange);
    const fields = Array.isArray(schema?.fields) ? (schema.fields as unknown[]) : [];
    // The version is addressed by canonical JSON (key order does not matter), which is costly to build; the
    // facets' text hashes, already computed, key a memo of it, since producers repeat the same text.
    const memoKey = `${dataset.id}|${hashes.get('schema')}|${hashes.get('lifecycleStateChange')}|${hashes.get('storage')}|${hashes.get('symlinks')}`;
    let version = this.#state.versionMemo.get(memoKey);
    if (version === undefined) {
      version = datasetVersionUuid(
        this.#namespaceName(dataset.namespaceId),
        dataset.name,
        fields,
        lifecycleState,
        storage ? { layer: storage.storageLayer ?? null, format: storage.fileFormat ?? null } : null,
        Array.isArray(symlinks?.identifiers)
          ? (symlinks.identifiers as unknown[]).map(canonicalJson).sort()
          : null,
      );
      this.#state.versionMemo.set(memoKey, version);
    }
    let id: number;
    const staged = this.changes.datasetVersions.get(version);
    const known = this.#state.datasetVersions.get(version);
    if (staged) {
      id = staged.id;
      if (t < staged.createdAt) {
        // Seen earlier in event time than the first sighting in this batch: that is its creation.
        staged.createdAt = t;
        staged.createdByRun = writtenBy;
      }
    } else if (known) {
      id = known.id;
    } else {
      id = this.#next.datasetVersion++;
      this.changes.datasetVersions.set(version, {
        id,
        datasetId: dataset.id,
        version,
        fields,
        lifecycleState,
        createdAt: t,
        createdByRun: writtenBy,
      });
    }
    if (!definesVersion) {
      // The empty version of a dataset named before anything described it. It carries no time, so that any
      // description replaces it, whatever order the events arrive in.
      dataset.currentVersionId = id;
    } else if (dataset.currentVersionTime === null || t >= dataset.currentVersionTime) {
      dataset.currentVersionId = id;
      dataset.currentVersionTime = t;
      if (lifecycle) dataset.lifecycleState = lifecycleState;
    }
    return id;
  }

  #runIo(run: RunRow, direction: Direction, datasetId: number, versionId: number, facets: FacetMap, t: Ms) {
    const ioKey = `${direction}:${datasetId}`;
    const known = run.io.get(ioKey);
    const hasFacets = Object.keys(facets).length > 0;
    const key = `${run.uuid}:${ioKey}`;
    const staged = this.changes.runIo.get(key);
    if (staged) {
      if (hasFacets) staged.facets = { ...staged.facets, ...facets };
      if (t >= staged.eventTime) staged.versionId = versionId;
      staged.eventTime = Math.max(staged.eventTime, t);
    } else if (known !== versionId || hasFacets) {
      this.changes.runIo.set(key, {
        runUuid: run.uuid,
        direction,
        datasetId,
        versionId,
        facets,
        eventTime: t,
      });
    }
    if (known === undefined || t >= run.aggregate.lastEventAt) run.io.set(ioKey, versionId);
  }

  #columnLineage(output: DatasetRow, facet: Json | undefined, t: Ms): void {
    if (!facet) return;
    for (const [field, spec] of Object.entries(isObject(facet.fields) ? facet.fields : {})) {
      if (isObject(spec) && Array.isArray(spec.inputFields)) this.#columnInputs(output, field, spec, t);
    }
    // The facet's `dataset` list (1-2-0): input columns that influence the whole output (JOIN, FILTER,
    // GROUP_BY, SORT...). Stored as column edges into the output field '' (DATASET_FIELD).
    if (Array.isArray(facet.dataset)) {
      this.#columnInputs(output, DATASET_FIELD, { inputFields: facet.dataset }, t);
    }
  }

  #columnInputs(output: DatasetRow, field: string, spec: Json, t: Ms): void {
    for (const input of spec.inputFields as unknown[]) {
      if (!isObject(input)) continue;
      const namespace = str(input.namespace);
      const name = str(input.name);
      const inputField = str(input.field);
      if (!namespace || !name || !inputField) continue;
      const inputDataset = this.#touchDataset({ namespace, name }, t, undefined);
      // Only needed when the event does not name the dataset otherwise (inputs come first).
      const hash = this.#event!.hash;
      if (
        ![0, 1, 2].some((kind) => this.changes.datasetSightings.has(`${inputDataset.id}:${kind}:${hash}`))
      ) {
        this.#datasetSighting(inputDataset.id, 3, {});
      }
      const transformations = Array.isArray(input.transformations)
        ? (input.transformations as unknown[]).filter(isObject)
        : [];
      // Before facet 1-1-0, the transformation was described once per output field.
      const list: Json[] =
        transformations.length > 0
          ? transformations
          : [
              {
                type: str(spec.transformationType) ?? '',
                description: str(spec.transformationDescription),
              },
            ];
      for (const transformation of list) {
        const type = str(transformation.type) ?? '';
        const subtype = str(transformation.subtype) ?? '';
        const key = [output.id, field, inputDataset.id, inputField, type, subtype].join('\u0000');
        const known = this.#state.columnEdges.get(key);
        if (known !== undefined && known <= t) continue;
        const staged = this.changes.columnEdges.get(key);
        if (staged) {
          staged.seen = Math.min(staged.seen, t);
          continue;
        }
        this.changes.columnEdges.set(key, {
          outputDatasetId: output.id,
          outputField: field,
          inputDatasetId: inputDataset.id,
          inputField,
          type,
          subtype,
          description: str(transformation.description),
          masking: transformation.masking === true,
          seen: t,
        });
      }
    }
  }

  #symlinks(dataset: DatasetRow, facet: Json | undefined, t: Ms): void {
    if (!facet || !Array.isArray(facet.identifiers)) return;
    for (const identifier of facet.identifiers as unknown[]) {
      if (!isObject(identifier)) continue;
      const namespace = str(identifier.namespace);
      const name = str(identifier.name);
      if (!namespace || !name) continue;
      // As in Marquez, the namespace of another name exists: the dataset is reachable under it.
      this.#namespace(namespace, t);
      const key = `${dataset.id}\u0000${namespace}\u0000${name}`;
      if (this.#state.symlinks.has(key) || this.changes.symlinks.has(key)) continue;
      this.changes.symlinks.set(key, {
        datasetId: dataset.id,
        namespace,
        name,
        type: str(identifier.type) ?? '',
      });
    }
  }

  #quality(runUuid: string, datasetId: number, mention: EventDataset, unevaluated: Unevaluated, t: Ms): void {
    for (const result of readAssertions([mention.ioFacets, mention.facets], unevaluated)) {
      const key = [runUuid, datasetId, result.identity].join('\u0000');
      const existing = this.changes.assertions.get(key);
      if (existing && existing.eventTime > t) continue;
      this.changes.assertions.set(key, { runUuid, datasetId, ...result, eventTime: t });
    }
    const metrics = mention.ioFacets.dataQualityMetrics ?? mention.facets.dataQualityMetrics;
    if (metrics) {
      const key = `${runUuid}\u0000${datasetId}`;
      const existing = this.changes.metrics.get(key);
      if (!existing || existing.eventTime <= t) {
        this.changes.metrics.set(key, { runUuid, datasetId, metrics, eventTime: t });
      }
    }
  }

  // ---- facets ----------------------------------------------------------------------------------------------

  #facets(
    target: Map<string, FacetUpsert>,
    kind: 'run' | 'job' | 'dataset',
    entity: string | number,
    facets: FacetMap,
    t: Ms,
    runUuid: string | null,
  ): Map<string, string> {
    const hashes = new Map<string, string>();
    for (const name in facets) {
      const facet = facets[name]!;
      const hash = contentHash64(JSON.stringify(facet));
      hashes.set(name, hash);
      const cacheKey = `${kind}:${entity}:${name}`;
      const latest = this.changes.facetTimes.get(cacheKey) ?? this.#state.facets.get(cacheKey);
      if (latest && latest.hash === hash) {
        // The latest value again: the merged view and the history do not change. Only the mirror learns the
        // newer time, which matters if an older, different value arrives later (handled below).
        if (t > latest.latestAt) this.changes.facetTimes.set(cacheKey, { ...latest, latestAt: t });
        continue;
      }
      this.#stageFacet(target, entity, name, hash, facet, t, runUuid);
      if (latest && t < latest.latestAt && latest.storedAt < latest.latestAt) {
        // An older value arrived out of order; the stored time of the latest value must beat it. The row exists,
        // so the upsert only moves its time (the placeholder body is never inserted).
        this.#stageFacet(target, entity, name, latest.hash, {}, latest.latestAt, runUuid);
      }
      if (!latest || t >= latest.latestAt) {
        this.changes.facetTimes.set(cacheKey, { hash, latestAt: t, storedAt: t });
      } else if (latest.storedAt < latest.latestAt) {
        this.changes.facetTimes.set(cacheKey, { ...latest, storedAt: latest.latestAt });
      }
    }
    return hashes;
  }

  #stageFacet(
    target: Map<string, FacetUpsert>,
    entity: string | number,
    name: string,
    hash: string,
    facet: Record<string, unknown>,
    t: Ms,
    runUuid: string | null,
  ): void {
    const key = `${entity}\u0000${name}\u0000${hash}`;
    const staged = target.get(key);
    if (staged) staged.eventTime = Math.max(staged.eventTime, t);
    else target.set(key, { entity, name, hash, facet, eventTime: t, runUuid });
  }
}

function sameJob(a: JobRow, b: JobRow): boolean {
  return (
    a.parentJobId === b.parentJobId &&
    a.simpleName === b.simpleName &&
    a.type === b.type &&
    a.integration === b.integration &&
    a.jobType === b.jobType &&
    a.description === b.description &&
    a.location === b.location &&
    a.currentVersionId === b.currentVersionId &&
    a.currentVersionTime === b.currentVersionTime &&
    a.isHidden === b.isHidden &&
    a.createdAt === b.createdAt
  );
}

function sameDataset(a: DatasetRow, b: DatasetRow): boolean {
  return (
    a.sourceId === b.sourceId &&
    a.description === b.description &&
    a.currentVersionId === b.currentVersionId &&
    a.lifecycleState === b.lifecycleState &&
    a.lastModifiedAt === b.lastModifiedAt &&
    a.isHidden === b.isHidden &&
    a.createdAt === b.createdAt
  );
}

/** The source type from a dataSource URI's scheme, upper-cased like Marquez's source types. */
function sourceTypeOf(uri: string): string {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(uri)?.[1];
  return (scheme ?? uri).toUpperCase();
}
