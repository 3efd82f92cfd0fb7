import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The lab imports the library's source directly (../src), so what runs on the page is the same
// code the tests and the CLI run. `npm run lab` serves it on loopback; `npm run lab:build` writes
// a static site to lab/dist.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  server: { host: '127.0.0.1', port: 5173, strictPort: false },
  preview: { host: '127.0.0.1', port: 4173 },
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: true,
  },
});
