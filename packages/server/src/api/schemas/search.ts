/** Marquez's search answer (GET /search). */
import { Closed, Ref, Shared, StringEnum, Time, Type, type Static } from '../../core/json-schema.js';

/** One match of a search: a dataset or a job. */
export const SearchResultSchema = Shared('SearchResult', {
  type: StringEnum(['DATASET', 'JOB']),
  name: Type.String(),
  updatedAt: Time(),
  namespace: Type.String(),
  nodeId: Type.String(),
});
export type SearchResultJson = Static<typeof SearchResultSchema>;

/** GET /search. */
export const SearchResultsSchema = Closed({
  totalCount: Type.Integer({ description: 'Matches on all pages' }),
  results: Type.Array(Ref(SearchResultSchema)),
});
export type SearchResultsJson = Static<typeof SearchResultsSchema>;
