import { useEffect, useState } from 'react';

/**
 * Whether the search palette is open, opened by ⌘K / Ctrl-K anywhere (and "/" outside text fields), closed by
 * Escape.
 */
export function useSearchPalette(): [boolean, (open: boolean) => void] {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement;
      if ((event.key === 'k' || event.key === 'K') && (event.metaKey || event.ctrlKey)) {
        // Browsers bind Ctrl-K to their own search box; the explorer's search is what a person here wants.
        event.preventDefault();
        setOpen((previous) => !previous);
      } else if (event.key === '/' && !typing) {
        event.preventDefault();
        setOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  return [open, setOpen];
}
