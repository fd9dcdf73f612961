/** Paged lists: Marquez's limit and offset. */

/** The largest limit or offset: Marquez's (a Java int); beyond it a request is a 400, never a database error. */
export const MAX_PAGE = 2_147_483_647;

/** limit and offset, with Marquez's defaults. */
export function pageParams(defaultLimit = 100) {
  return {
    limit: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_PAGE,
      default: defaultLimit,
      description: 'Most items to return',
    },
    offset: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_PAGE,
      default: 0,
      description: 'Items to skip',
    },
  } as const;
}

/** Querystring of a paged list. */
export interface PageQuery {
  limit: number;
  offset: number;
}
