import { useMemo } from 'react';
import { layoutRequestOf } from '../graph/flow-elements.js';
import type { LayoutResult } from '../graph/layout.js';
import type { LineageModel } from '../graph/lineage-model.js';
import { useLayout } from './useLayout.js';

/**
 * Lays out `model` once per model: selecting, highlighting or expanding columns never lays out again, so the
 * picture a person is reading does not jump. Returns undefined until the layout of this model is ready.
 */
export function useGraphLayout(model: LineageModel | undefined): { layout?: LayoutResult; error?: Error } {
  return useLayout(useMemo(() => (model ? layoutRequestOf(model) : undefined), [model]));
}
