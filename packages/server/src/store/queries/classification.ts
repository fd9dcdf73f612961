/** Where a classification tag is put by hand or by producers: the seeds of analysis/classification.ts. */
import type { Queryable } from '../db.js';

/** A dataset, or one field of it, that carries a tag. */
export interface TagSeed {
  readonly datasetId: number;
  /** Null: the whole dataset. */
  readonly field: string | null;
  /** `api`: put on through the tag routes; `facet`: in the dataset's latest `tags` facet (TagsDatasetFacet). */
  readonly source: 'api' | 'facet';
  /** When it was put on (the facet's event time). */
  readonly since: Date;
}

/**
 * Every dataset and field carrying `tag`, in any case (the tag routes store names in capitals, as Marquez does):
 * tags put on through the API, and entries of each dataset's latest
 * `tags` facet whose key is the tag (a value of `false`, `no` or `0` says it does not hold) or whose
 * `key:value` is. A facet entry with a `field` tags that field. With `at`: as they were then.
 */
/**
 * Whether the tags facet entry `entry` puts tag $1 on: its key is the tag (a value of `false`, `no` or `0` says it
 * does not hold) or its `key:value` is, in any case. For datasets' TagsDatasetFacet and jobs' TagsJobFacet alike.
 */
const ENTRY_HOLDS = `(lower(entry->>'key') = lower($1)
  AND coalesce(lower(entry->>'value'), '') NOT IN ('false', 'no', '0')
  OR lower((entry->>'key') || ':' || coalesce(entry->>'value', '')) = lower($1))`;

export function taggedSeeds(db: Queryable, tag: string, at?: Date): Promise<TagSeed[]> {
  return db.query<TagSeed>(
    `SELECT dataset_id AS "datasetId", NULL::text AS field, 'api' AS source, tagged_at AS since
       FROM dataset_tags WHERE lower(tag) = lower($1) AND ($2::timestamptz IS NULL OR tagged_at <= $2)
     UNION ALL
     SELECT dataset_id, field, 'api', tagged_at FROM dataset_field_tags
      WHERE lower(tag) = lower($1) AND ($2::timestamptz IS NULL OR tagged_at <= $2)
     UNION ALL
     SELECT latest.dataset_id, entry->>'field', 'facet', latest.event_time
       FROM (SELECT DISTINCT ON (dataset_id) dataset_id, facet, event_time FROM dataset_facets
             WHERE name = 'tags' AND ($2::timestamptz IS NULL OR event_time <= $2)
             ORDER BY dataset_id, event_time DESC, hash DESC) latest
       CROSS JOIN LATERAL jsonb_array_elements(
         CASE WHEN jsonb_typeof(latest.facet->'tags') = 'array' THEN latest.facet->'tags' ELSE '[]'::jsonb END
       ) AS entry
      WHERE latest.facet->'_deleted' IS DISTINCT FROM 'true'::jsonb AND ${ENTRY_HOLDS}
     ORDER BY 1, 2 NULLS FIRST, 3`,
    [tag, at?.toISOString() ?? null],
  );
}

/**
 * Which of `jobIds` carry `tag`, in any case: put on through the tag routes, or in the job's latest `tags` facet
 * (TagsJobFacet) as a dataset's facet puts it on (see taggedSeeds).
 */
export async function jobsCarrying(
  db: Queryable,
  jobIds: readonly number[],
  tag: string,
): Promise<Set<number>> {
  if (jobIds.length === 0) return new Set();
  const rows = await db.query<{ id: number }>(
    `SELECT job_id AS id FROM job_tags WHERE lower(tag) = lower($1) AND job_id = ANY($2::int[])
     UNION
     SELECT latest.job_id
       FROM (SELECT DISTINCT ON (job_id) job_id, facet FROM job_facets
             WHERE name = 'tags' AND job_id = ANY($2::int[]) ORDER BY job_id, event_time DESC, hash DESC) latest
       CROSS JOIN LATERAL jsonb_array_elements(
         CASE WHEN jsonb_typeof(latest.facet->'tags') = 'array' THEN latest.facet->'tags' ELSE '[]'::jsonb END
       ) AS entry
      WHERE latest.facet->'_deleted' IS DISTINCT FROM 'true'::jsonb AND ${ENTRY_HOLDS}`,
    [tag, jobIds],
  );
  return new Set(rows.map((row) => row.id));
}
