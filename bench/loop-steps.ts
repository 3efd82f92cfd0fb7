/**
 * Loop cost per step for reins alone, by run length and checkpoint store. Each (configuration,
 * steps) cell runs in a fresh child process (`node --expose-gc --import tsx`), cells are interleaved
 * (and rotated) across rounds, and the figure is the median over rounds. A child exits non-zero unless
 * every run ended `answered` after steps + 1 model calls and, with a store, the stored state is that
 * ended run: a broken run cannot produce a fast number. The peers stay in loop-overhead.ts.
 *
 * Every run: a scripted model building each answer when called, 10 read tools with a zod schema and
 * scopes, an actor holding them, every control on (repeat limit, drift, context, billed tokens,
 * spend with prices, wall clock, tool errors; limits far above what the run uses), a memory trace
 * sink, distinct tool inputs per step so neither the repeat limit nor drift trips.
 *
 *   loop               50 steps, no checkpoint store
 *   memory-checkpoint  MemoryCheckpointStore, 50 / 200 / 1,000 / 5,000 steps
 *   sqlite-checkpoint  SqliteCheckpointStore on a temp file, 50 / 1,000 / 5,000 steps
 *   no-store           200 / 1,000 / 5,000 / 50,000 steps, no checkpoint store
 *   no-trace           50 / 1,000 / 50,000 steps, no store and no trace sink: the loop alone (a
 *                      memory trace of 50,000 steps holds ~450,000 events, whose GC grows the step)
 *   kept-trace         50 / 50,000 steps, no store, a memory trace, and every run's trace kept
 *                      until the child exits: the short runs' events survive as the long run's do,
 *                      so the ratio shows what run length itself costs (`loop` drops each short
 *                      run's trace, whose events die young and cost the scavenger nothing)
 *
 * µs/step = time inside runAgent / (runs × (steps + 1) model calls). For `loop` the child also
 * reports V8 heap bytes allocated per step (v8.GCProfiler: Δ used heap + what each GC freed;
 * Node 20 has no allocation counter in getHeapStatistics).
 *
 *   npm run bench:steps            (or: npx tsx bench/loop-steps.ts [--rounds 5] [--only config[@steps],...]
 *                                   [--max-steps N] [--long-rounds N] [--json])
 *
 * The library is this tree's dist/ (imported by path): to measure another tree, copy this file
 * into it, build it, and run it there.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GCProfiler } from 'node:v8';
import { z } from 'zod';
import {
  defineTool,
  MemoryCheckpointStore,
  type Model,
  type ModelResponse,
  memoryTraceSink,
  type RunResult,
  runAgent,
} from '../dist/index.js';
import { benchMeta, median } from './stats.js';

const configs = [
  'loop',
  'memory-checkpoint',
  'sqlite-checkpoint',
  'no-store',
  'no-trace',
  'kept-trace',
] as const;
type Config = (typeof configs)[number];
const stepsFor: Record<Config, number[]> = {
  loop: [50],
  'memory-checkpoint': [50, 200, 1_000, 5_000],
  'sqlite-checkpoint': [50, 1_000, 5_000],
  'no-store': [200, 1_000, 5_000, 50_000],
  'no-trace': [50, 1_000, 50_000],
  'kept-trace': [50, 50_000],
};
/** Runs per child: about 10,000 steps' worth, one run from 5,000 steps. */
const runsFor = (steps: number) => (steps >= 5_000 ? 1 : Math.min(200, Math.floor(10_000 / steps)));

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : undefined;
};
const numberOption = (name: string, fallback: number): number => {
  const value = option(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} needs a positive number`);
  return parsed;
};

const toolCount = 10;
const toolNames = Array.from({ length: toolCount }, (_, i) => `tool_${i}`);
const answer = 'All checks done.';

// ---------------------------------------------------------------------------------------- child
/** `kept-trace`: every run's trace, alive until the child exits. */
const kept: unknown[] = [];
async function child(config: Config, steps: number, runs: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the child needs node --expose-gc');
  const inputSchema = z.object({ query: z.string(), limit: z.number().int() });
  const tools = toolNames.map((name) =>
    defineTool({
      name,
      effect: 'read',
      description: `Tool ${name}`,
      input: inputSchema,
      scopes: ['read'],
      execute: async ({ query, limit }: { query: string; limit: number }) => ({
        query,
        limit,
        rows: [1, 2, 3],
      }),
    }),
  );
  // The model's answers are built when it is called, as an adapter builds them from the provider's
  // bytes: answers made up front for a whole run (50,001 of them at 50,000 steps) are cold in memory
  // by the time each is read, a cost that grows with the run and is the bench's, not the loop's
  // (account() read them at 1.4-1.7 us/step at 50,000 steps against 0.1 at 50). Their allocation is
  // counted in alloc/step, as a real adapter's would be.
  type Responses = (turn: number) => ModelResponse;
  const responsesFor =
    (n: number): Responses =>
    (i) =>
      i < n
        ? {
            content: [
              { type: 'text', text: `step ${i}` },
              {
                type: 'tool_use',
                id: `c${i}`,
                name: toolNames[i % toolCount] as string,
                input: { query: `q${i}`, limit: i % 7 },
              },
            ],
            stopReason: 'tool_use',
            usage: { inputTokens: 1_000 + 50 * i, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
            model: 'fake',
          }
        : {
            content: [{ type: 'text', text: answer }],
            stopReason: 'end_turn',
            usage: { inputTokens: 1_000 + 50 * n, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
            model: 'fake',
          };

  const dir = mkdtempSync(join(tmpdir(), 'reins-loop-steps-'));
  let sqlite: { save?: unknown; load(runId: string): unknown; close(): void } | undefined;
  if (config === 'sqlite-checkpoint') {
    const { SqliteCheckpointStore } = await import('../dist/sqlite/index.js');
    sqlite = new SqliteCheckpointStore({ database: join(dir, 'checkpoints.db') });
  }

  const oneRun = async (n: number, responses: Responses): Promise<number> => {
    // Limits far above use, so every control is checked and none trips.
    const peakInput = 1_000 + 50 * n;
    const billed = (n + 1) * (peakInput + 40);
    let turn = 0;
    const model: Model = { name: 'fake', generate: async () => responses(turn++) };
    const store =
      config === 'memory-checkpoint'
        ? new MemoryCheckpointStore()
        : config === 'sqlite-checkpoint'
          ? sqlite
          : undefined;
    const trace = memoryTraceSink();
    if (config === 'kept-trace') kept.push(trace);
    const started = performance.now();
    const result: RunResult = await runAgent({
      model,
      input: 'Check everything.',
      tools,
      actor: { id: 'user-1', scopes: ['read'] },
      // maxSteps = steps + 1 would make the answer call the forced final-answer step (outcome
      // step_limit, tools off); + 2 keeps the answer an ordinary step that ends `answered`.
      maxSteps: n + 2,
      repeatLimit: 3,
      drift: { window: 8, minDistinct: 3 },
      maxContextTokens: 10 * peakInput,
      maxBilledTokens: 10 * billed,
      maxSpendUsd: (10 * billed * 15) / 1_000_000,
      prices: { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } },
      maxWallMs: 3_600_000,
      maxToolErrors: 10,
      ...(config === 'no-trace' ? {} : { trace }),
      ...(store ? { checkpoint: store as MemoryCheckpointStore } : {}),
    });
    const elapsed = performance.now() - started;
    const fail = (why: string) => {
      throw new Error(`${config} ${n} steps: ${why}`);
    };
    if (result.outcome.kind !== 'answered') fail(`outcome ${JSON.stringify(result.outcome)}`);
    if (result.steps !== n + 1) fail(`${result.steps} model calls, expected ${n + 1}`);
    if (result.toolErrors !== 0) fail(`${result.toolErrors} tool errors`);
    if (config !== 'no-trace' && trace.events.length < n) fail(`${trace.events.length} trace events`);
    if (store) {
      const saved = (await store.load(result.runId)) as
        | { status: string; step: number; messages: unknown[] }
        | undefined;
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
    // Warm up on shorter runs of the same configuration (the JIT does not need the full length),
    // 20,000 steps in all: a process that serves runs has compiled its hot paths long before.
    const warmSteps = Math.min(steps, 200);
    const warmResponses = responsesFor(warmSteps);
    // (2,000 with a store: a durable commit per step makes 20,000 warm-up steps take seconds.)
    const warmTotal =
      config === 'loop' || config === 'no-store' || config === 'no-trace' || config === 'kept-trace'
        ? 20_000
        : 2_000;
    for (let i = 0; i < Math.max(3, Math.floor(warmTotal / warmSteps)); i++)
      await oneRun(warmSteps, warmResponses);

    const responses = responsesFor(steps);
    // No forced GC right before timing: a full GC shrinks the young generation to its minimum and
    // the next few hundred runs pay for scavenges until it grows back (measured: 200 runs after a
    // gc() came out ~2× slower per step than 2,000). Runs for at least a second, at least `runs`.
    let totalMs = 0;
    let timedRuns = 0;
    while (timedRuns < runs || (totalMs < 1_000 && timedRuns < 20 * runs)) {
      totalMs += await oneRun(steps, responses);
      timedRuns++;
    }
    const usPerStep = (totalMs * 1_000) / (timedRuns * (steps + 1));

    let allocBytesPerStep: number | undefined;
    if (config === 'loop') {
      // Heap allocated = growth of used heap + what every GC in between freed.
      const allocRuns = Math.min(runs, 50);
      gc();
      // A full GC drops the maps of objects no longer alive (events stamped in place, batch records),
      // and optimized code that embedded them is deoptimized: re-warm (re-optimizing took up to ~45
      // runs of 50 steps under --trace-opt) so the window measures the hot code, not the interpreter.
      for (let i = 0; i < 60; i++) await oneRun(steps, responses);
      const profiler = new GCProfiler();
      const before = process.memoryUsage().heapUsed;
      profiler.start();
      for (let i = 0; i < allocRuns; i++) await oneRun(steps, responses);
      const after = process.memoryUsage().heapUsed;
      const report = profiler.stop();
      let freed = 0;
      for (const gcEvent of report?.statistics ?? [])
        freed += gcEvent.beforeGC.heapStatistics.usedHeapSize - gcEvent.afterGC.heapStatistics.usedHeapSize;
      allocBytesPerStep = (after - before + freed) / (allocRuns * (steps + 1));
    }
    process.stdout.write(
      `${JSON.stringify({ config, steps, runs: timedRuns, usPerStep, allocBytesPerStep })}\n`,
    );
  } finally {
    sqlite?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// --------------------------------------------------------------------------------------- parent
type Sample = { config: Config; steps: number; runs: number; usPerStep: number; allocBytesPerStep?: number };

function runChild(config: Config, steps: number): Promise<Sample> {
  const self = fileURLToPath(import.meta.url);
  const childArgs = ['--expose-gc', '--import', 'tsx', self, '--child', config, '--steps', String(steps)];
  childArgs.push('--runs', String(runsFor(steps)));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, childArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${config} ${steps} steps exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample);
      } catch {
        reject(new Error(`child ${config} ${steps} steps printed no result: ${out}`));
      }
    });
  });
}

async function parent(): Promise<void> {
  const json = args.includes('--json');
  // `--json FILE` writes the results there and prints the table; a bare `--json` prints the JSON.
  const jsonFile = option('json');
  const rounds = numberOption('rounds', 5);
  const longRounds = numberOption('long-rounds', rounds);
  const maxSteps = numberOption('max-steps', Number.POSITIVE_INFINITY);
  // --only memory-checkpoint  or  --only memory-checkpoint@5000,no-store@5000
  const only = option('only')
    ?.split(',')
    .map((item) => {
      const [config, steps] = item.split('@');
      if (!configs.includes(config as Config))
        throw new Error(`--only takes config[@steps],...; configs: ${configs.join(', ')}`);
      return { config: config as Config, steps: steps === undefined ? undefined : Number(steps) };
    });
  const cells = configs
    .flatMap((config) => stepsFor[config].map((steps) => ({ config, steps })))
    .filter(
      (cell) =>
        only === undefined ||
        only.some(
          (pick) => pick.config === cell.config && (pick.steps === undefined || pick.steps === cell.steps),
        ),
    );
  if (cells.length === 0) throw new Error('--only selects no cell');
  const skipped = cells.filter((cell) => cell.steps > maxSteps);
  const measured = cells.filter((cell) => cell.steps <= maxSteps);
  const roundsFor = (steps: number) => (steps >= 5_000 ? longRounds : rounds);

  let library = 'reins';
  try {
    library = fileURLToPath(import.meta.resolve('../dist/index.js'));
  } catch {}
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  } catch {}

  const samples = new Map<string, Sample[]>(measured.map((cell) => [`${cell.config}@${cell.steps}`, []]));
  const totalRounds = Math.max(rounds, longRounds);
  const started = performance.now();
  for (let round = 0; round < totalRounds; round++) {
    const due = measured.filter((cell) => round < roundsFor(cell.steps));
    // Rotate the order each round so no cell always runs first or after the same neighbour.
    const order = due.map((_, i) => due[(i + round) % due.length]!);
    for (const cell of order) {
      const sample = await runChild(cell.config, cell.steps);
      samples.get(`${cell.config}@${cell.steps}`)!.push(sample);
      process.stderr.write(
        `  round ${round + 1}/${totalRounds}  ${cell.config.padEnd(17)} ${String(cell.steps).padStart(5)} steps  ${sample.usPerStep.toFixed(1).padStart(9)} µs/step  (${((performance.now() - started) / 1_000).toFixed(0)} s)\n`,
      );
    }
  }

  const rows = measured.map(({ config, steps }) => {
    const list = samples.get(`${config}@${steps}`)!;
    const values = list.map((sample) => sample.usPerStep);
    const allocs = list.flatMap((sample) =>
      sample.allocBytesPerStep === undefined ? [] : [sample.allocBytesPerStep],
    );
    return {
      config,
      steps,
      rounds: list.length,
      runsPerRound: list[0]?.runs ?? 0,
      usPerStep: median(values),
      min: Math.min(...values),
      max: Math.max(...values),
      ...(allocs.length > 0 ? { allocBytesPerStep: median(allocs) } : {}),
    };
  });
  // No store at the same length: `no-store`, or `loop` at 50 steps (the same configuration).
  const noStore = (steps: number) =>
    rows.find((row) => (row.config === 'no-store' || row.config === 'loop') && row.steps === steps)
      ?.usPerStep;
  const table = rows.map((row) => {
    const base = noStore(row.steps);
    const isStore = row.config === 'memory-checkpoint' || row.config === 'sqlite-checkpoint';
    return { ...row, ratioToNoStore: isStore && base !== undefined ? row.usPerStep / base : undefined };
  });
  const memoryRatio = Object.fromEntries(
    table
      .filter((row) => row.config === 'memory-checkpoint' && row.ratioToNoStore !== undefined)
      .map((row) => [row.steps, row.ratioToNoStore as number]),
  );
  const meta = {
    library,
    commit,
    node: process.version,
    rounds,
    longRounds,
    maxSteps: Number.isFinite(maxSteps) ? maxSteps : null,
    skipped: skipped.map((cell) => `${cell.config}@${cell.steps}`),
  };

  const results = {
    meta: { ...meta, ...benchMeta() },
    rows: table,
    memoryCheckpointOverNoStore: memoryRatio,
  };
  if (json && (jsonFile === undefined || jsonFile.startsWith('--'))) {
    console.log(JSON.stringify(results, null, 2));
    return;
  }
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nreins loop cost per step (${library}, commit ${commit}, Node ${process.version})`);
  console.log(
    `median over rounds of one fresh child process per cell per round; µs per model call, steps + 1 calls a run, ${toolCount} tools, every control on, memory trace`,
  );
  const header = ['config', 'steps', 'µs/step', 'min', 'max', 'rounds×runs', '÷ no-store', 'alloc/step'];
  const lines = table.map((row) => [
    row.config,
    row.steps.toLocaleString('en-US'),
    row.usPerStep.toFixed(1),
    row.min.toFixed(1),
    row.max.toFixed(1),
    `${row.rounds}×${row.runsPerRound}`,
    row.ratioToNoStore === undefined ? '' : `${row.ratioToNoStore.toFixed(2)}×`,
    row.allocBytesPerStep === undefined ? '' : `${(row.allocBytesPerStep / 1_024).toFixed(1)} KiB`,
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) =>
    `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`;
  console.log(format(header));
  for (const line of lines) console.log(format(line));
  if (Object.keys(memoryRatio).length > 0)
    console.log(
      `  memory-checkpoint ÷ no-store: ${Object.entries(memoryRatio)
        .map(([steps, ratio]) => `${Number(steps).toLocaleString('en-US')} steps ${ratio.toFixed(2)}×`)
        .join(', ')}`,
    );
  if (skipped.length > 0) console.log(`  not measured (--max-steps ${maxSteps}): ${meta.skipped.join(', ')}`);
  if (longRounds !== rounds) console.log(`  5,000-step cells: ${longRounds} rounds (--long-rounds)`);
}

const childConfig = option('child');
if (childConfig !== undefined) {
  if (!configs.includes(childConfig as Config)) throw new Error(`unknown config ${childConfig}`);
  await child(childConfig as Config, numberOption('steps', 50), numberOption('runs', 1));
} else {
  await parent();
}
