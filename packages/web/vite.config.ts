import { defineConfig } from 'vite';
import { buildStampPlugins } from './build-stamp.js';

// dist/.build-stamp.json: what the build was made of, so `npm start` rebuilds only when that changed.
const stamp = buildStampPlugins(import.meta.dirname);

// No @vitejs/plugin-react: its releases pull a newer vite than the pinned 8.3.8, and the production build only
// needs JSX compiled, which vite's own transformer (oxc) does. There is no fast refresh in `npm run dev -w
// @headwater/web`; a reload is enough for this app.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic' } },
  plugins: [stamp.plugin],
  worker: { plugins: () => [stamp.workerPlugin] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One ~500 kB app chunk (React, xyflow, the views): split further only when a page is slow to open.
    chunkSizeWarningLimit: 700,
    rolldownOptions: {
      onwarn(warning, warn) {
        // React Server Components markers in @xyflow/react; meaningless in a client-only bundle.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: {
    // `npm run dev -w @headwater/web` against `headwater serve` on its default port.
    proxy: { '/api': 'http://127.0.0.1:5000', '/healthcheck': 'http://127.0.0.1:5000' },
  },
});
