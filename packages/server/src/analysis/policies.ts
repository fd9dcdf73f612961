/**
 * Policies over classification: rules a team states about where a tag's data may go and who may read it,
 * checked against the lineage now (analysis/classification.ts computes where the tag reaches). Two kinds:
 * - `neverReaches`: the tag reaches no dataset in these storage namespaces (or `namespace:name` patterns; `*` any
 *   text). Masking stops a tag (a masked column is not classified), so this reads "... unless masked". A column
 *   reached only coarsely (through a job without column lineage) breaks it too, unless `allowCoarse`.
 * - `readersNeedTag`: every job that reads a dataset the tag reaches carries this tag (a `purpose`, say), put on
 *   through the tag routes or in its tags facet.
 */
import { Closed, StringEnum, Type, type Static } from '../core/json-schema.js';
import { wildcard } from '../core/wildcard.js';
import { jobsCarrying } from '../store/queries/classification.js';
import { classification, type ClassificationJson } from './classification.js';
import { compareText, datasetNodeId, jobNodeId, type AnalysisSource } from './context.js';

const Text = (description: string) => Type.String({ minLength: 1, maxLength: 1024, description });

export const PolicySchema = Closed({
  name: Text('What the report calls it'),
  tag: Text('The classification it is about (pii)'),
  neverReaches: Type.Optional(
    Type.Array(Text('A storage namespace pattern (s3://acme-public-*), or namespace:name'), {
      maxItems: 100,
    }),
  ),
  allowCoarse: Type.Optional(Type.Boolean({ description: 'A coarse reach does not break neverReaches' })),
  readersNeedTag: Type.Optional(Text('The tag every job reading the classified data must carry')),
});
export type Policy = Static<typeof PolicySchema>;

export const PoliciesSchema = Closed({ policies: Type.Array(PolicySchema, { minItems: 1, maxItems: 100 }) });
export type Policies = Static<typeof PoliciesSchema>;

export const PolicyViolationSchema = Closed({
  rule: StringEnum(['neverReaches', 'readersNeedTag']),
  node: Type.String({ description: 'The column that reaches where it may not, or the job without the tag' }),
  dataset: Type.String({ description: 'The classified dataset concerned' }),
  coarse: Type.Boolean(),
  detail: Type.String(),
});
export type PolicyViolation = Static<typeof PolicyViolationSchema>;

export const PolicyReportSchema = Closed({
  ok: Type.Boolean({ description: 'No policy is broken' }),
  violations: Type.Integer(),
  policies: Type.Array(
    Closed({
      name: Type.String(),
      tag: Type.String(),
      ok: Type.Boolean(),
      violations: Type.Array(PolicyViolationSchema),
    }),
  ),
});
export type PolicyReport = Static<typeof PolicyReportSchema>;

/** Checks each policy against the lineage now. */
export async function checkPolicies(
  source: AnalysisSource,
  policies: readonly Policy[],
): Promise<PolicyReport> {
  const { state, graph } = source;
  const byTag = new Map<string, Promise<ClassificationJson>>();
  const classified = (tag: string) => {
    let found = byTag.get(tag.toLowerCase());
    if (!found) byTag.set(tag.toLowerCase(), (found = classification(source, tag)));
    return found;
  };
  // The nodeIds classification answers with, back to dataset ids (for the graph's readers).
  const idOfDataset = new Map<string, number>();
  for (const id of state.datasetsById.keys()) idOfDataset.set(datasetNodeId(state, id), id);
  const reports: PolicyReport['policies'] = [];
  for (const policy of policies) {
    const result = await classified(policy.tag);
    const violations: PolicyViolation[] = [];
    if (policy.neverReaches && policy.neverReaches.length > 0) {
      const patterns = policy.neverReaches.map(wildcard);
      for (const column of result.columns) {
        if (column.coarse && policy.allowCoarse === true) continue;
        const id = idOfDataset.get(column.dataset);
        const dataset = id === undefined ? undefined : state.datasetsById.get(id);
        const namespace = dataset ? (state.namespacesById.get(dataset.namespaceId)?.name ?? '') : '';
        const targets = [namespace, `${namespace}:${dataset?.name ?? ''}`];
        const matched = policy.neverReaches.find((_, index) =>
          targets.some((text) => patterns[index]!.test(text)),
        );
        if (matched === undefined) continue;
        violations.push({
          rule: 'neverReaches',
          node: column.nodeId,
          dataset: column.dataset,
          coarse: column.coarse,
          detail:
            `${policy.tag} reaches ${column.nodeId}${column.coarse ? ' (coarsely: a job without column lineage)' : ''}` +
            `, in ${namespace}, which matches ${matched}` +
            (column.via ? `; from ${column.via} by ${column.jobs.join(', ') || 'a job'}` : ''),
        });
      }
    }
    if (policy.readersNeedTag !== undefined) {
      const readers = new Map<number, string>();
      for (const dataset of result.datasets) {
        const id = idOfDataset.get(dataset.nodeId);
        if (id === undefined) continue;
        for (const job of graph.jobsOf(id, 0)) if (!readers.has(job)) readers.set(job, dataset.nodeId);
      }
      const tagged = await jobsCarrying(source.db, [...readers.keys()], policy.readersNeedTag);
      for (const [job, dataset] of readers) {
        if (tagged.has(job)) continue;
        const node = jobNodeId(state, job);
        violations.push({
          rule: 'readersNeedTag',
          node,
          dataset,
          coarse: result.datasets.find((item) => item.nodeId === dataset)?.coarse ?? false,
          detail: `${node} reads ${dataset}, which ${policy.tag} reaches, and carries no ${policy.readersNeedTag} tag`,
        });
      }
    }
    violations.sort((a, b) => compareText(a.rule, b.rule) || compareText(a.node, b.node));
    reports.push({ name: policy.name, tag: policy.tag, ok: violations.length === 0, violations });
  }
  const total = reports.reduce((sum, report) => sum + report.violations.length, 0);
  return { ok: total === 0, violations: total, policies: reports };
}
