/**
 * Per-step cost of a checkpointed run by store and run length: no store, MemoryCheckpointStore,
 * SqliteCheckpointStore (a temp file, WAL, synchronous=FULL), PostgresCheckpointStore and
 * RedisCheckpointStore (loopback servers, as configured). Each (store, steps) cell runs in a fresh
 * child process per round, cells rotate across rounds, and the figure is the median over rounds.
 * A child fails unless every run ended `answered` after steps + 1 model calls and, with a store, the
 * stored state is that ended run: a broken run cannot produce a fast number.
 *
 * Every run: a scripted model returning precomputed responses (a tool call per step, then an
 * answer), 4 read tools with a zod schema, distinct inputs per step; the loop's defaults otherwise.
 * µs/step = time inside runAgent / (runs × (steps + 1) model calls). "5,000 ÷ 50" is the per-step
 * cost at 5,000 steps over the one at 50: 1 is flat, and a cost that grows with the run shows here.
 *
 *   npx tsx bench/checkpoint-stores.ts [--rounds 3] [--only store,...] [--json]
 *
 * PostgreSQL from REINS_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test), Redis
 * from REINS_BENCH_REDIS_URL (default redis://127.0.0.1:6379). The library is this tree's dist/.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  type CheckpointStore,
  defineTool,
  MemoryCheckpointStore,
  type Model,
  type ModelResponse,
  runAgent,
} from '../dist/index.js';
import { median } from './stats.js';

const stores = ['none', 'memory', 'sqlite', 'postgres', 'redis'] as const;
type StoreName = (typeof stores)[number];
const lengths = [50, 1_000, 5_000];
/** Runs per child: about 2,000 steps' worth, at least one. */
const runsFor = (steps: number) => Math.max(1, Math.floor(2_000 / steps));
const postgresUrl = process.env['REINS_BENCH_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env['REINS_BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};

// ---------------------------------------------------------------------------------------- child
/** `roundTrip` is one trivial request to the store's server (SELECT 1, PING), to show its floor. */
type Opened = {
  store: CheckpointStore | undefined;
  close: () => Promise<void>;
  roundTrip?: () => Promise<unknown>;
};

async function open(name: StoreName): Promise<Opened> {
  const tag = `${process.pid}_${Date.now()}`;
  switch (name) {
    case 'none':
      return { store: undefined, close: async () => {} };
    case 'memory':
      return { store: new MemoryCheckpointStore(), close: async () => {} };
    case 'sqlite': {
      const { SqliteCheckpointStore } = await import('../dist/sqlite/index.js');
      const dir = mkdtempSync(join(tmpdir(), 'reins-bench-stores-'));
      const store = new SqliteCheckpointStore({ database: join(dir, 'checkpoints.db') });
      return {
        store,
        close: async () => {
          store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      const { PostgresCheckpointStore } = await import('../dist/postgres/index.js');
      const pool = new pg.Pool({ connectionString: postgresUrl, max: 2 });
      const schema = `reins_bench_${tag}`;
      const store = new PostgresCheckpointStore({ pool, schema });
      await store.ensureSchema();
      return {
        store,
        roundTrip: () => pool.query('SELECT 1'),
        close: async () => {
          await pool.query(`DROP SCHEMA ${schema} CASCADE`);
          await pool.end();
        },
      };
    }
    case 'redis': {
      const { Redis } = await import('ioredis');
      const { RedisCheckpointStore } = await import('../dist/redis/index.js');
      const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      const store = new RedisCheckpointStore({ redis, keyPrefix: `reins-bench:${tag}` });
      const runIds: string[] = [];
      return {
        store: {
          commit: (commit) => {
            if (commit.expectedRevision === 0) runIds.push(commit.runId);
            return store.commit(commit);
          },
          load: (runId) => store.load(runId),
        },
        roundTrip: () => redis.ping(),
        close: async () => {
          for (const runId of runIds) await store.delete(runId);
          redis.disconnect();
        },
      };
    }
  }
}

async function child(name: StoreName, steps: number, runs: number): Promise<void> {
  const toolNames = ['search', 'fetch', 'lookup', 'count'];
  const input = z.object({ query: z.string(), limit: z.number().int() });
  const tools = toolNames.map((tool) =>
    defineTool({
      name: tool,
      effect: 'read',
      description: `Tool ${tool}`,
      input,
      execute: async ({ query, limit }: { query: string; limit: number }) => ({
        query,
        limit,
        rows: [1, 2, 3],
      }),
    }),
  );
  const responsesFor = (n: number): ModelResponse[] => [
    ...Array.from({ length: n }, (_, i) => ({
      content: [
        { type: 'text' as const, text: `Step ${i}: looking further.` },
        {
          type: 'tool_use' as const,
          id: `c${i}`,
          name: toolNames[i % toolNames.length] as string,
          input: { query: `q${i}`, limit: i % 7 },
        },
      ],
      stopReason: 'tool_use' as const,
      usage: { inputTokens: 1_000 + 50 * i, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
      model: 'fake',
    })),
    {
      content: [{ type: 'text', text: 'All checks done.' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 1_000 + 50 * n, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      model: 'fake',
    },
  ];
  const opened = await open(name);
  let runNumber = 0;
  const oneRun = async (n: number, responses: ModelResponse[]): Promise<number> => {
    let turn = 0;
    const model: Model = { name: 'fake', generate: async () => responses[turn++] as ModelResponse };
    const runId = `bench-${runNumber++}`;
    const started = performance.now();
    const result = await runAgent({
      model,
      input: 'Check everything.',
      tools,
      runId,
      maxSteps: n + 2,
      // A 5,000-step transcript passes the default 100,000-token context limit: far above use.
      maxContextTokens: 100_000_000,
      ...(opened.store ? { checkpoint: opened.store } : {}),
    });
    const elapsed = performance.now() - started;
    const fail = (why: string) => {
      throw new Error(`${name} ${n} steps: ${why}`);
    };
    if (result.outcome.kind !== 'answered') fail(`outcome ${JSON.stringify(result.outcome)}`);
    if (result.steps !== n + 1) fail(`${result.steps} model calls, expected ${n + 1}`);
    if (opened.store) {
      const saved = await opened.store.load(runId);
      if (
        saved?.status !== 'ended' ||
        saved.step !== n + 1 ||
        saved.messages.length !== result.messages.length
      )
        fail(`stored state ${saved ? `${saved.status} at step ${saved.step}` : 'missing'}`);
    }
    return elapsed;
  };
  try {
    const warmSteps = Math.min(steps, 100);
    const warmResponses = responsesFor(warmSteps);
    for (let i = 0; i < Math.max(3, Math.floor(1_000 / warmSteps)); i++)
      await oneRun(warmSteps, warmResponses);
    const responses = responsesFor(steps);
    let totalMs = 0;
    for (let i = 0; i < runs; i++) totalMs += await oneRun(steps, responses);
    const usPerStep = (totalMs * 1_000) / (runs * (steps + 1));
    let roundTripUs: number | undefined;
    if (opened.roundTrip) {
      const times: number[] = [];
      for (let i = 0; i < 200; i++) {
        const at = performance.now();
        await opened.roundTrip();
        times.push((performance.now() - at) * 1_000);
      }
      roundTripUs = median(times);
    }
    process.stdout.write(`${JSON.stringify({ store: name, steps, runs, usPerStep, roundTripUs })}\n`);
  } finally {
    await opened.close();
  }
}

// --------------------------------------------------------------------------------------- parent
type Sample = { store: StoreName; steps: number; runs: number; usPerStep: number; roundTripUs?: number };

function runChild(name: StoreName, steps: number): Promise<Sample> {
  const self = fileURLToPath(import.meta.url);
  const childArgs = ['--import', 'tsx', self, '--child', name, '--steps', String(steps)];
  childArgs.push('--runs', String(runsFor(steps)));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, childArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${name} ${steps} steps exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample);
      } catch {
        reject(new Error(`child ${name} ${steps} steps printed no result: ${out}`));
      }
    });
  });
}

async function parent(): Promise<void> {
  const rounds = Number(option('rounds') ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds needs a positive integer');
  const only = option('only')?.split(',');
  for (const name of only ?? [])
    if (!stores.includes(name as StoreName)) throw new Error(`--only takes ${stores.join(', ')}`);
  const picked = stores.filter((name) => only === undefined || only.includes(name));
  const cells = picked.flatMap((store) => lengths.map((steps) => ({ store, steps })));
  const samples = new Map<string, number[]>(cells.map((cell) => [`${cell.store}@${cell.steps}`, []]));
  const roundTrips = new Map<StoreName, number[]>();
  const started = performance.now();
  for (let round = 0; round < rounds; round++) {
    const order = cells.map((_, i) => cells[(i + round) % cells.length]!);
    for (const cell of order) {
      const sample = await runChild(cell.store, cell.steps);
      samples.get(`${cell.store}@${cell.steps}`)!.push(sample.usPerStep);
      if (sample.roundTripUs !== undefined)
        roundTrips.set(cell.store, [...(roundTrips.get(cell.store) ?? []), sample.roundTripUs]);
      process.stderr.write(
        `  round ${round + 1}/${rounds}  ${cell.store.padEnd(8)} ${String(cell.steps).padStart(5)} steps  ${sample.usPerStep.toFixed(1).padStart(9)} µs/step  (${((performance.now() - started) / 1_000).toFixed(0)} s)\n`,
      );
    }
  }
  const perStep = (store: StoreName, steps: number) => median(samples.get(`${store}@${steps}`) ?? []);
  const rows = picked.map((store) => {
    const byLength = Object.fromEntries(lengths.map((steps) => [steps, perStep(store, steps)]));
    const spread = Object.fromEntries(
      lengths.map((steps) => {
        const values = samples.get(`${store}@${steps}`) ?? [];
        return [steps, { min: Math.min(...values), max: Math.max(...values) }];
      }),
    );
    return {
      store,
      usPerStep: byLength,
      spread,
      flatness: (byLength[5_000] as number) / (byLength[50] as number),
      roundTripUs: roundTrips.has(store) ? median(roundTrips.get(store)!) : undefined,
      overNone: picked.includes('none')
        ? Object.fromEntries(lengths.map((steps) => [steps, perStep(store, steps) / perStep('none', steps)]))
        : undefined,
    };
  });
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  } catch {}
  if (args.includes('--json')) {
    console.log(JSON.stringify({ commit, node: process.version, rounds, rows }, null, 2));
    return;
  }
  console.log(
    `\ncheckpointed run, µs per step: median (min–max) of ${rounds} rounds (commit ${commit}, Node ${process.version})`,
  );
  const header = ['store', ...lengths.map((steps) => `${steps.toLocaleString('en-US')} steps`), '5,000 ÷ 50'];
  if (picked.includes('none')) header.push('÷ none at 5,000');
  header.push('server round trip µs');
  const lines = rows.map((row) => [
    row.store,
    ...lengths.map((steps) => {
      const { min, max } = row.spread[steps] as { min: number; max: number };
      return `${(row.usPerStep[steps] as number).toFixed(0)} (${min.toFixed(0)}–${max.toFixed(0)})`;
    }),
    `${row.flatness.toFixed(2)}×`,
    ...(row.overNone ? [`${(row.overNone[5_000] as number).toFixed(1)}×`] : []),
    row.roundTripUs === undefined ? '' : row.roundTripUs.toFixed(0),
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)),
  );
  const format = (cells: string[]) =>
    `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`;
  console.log(format(header));
  for (const line of lines) console.log(format(line));
}

const childStore = option('child');
if (childStore !== undefined) {
  if (!stores.includes(childStore as StoreName)) throw new Error(`unknown store ${childStore}`);
  await child(childStore as StoreName, Number(option('steps') ?? 50), Number(option('runs') ?? 1));
} else {
  await parent();
}
