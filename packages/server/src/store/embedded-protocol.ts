/** A request from the server's main thread to the embedded store's thread. */
export type WorkerRequest =
  | {
      readonly id: number;
      readonly op: 'query';
      readonly sql: string;
      readonly params: readonly unknown[];
      readonly transaction?: number;
    }
  | { readonly id: number; readonly op: 'begin' }
  | { readonly id: number; readonly op: 'end'; readonly transaction: number; readonly commit: boolean }
  | { readonly id: number; readonly op: 'close' };

/** The answer to a request with the same id (id 0: the store opened, or failed to). */
export type WorkerReply =
  | {
      readonly id: number;
      readonly rows: Record<string, unknown>[];
      readonly transaction?: number;
      readonly error?: undefined;
    }
  | {
      readonly id: number;
      readonly error: {
        message: string;
        code?: string | undefined;
        detail?: string | undefined;
        position?: string | undefined;
      };
    };
