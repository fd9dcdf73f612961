import { expect } from 'vitest';

/** Parses Prometheus text exposition (format 0.0.4) strictly: every line must be a comment, TYPE, HELP or sample. */
export function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const label = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
  // Values as Prometheus parses them (Go's ParseFloat): NaN in any case, which prom-client writes as `Nan` (the
  // event-loop lag before its first sample).
  const sample = new RegExp(
    `^(${name})(\\{(?:${label})(?:,${label})*,?\\})? (-?[0-9.eE+-]+|[Nn][Aa][Nn]|[+-]Inf)( -?\\d+)?$`,
  );
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (type) {
      expect(types.has(type[1]!), `TYPE twice for ${type[1]}`).toBe(false);
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (new RegExp(`^# HELP ${name} `).test(line)) continue;
    const match = sample.exec(line);
    if (!match) throw new Error(`not Prometheus text exposition: ${JSON.stringify(line)}`);
    const family = match[1]!.replace(/_(bucket|sum|count|total)$/, '');
    expect(types.has(match[1]!) || types.has(family), `sample without TYPE: ${line}`).toBe(true);
    samples.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  return samples;
}
