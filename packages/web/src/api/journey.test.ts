import { describe, expect, test } from 'vitest';
import type { JourneyJson } from './analysis.js';
import {
  axisFraction,
  axisTicks,
  journeyFormOf,
  journeyParamsOf,
  journeyQuery,
  journeySearch,
  ownerChanges,
  parseJurisdictions,
  type JourneyForm,
} from './journey.js';

const DATASET = 'dataset:s3://acme-eu-raw:customers';
const empty: JourneyForm = {
  column: '',
  from: '',
  to: '',
  direction: 'downstream',
  depth: '',
  tags: '',
  jurisdictions: '',
};

describe('the jurisdiction lines', () => {
  test('blank lines are skipped and spaces around = dropped, in order', () => {
    expect(parseJurisdictions(' s3://acme-eu-* = EU \n\n  postgres://*=US\r\n')).toEqual({
      entries: ['s3://acme-eu-*=EU', 'postgres://*=US'],
      problems: [],
    });
  });

  test('a line without one = and text on both sides is a problem that names the line', () => {
    const { entries, problems } = parseJurisdictions('s3://*=EU\nEU\n=US\na=b=c\ns3://x=');
    expect(entries).toEqual(['s3://*=EU']);
    expect(problems.map((problem) => problem.slice(0, problem.indexOf(')') + 1))).toEqual([
      'Jurisdiction line 2 ("EU")',
      'Jurisdiction line 3 ("=US")',
      'Jurisdiction line 4 ("a=b=c")',
      'Jurisdiction line 5 ("s3://x=")',
    ]);
    expect(problems[0]).toContain('PATTERN=NAME');
  });
});

describe('the time axis', () => {
  const bounds = { from: '2026-03-05T00:00:00.000Z', to: '2026-03-15T00:00:00.000Z' };

  test('places a time by its share of the window, clamped to it', () => {
    expect(axisFraction(bounds.from, bounds)).toBe(0);
    expect(axisFraction(bounds.to, bounds)).toBe(1);
    expect(axisFraction('2026-03-07T12:00:00Z', bounds)).toBe(0.25);
    expect(axisFraction('2026-03-01T00:00:00Z', bounds)).toBe(0);
    expect(axisFraction('2026-04-01T00:00:00Z', bounds)).toBe(1);
    expect(axisFraction('2026-03-07T00:00:00Z', { from: bounds.from, to: bounds.from })).toBe(0);
  });

  test('has evenly spaced ticks from the start to the end of the window', () => {
    expect(axisTicks(bounds, 2)).toEqual([
      '2026-03-05T00:00:00.000Z',
      '2026-03-10T00:00:00.000Z',
      '2026-03-15T00:00:00.000Z',
    ]);
    expect(axisTicks({ from: bounds.from, to: bounds.from })).toEqual([bounds.from]);
  });
});

describe("the journey's question", () => {
  test('the server query repeats jurisdiction in order and leaves out what is not given', () => {
    const search = new URLSearchParams(
      journeyQuery(
        { nodeId: DATASET, direction: 'upstream', depth: 3, tags: 'pii', jurisdictions: ['a=EU', 'b=US'] },
        'markdown',
      ),
    );
    expect([...search]).toEqual([
      ['nodeId', DATASET],
      ['direction', 'upstream'],
      ['depth', '3'],
      ['tags', 'pii'],
      ['jurisdiction', 'a=EU'],
      ['jurisdiction', 'b=US'],
      ['format', 'markdown'],
    ]);
    expect(journeyQuery({ nodeId: DATASET })).toBe(`?nodeId=${encodeURIComponent(DATASET)}`);
  });

  test('a form goes through the address and back unchanged, keeping the address’s other parameters', () => {
    const form: JourneyForm = {
      column: 'email',
      from: '2026-03-05T00:00:00Z',
      to: '2026-03-20T00:00:00Z',
      direction: 'upstream',
      depth: '4',
      tags: 'pii,gdpr',
      jurisdictions: 's3://acme-eu-*=EU\ns3://acme-us-*=US',
    };
    const search = journeySearch(form, new URLSearchParams({ preview: 'pr-7', column: 'old' }));
    expect(search.get('preview')).toBe('pr-7');
    expect(search.getAll('column')).toEqual(['email']);
    expect(journeyFormOf(search)).toEqual(form);
    expect([...journeySearch(empty)]).toEqual([]);
  });

  test("a column's journey starts at its datasetField node; times are normalised and tags trimmed", () => {
    expect(
      journeyParamsOf(DATASET, {
        ...empty,
        column: 'email',
        from: '2026-03-05',
        tags: ' pii , ,gdpr',
        jurisdictions: 's3://*=EU',
      }),
    ).toEqual({
      params: {
        nodeId: 'datasetField:s3://acme-eu-raw:customers:email',
        from: '2026-03-05T00:00:00.000Z',
        direction: 'downstream',
        tags: 'pii,gdpr',
        jurisdictions: ['s3://*=EU'],
      },
      problems: [],
    });
    expect(journeyParamsOf(DATASET, empty)).toEqual({
      params: { nodeId: DATASET, direction: 'downstream' },
      problems: [],
    });
  });

  test('a time, a depth or a jurisdiction line that the server would refuse is a problem, not a request', () => {
    const { params, problems } = journeyParamsOf(DATASET, {
      ...empty,
      to: 'yesterday',
      depth: '0',
      jurisdictions: 'EU',
    });
    expect(params).toEqual({ nodeId: DATASET, direction: 'downstream' });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain('To "yesterday" is not a time');
    expect(problems[1]).toContain('Depth "0"');
    expect(journeyParamsOf(DATASET, { ...empty, depth: '101' }).problems).toHaveLength(1);
    expect(journeyParamsOf(DATASET, { ...empty, depth: '2.5' }).problems).toHaveLength(1);
  });
});

test("owner changes are each node's owner periods after its first, in time order", () => {
  const node = (nodeId: string, owners: [string, string[]][]): JourneyJson['nodes'][number] => ({
    nodeId,
    distance: 0,
    namespace: 'ns',
    jurisdiction: null,
    owners: owners.map(([from, names]) => ({ from, owners: names.map((name) => ({ name, type: null })) })),
    tags: [],
    retention: [],
  });
  const changes = ownerChanges([
    node('dataset:ns:b', [
      ['2026-03-05T00:00:00Z', []],
      ['2026-03-10T01:00:00Z', ['team:crm']],
      ['2026-03-11T01:00:00Z', ['team:privacy']],
    ]),
    node('dataset:ns:a', [
      ['2026-03-05T00:00:00Z', ['ana']],
      ['2026-03-10T01:00:00Z', ['bo']],
    ]),
    node('dataset:ns:c', [['2026-03-05T00:00:00Z', ['cy']]]),
  ]);
  expect(
    changes.map((change) => [
      change.nodeId,
      change.at,
      change.before.map((o) => o.name),
      change.owners.map((o) => o.name),
    ]),
  ).toEqual([
    ['dataset:ns:a', '2026-03-10T01:00:00Z', ['ana'], ['bo']],
    ['dataset:ns:b', '2026-03-10T01:00:00Z', [], ['team:crm']],
    ['dataset:ns:b', '2026-03-11T01:00:00Z', ['team:crm'], ['team:privacy']],
  ]);
});
