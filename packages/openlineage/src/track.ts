import { AsyncLocalStorage } from 'node:async_hooks';
import type { OpenLineageClient } from './client.js';
import { errorMessageRunFacet, nominalTimeRunFacet, parentRunFacet } from './generated/facet-builders.js';
import type { InputDataset, JobFacets, OutputDataset, ParentRunFacet, RunFacets } from './generated/model.js';
import type { EventType } from './events.js';
import { runEvent } from './events.js';
import { uuidv7 } from './uuid.js';

/** A job as `track` takes it. */
export interface TrackedJob {
  readonly namespace: string;
  readonly name: string;
  readonly facets?: JobFacets;
}

/** Options of {@link track}. */
export interface TrackOptions {
  /** The client the run's events go through. */
  readonly client: OpenLineageClient;
  /** The job this run belongs to. */
  readonly job: TrackedJob;
  /** Datasets read; sent on START and on the terminal event. */
  readonly inputs?: readonly InputDataset[];
  /** Datasets written; sent on START and on the terminal event. */
  readonly outputs?: readonly OutputDataset[];
  /**
   * The run id.
   * @default a new UUIDv7
   */
  readonly runId?: string;
  /** Facets for every event of the run (e.g. `processing_engine`). */
  readonly runFacets?: RunFacets;
  /** The scheduled (logical) time of the run: becomes the `nominalTime` run facet. */
  readonly nominalTime?: { readonly start: Date | string; readonly end?: Date | string };
  /**
   * The parent run. By default the run `track` is nested in (through async calls too) becomes the parent;
   * pass a reference to set another, or `null` for none.
   */
  readonly parent?: RunReference | null;
}

/** Identifies a run (and its job), e.g. to name a parent run started elsewhere. */
export interface RunReference {
  readonly runId: string;
  readonly job: { readonly namespace: string; readonly name: string };
  /** The root of the run hierarchy, when not the run itself. */
  readonly root?: {
    readonly runId: string;
    readonly job: { readonly namespace: string; readonly name: string };
  };
}

/** The run in progress, handed to the tracked function and available through {@link currentRun}. */
export interface TrackedRun extends RunReference {
  /** Adds run facets to the events still to come (the terminal event at least). */
  addRunFacets(facets: RunFacets): void;
  /** Adds job facets to the events still to come. */
  addJobFacets(facets: JobFacets): void;
  /** Adds datasets discovered during the run to the terminal event. */
  addInputs(...datasets: InputDataset[]): void;
  /** Adds datasets discovered during the run to the terminal event. */
  addOutputs(...datasets: OutputDataset[]): void;
  /** Emits a RUNNING event now, with everything added so far. */
  running(): void;
}

const runs = new AsyncLocalStorage<TrackedRun>();

/** The run `track` is executing right now (through async calls too), or `undefined` outside any. */
export function currentRun(): TrackedRun | undefined {
  return runs.getStore();
}

/**
 * Runs `fn` as one run of a job: emits START, then COMPLETE when it returns, or FAIL with an
 * `errorMessage` facet when it throws. The user's value or error comes back unchanged (the same object),
 * and nothing here ever throws into the host program or waits on the backend: events go through
 * `client.emit()` in the background (call `client.flush()` to wait for them).
 *
 * A `track` nested in another (also across `await`) gets a `parent` facet pointing at the outer run, and
 * the root of the hierarchy.
 *
 * @example
 * ```ts
 * const rows = await track(
 *   { client, job: { namespace: 'etl', name: 'load_orders' }, inputs: [inputDataset(orders)] },
 *   async (run) => {
 *     const result = await load();
 *     run.addOutputs(outputDataset({ namespace: 'postgres://db:5432', name: 'shop.public.orders_clean' }));
 *     return result;
 *   },
 * );
 * ```
 */
export function track<T>(options: TrackOptions, fn: (run: TrackedRun) => T): T {
  const { client } = options;
  const parent = options.parent === undefined ? runs.getStore() : (options.parent ?? undefined);
  const runId = options.runId ?? uuidv7();
  const job = { namespace: options.job.namespace, name: options.job.name };
  let jobFacets: JobFacets = { ...options.job.facets };
  let runFacets: RunFacets = { ...options.runFacets };
  const inputs = [...(options.inputs ?? [])];
  const outputs = [...(options.outputs ?? [])];
  const producer = client.producer;

  try {
    if (options.nominalTime !== undefined) {
      const { start, end } = options.nominalTime;
      runFacets.nominalTime = nominalTimeRunFacet(
        {
          nominalStartTime: typeof start === 'string' ? start : start.toISOString(),
          ...(end === undefined ? {} : { nominalEndTime: typeof end === 'string' ? end : end.toISOString() }),
        },
        { producer },
      );
    }
    if (parent !== undefined) runFacets.parent = parentFacet(parent, producer);
  } catch {
    // A bad date must not stop the user's function; the run goes out without the facet.
  }

  const emit = (eventType: EventType, extraRunFacets?: RunFacets): void => {
    try {
      const event = runEvent({
        eventType,
        producer,
        run: { runId, facets: { ...runFacets, ...extraRunFacets } },
        job: Object.keys(jobFacets).length > 0 ? { ...job, facets: jobFacets } : job,
        inputs,
        outputs,
      });
      void client.emit(event);
    } catch {
      // Building the event failed (e.g. a throwing getter in user facets); never surface it.
    }
  };

  const run: TrackedRun = {
    runId,
    job,
    ...(parent === undefined ? {} : { root: parent.root ?? { runId: parent.runId, job: parent.job } }),
    addRunFacets: (facets) => {
      runFacets = { ...runFacets, ...facets };
    },
    addJobFacets: (facets) => {
      jobFacets = { ...jobFacets, ...facets };
    },
    addInputs: (...datasets) => void inputs.push(...datasets),
    addOutputs: (...datasets) => void outputs.push(...datasets),
    running: () => emit('RUNNING'),
  };

  const fail = (error: unknown): void => {
    try {
      const facet = errorMessageRunFacet(
        {
          message: error instanceof Error ? error.message : String(error),
          programmingLanguage: 'JavaScript',
          ...(error instanceof Error && error.stack !== undefined ? { stackTrace: error.stack } : {}),
        },
        { producer },
      );
      emit('FAIL', { errorMessage: facet });
    } catch {
      emit('FAIL');
    }
  };

  emit('START');
  let result: T;
  try {
    result = runs.run(run, fn, run);
  } catch (error) {
    fail(error);
    throw error;
  }
  if (isPromiseLike(result)) {
    return result.then(
      (value) => {
        emit('COMPLETE');
        return value;
      },
      (error: unknown) => {
        fail(error);
        throw error;
      },
    ) as T;
  }
  emit('COMPLETE');
  return result;
}

function parentFacet(parent: RunReference, producer: string): ParentRunFacet {
  const root = parent.root ?? { runId: parent.runId, job: parent.job };
  return parentRunFacet(
    {
      run: { runId: parent.runId },
      job: { namespace: parent.job.namespace, name: parent.job.name },
      root: { run: { runId: root.runId }, job: { namespace: root.job.namespace, name: root.job.name } },
    },
    { producer },
  );
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
