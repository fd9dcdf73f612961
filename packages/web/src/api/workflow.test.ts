import { describe, expect, test } from 'vitest';
import type { ChildDatasetJson, ChildRunJson, RunChildrenJson } from './analysis.js';
import type { RunState } from './types.js';
import { defaultSelection, stateMark, workflowModel, workflowSummary } from './workflow.js';

const d = (name: string, rowCount: number | null = null): ChildDatasetJson => ({
  namespace: 'kedro',
  name,
  version: '00000000-0000-0000-0000-000000000000',
  rowCount,
  bytes: null,
  fileCount: null,
});
const child = (
  runId: string,
  state: RunState,
  inputs: ChildDatasetJson[],
  outputs: ChildDatasetJson[],
  ran = true,
): ChildRunJson => ({
  runId,
  job: { namespace: 'kedro', name: `node_${runId}` },
  state,
  startedAt: null,
  endedAt: null,
  durationMs: null,
  ran,
  error: null,
  inputs,
  outputs,
});
const answer: RunChildrenJson = {
  runId: 'p',
  totalCount: 3,
  states: { COMPLETED: 1, FAILED: 1, ABORTED: 1 },
  neverRanCount: 1,
  children: [
    child('a', 'COMPLETED', [d('raw', 7)], [d('clean', 5)]),
    // A reader's count never hides the writer's.
    child('b', 'FAILED', [d('clean', 4)], [d('model')]),
    child('c', 'ABORTED', [d('model')], [], false),
  ],
  edges: [
    { from: 'a', to: 'b', datasets: [{ namespace: 'kedro', name: 'clean' }] },
    { from: 'b', to: 'c', datasets: [{ namespace: 'kedro', name: 'model' }] },
  ],
};

describe('the workflow graph of a run', () => {
  test('with datasets: runs and datasets joined by reads and writes, counts from the writer', () => {
    const model = workflowModel(answer, true);
    expect([...model.nodes.keys()]).toEqual([
      'run:a',
      'dataset:kedro:raw',
      'dataset:kedro:clean',
      'run:b',
      'dataset:kedro:model',
      'run:c',
    ]);
    expect(model.edges.map((e) => `${e.source} -> ${e.target}`)).toEqual([
      'dataset:kedro:raw -> run:a',
      'run:a -> dataset:kedro:clean',
      'dataset:kedro:clean -> run:b',
      'run:b -> dataset:kedro:model',
      'dataset:kedro:model -> run:c',
    ]);
    expect(model.nodes.get('dataset:kedro:clean')).toMatchObject({
      rowCount: 5,
      writers: ['a'],
      readers: ['b'],
    });
    expect(model.nodes.get('dataset:kedro:raw')).toMatchObject({ rowCount: 7, writers: [], readers: ['a'] });
  });

  test("without datasets: the server's edges between children", () => {
    const model = workflowModel(answer, false);
    expect([...model.nodes.keys()]).toEqual(['run:a', 'run:b', 'run:c']);
    expect(model.edges).toEqual([
      { source: 'run:a', target: 'run:b' },
      { source: 'run:b', target: 'run:c' },
    ]);
  });

  test('says each state in words and with a mark, and selects the failed child first', () => {
    expect(answer.children.map((c) => stateMark(c))).toEqual([
      { mark: '✓', label: 'completed' },
      { mark: '✕', label: 'failed' },
      { mark: '⊘', label: 'never ran (aborted)' },
    ]);
    expect(workflowSummary(answer)).toBe('3 child runs: 1 failed, 1 aborted, 1 completed; 1 never ran');
    expect(defaultSelection(answer)).toBe('run:b');
  });
});
