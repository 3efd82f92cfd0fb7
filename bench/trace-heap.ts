/**
 * Heap growth of a 10,000-step run with the trace streamed to a JSONL file: every control on, the
 * transcript kept (it is the run's context), the trace not kept in memory.
 *
 *   node --expose-gc --import tsx bench/trace-heap.ts [--steps 10000] [--encoding plain|compact]
 *   node --expose-gc --import tsx bench/trace-heap.ts --json FILE   (both encodings, each in its own
 *                                                                   process, figures to FILE)
 *
 * Prints the trace's bytes per step and its size against the transcript's (the run's messages as
 * JSON): what the trace costs beyond the conversation it records.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineTool, type Model, runAgent } from '../dist/index.js';
import { jsonlTraceSink } from '../dist/node/index.js';
import { benchMeta } from './stats.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const flag = (name: string) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const steps = Number(flag('--steps') ?? 10_000);
const jsonFile = flag('--json');
if (jsonFile !== undefined && flag('--encoding') === undefined) {
  // The parent: each encoding in a fresh process, one after the other.
  const figures: Record<string, unknown> = {};
  for (const encoding of ['plain', 'compact']) {
    const out = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--steps',
        String(steps),
        '--encoding',
        encoding,
        '--emit-json',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = out.trim().split('\n');
    process.stdout.write(`${lines.slice(0, -1).join('\n')}\n`);
    figures[encoding] = JSON.parse(lines.at(-1) as string);
  }
  const plain = figures['plain'] as Record<string, number>;
  const results = {
    meta: benchMeta(),
    steps,
    messages: plain['messages'],
    transcriptBytes: plain['transcriptBytes'],
    retainedBytes: plain['retainedBytes'],
    elapsedMs: plain['elapsedMs'],
    plain: figures['plain'],
    compact: figures['compact'],
  };
  writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  process.exit(0);
}
const encoding = flag('--encoding') ?? 'plain';
if (encoding !== 'plain' && encoding !== 'compact') throw new Error('--encoding is plain or compact');

const dir = mkdtempSync(join(tmpdir(), 'reins-heap-'));
const file = join(dir, 'trace.jsonl');
let peakHeap = 0;
const tool = defineTool({
  effect: 'read',
  name: 'probe',
  description: 'Probe one thing.',
  input: z.object({ n: z.number().int() }),
  execute: ({ n }) => {
    if (n % 250 === 0) peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    return { n, ok: true };
  },
});
let turn = 0;
const model: Model = {
  name: 'fake',
  generate: async () => {
    const n = turn++;
    if (n >= steps)
      return {
        content: [{ type: 'text', text: 'done' }],
        stopReason: 'end_turn',
        usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    return {
      content: [
        { type: 'text', text: `probing ${n}` },
        { type: 'tool_use', id: `c${n}`, name: 'probe', input: { n } },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
    };
  },
};

gc();
const before = process.memoryUsage().heapUsed;
const sink = jsonlTraceSink(file, { encoding });
const started = performance.now();
const result = await runAgent({
  model,
  input: 'Probe everything.',
  tools: [tool],
  maxSteps: steps + 2,
  maxContextTokens: 1e12,
  maxBilledTokens: 1e12,
  maxWallMs: 3_600_000,
  repeatLimit: 3,
  trace: sink,
});
const elapsedMs = performance.now() - started;
sink.close();
gc();
const retained = process.memoryUsage().heapUsed;
const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
const traceBytes = statSync(file).size;
const transcriptBytes = Buffer.byteLength(JSON.stringify(result.messages));
console.log(
  `\n${steps.toLocaleString('en-US')}-step run, trace to ${encoding} JSONL (${mb(traceBytes)} MB on disk), outcome ${result.outcome.kind}, ${result.steps} steps in ${(elapsedMs / 1000).toFixed(2)} s (${((elapsedMs * 1000) / result.steps).toFixed(1)} µs/step)`,
);
console.log(
  `  trace ${Math.round(traceBytes / result.steps).toLocaleString('en-US')} bytes/step; transcript ${mb(transcriptBytes)} MB (${Math.round(transcriptBytes / result.steps)} bytes/step): trace/transcript ${(traceBytes / transcriptBytes).toFixed(1)}×`,
);
console.log(`  heap growth at peak (sampled, before GC): ${mb(peakHeap - before)} MB`);
console.log(
  `  heap growth retained after GC (transcript of ${result.messages.length.toLocaleString('en-US')} messages still referenced): ${mb(retained - before)} MB`,
);
console.log(`  goal: retained ≤ 10 MB   ${retained - before <= 10 * 1_048_576 ? 'met' : 'NOT met'}`);
if (process.argv.includes('--emit-json'))
  console.log(
    JSON.stringify({
      encoding,
      steps: result.steps,
      messages: result.messages.length,
      bytes: traceBytes,
      bytesPerStep: traceBytes / result.steps,
      transcriptBytes,
      retainedBytes: retained - before,
      peakSampledBytes: peakHeap - before,
      elapsedMs,
    }),
  );
rmSync(dir, { recursive: true, force: true });
