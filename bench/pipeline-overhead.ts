/**
 * Pipeline overhead per stage (issue 21: ≤ 5 µs beyond the model calls). A chain of N stages run
 * by `runPipeline` against the same work done directly in a `for` loop, for two stage kinds:
 *
 *   fn      N function stages (`step`, each adds 1)                vs  N awaited function calls
 *   model   N model stages (0-latency model, forced tool, zod)     vs  N direct generate() calls,
 *                                                                       each answer's tool input
 *                                                                       validated by the same schema
 *
 * Overhead per stage = (pipeline − direct) / N. Every (contender, kind, N) cell runs in a fresh
 * child process; cells are interleaved and rotated across rounds; figures are medians over rounds.
 * A child warms up, then times runs for about half a second, and exits non-zero unless every run
 * produced the expected output. No trace sink, store or job budget (the bare pipeline); `--with
 * budget` adds a JobBudget to both sides (the direct side reserves and settles by hand).
 *
 *   npx tsx bench/pipeline-overhead.ts [--rounds 5] [--sizes 5,20,100] [--with budget] [--json FILE]
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { JobBudget, type Model, type ModelRequest, type ModelResponse } from '../dist/index.js';
import { chain, modelStage, runPipeline, step } from '../dist/pipeline/index.js';
import { benchMeta, median, numberList, option } from './stats.js';

const kinds = ['fn', 'model'] as const;
const contenders = ['direct', 'pipeline'] as const;
type Kind = (typeof kinds)[number];
type Contender = (typeof contenders)[number];

const output = z.object({ value: z.number() });
const response = (name: string, value: number): ModelResponse => ({
  content: [{ type: 'tool_use', id: 'c', name, input: { value } }],
  stopReason: 'tool_use',
  usage: { inputTokens: 20, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
  model: 'zero',
});
/** A model that answers at once, calling the tool it is forced to: the value in the prompt plus one. */
const zeroModel: Model = {
  name: 'zero',
  generate: (request: ModelRequest) => {
    const block = request.messages[0]?.content[0];
    const name = typeof request.toolChoice === 'object' ? request.toolChoice.name : 'stage';
    return Promise.resolve(response(name, Number(block?.type === 'text' ? block.text : 0) + 1));
  },
};

async function child(contender: Contender, kind: Kind, size: number, withBudget: boolean): Promise<void> {
  let run: () => Promise<number>;
  const budget = () => (withBudget ? new JobBudget({ maxTokens: 1e12 }) : undefined);
  if (contender === 'pipeline') {
    const stages =
      kind === 'fn'
        ? Array.from({ length: size }, (_, i) => step(`s${i}`, (n: number) => n + 1))
        : Array.from({ length: size }, (_, i) =>
            modelStage({
              name: `s${i}`,
              model: zeroModel,
              output,
              prompt: (input: { value: number } | number) =>
                String(typeof input === 'number' ? input : input.value),
              maxOutputTokens: 16,
            }),
          );
    const pipeline = chain('bench', ...stages);
    run = async () => {
      const job = budget();
      const result = await runPipeline(pipeline, 0, job ? { jobBudget: job, runId: 'b' } : { runId: 'b' });
      if (result.outcome.kind !== 'completed') throw new Error(`pipeline ended ${result.outcome.kind}`);
      const out = result.outcome.output as number | { value: number };
      return typeof out === 'number' ? out : out.value;
    };
  } else if (kind === 'fn') {
    const fns = Array.from({ length: size }, () => (n: number) => n + 1);
    run = async () => {
      let value = 0;
      for (const fn of fns) value = await fn(value);
      return value;
    };
  } else {
    const schema = output['~standard'];
    const tools = [{ name: 'stage', description: 'd', inputSchema: { type: 'object' } }];
    run = async () => {
      const job = budget();
      let value = 0;
      for (let i = 0; i < size; i++) {
        const request: ModelRequest = {
          system: '',
          messages: [{ role: 'user', content: [{ type: 'text', text: String(value) }] }],
          tools,
          toolChoice: { name: 'stage' },
          maxOutputTokens: 16,
        };
        const held = job?.reserve({ spender: 's', model: 'zero', inputTokens: 20, maxOutputTokens: 16 });
        const answer = await zeroModel.generate(request);
        if (held?.ok) job?.settle(held.reservation, answer.usage, answer.model);
        const used = answer.content.find((block) => block.type === 'tool_use');
        const checked = await schema.validate(used?.type === 'tool_use' ? used.input : undefined);
        if (checked.issues) throw new Error('invalid');
        value = checked.value.value;
      }
      return value;
    };
  }
  for (let i = 0; i < 200; i++) if ((await run()) !== size) throw new Error('wrong output in warm-up');
  let runs = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < 500 || runs < 20) {
    if ((await run()) !== size) throw new Error('wrong output');
    runs++;
    elapsed = performance.now() - started;
  }
  console.log(JSON.stringify({ usPerRun: (elapsed * 1000) / runs, runs }));
}

function spawnChild(contender: Contender, kind: Kind, size: number, withBudget: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const args = [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--child',
      contender,
      kind,
      String(size),
    ];
    if (withBudget) args.push('--with', 'budget');
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${contender} ${kind} ${size} exited ${code}`));
      resolve((JSON.parse(out.trim().split('\n').at(-1) as string) as { usPerRun: number }).usPerRun);
    });
  });
}

async function parent(): Promise<void> {
  const rounds = Number(option('rounds') ?? 5);
  const sizes = numberList(option('sizes')) ?? [5, 20, 100];
  const withBudget = option('with') === 'budget';
  const cells = kinds.flatMap((kind) =>
    sizes.flatMap((size) => contenders.map((contender) => ({ kind, size, contender }))),
  );
  const samples = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    // Rotate the order so no contender always runs first (or last) in a round.
    const order = cells.map((_, i) => cells[(i + round) % cells.length] as (typeof cells)[number]);
    for (const cell of order) {
      const us = await spawnChild(cell.contender, cell.kind, cell.size, withBudget);
      const key = `${cell.contender}/${cell.kind}/${cell.size}`;
      samples.set(key, [...(samples.get(key) ?? []), us]);
      process.stderr.write(`  round ${round + 1}/${rounds}  ${key.padEnd(22)} ${us.toFixed(1)} µs/run\n`);
    }
  }
  const rows = kinds.flatMap((kind) =>
    sizes.map((size) => {
      const direct = median(samples.get(`direct/${kind}/${size}`) ?? []);
      const piped = median(samples.get(`pipeline/${kind}/${size}`) ?? []);
      return {
        kind,
        stages: size,
        directUs: direct,
        pipelineUs: piped,
        overheadUsPerStage: (piped - direct) / size,
      };
    }),
  );
  const meta = benchMeta({ rounds, withBudget });
  console.log(
    `\npipeline overhead per stage (${withBudget ? 'with a job budget' : 'no trace, store or budget'}; median of ${rounds} rounds, one process per cell; load ${JSON.stringify(meta['loadAverage'])})`,
  );
  console.log('  kind   stages   direct µs/run   pipeline µs/run   overhead µs/stage');
  for (const row of rows)
    console.log(
      `  ${row.kind.padEnd(6)} ${String(row.stages).padStart(6)}   ${row.directUs.toFixed(1).padStart(13)}   ${row.pipelineUs.toFixed(1).padStart(15)}   ${row.overheadUsPerStage.toFixed(2).padStart(17)}`,
    );
  // The cost of one more stage, without the per-run setup: the slope between the smallest and largest size.
  for (const kind of kinds) {
    const [small, large] = [
      rows.find((row) => row.kind === kind && row.stages === Math.min(...sizes)),
      rows.find((row) => row.kind === kind && row.stages === Math.max(...sizes)),
    ];
    if (!small || !large || small === large) continue;
    const slope =
      (large.pipelineUs - large.directUs - (small.pipelineUs - small.directUs)) /
      (large.stages - small.stages);
    console.log(
      `  ${kind}: ${slope.toFixed(2)} µs per additional stage (slope ${small.stages} → ${large.stages} stages)`,
    );
  }
  const json = option('json');
  if (json) writeFileSync(json, `${JSON.stringify({ meta, rows }, null, 2)}\n`);
}

const args = process.argv.slice(2);
if (args[0] === '--child')
  await child(args[1] as Contender, args[2] as Kind, Number(args[3]), option('with', args) === 'budget');
else await parent();
