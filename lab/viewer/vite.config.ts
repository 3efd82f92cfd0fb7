import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The run viewer that `reins/server` serves at `/`: the lab's own modules (step views, phases,
// outcome badge), built into the package's dist/viewer by `npm run build`, so an installed reins
// serves it with no build step of its own.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  build: {
    outDir: fileURLToPath(new URL('../../dist/viewer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    modulePreload: { polyfill: false },
  },
});
