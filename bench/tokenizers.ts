/**
 * Token estimators: CPU time to count text, in µs per KB, as a curve over the size of one piece
 * (1 KB, 4 KB, 16 KB), and what loading each costs (time to import and count once, heap after).
 * reins' estimators (chars/4, openaiTokenEstimator on o200k_base and cl100k_base,
 * anthropicTokenEstimator; the built dist/, as a user loads it) against named peers: js-tiktoken (another pure-JS port), tiktoken (the
 * Rust core as WebAssembly), and the Claude 2 tokenizer both reused and as `@anthropic-ai/tokenizer`'s
 * `countTokens` builds it per call.
 *
 * Each (contender, workload, size) cell runs in its own child process (this script re-invoked with
 * `--child`), `--processes` times (default 5), round-robin; the figure is the median over those
 * children. Inside a child: three untimed warm-up rounds, then `--rounds` timed rounds (default 5),
 * the child's figure their median. Every round counts 16 KB of text no round has seen (distinct
 * slices of the workload), so BPE merge caches help only as much as they would on a new message.
 *
 *   npm run bench:tokenizers                       (about eight minutes here)
 *   npm run bench:tokenizers -- --json bench/results/tokenizers.json
 *   npm run bench:tokenizers -- --scan             (instead: every code point, gpt-tokenizer against
 *                                                   tiktoken's Rust core; about four minutes)
 */

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchMeta, median, option } from './stats.js';

const args = process.argv.slice(2);
const rounds = Number(option('rounds') ?? 5);
const processes = Number(option('processes') ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const roundBytes = 16 * 1024;
const sizes = [1024, 4 * 1024, 16 * 1024];
const warmUpRounds = 3;

// ------------------------------------------------------------------------------------- workloads

function filesUnder(dir: string, ...suffixes: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, ...suffixes));
    else if (suffixes.some((suffix) => name.endsWith(suffix))) out.push(path);
  }
  return out;
}

/** Text no tokenizer has a reason to favour: this repository's own prose, code and recorded JSON. */
const workloads: Record<string, () => string> = {
  'markdown prose': () =>
    [join(root, 'README.md'), ...filesUnder(join(root, 'docs'), '.md')]
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n'),
  'TypeScript code': () =>
    filesUnder(join(root, 'src'), '.ts')
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n'),
  'JSON (recorded API traffic)': () =>
    filesUnder(join(root, 'test', 'fixtures', 'provider-streams'), '.json', '.chunks.txt')
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n'),
};

// ------------------------------------------------------------------------------------ contenders

type Count = (text: string) => number;

/** Each loads its package only inside its own child. */
const contenders: Record<string, { slowPerCall?: true; load: () => Promise<Count> }> = {
  'chars/4 (reins default)': {
    load: async () => (await import('../dist/tokens/token-estimator.js')).approxTokenEstimator.countText,
  },
  'openaiTokenEstimator o200k_base (gpt-tokenizer)': {
    load: async () =>
      (await import('../dist/tokenizers/openai-token-estimator.js')).openaiTokenEstimator({
        encoding: 'o200k_base',
      }).countText,
  },
  'openaiTokenEstimator cl100k_base (gpt-tokenizer)': {
    load: async () =>
      (await import('../dist/tokenizers/openai-token-estimator.js')).openaiTokenEstimator({
        encoding: 'cl100k_base',
      }).countText,
  },
  'anthropicTokenEstimator (chars/4 + framing)': {
    load: async () =>
      (await import('../dist/tokenizers/anthropic-token-estimator.js')).anthropicTokenEstimator().countText,
  },
  'js-tiktoken o200k_base': {
    load: async () => {
      const { Tiktoken } = await import('js-tiktoken/lite');
      const ranks = (await import('js-tiktoken/ranks/o200k_base')).default;
      const encoder = new Tiktoken(ranks);
      return (text) => encoder.encode(text, [], []).length;
    },
  },
  'tiktoken (Rust, WebAssembly) o200k_base': {
    load: async () => {
      const { get_encoding } = await import('tiktoken');
      const encoder = get_encoding('o200k_base');
      return (text) => encoder.encode(text, [], []).length;
    },
  },
  'Claude 2 tokenizer, reused (tiktoken WebAssembly)': {
    load: async () => {
      const { getTokenizer } = await import('@anthropic-ai/tokenizer');
      const tokenizer = getTokenizer();
      return (text) => tokenizer.encode(text.normalize('NFKC'), 'all').length;
    },
  },
  '@anthropic-ai/tokenizer countTokens (built per call)': {
    slowPerCall: true,
    load: async () => (await import('@anthropic-ai/tokenizer')).countTokens,
  },
};

// ----------------------------------------------------------------------------------------- child

function cpuMs(fn: () => void): number {
  const started = process.cpuUsage();
  fn();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

interface Cell {
  usPerKb: number;
  loadMs: number;
  heapMb: number;
}

async function child(contender: string, workload: string, size: number, cellRounds: number): Promise<Cell> {
  const corpus = (workloads[workload] as () => string)();
  const started = performance.now();
  const count = await (contenders[contender] as { load: () => Promise<Count> }).load();
  count('hello world');
  const loadMs = performance.now() - started;
  const heapMb = process.memoryUsage().heapUsed / 1e6;
  const perRound = Math.max(1, Math.floor(roundBytes / size));
  const needed = (warmUpRounds + cellRounds) * perRound * size;
  if (corpus.length < needed) throw new Error(`${workload}: ${corpus.length} chars, ${needed} needed`);
  let offset = 0;
  const nextRound = () => {
    const pieces: string[] = [];
    for (let i = 0; i < perRound; i++, offset += size) pieces.push(corpus.slice(offset, offset + size));
    return pieces;
  };
  let sink = 0;
  const timed: number[] = [];
  for (let round = 0; round < warmUpRounds + cellRounds; round++) {
    const pieces = nextRound();
    const ms = cpuMs(() => {
      for (const piece of pieces) sink += count(piece);
    });
    if (round >= warmUpRounds) timed.push((ms * 1000) / ((perRound * size) / 1024));
  }
  if (sink === 0) throw new Error('counted nothing');
  return { usPerKb: median(timed), loadMs, heapMb };
}

function runChild(childArgs: string[]): Cell {
  const self = fileURLToPath(import.meta.url);
  const result = spawnSync(process.execPath, ['--import', 'tsx', self, ...childArgs], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`child ${childArgs.join(' ')} exited ${result.status}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as Cell;
}

// ------------------------------------------------------------------------------------------ scan

/** Every code point in a few contexts: where gpt-tokenizer's count differs from tiktoken's. */
async function scan(): Promise<void> {
  const { get_encoding } = await import('tiktoken');
  const { openaiTokenEstimator } = await import('../dist/tokenizers/openai-token-estimator.js');
  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    const reference = get_encoding(encoding);
    const ours = openaiTokenEstimator({ encoding });
    const differing: string[] = [];
    for (let codePoint = 0; codePoint < 0x30000; codePoint++) {
      if (codePoint >= 0xd800 && codePoint < 0xe000) continue;
      const c = String.fromCodePoint(codePoint);
      const contexts = [` ${c}0`, `a${c} b`, c, `x  ${c}\n`, `${c}${c} a`, `Hello${c}World`, `'${c}s`];
      if (contexts.some((text) => ours.countText(text) !== reference.encode(text, [], []).length))
        differing.push(`U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`);
    }
    console.log(
      `${encoding}: counts differ from tiktoken at ${differing.length} code points: ${differing.join(' ')}`,
    );
  }
}

// ---------------------------------------------------------------------------------------- parent

function main(): void {
  const collected: { contender: string; workload: string; bytes: number; usPerKb: number }[] = [];
  const loading: { contender: string; loadMs: number; heapMb: number }[] = [];
  console.log(
    `µs of CPU per KB counted (median over ${processes} processes × median of ${rounds} rounds of 16 KB each)`,
  );
  for (const workload of Object.keys(workloads)) {
    console.log(`\n${workload}`);
    console.log(`  ${'contender'.padEnd(54)}${sizes.map((s) => `${s / 1024} KB`.padStart(10)).join('')}`);
    for (const contender of Object.keys(contenders)) {
      const slow = contenders[contender]?.slowPerCall === true;
      const cells: string[] = [];
      for (const size of sizes) {
        if (slow && size > 1024) {
          cells.push('—'.padStart(10));
          continue;
        }
        // The per-call one takes ~65 ms a KB: one round of 8 KB, in one process.
        const cellRounds = slow ? 1 : rounds;
        const runs = slow ? 1 : processes;
        const samples: Cell[] = [];
        for (let p = 0; p < runs; p++)
          samples.push(
            runChild([
              '--child',
              contender,
              workload,
              String(size),
              String(cellRounds),
              ...(slow ? ['--slow'] : []),
            ]),
          );
        const usPerKb = median(samples.map((cell) => cell.usPerKb));
        collected.push({ contender, workload, bytes: size, usPerKb });
        if (!slow && size === 1024 && workload === Object.keys(workloads)[0])
          loading.push({
            contender,
            loadMs: median(samples.map((cell) => cell.loadMs)),
            heapMb: median(samples.map((cell) => cell.heapMb)),
          });
        cells.push(usPerKb.toFixed(1).padStart(10));
      }
      console.log(`  ${contender.padEnd(54)}${cells.join('')}`);
    }
  }
  console.log('\nloading (import and count once; JS heap used after, WebAssembly memory not included)');
  for (const row of loading)
    console.log(
      `  ${row.contender.padEnd(54)}${row.loadMs.toFixed(0).padStart(7)} ms${row.heapMb.toFixed(0).padStart(7)} MB`,
    );
  const jsonFile = option('json');
  if (jsonFile)
    writeFileSync(
      jsonFile,
      `${JSON.stringify({ meta: benchMeta({ rounds, processes, roundBytes }), counting: collected, loading }, null, 2)}\n`,
    );
}

if (args.includes('--child')) {
  const at = args.indexOf('--child');
  const [contender, workload, size, cellRounds] = args.slice(at + 1);
  // The slow contender counts 8 KB once (eight 1 KB pieces), with no warm-up: ~65 ms a KB.
  const cell = await (async () => {
    if (args.includes('--slow')) {
      const corpus = (workloads[workload as string] as () => string)();
      const count = await (contenders[contender as string] as { load: () => Promise<Count> }).load();
      const pieces = Array.from({ length: 8 }, (_, i) => corpus.slice(i * 1024, (i + 1) * 1024));
      const ms = cpuMs(() => {
        for (const piece of pieces) count(piece);
      });
      return { usPerKb: (ms * 1000) / 8, loadMs: Number.NaN, heapMb: Number.NaN };
    }
    return child(contender as string, workload as string, Number(size), Number(cellRounds));
  })();
  console.log(JSON.stringify(cell));
} else if (args.includes('--scan')) await scan();
else main();
