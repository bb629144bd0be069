import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const uiDir = fileURLToPath(new URL('.', import.meta.url));
const api = process.env.LOGSCOPE_UI_API ?? 'http://127.0.0.1:18181';

// Built with `vite build --config ui/vite.config.ts` from the repository root; the server
// serves dist/ui at `/` (index.html for every path outside /api and /ws).
export default defineConfig({
  root: uiDir,
  base: '/',
  publicDir: false,
  plugins: [react()],
  // What the web UI takes from the server's code: src/shared (chart colours, the country
  // map, permission names), which imports nothing else.
  resolve: { alias: { '@shared': fileURLToPath(new URL('../src/shared', import.meta.url)) } },
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    proxy: {
      '/api': { target: api, changeOrigin: false },
      '/ws': { target: api.replace(/^http/, 'ws'), ws: true },
    },
  },
  preview: { host: '127.0.0.1', port: 4173 },
});
