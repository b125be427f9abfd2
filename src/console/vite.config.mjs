import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The operator console: built into dist/console and served by the API at /console/ (src/api/console-plugin.ts). */
export default defineConfig({
  root: here,
  base: '/console/',
  // Vite 8 transforms JSX with Oxc; no React plugin needed (no fast refresh in dev, which we do not use).
  oxc: { jsx: { runtime: 'automatic' } },
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 2500,
    sourcemap: false,
    rolldownOptions: {
      // MUI's modules start with 'use client' (for React Server Components): meaningless in this bundle.
      onwarn(warning, warn) {
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: { proxy: { '/graphql': 'http://127.0.0.1:4000' } },
});
