/**
 * Streamed tool-call arguments: time to push every fragment and read the display value after each,
 * as a ratio to one native JSON.parse of the final text. reins' incremental parser against
 * @streamparser/json and jsonriver (incremental), and partial-json, the Anthropic SDK's partial
 * parser, Vercel AI SDK `parsePartialJson` and try-JSON.parse-per-delta (each re-parses the whole
 * buffer per fragment).
 *
 * Workloads: the three mixed documents (1 MB string-heavy, 200 KB nested, a 300 B call × 10,000),
 * then the three shapes that were quadratic in reins (one 1 MB string: a file body with escapes, as
 * a coding agent's `write_file` streams it; one 1 MB number; 2 MB of arrays nested 500 deep, under
 * the default `maxDepth`). Every contender reads a value per fragment (reins: `snapshot()` after
 * every push); "reins, push only" is the same parser without reading.
 *
 * Each (workload, contender) cell runs in its own child process (this script re-invoked with
 * `--child`), one at a time, timed after three untimed warm-up rounds (the quadratic peers: no
 * warm-up, one timed round, three on the small call). JSON.parse's baseline and every incremental
 * contender that finishes quickly run
 * in three children each, round-robin, and the figure is the median over them (the median of
 * rounds inside each child); on a shared machine a busy spell then falls on all of them. The
 * re-parsing peers are quadratic: at full size they take minutes each (28–105 s on the 200 KB
 * workload here), so by default they run a 64 KB / 32 KB cut (labelled), with JSON.parse's time
 * scaled to the cut; pass --full to run them at full size. On the long number the two incremental
 * peers are quadratic as well and run the same cut.
 *
 * Then a linearity table for reins (snapshot after every 16 B push): each shape doubled from 64 KB
 * to 4 MB, each size and its JSON.parse baseline in their own child processes.
 *
 *   npm run bench:partial-json                       (everything: about ten minutes here)
 *   npm run bench:partial-json -- --only compare     (or --only linearity; --full; --rounds N;
 *                                                     --processes N, default 3; --wall for elapsed
 *                                                     time instead of the process's CPU time;
 *                                                     --workload <part of a name>; --shape
 *                                                     string|number|nesting)
 */

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../src/testing/seeded-random.js';
import { benchMeta, median } from './stats.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const full = args.includes('--full');
const wall = args.includes('--wall');
const rounds = Number(option('--rounds') ?? 5);

// ------------------------------------------------------------------------------------- workloads
// Every text is built from a fixed seed, so parent and children see the same bytes.

function stringHeavy(bytes: number): string {
  const random = seededRandom(7);
  const pieces = [
    'plain ascii words ',
    'quotes \\" and \\\\ slashes ',
    'tabs\\t and newlines\\n ',
    'non-ASCII: café, naïve, Zürich ',
    'emoji 😀🚀 ',
    'escaped \\u00e9\\ud83d\\ude00 ',
  ];
  const fields: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    let body = '';
    while (body.length < 2_000) body += pieces[Math.floor(random() * pieces.length)];
    const field = `"field_${i}": "${body}"`;
    fields.push(field);
    size += field.length + 2;
  }
  return `{${fields.join(', ')}}`;
}

function nested(bytes: number): string {
  const random = seededRandom(8);
  const make = (depth: number): unknown => {
    if (depth === 0)
      return [
        Math.floor(random() * 1e6),
        random() < 0.5,
        null,
        `leaf-${Math.floor(random() * 1e4)}`,
        -12.5e-3,
      ];
    return {
      id: Math.floor(random() * 1e6),
      name: `node ${depth}`,
      tags: ['a', 'b'],
      children: [make(depth - 1), make(depth - 1)],
    };
  };
  const items: unknown[] = [];
  while (JSON.stringify(items).length < bytes) items.push(make(4));
  return JSON.stringify({ items });
}

const smallCall = JSON.stringify({
  to: 'ana@example.com',
  subject: 'Quarterly numbers',
  body: 'Revenue grew 12% to $4.1 billion, led by cloud. Margins were flat; the outlook is unchanged.',
  cc: ['bob@example.com'],
  priority: 2,
  draft: false,
  tags: ['finance', 'q3'],
  replyTo: null,
});

/** One string argument: a source file's body (newlines, tabs, quotes and backslashes escaped). */
function fileBody(bytes: number): string {
  const random = seededRandom(9);
  const names = ['total', 'items', 'index', 'result', 'parser', 'value', 'buffer', 'count'];
  const pick = () => names[Math.floor(random() * names.length)] as string;
  const lines = [
    () => `export function ${pick()}Of(${pick()}: string[]): number {`,
    () => `\tconst ${pick()} = ${pick()}.map((x) => x.trim()).filter(Boolean);`,
    () => `\tif (${pick()}.length === 0) throw new Error("no ${pick()} in \\"${pick()}\\"");`,
    () => `\treturn ${pick()}.reduce((a, b) => a + b.length, 0); // sum of ${pick()}`,
    () => '}',
    () => '',
  ];
  const prefix = '{"path": "src/generated.ts", "content": ';
  const content: string[] = [];
  // Each line's size once escaped (its JSON string less the two quotes).
  for (let size = prefix.length + 3; size < bytes; ) {
    const line = `${(lines[Math.floor(random() * lines.length)] as () => string)()}\n`;
    content.push(line);
    size += JSON.stringify(line).length - 2;
  }
  return `${prefix}${JSON.stringify(content.join(''))}}`;
}

/** One number: a constant given to a million digits. */
function longNumber(bytes: number): string {
  const random = seededRandom(10);
  let digits = '';
  const prefix = '{"n": 3.';
  while (digits.length + prefix.length + 1 < bytes) digits += String(Math.floor(random() * 10));
  return `${prefix}${digits}}`;
}

/** Arrays nested 500 deep (the default `maxDepth` is 512), side by side until the size is reached. */
function deepArrays(bytes: number): string {
  const depth = 500;
  const blocks: string[] = [];
  for (let size = 2; size < bytes; size += 2 * depth + 2)
    blocks.push(`${'['.repeat(depth)}${blocks.length % 10}${']'.repeat(depth)}`);
  return `[${blocks.join(',')}]`;
}

type Workload = {
  name: string;
  text: () => string;
  fragment: number;
  repeat: number;
  /** Where the quadratic contenders stop (unless --full). */
  cut?: number;
  /** Incremental peers that are quadratic on this shape too, so they run the cut as well. */
  alsoCut?: string[];
  /** A whole document of the cut's size, where a prefix would not do (jsonriver rejects one). */
  cutText?: () => string;
};

const workloads: Workload[] = [
  {
    name: '1 MB string-heavy, 16 B fragments',
    text: () => stringHeavy(1_000_000),
    fragment: 16,
    repeat: 1,
    cut: 65_536,
  },
  { name: '200 KB nested, 8 B fragments', text: () => nested(200_000), fragment: 8, repeat: 1, cut: 32_768 },
  { name: '300 B call × 10,000, 5 B fragments', text: () => smallCall, fragment: 5, repeat: 10_000 },
  {
    name: 'one 1 MB string (a file body), 16 B fragments',
    text: () => fileBody(1 << 20),
    fragment: 16,
    repeat: 1,
    cut: 65_536,
  },
  {
    name: 'one 1 MB number, 16 B fragments',
    text: () => longNumber(1 << 20),
    fragment: 16,
    repeat: 1,
    cut: 65_536,
    // Both re-convert the whole number per fragment: 64 KB ~0.2–0.6 s, 256 KB 3–13 s here.
    alsoCut: ['@streamparser/json', 'jsonriver'],
    cutText: () => longNumber(65_536),
  },
  {
    name: '2 MB arrays nested 500 deep, 16 B fragments',
    text: () => deepArrays(2 << 20),
    fragment: 16,
    repeat: 1,
    cut: 32_768,
  },
];

const shapes: Record<string, (bytes: number) => string> = {
  string: fileBody,
  number: longNumber,
  nesting: deepArrays,
};

function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

// ------------------------------------------------------------------------------------ contenders
// Each contender loads only its own library, inside its child process.

type Run = (parts: string[]) => Promise<void> | void;
type Contender = { name: string; quadratic: boolean; load: () => Promise<Run> };

/** A peer that re-parses the whole buffer after every fragment (some throw on incomplete prefixes). */
function reparsePerDelta(name: string, load: () => Promise<(buffer: string) => unknown>): Contender {
  return {
    name,
    quadratic: true,
    load: async () => {
      const parse = await load();
      return (parts) => {
        let buffer = '';
        for (const part of parts) {
          buffer += part;
          try {
            parse(buffer);
          } catch {
            // an incomplete prefix
          }
        }
      };
    },
  };
}

async function reins(read: boolean): Promise<Run> {
  const { createPartialJsonParser } = await import('../dist/stream/index.js');
  return (parts) => {
    const parser = createPartialJsonParser();
    for (const part of parts) {
      parser.push(part);
      if (read) parser.snapshot();
    }
    if (parser.finish().status !== 'complete') throw new Error('reins did not complete');
  };
}

const contenders: Contender[] = [
  {
    name: 'reins, push + snapshot()',
    quadratic: false,
    load: () => reins(true),
  },
  {
    name: 'reins, push only',
    quadratic: false,
    load: () => reins(false),
  },
  {
    name: '@streamparser/json',
    quadratic: false,
    load: async () => {
      const { JSONParser } = await import('@streamparser/json');
      return (parts) => {
        const parser = new JSONParser({ emitPartialValues: true, emitPartialTokens: true });
        let last: unknown;
        parser.onValue = ({ value }) => {
          last = value;
        };
        for (const part of parts) parser.write(part);
        void last;
      };
    },
  },
  {
    name: 'jsonriver',
    quadratic: false,
    load: async () => {
      const { parse } = await import('jsonriver');
      return async (parts) => {
        async function* stream() {
          yield* parts;
        }
        for await (const value of parse(stream())) void value;
      };
    },
  },
  reparsePerDelta('try JSON.parse per delta', async () => (buffer) => JSON.parse(buffer)),
  reparsePerDelta('partial-json', async () => (await import('partial-json')).parse),
  reparsePerDelta(
    'Anthropic SDK partialParse',
    async () => (await import('@anthropic-ai/sdk/_vendor/partial-json-parser/parser.mjs')).partialParse,
  ),
  {
    name: 'Vercel AI SDK parsePartialJson',
    quadratic: true,
    load: async () => {
      const { parsePartialJson } = await import('ai');
      return async (parts) => {
        let buffer = '';
        for (const part of parts) {
          buffer += part;
          await parsePartialJson(buffer);
        }
      };
    },
  },
];

/**
 * CPU time of this process (all its threads, GC included) while `fn` runs, in ms; with --wall,
 * elapsed time. On a shared machine (2 cores, load 4–8 while this was written) elapsed time mostly
 * measures the neighbours, and swung 2–3× between runs; CPU time is steadier.
 */
async function time(fn: () => Promise<void> | void): Promise<number> {
  if (wall) {
    const started = performance.now();
    await fn();
    return performance.now() - started;
  }
  const started = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

// ----------------------------------------------------------------------------------------- child
// `--child compare <workload> <contender | JSON.parse>` or `--child linearity <shape> <bytes> <reins | JSON.parse>`.
// Prints one JSON line: { ms, bytes }.

type Cell = { ms: number; bytes: number };

const cutFor = (workload: Workload, who: string) =>
  workload.cut !== undefined &&
  (contenders.find((c) => c.name === who)?.quadratic === true || workload.alsoCut?.includes(who) === true);

async function child(): Promise<void> {
  const at = args.indexOf('--child');
  const [kind, what, third, fourth] = args.slice(at + 1);
  let text: string;
  let fragment = 16;
  let repeat = 1;
  let who: string;
  if (kind === 'compare') {
    const workload = workloads.find((w) => w.name === what);
    if (!workload) throw new Error(`no workload ${what}`);
    who = third as string;
    text = workload.text();
    if (cutFor(workload, who) && !full)
      text = workload.cutText ? workload.cutText() : text.slice(0, workload.cut);
    fragment = workload.fragment;
    repeat = workload.repeat;
  } else {
    const shape = shapes[what as string];
    if (!shape) throw new Error(`no shape ${what}`);
    text = shape(Number(third));
    who = fourth as string;
  }
  let run: Run;
  // Small texts get more rounds, so each child times about as much work (and is as warm) as at 1 MB.
  let runs = kind === 'linearity' ? Math.max(rounds, Math.round((rounds * (1 << 20)) / text.length)) : rounds;
  if (who === 'JSON.parse') {
    run = () => {
      JSON.parse(text);
    };
    runs = Math.max(runs, 9);
  } else if (who === 'reins') {
    run = await reins(true);
  } else {
    const contender = contenders.find((c) => c.name === who);
    if (!contender) throw new Error(`no contender ${who}`);
    run = await contender.load();
    if (contender.quadratic) runs = repeat === 1 ? 1 : 3;
    else if (kind === 'compare' && cutFor(workloads.find((w) => w.name === what) as Workload, who)) runs = 3;
  }
  const parts = fragments(text, fragment);
  // Untimed warm-up rounds (not for the quadratic peers, whose cost is the re-parsing itself): the
  // first rounds in a fresh process pay for compiling and for promoting the first round's garbage.
  const warmups = contenders.find((c) => c.name === who)?.quadratic || runs === 1 ? 0 : 3;
  for (let round = 0; round < warmups; round++)
    for (let r = 0; r < repeat; r++) await (who === 'JSON.parse' ? run([]) : run(parts));
  const samples: number[] = [];
  for (let round = 0; round < runs; round++)
    samples.push(
      await time(async () => {
        for (let r = 0; r < repeat; r++) await (who === 'JSON.parse' ? run([]) : run(parts));
      }),
    );
  process.stdout.write(`${JSON.stringify({ ms: median(samples), bytes: text.length } satisfies Cell)}\n`);
}

// ---------------------------------------------------------------------------------------- parent

function runChild(childArgs: string[]): Cell {
  const self = fileURLToPath(import.meta.url);
  const result = spawnSync(process.execPath, ['--import', 'tsx', self, ...childArgs], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  if (result.status !== 0) throw new Error(`child ${childArgs.join(' ')} exited ${result.status}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) as string) as Cell;
}

const passOn = [...(full ? ['--full'] : []), ...(wall ? ['--wall'] : []), '--rounds', String(rounds)];
const only = option('--only');

const processes = Number(option('--processes') ?? 3);

/**
 * Per workload: JSON.parse and every contender that finishes in a second or two run in
 * `processes` children each, round-robin (so a busy spell on a shared machine falls on all of
 * them), and the figure is the median over those children; the cut-down quadratic ones once.
 */
/** What `--json FILE` writes: every cell printed, as numbers. */
const collected: {
  compare: {
    workload: string;
    contender: string;
    ms: number;
    ratio: number | null;
    cutBytes: number | null;
  }[];
  linearity: { shape: string; bytes: number; ms: number; nsPerByte: number; jsonParseMs: number }[];
} = { compare: [], linearity: [] };

function compare(): void {
  const row = (label: string, ms: number, ratio?: number) =>
    console.log(
      `  ${label.padEnd(50)} ${ms.toFixed(ms < 10 ? 2 : 1).padStart(10)} ms${ratio === undefined ? '' : `  ${ratio.toFixed(1).padStart(10)}× JSON.parse`}`,
    );
  const chosen = option('--workload');
  for (const workload of workloads) {
    if (chosen !== undefined && !workload.name.includes(chosen)) continue;
    console.log(`\n${workload.name} (${wall ? 'elapsed' : 'CPU'} ms)`);
    const cell = (who: string) => runChild(['--child', 'compare', workload.name, who, ...passOn]);
    const repeated = [
      'JSON.parse',
      ...contenders.filter((c) => !c.quadratic && !cutFor(workload, c.name)).map((c) => c.name),
    ];
    const samples = new Map<string, Cell[]>(repeated.map((name) => [name, []]));
    for (let p = 0; p < processes; p++) for (const name of repeated) samples.get(name)?.push(cell(name));
    const medianOf = (name: string): Cell => {
      const cells = samples.get(name) as Cell[];
      return { ms: median(cells.map((c) => c.ms)), bytes: (cells[0] as Cell).bytes };
    };
    const native = medianOf('JSON.parse');
    row(`JSON.parse (the final text, once)`, native.ms);
    collected.compare.push({
      workload: workload.name,
      contender: 'JSON.parse',
      ms: native.ms,
      ratio: 1,
      cutBytes: null,
    });
    for (const contender of contenders) {
      const result = samples.has(contender.name) ? medianOf(contender.name) : cell(contender.name);
      const cut = result.bytes < native.bytes;
      const baseline = cut ? (native.ms * result.bytes) / native.bytes : native.ms;
      const label = cut ? `${contender.name} (${Math.round(result.bytes / 1024)} KB cut)` : contender.name;
      row(label, result.ms, result.ms / baseline);
      collected.compare.push({
        workload: workload.name,
        contender: contender.name,
        ms: result.ms,
        ratio: result.ms / baseline,
        cutBytes: cut ? result.bytes : null,
      });
    }
  }
}

/** Reins on each shape, doubling 64 KB → 4 MB; each size and its JSON.parse in `processes` children. */
function linearity(): void {
  console.log(
    `\nlinearity: reins, snapshot() after every 16 B push; ${wall ? 'elapsed' : 'CPU'} ms, median over ${processes} processes per cell`,
  );
  console.log(
    `  ${'shape'.padEnd(8)} ${'size'.padStart(6)} ${'ms'.padStart(9)} ${'ns/byte'.padStart(8)} ${'JSON.parse ms'.padStart(14)} ${'× JSON.parse'.padStart(13)}`,
  );
  for (const shape of Object.keys(shapes)) {
    if (option('--shape') !== undefined && shape !== option('--shape')) continue;
    const perByte: number[] = [];
    for (let bytes = 64 << 10; bytes <= 4 << 20; bytes *= 2) {
      const reinsMs: number[] = [];
      const nativeMs: number[] = [];
      let size = bytes;
      for (let p = 0; p < processes; p++) {
        const cell = runChild(['--child', 'linearity', shape, String(bytes), 'reins', ...passOn]);
        reinsMs.push(cell.ms);
        size = cell.bytes;
        nativeMs.push(runChild(['--child', 'linearity', shape, String(bytes), 'JSON.parse', ...passOn]).ms);
      }
      const ms = median(reinsMs);
      const native = median(nativeMs);
      const nsPerByte = (ms * 1e6) / size;
      perByte.push(nsPerByte);
      collected.linearity.push({ shape, bytes: size, ms, nsPerByte, jsonParseMs: native });
      const label = bytes >= 1 << 20 ? `${bytes >> 20}M` : `${bytes >> 10}K`;
      console.log(
        `  ${shape.padEnd(8)} ${label.padStart(6)} ${ms.toFixed(1).padStart(9)} ${nsPerByte.toFixed(1).padStart(8)} ${native.toFixed(2).padStart(14)} ${(ms / native).toFixed(1).padStart(12)}×`,
      );
    }
    const first = perByte[0] as number;
    const last = perByte.at(-1) as number;
    console.log(`  ${shape}: ns/byte at 4M ÷ at 64K = ${(last / first).toFixed(2)} (1.00 is linear)`);
  }
}

if (args.includes('--child')) await child();
else {
  if (only !== 'linearity') compare();
  if (only !== 'compare') linearity();
  const jsonFile = option('--json');
  if (jsonFile)
    writeFileSync(
      jsonFile,
      `${JSON.stringify({ meta: benchMeta({ rounds, processes, wall, full }), ...collected }, null, 2)}\n`,
    );
}
