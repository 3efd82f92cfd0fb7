/**
 * The context window run as a cache (issue 17's benchmarks), in one run, everything through the
 * real loop with scripted models:
 *
 * 1. The bill against run length (10 → 2,000 steps) for append-only, caching only, the cache policy
 *    and the cache policy with retrieval, with the growth exponent fitted on ≥ 500 steps; the bill
 *    cross-post's table reproduced through the loop and a simulated provider cache; the seeds'
 *    closed forms beside their printed figures.
 * 2. What compaction loses: the needle harness, recall of planted facts and dead ends retried, per
 *    reins policy.
 * 3. The same harness against the peers' strategies (bench/context-peers.ts), one process each.
 * 4. The policy's overhead per step at 500 / 1,000 / 2,000 steps: the loop with and without it, no
 *    trace, one child process per (config, length) cell, medians of ≥ 5 rounds.
 *
 * Parts 1 and 2 are `reins bench context` (the CLI runs the same code, from dist/). Writes the chart
 * to bench/results/context.svg.
 *
 *   npm run bench:context   (or: npx tsx bench/context.ts [--json FILE] [--rounds 5] [--seeds 10])
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  agreementTable,
  barsTable,
  billTable,
  type ContextBar,
  contextBars,
  post18BudgetTokens,
  post18Workload,
  type RecallRow,
  recallTable,
  runContextBenchmark,
  textTable,
} from '../dist/context/benchmark/index.js';
import { contextPolicy, memoryTranscriptIndex } from '../dist/context/index.js';
import { defineTool, runAgent } from '../dist/index.js';
import { renderChartSvg } from '../dist/plot/index.js';
import { type ScriptedTurn, scriptedModel } from '../dist/testing/index.js';
import { benchMeta, median, numberList, option } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const self = fileURLToPath(import.meta.url);

// ------------------------------------------------------------------------------------ overhead
const overheadConfigs = ['none', 'evict', 'summarize', 'retrieve'] as const;
type OverheadConfig = (typeof overheadConfigs)[number];

const area = (k: number) => `area-${k}`;
const resultText = (k: number) =>
  `${area(k)}: ${'the probe read the area and found the usual mix of healthy and slow handlers '.repeat(80)}`.slice(
    0,
    post18Workload.resultTokens * 4,
  );

function overheadPolicy(config: OverheadConfig) {
  const budgetTokens = post18BudgetTokens;
  if (config === 'none') return undefined;
  if (config === 'retrieve')
    return contextPolicy({
      budgetTokens,
      compaction: 'retrieve',
      retrieval: { index: () => memoryTranscriptIndex() },
    });
  return contextPolicy({ budgetTokens, compaction: config });
}

/** One run of `steps` probe steps and the answer; the model's usage is given, so it counts nothing itself. */
function overheadRun(config: OverheadConfig, steps: number): () => Promise<void> {
  const results = Array.from({ length: steps }, (_, i) => resultText(i + 1));
  const probe = defineTool({
    name: 'probe',
    description: 'Read one area of the service.',
    input: z.object({ area: z.string(), k: z.number() }),
    effect: 'read',
    trustedOutput: true,
    execute: ({ k }) => results[k - 1] as string,
  });
  const usage = { inputTokens: 8_000, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const turns: ScriptedTurn[] = [
    ...Array.from({ length: steps }, (_, i) => ({
      text: `Step ${i + 1}: ${'reading the next area of the service. '.repeat(30)}`,
      toolCalls: [{ name: 'probe', input: { area: area(i + 1), k: i + 1 } }],
      usage,
    })),
    { text: 'All areas read.', usage },
  ];
  return async () => {
    const policy = overheadPolicy(config);
    const run = await runAgent({
      model: scriptedModel(turns, { recordCalls: false }),
      input: 'Survey every area of the service.',
      tools: [probe],
      giveUpTool: false,
      maxSteps: steps + 2,
      repeatLimit: false,
      drift: false,
      maxContextTokens: 1_000_000_000,
      ...(policy ? { context: policy } : {}),
    });
    if (run.outcome.kind !== 'answered' || run.steps !== steps + 1)
      throw new Error(`overhead ${config} ${steps}: ${run.outcome.kind} after ${run.steps} calls`);
  };
}

interface OverheadSample {
  config: OverheadConfig;
  steps: number;
  runs: number;
  usPerStep: number;
}

async function overheadChild(config: OverheadConfig, steps: number): Promise<void> {
  const warm = overheadRun(config, Math.min(steps, 200));
  for (let i = 0; i < 5; i++) await warm();
  const once = overheadRun(config, steps);
  await once();
  let runs = 0;
  let totalMs = 0;
  while (runs < 50 && (runs === 0 || totalMs < 1_000)) {
    const started = performance.now();
    await once();
    totalMs += performance.now() - started;
    runs++;
  }
  const sample: OverheadSample = { config, steps, runs, usPerStep: (totalMs * 1_000) / (runs * (steps + 1)) };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
}

function child<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${args.join(' ')} exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as T);
      } catch {
        reject(new Error(`child ${args.join(' ')} printed no result: ${out}`));
      }
    });
  });
}

interface OverheadRow {
  config: OverheadConfig;
  steps: number;
  rounds: number;
  usPerStep: number;
  min: number;
  max: number;
  /** The policy's own cost: this config's median less no policy's, same length. */
  overheadUsPerStep: number | undefined;
}

async function overhead(rounds: number, stepsList: readonly number[]): Promise<OverheadRow[]> {
  const cells = overheadConfigs.flatMap((config) => stepsList.map((steps) => ({ config, steps })));
  const samples = new Map<string, number[]>(cells.map((cell) => [`${cell.config}@${cell.steps}`, []]));
  for (let round = 0; round < rounds; round++) {
    const order = cells.map((_, i) => cells[(i + round * 2) % cells.length] as (typeof cells)[number]);
    for (const cell of order) {
      const sample = await child<OverheadSample>([
        self,
        '--overhead',
        cell.config,
        '--steps',
        String(cell.steps),
      ]);
      samples.get(`${cell.config}@${cell.steps}`)?.push(sample.usPerStep);
      process.stderr.write(
        `  overhead round ${round + 1}/${rounds}  ${cell.config.padEnd(9)} ${String(cell.steps).padStart(5)} steps  ${sample.usPerStep.toFixed(1).padStart(8)} µs/step\n`,
      );
    }
  }
  const medianOf = (config: string, steps: number) => median(samples.get(`${config}@${steps}`) ?? []);
  return cells.map(({ config, steps }) => {
    const values = samples.get(`${config}@${steps}`) ?? [];
    return {
      config,
      steps,
      rounds: values.length,
      usPerStep: median(values),
      min: Math.min(...values),
      max: Math.max(...values),
      overheadUsPerStep: config === 'none' ? undefined : median(values) - medianOf('none', steps),
    };
  });
}

// ---------------------------------------------------------------------------------------- parent
async function parent(): Promise<void> {
  const rounds = Number(option('rounds') ?? 5);
  const seedCount = Number(option('seeds') ?? 10);
  const seeds = Array.from({ length: seedCount }, (_, i) => i + 1);
  const overheadSteps = numberList(option('overhead-steps')) ?? [500, 1_000, 2_000];
  const started = performance.now();

  const figures = await runContextBenchmark({
    index: () => memoryTranscriptIndex(),
    seeds,
    onProgress: (line) => process.stderr.write(`  ${line}\n`),
  });

  const { peerBudgetTokens, peerContenders } = await import('./context-peers.js');
  const peers: RecallRow[] = [];
  for (const name of peerContenders) {
    const row = await child<RecallRow & { contender: string }>([
      join(here, 'context-peers.ts'),
      '--child',
      name,
      '--seeds',
      seeds.join(','),
    ]);
    peers.push(row);
    process.stderr.write(`  peer ${name}\n`);
  }

  const overheadRows = await overhead(rounds, overheadSteps);

  const bars: ContextBar[] = contextBars(figures);
  const longest = Math.max(...overheadSteps);
  const policyOverheads = overheadRows.filter(
    (row) => row.steps === longest && row.overheadUsPerStep !== undefined,
  );
  const worst = policyOverheads.reduce(
    (max, row) => Math.max(max, row.overheadUsPerStep as number),
    Number.NEGATIVE_INFINITY,
  );
  const worstRow = policyOverheads.find((row) => row.overheadUsPerStep === worst);
  for (const row of policyOverheads)
    bars.push({
      figure: `policy overhead per step at ${longest.toLocaleString('en-US')} steps, ${row.config}`,
      shown: `${(row.overheadUsPerStep as number).toFixed(1)} µs`,
      bar: '≤ 50 µs',
      met: (row.overheadUsPerStep as number) <= 50,
    });

  console.log(`\n${agreementTable(figures)}`);
  console.log(`\n${billTable(figures)}`);
  console.log(`\n${recallTable(figures.recall)}`);
  console.log(
    `\n${recallTable(peers, `The same harness against the peers' strategies (${peerBudgetTokens.toLocaleString('en-US')} tokens of messages: the reins budget less the system prompt and tools; one process each)`)}`,
  );
  console.log(
    `\nPolicy overhead per step (median of ${rounds} rounds, one child process per cell, no trace; µs per model call)`,
  );
  console.log(
    textTable(
      [
        'config',
        ...overheadSteps.map((n) => `${n.toLocaleString('en-US')} steps`),
        `overhead at ${longest.toLocaleString('en-US')}`,
      ],
      overheadConfigs
        .filter((config) => overheadRows.some((row) => row.config === config))
        .map((config) => [
          config,
          ...overheadSteps.map((n) => {
            const row = overheadRows.find((entry) => entry.config === config && entry.steps === n);
            return row ? `${row.usPerStep.toFixed(1)} (${row.min.toFixed(1)}–${row.max.toFixed(1)})` : '—';
          }),
          (() => {
            const row = overheadRows.find((entry) => entry.config === config && entry.steps === longest);
            return row?.overheadUsPerStep === undefined ? '' : `${row.overheadUsPerStep.toFixed(1)} µs`;
          })(),
        ]),
    ),
  );
  console.log(`\n${barsTable(bars)}`);
  if (worstRow) console.log(`  worst policy overhead: ${worstRow.config}, ${worst.toFixed(1)} µs/step`);

  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', 'context.svg'), chart(figures.runs));
  console.log(
    `\nwrote ${join(here, 'results', 'context.svg')} (${((performance.now() - started) / 1_000).toFixed(0)} s)`,
  );

  const json = option('json');
  if (json)
    writeFileSync(
      json,
      `${JSON.stringify(
        {
          runs: figures.runs.map(({ policy, steps, billedTokens, costUsd }) => ({
            policy,
            steps,
            billedTokens,
            costUsd,
          })),
          recall: [...figures.recall, ...peers].map(({ policy, recall, deadEndRetries }) => ({
            policy,
            recall,
            deadEndRetries,
          })),
          growthExponent: figures.growthExponent,
          overhead: overheadRows,
          bars,
          details: {
            runs: figures.runs,
            recall: figures.recall,
            peers,
            crossPost: figures.crossPost,
            agreements: figures.agreements,
          },
          meta: benchMeta({
            rounds,
            seeds: seedCount,
            parameters: figures.parameters,
            retrieval: true,
          }),
        },
        null,
        2,
      )}\n`,
    );
}

function chart(runs: Awaited<ReturnType<typeof runContextBenchmark>>['runs']): string {
  const policies = [...new Set(runs.map((row) => row.policy))];
  return renderChartSvg(
    {
      title: 'Bill per run against run length (post-18 sizes, bill cross-post prices; log-log)',
      x: { label: 'steps in the run', log: true },
      y: { label: 'USD per run', format: 'usd', log: true },
      lines: policies.map((policy) => ({
        name: policy,
        points: runs.filter((row) => row.policy === policy).map((row) => [row.steps, row.costUsd] as const),
      })),
    },
    { width: 860, height: 480 },
  );
}

const overheadIndex = process.argv.indexOf('--overhead');
if (overheadIndex >= 0)
  await overheadChild(process.argv[overheadIndex + 1] as OverheadConfig, Number(option('steps')));
else await parent();
