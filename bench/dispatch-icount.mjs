// Dispatch cost per tool call in CPU instructions (valgrind callgrind), for each case of
// bench/dispatch-overhead.ts: repeatable where wall-clock medians of the same code swing ±40 %.
// Per-call instructions = (I(long) − I(short)) / (long − short), so start-up, the TypeScript
// transform and warm-up cancel out. Each tree is a checkout of reins (its `bench/` and `src/`);
// the script run is this tree's dispatch-overhead.ts, copied beside each tree's source.
//
//   node bench/dispatch-icount.mjs [TREE ...]        default: this tree
//   e.g. node bench/dispatch-icount.mjs /tmp/old-reins .   (an older commit beside this one)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const trees = process.argv.slice(2).length > 0 ? process.argv.slice(2) : [resolve(here, '..')];
const cases = (process.env.CASES ?? 'clean,tainted,policy').split(',');
const [short, long] = [1_000, 3_000];

function instructions(tree, name, calls) {
  const out = join(mkdtempSync(join(tmpdir(), 'reins-icount-')), 'callgrind.out');
  execFileSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--import',
      'tsx',
      join(tree, 'bench', 'dispatch-icount-case.ts'),
      '--only',
      name,
      '--calls',
      String(calls),
      '--rounds',
      '1',
    ],
    { cwd: tree, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const summary = /^summary:\s+(\d+)/m.exec(readFileSync(out, 'utf8'));
  if (!summary) throw new Error(`no summary in ${out}`);
  return Number(summary[1]);
}

console.log(`Dispatch instructions per call (callgrind, (I(${long}) − I(${short})) / ${long - short})`);
for (const tree of trees) {
  copyFileSync(join(here, 'dispatch-overhead.ts'), join(tree, 'bench', 'dispatch-icount-case.ts'));
  for (const name of cases) {
    try {
      const perCall = (instructions(tree, name, long) - instructions(tree, name, short)) / (long - short);
      console.log(
        `  ${tree.padEnd(28)} ${name.padEnd(8)} ${(perCall / 1_000).toFixed(1).padStart(8)} k instructions/call`,
      );
    } catch (error) {
      console.log(`  ${tree.padEnd(28)} ${name.padEnd(8)} failed: ${String(error).split('\n')[0]}`);
    }
  }
}
