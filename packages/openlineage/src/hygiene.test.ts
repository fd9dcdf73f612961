import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inputDataset, outputDataset, runEvent } from './events.js';
import {
  datasourceDatasetFacet,
  environmentVariablesRunFacet,
  executionParametersRunFacet,
  outputStatisticsOutputDatasetFacet,
  sqlJobFacet,
} from './generated/facet-builders.js';
import type { RunEvent } from './generated/model.js';
import { OpenLineageConfigError } from './config.js';
import { createFacetHygiene, parseHygieneRules, REDACTION_FACET } from './hygiene.js';

const base = (facets: Partial<Pick<RunEvent, 'run' | 'job'>> = {}): RunEvent =>
  runEvent({
    eventType: 'START',
    run: {
      runId: '0190b6a2-5c3e-7a41-9d2f-6c0e8b1f2a3d',
      ...(facets.run?.facets ? { facets: facets.run.facets } : {}),
    },
    job: { namespace: 'n', name: 'j', ...(facets.job?.facets ? { facets: facets.job.facets } : {}) },
  });

describe('createFacetHygiene', () => {
  it('truncates sql.query at 4,000 characters by default', () => {
    const query = 'x'.repeat(5000);
    const { event, report } = createFacetHygiene()(
      base({ job: { namespace: 'n', name: 'j', facets: { sql: sqlJobFacet({ query }) } } }),
    );
    expect((event as RunEvent).job.facets!.sql!.query).toHaveLength(4000);
    expect(report.truncated).toBe(1);
  });

  it('removes disabled and oversized facets in every container', () => {
    const event = runEvent({
      job: { namespace: 'n', name: 'j', facets: { sql: sqlJobFacet({ query: 'q' }) } },
      inputs: [
        inputDataset({
          namespace: 'n',
          name: 'in',
          facets: { dataSource: datasourceDatasetFacet({ name: 'x'.repeat(300) }) },
        }),
      ],
      outputs: [
        outputDataset({
          namespace: 'n',
          name: 'out',
          outputFacets: { outputStatistics: outputStatisticsOutputDatasetFacet({ rowCount: 1 }) },
        }),
      ],
    });
    const { event: cleaned, report } = createFacetHygiene({
      disabledFacets: ['outputStatistics'],
      maxFacetBytes: 250,
    })(event);
    const out = cleaned as RunEvent;
    expect(out.job.facets!.sql).toBeDefined();
    expect(out.inputs![0]!.facets).toEqual({});
    expect(out.outputs![0]!.outputFacets).toEqual({});
    expect([...report.removedFacets].sort()).toEqual([
      'dataset.dataSource',
      'outputDataset.outputStatistics',
    ]);
  });

  it('redacts secrets by property name, by name/value pairs and in URL credentials', () => {
    const event = base({
      run: {
        runId: 'x',
        facets: {
          environmentVariables: environmentVariablesRunFacet({
            environmentVariables: [
              { name: 'AWS_SECRET_ACCESS_KEY', value: 'abc' },
              { name: 'USER', value: 'ana' },
            ],
          }),
          executionParameters: executionParametersRunFacet({
            parameters: [{ key: 'db.password', value: 'pw' }],
          }),
          custom: {
            _producer: 'https://p',
            _schemaURL: 'https://s',
            apiKey: 'k',
            conn: 'postgres://ana:s3cr3t@db:5432/shop',
          },
        },
      },
    });
    const { event: cleaned, report } = createFacetHygiene()(event);
    const facets = (cleaned as RunEvent).run.facets!;
    expect(facets.environmentVariables!.environmentVariables).toEqual([
      { name: 'AWS_SECRET_ACCESS_KEY', value: '***' },
      { name: 'USER', value: 'ana' },
    ]);
    expect(facets.executionParameters!.parameters).toEqual([{ key: 'db.password', value: '***' }]);
    expect(facets.custom).toEqual({
      _producer: 'https://p',
      _schemaURL: 'https://s',
      apiKey: '***',
      conn: 'postgres://ana:***@db:5432/shop',
    });
    expect(report.redacted).toBe(4);
  });

  it('applies custom redaction rules but never touches identifiers or base fields', () => {
    const event = base({
      job: {
        namespace: 'n',
        name: 'j',
        facets: { sql: sqlJobFacet({ query: "where ssn = '123-45-6789'" }) },
      },
    });
    const { event: cleaned } = createFacetHygiene({
      redact: [{ pattern: /\d{3}-\d{2}-\d{4}/g, replacement: '<ssn>' }],
    })(event);
    const out = cleaned as RunEvent;
    expect(out.job.facets!.sql!.query).toBe("where ssn = '<ssn>'");
    expect(out.job.facets!.sql!._schemaURL).toBe(event.job.facets!.sql!._schemaURL);
    expect(out.job.name).toBe('j');
  });

  it('applies a sensitiveNames pattern with a g flag to every match', () => {
    const hygiene = createFacetHygiene({ sensitiveNames: /secret/gi });
    const event = base({
      run: {
        runId: 'x',
        facets: { custom: { _producer: 'https://p', _schemaURL: 'https://s', secretA: 'a', secretB: 'b' } },
      },
    });
    expect((hygiene(event).event as RunEvent).run.facets!.custom).toMatchObject({
      secretA: '***',
      secretB: '***',
    });
  });

  it('never changes its input and is idempotent', () => {
    const hygiene = createFacetHygiene({ maxSqlLength: 50 });
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 30 }), (query, secret) => {
        const event = base({
          job: { namespace: 'n', name: 'j', facets: { sql: sqlJobFacet({ query }) } },
          run: {
            runId: 'x',
            facets: { custom: { _producer: 'https://p', _schemaURL: 'https://s', token: secret } },
          },
        });
        const snapshot = JSON.stringify(event);
        const once = hygiene(event).event;
        expect(JSON.stringify(event)).toBe(snapshot);
        expect(hygiene(once).event).toEqual(once);
        expect((once as RunEvent).job.facets!.sql!.query.length).toBeLessThanOrEqual(50);
      }),
    );
  });

  it('masks SQL literals but not names that hold digits', () => {
    const hygiene = createFacetHygiene({
      rules: parseHygieneRules([{ name: 'sql', type: 'maskSqlLiterals' }], 'rules'),
    });
    const query =
      "SELECT t1.a, sales_2024.b FROM t1 JOIN sales_2024 ON x = 'it''s' AND y = 'a\\'b' WHERE n > 3.5e2 LIMIT 10";
    const { event, report } = hygiene(
      base({ job: { namespace: 'n', name: 'j', facets: { sql: sqlJobFacet({ query }) } } }),
    );
    expect((event as RunEvent).job.facets!.sql!.query).toBe(
      'SELECT t1.a, sales_2024.b FROM t1 JOIN sales_2024 ON x = ? AND y = ? WHERE n > ? LIMIT ?',
    );
    expect(report.rules).toEqual({ sql: 1 });
  });

  it('masks e-mail addresses in every facet string, leaving quotes and non-addresses', () => {
    const hygiene = createFacetHygiene({
      rules: parseHygieneRules([{ name: 'emails', type: 'mask', builtin: 'email' }], 'rules'),
    });
    const custom = {
      _producer: 'https://p',
      _schemaURL: 'https://s',
      owner: "mailto:ana.b+x@sub.corp.example, 'bob_1@x.io'",
      nested: [{ note: "user@host is not an address; see /Users/o'neil@corp.example/nb" }],
    };
    const { event, report } = hygiene(base({ run: { runId: 'x', facets: { custom } } }));
    expect((event as RunEvent).run.facets!.custom).toEqual({
      ...custom,
      owner: "mailto:***, '***'",
      nested: [{ note: 'user@host is not an address; see /Users/***/nb' }],
    });
    expect(report.rules).toEqual({ emails: 2 });
  });

  it('truncates an oversized facet by its longest strings, else keeps only its base fields', () => {
    const hygiene = createFacetHygiene({ maxFacetBytes: 2000, oversizedFacets: 'truncate' });
    const wide = { _producer: 'https://p', _schemaURL: 'https://s', short: 'kept', long: 'é'.repeat(5000) };
    const many = {
      _producer: 'https://p',
      _schemaURL: 'https://s',
      items: Array.from({ length: 1000 }, (_, i) => i),
    };
    const { event, report } = hygiene(base({ run: { runId: 'x', facets: { wide, many } } }));
    const facets = (event as RunEvent).run.facets as Record<string, Record<string, unknown>>;
    expect(Buffer.byteLength(JSON.stringify(facets.wide))).toBeLessThanOrEqual(2000);
    expect(facets.wide!.short).toBe('kept');
    expect(facets.wide!.long).toMatch(/^é+…\[truncated \d+ characters\]$/);
    expect(facets.many).toEqual({
      _producer: 'https://p',
      _schemaURL: 'https://s',
      headwater_truncated: { bytes: Buffer.byteLength(JSON.stringify(many)), limit: 2000 },
    });
    expect(report.truncatedFacets).toEqual(['run.wide', 'run.many']);
    expect(report.rules).toEqual({ maxFacetBytes: 2 });
  });

  it('records what it did as a facet of the run, the dataset or the job', () => {
    const hygiene = createFacetHygiene({ disabledFacets: ['sql'], recordFacet: { producer: 'https://me' } });
    const { event } = hygiene(
      base({ job: { namespace: 'n', name: 'j', facets: { sql: sqlJobFacet({ query: 'q' }) } } }),
    );
    expect((event as RunEvent).run.facets![REDACTION_FACET]).toMatchObject({
      _producer: 'https://me',
      rules: [{ name: 'disabledFacets', changes: 1 }],
      removedFacets: ['job.sql'],
    });
    // Nothing changed, nothing recorded.
    expect((hygiene(base()).event as RunEvent).run).toEqual(base().run);
  });

  it('refuses bad rules, naming the rule and the key', () => {
    const bad = (rules: unknown) => () => parseHygieneRules(rules, 'redaction.yml: rules');
    expect(bad([{ name: 'a', type: 'nope' }])).toThrow(/rules\[0\]\.type: must be dropFacets, mask/);
    expect(bad([{ name: 'a', type: 'mask' }])).toThrow(
      /needs one of builtin \(email, urlCredentials\) or pattern/,
    );
    expect(bad([{ name: 'a', type: 'mask', pattern: '(' }])).toThrow(
      /pattern: is not a valid regular expression/,
    );
    expect(bad([{ name: 'a', type: 'dropFacets', facets: [] }])).toThrow(/facets: must be a non-empty list/);
    expect(bad([{ name: 'a', type: 'dropFacets', facets: ['x'], pattern: 'y' }])).toThrow(
      /\.pattern: is not a setting/,
    );
    expect(
      bad([
        { name: 'a', type: 'maskSqlLiterals' },
        { name: 'a', type: 'maskSqlLiterals' },
      ]),
    ).toThrow(/\[1\]\.name: a is used by another rule/);
    expect(bad({})).toThrow(OpenLineageConfigError);
    expect(
      parseHygieneRules([{ name: 'ids', type: 'mask', pattern: 'cust-[0-9]+', flags: 'i' }], 'r'),
    ).toEqual([{ name: 'ids', type: 'mask', pattern: /cust-[0-9]+/gi }]);
  });
});
