import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import type { ImpactResult } from './analysis.js';
import { csvField, impactCommandLine, impactCsv, shellQuote } from './impact-export.js';

const result: ImpactResult = {
  start: 'dataset:warehouse:orders',
  change: 'removed',
  changes: [],
  breaking: true,
  nodes: [
    {
      nodeId: 'job:etl:load, "daily"',
      kind: 'job',
      distance: 1,
      level: 'breaking',
      via: 'datasetField:warehouse:orders:amount',
      owners: [
        { name: 'team:data', type: 'OWNER' },
        { name: 'maria', type: null },
      ],
      columns: ['datasetField:warehouse:orders:amount', 'datasetField:warehouse:orders:id'],
      breakingColumns: ['datasetField:warehouse:orders:amount'],
    },
  ],
  owners: [],
};

describe('impact export', () => {
  test('CSV quotes what needs quoting and keeps one row per node', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(impactCsv(result).split('\r\n')).toEqual([
      'nodeId,kind,distance,level,via,owners,columns,breakingColumns',
      '"job:etl:load, ""daily""",job,1,breaking,datasetField:warehouse:orders:amount,team:data (OWNER); maria,amount; id,amount',
      '',
    ]);
  });

  test('the command line survives a POSIX shell word for word', () => {
    const nodeId = "dataset:s3://bucket:it's here";
    const line = impactCommandLine(nodeId, 'removed', 'http://127.0.0.1:5000');
    expect(line).toBe(
      `headwater impact 'dataset:s3://bucket:it'\\''s here' --change removed --fail-on breaking --url 'http://127.0.0.1:5000'`,
    );
    // The shell itself splits the line: the node id comes back unchanged.
    const words = execFileSync('sh', ['-c', `printf '%s\\n' ${line.replace('headwater impact ', '')}`], {
      encoding: 'utf8',
    });
    expect(words.split('\n')[0]).toBe(nodeId);
    expect(shellQuote('')).toBe("''");
    expect(impactCommandLine('dataset:a:b', 'latest', 'http://h')).not.toContain('--change');
  });
});
