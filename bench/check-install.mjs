// Before a benchmark that races reins against other libraries: are they installed? They live in
// the bench workspace (bench/package.json), which a plain `npm install` / `npm ci` leaves out.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));

// Node's lookup for a bare specifier from bench/: bench/node_modules, then each parent's.
function installed(name) {
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true;
    if (dirname(dir) === dir) return false;
  }
}

const missing = Object.keys(manifest.dependencies).filter((name) => !installed(name));
if (missing.length > 0) {
  console.error(
    `The benchmarks' peers are not installed (${missing.join(', ')}).\n` +
      'Run `npm run bench:install` once: the bench workspace, which the root install leaves out.',
  );
  process.exit(1);
}
