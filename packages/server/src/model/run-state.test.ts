import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyRunEvent,
  contradictoryStates,
  initialRunState,
  runStartedAt,
  runStateOf,
  sameRunState,
  type EventType,
  type RunStateAggregate,
} from './run-state.js';

type Ev = readonly [EventType | undefined, number];

function fold(events: readonly Ev[]): RunStateAggregate {
  const [first, ...rest] = events;
  if (!first) throw new Error('no events');
  return rest.reduce((agg, [type, at]) => applyRunEvent(agg, type, at), initialRunState(first[0], first[1]));
}

const eventArb = fc.tuple(
  fc.constantFrom<EventType | undefined>('START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER', undefined),
  fc.integer({ min: 0, max: 50 }),
);

describe('run state', () => {
  it('keeps COMPLETED when a late START arrives after COMPLETE', () => {
    const agg = fold([
      ['COMPLETE', 2_000],
      ['START', 1_000],
    ]);
    expect(runStateOf(agg)).toBe('COMPLETED');
    expect(runStartedAt(agg)).toBe(1_000);
    expect(agg.terminal).toEqual({ state: 'COMPLETED', at: 2_000 });
  });

  it('takes the earliest START as the start', () => {
    const agg = fold([
      ['START', 3_000],
      ['RUNNING', 500],
      ['START', 1_000],
    ]);
    expect(runStartedAt(agg)).toBe(1_000);
    expect(runStateOf(agg)).toBe('RUNNING');
  });

  it('falls back to the earliest RUNNING when no START was seen', () => {
    expect(
      runStartedAt(
        fold([
          ['RUNNING', 7],
          ['RUNNING', 4],
        ]),
      ),
    ).toBe(4);
  });

  it('is NEW when only OTHER or untyped events were seen', () => {
    expect(
      runStateOf(
        fold([
          ['OTHER', 1],
          [undefined, 2],
        ]),
      ),
    ).toBe('NEW');
  });

  it('keeps a reported failure whatever terminal event follows (Spark sends FAIL, then COMPLETE)', () => {
    const failedThenCompleted = fold([
      ['START', 0],
      ['FAIL', 1],
      ['COMPLETE', 2],
    ]);
    expect(runStateOf(failedThenCompleted)).toBe('FAILED');
    expect(failedThenCompleted.terminal).toEqual({ state: 'FAILED', at: 1 });
    // ...and keeps that the events contradicted each other, most severe first.
    expect(contradictoryStates(failedThenCompleted.terminalsSeen)).toEqual(['FAILED', 'COMPLETED']);
    expect(
      contradictoryStates(
        fold([
          ['START', 0],
          ['COMPLETE', 2],
          ['COMPLETE', 3],
        ]).terminalsSeen,
      ),
    ).toEqual([]);
    expect(
      contradictoryStates(
        fold([
          ['ABORT', 1],
          ['COMPLETE', 2],
        ]).terminalsSeen,
      ),
    ).toEqual(['ABORTED', 'COMPLETED']);
    expect(
      runStateOf(
        fold([
          ['ABORT', 1],
          ['COMPLETE', 2],
        ]),
      ),
    ).toBe('ABORTED');
    expect(
      runStateOf(
        fold([
          ['ABORT', 1],
          ['FAIL', 2],
        ]),
      ),
    ).toBe('FAILED');
    // Two completions: the latest is when it ended.
    expect(
      fold([
        ['COMPLETE', 1],
        ['COMPLETE', 3],
      ]).terminal,
    ).toEqual({ state: 'COMPLETED', at: 3 });
  });

  it('lets the most severe terminal event win a tie', () => {
    expect(
      runStateOf(
        fold([
          ['COMPLETE', 2],
          ['FAIL', 2],
        ]),
      ),
    ).toBe('FAILED');
    expect(
      runStateOf(
        fold([
          ['FAIL', 2],
          ['COMPLETE', 2],
        ]),
      ),
    ).toBe('FAILED');
  });

  it('gives the same aggregate for every permutation of the events (property)', () => {
    fc.assert(
      fc.property(
        fc
          .array(eventArb, { minLength: 1, maxLength: 8 })
          .chain((events) =>
            fc.tuple(fc.constant(events), fc.shuffledSubarray(events, { minLength: events.length })),
          ),
        ([events, permuted]) => {
          expect(sameRunState(fold(events), fold(permuted))).toBe(true);
        },
      ),
    );
  });

  it('ignores duplicates (property)', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 1, maxLength: 6 }), (events) => {
        expect(sameRunState(fold(events), fold([...events, ...events]))).toBe(true);
      }),
    );
  });
});
