// Loop cost per step in CPU instructions (valgrind callgrind): repeatable on a shared, noisy
// machine, where wall-clock medians of the same code swing ±40 %. The 50-step, 10-tool run with
// every control and the memory trace (bench/loop-overhead.ts's reins case), N runs after 30 warm-up
// runs; per-run instructions = (I(long) − I(short)) / (long − short), so start-up, imports and
// warm-up cancel out.
//
//   node bench/loop-icount.mjs [DIST ...]      default: this tree's dist/
//   e.g. node bench/loop-icount.mjs /tmp/baseline/dist ./dist   (an older build beside this one)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(import.meta.url);
const steps = 50;

async function child(dist, runs) {
  const { defineTool, memoryTraceSink, runAgent } = await import(pathToFileURL(join(dist, 'index.js')).href);
  const { z } = await import('zod');
  const names = Array.from({ length: 10 }, (_, i) => `tool_${i}`);
  const usage = (input, output) => ({
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  const responses = [
    ...Array.from({ length: steps }, (_, i) => ({
      content: [
        { type: 'text', text: `step ${i}` },
        { type: 'tool_use', id: `c${i}`, name: names[i % 10], input: { query: `q${i}`, limit: i % 7 } },
      ],
      stopReason: 'tool_use',
      usage: usage(1_000 + 50 * i, 30),
      model: 'fake',
    })),
    {
      content: [{ type: 'text', text: 'All checks done.' }],
      stopReason: 'end_turn',
      usage: usage(3_600, 10),
      model: 'fake',
    },
  ];
  const input = z.object({ query: z.string(), limit: z.number().int() });
  const tools = names.map((name) =>
    defineTool({
      name,
      effect: 'read',
      description: `Tool ${name}`,
      input,
      scopes: ['read'],
      execute: async ({ query, limit }) => ({ query, limit, rows: [1, 2, 3] }),
    }),
  );
  const once = async () => {
    let turn = 0;
    const result = await runAgent({
      model: { name: 'fake', generate: async () => responses[turn++] },
      input: 'Check everything.',
      tools,
      actor: { id: 'user-1', scopes: ['read'] },
      maxSteps: steps + 5,
      repeatLimit: 3,
      drift: { window: 8, minDistinct: 3 },
      maxContextTokens: 1_000_000,
      maxBilledTokens: 10_000_000,
      maxSpendUsd: 100,
      prices: { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } },
      maxWallMs: 60_000,
      maxToolErrors: 10,
      trace: memoryTraceSink(),
    });
    if (result.outcome.kind !== 'answered' || result.steps !== steps + 1)
      throw new Error(JSON.stringify(result.outcome));
  };
  for (let i = 0; i < 30; i++) await once();
  for (let i = 0; i < runs; i++) await once();
}

function instructions(dist, runs) {
  const out = join(mkdtempSync(join(tmpdir(), 'reins-icount-')), 'callgrind.out');
  execFileSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      here,
      '--child',
      dist,
      String(runs),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const summary =
    readFileSync(out, 'utf8').match(/^summary: (\d+)/m) ?? readFileSync(out, 'utf8').match(/^totals: (\d+)/m);
  if (!summary) throw new Error('no callgrind summary');
  return Number(summary[1]);
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]));
} else {
  const dists = process.argv.slice(2).length > 0 ? process.argv.slice(2) : [join(here, '../../dist')];
  const rows = [];
  for (const dist of dists.map((entry) => resolve(entry))) {
    const short = instructions(dist, 10);
    const long = instructions(dist, 40);
    const perStep = (long - short) / 30 / (steps + 1);
    rows.push({ dist, perStep });
    console.log(`${dist}: ${(perStep / 1e3).toFixed(1)} k instructions per step`);
  }
  if (rows.length > 1) {
    const [first, ...rest] = rows;
    for (const row of rest)
      console.log(`${row.dist} ÷ ${first.dist}: ${(row.perStep / first.perStep).toFixed(3)}`);
  }
}
