import { HeadwaterError } from '../core/errors.js';
import { hygieneChanged, type OpenLineageEvent } from '@headwater/openlineage';
import { checkEventLimits } from './limits.js';
import { normalizeEvent, type NormalizedEvent } from '../model/normalize.js';
import { DEFAULT_INGEST_POLICY, type IngestPolicy } from './redaction.js';
import type { IngestPipeline } from './pipeline.js';
import type { ValidationIssue, Validator } from './validate.js';

/** One decoded event as a source received it, with the exact text it came as when the source has it. */
export interface IncomingEvent {
  readonly value: unknown;
  /** The event's JSON text as sent (stored and served as is); re-serialised from `value` when absent. */
  readonly text?: string;
}

/** What became of one event. */
export type EventOutcome =
  | { readonly status: 'stored' }
  | { readonly status: 'duplicate' }
  /** Wrong as sent: sending it again fails again (HTTP 4xx, a dead-letter topic). */
  | { readonly status: 'invalid'; readonly reason: string; readonly issues: readonly string[] }
  /** The store refused this event for a reason of its own (a defect to report, not the producer's fault). */
  | { readonly status: 'failed'; readonly reason: string; readonly error: unknown }
  /** Not stored because the store or the server could not take it now: send it again later. */
  | { readonly status: 'unavailable'; readonly reason: string; readonly retryAfterSeconds: number };

/**
 * Told of the outcome of each event, with the decoded value it came as when there is one. 'forbidden' is an
 * event the caller may not write (refused before the front door; see src/security).
 */
export type OutcomeObserver = (
  values: readonly unknown[],
  outcomes: readonly Pick<EventOutcome | { status: 'forbidden' }, 'status'>[],
) => void;

/** An event that passed the checks, ready for the pipeline, or why it did not. */
export type CheckedEvent =
  | { readonly ok: true; readonly event: NormalizedEvent }
  | { readonly ok: false; readonly outcome: EventOutcome & { status: 'invalid' } };

const formatIssues = (issues: readonly ValidationIssue[]) =>
  issues.map((issue) => `${issue.path}: ${issue.message}`);

/**
 * The checks every event passes before anything is done with it: limits, then validation, then the configured
 * redaction, then normalisation. Shared by the front door and by anything else that must refuse what the server
 * would refuse (the proxy).
 */
export class EventChecker {
  readonly #validator: Validator;
  readonly #policy: IngestPolicy;

  constructor(validator: Validator, policy: IngestPolicy = DEFAULT_INGEST_POLICY) {
    this.#validator = validator;
    this.#policy = policy;
  }

  /**
   * Checks one decoded event: its limits first (so nothing later meets a hostile shape), then the schema, then
   * applies the configured redaction.
   */
  check(incoming: IncomingEvent): CheckedEvent {
    const { value } = incoming;
    let { text } = incoming;
    // An event whose text is no larger than a facet may be cannot hold a facet over the limit.
    const limitIssues = checkEventLimits(value, this.#policy.limits, text?.length);
    if (limitIssues.length > 0) return invalid(formatIssues(limitIssues));
    const result = this.#validator.validate(value);
    if (!result.ok) return invalid(formatIssues(result.issues));
    let event = value as Record<string, unknown>;
    // Redaction comes before normalisation, which hashes the text: what is stored, deduplicated and served is
    // the redacted event, and the text as sent is dropped when anything changed.
    if (this.#policy.hygiene !== undefined) {
      const cleaned = this.#policy.hygiene(event as unknown as OpenLineageEvent);
      if (hygieneChanged(cleaned.report)) {
        event = cleaned.event;
        text = undefined;
      }
    }
    return {
      ok: true,
      event:
        text === undefined ? normalizeEvent(event, result.kind) : normalizeEvent(event, result.kind, text),
    };
  }
}

/**
 * Where the events that are not this door's own go: a preview's (src/servers/previews.ts), kept in a store
 * apart. Told each checked event; commits those it claims and tells their outcomes.
 */
export interface EventDivert {
  /** The target an event goes to, or undefined when it is the door's own. */
  targetOf(event: NormalizedEvent): string | undefined;
  /** Commits `events`, all of `target`, and resolves with one outcome per event, in order. */
  submit(target: string, events: readonly NormalizedEvent[]): Promise<EventOutcome[]>;
}

/**
 * The one way in for events, whatever carries them (HTTP, batch, NDJSON files, stream consumers): limits,
 * validation, normalisation, then the pipeline's group commit. Each event gets its own outcome, so one bad event
 * never takes a good one down with it, and a store that is away is told apart from an event that is wrong.
 */
export class IngestFrontDoor {
  readonly #checker: EventChecker;
  readonly #pipeline: IngestPipeline;
  readonly #observers: OutcomeObserver[] = [];
  #divert: EventDivert | undefined;

  constructor(validator: Validator, pipeline: IngestPipeline, policy: IngestPolicy = DEFAULT_INGEST_POLICY) {
    this.#checker = new EventChecker(validator, policy);
    this.#pipeline = pipeline;
  }

  /** Sends the events `divert` claims there instead of to this door's pipeline (checked here first). */
  divert(divert: EventDivert): void {
    this.#divert = divert;
  }

  /** Checks one decoded event: its limits first (so nothing later meets a hostile shape), then the schema. */
  check(incoming: IncomingEvent): CheckedEvent {
    return this.#checker.check(incoming);
  }

  /**
   * Creates or updates a source (Marquez's legacy `PUT /api/v1/sources/{name}`): the one legacy write that no
   * OpenLineage event can carry (see IngestPipeline.declareSource).
   */
  declareSource(
    source: Parameters<IngestPipeline['declareSource']>[0],
  ): ReturnType<IngestPipeline['declareSource']> {
    return this.#pipeline.declareSource(source);
  }

  /** Registers an observer told of every event's outcome (metrics count them by outcome and producer). */
  onOutcomes(observer: OutcomeObserver): void {
    this.#observers.push(observer);
  }

  /** Tells the observers of outcomes decided outside `submit` (an event refused before it got here). */
  report(values: readonly unknown[], outcomes: Parameters<OutcomeObserver>[1]): void {
    for (const observer of this.#observers) observer(values, outcomes);
  }

  /**
   * Commits the valid events among `incoming` together and resolves with one outcome per event, in order, once
   * the stored ones are durable. Never rejects for a store that is away: those events come back 'unavailable'.
   */
  async submit(incoming: readonly (IncomingEvent | CheckedEvent)[]): Promise<EventOutcome[]> {
    const outcomes: (EventOutcome | undefined)[] = [];
    const accepted: NormalizedEvent[] = [];
    const positions: number[] = [];
    // Events another target claims, by target, with their positions.
    let diverted: Map<string, { events: NormalizedEvent[]; positions: number[] }> | undefined;
    const divert = this.#divert;
    incoming.forEach((item, index) => {
      const checked = 'ok' in item ? item : this.check(item);
      if (checked.ok) {
        const target = divert?.targetOf(checked.event);
        if (target === undefined) {
          accepted.push(checked.event);
          positions.push(index);
        } else {
          diverted ??= new Map();
          let group = diverted.get(target);
          if (!group) diverted.set(target, (group = { events: [], positions: [] }));
          group.events.push(checked.event);
          group.positions.push(index);
        }
        outcomes.push(undefined);
      } else outcomes.push(checked.outcome);
    });
    const commits: Promise<void>[] = [];
    if (accepted.length > 0)
      commits.push(
        commitEach(this.#pipeline, accepted).then((committed) =>
          positions.forEach((position, index) => (outcomes[position] = committed[index]!)),
        ),
      );
    for (const [target, group] of diverted ?? [])
      commits.push(
        divert!
          .submit(target, group.events)
          .then((committed) =>
            group.positions.forEach((position, index) => (outcomes[position] = committed[index]!)),
          ),
      );
    await Promise.all(commits);
    if (this.#observers.length > 0) {
      const values = incoming.map((item) => ('ok' in item ? undefined : item.value));
      this.report(values, outcomes as EventOutcome[]);
    }
    return outcomes as EventOutcome[];
  }
}

/** Outcomes of committing `events` together: if the store refuses the group, each event is tried alone. */
async function commitEach(
  pipeline: IngestPipeline,
  events: readonly NormalizedEvent[],
): Promise<EventOutcome[]> {
  try {
    return (await pipeline.submit(events)).map((status) => ({ status }));
  } catch (error) {
    if (error instanceof HeadwaterError && error.retriable) {
      const outcome: EventOutcome = {
        status: 'unavailable',
        reason: error.message,
        retryAfterSeconds: error.retryAfterSeconds ?? 1,
      };
      return events.map(() => outcome);
    }
    if (events.length === 1) {
      const message = error instanceof Error ? error.message : String(error);
      return [{ status: 'failed', reason: `the store could not take this event: ${message}`, error }];
    }
    // One event the checks let through broke the write of the group: find it, store the others.
    const outcomes = await Promise.all(events.map((event) => commitEach(pipeline, [event])));
    return outcomes.flat();
  }
}

function invalid(issues: string[]): CheckedEvent {
  return { ok: false, outcome: { status: 'invalid', reason: issues.join('; '), issues } };
}
