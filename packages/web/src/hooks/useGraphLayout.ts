import { useEffect, useState } from 'react';
import { layoutRequestOf } from '../graph/flow-elements.js';
import { layoutGraph, type LayoutResult } from '../graph/layout.js';
import type { LineageModel } from '../graph/lineage-model.js';

/**
 * Lays out `model` once per model: selecting, highlighting or expanding columns never lays out again, so the
 * picture a person is reading does not jump. Returns undefined until the layout of this model is ready.
 */
export function useGraphLayout(model: LineageModel | undefined): { layout?: LayoutResult; error?: Error } {
  const [result, setResult] = useState<{ model: LineageModel; layout?: LayoutResult; error?: Error }>();
  useEffect(() => {
    if (!model) return;
    let current = true;
    layoutGraph(layoutRequestOf(model)).then(
      (layout) => current && setResult({ model, layout }),
      (error: unknown) =>
        current && setResult({ model, error: error instanceof Error ? error : new Error(String(error)) }),
    );
    return () => {
      current = false;
    };
  }, [model]);
  if (!result || result.model !== model) return {};
  return {
    ...(result.layout ? { layout: result.layout } : {}),
    ...(result.error ? { error: result.error } : {}),
  };
}
