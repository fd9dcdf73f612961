import { useLayoutEffect, useRef } from 'react';
import { useLocation, useNavigate, useNavigationType } from 'react-router';
import { api } from '../api/client.js';
import type { Preview } from '../api/types.js';
import { previewAfter, previewOf, withPreview } from '../preview.js';
import { useApi } from './useApi.js';

/**
 * The preview the explorer shows (undefined: production), and the address kept naming it: a link of the explorer
 * (built without `?preview=`) gets it back before any view reads the API, so the views' requests, which take it
 * from the address, stay the preview's. For the frame of the app; views read it from the address.
 */
export function useShownPreview(): string | undefined {
  const location = useLocation();
  const type = useNavigationType();
  const navigate = useNavigate();
  const shown = useRef<string | undefined>(undefined);
  const preview = previewAfter(shown.current, { search: location.search, state: location.state, type });
  // A layout effect: the views load in (passive) effects, which run after it and its replace of the address.
  useLayoutEffect(() => {
    shown.current = preview;
    if (previewOf(location.search) !== preview)
      void navigate(withPreview(`${location.pathname}${location.search}${location.hash}`, preview), {
        replace: true,
        state: location.state as unknown,
      });
  }, [location, preview, navigate]);
  return preview;
}

/**
 * The server's previews, loaded once `enabled` (the explorer may read the server); undefined until then. None
 * when the server has none, or does not answer the list: the explorer then has no preview to offer.
 */
export function usePreviews(enabled: boolean): readonly Preview[] | undefined {
  const previews = useApi(enabled ? 'previews' : 'previews:later', (signal) =>
    enabled ? api.previews(signal).catch(() => ({ previews: [] })) : new Promise<never>(() => undefined),
  );
  return previews.data?.previews;
}
