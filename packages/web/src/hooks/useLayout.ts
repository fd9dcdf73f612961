import { useEffect, useState } from 'react';
import { layoutGraph, type LayoutRequest, type LayoutResult } from '../graph/layout.js';

/**
 * Lays out `request` in the layout worker, once per request object (memoise it): returns undefined until the
 * layout of this request is ready.
 */
export function useLayout(request: LayoutRequest | undefined): { layout?: LayoutResult; error?: Error } {
  const [result, setResult] = useState<{ request: LayoutRequest; layout?: LayoutResult; error?: Error }>();
  useEffect(() => {
    if (!request) return;
    let current = true;
    layoutGraph(request).then(
      (layout) => current && setResult({ request, layout }),
      (error: unknown) =>
        current && setResult({ request, error: error instanceof Error ? error : new Error(String(error)) }),
    );
    return () => {
      current = false;
    };
  }, [request]);
  if (!result || result.request !== request) return {};
  return {
    ...(result.layout ? { layout: result.layout } : {}),
    ...(result.error ? { error: result.error } : {}),
  };
}
