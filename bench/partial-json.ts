/**
 * Streamed tool-call arguments: time to push every fragment and read the display value after each,
 * as a ratio to one native JSON.parse of the final text. reins' incremental parser against
 * @streamparser/json and jsonriver (incremental), and partial-json, the Anthropic SDK's partial
 * parser, Vercel AI SDK
 * `parsePartialJson` and try-JSON.parse-per-delta (each re-parses the whole buffer per fragment).
 * The re-parsing peers are quadratic: at full size they take minutes each (28–105 s on the 200 KB
 * workload here), so by default they run a 64 KB / 32 KB cut (labelled), with JSON.parse's time
 * scaled to the cut; pass --full to run them at full size.
 *
 *   npm run bench:partial-json
 */

import { partialParse as anthropicPartialParse } from '@anthropic-ai/sdk/_vendor/partial-json-parser/parser.mjs';
import { JSONParser } from '@streamparser/json';
import { parsePartialJson } from 'ai';
import { parse as jsonriver } from 'jsonriver';
import { parse as partialJson } from 'partial-json';
import { createPartialJsonParser } from '../dist/stream/index.js';
import { seededRandom } from '../src/testing/seeded-random.js';
import { median } from './stats.js';

const full = process.argv.includes('--full');
const rounds = 5;
const random = seededRandom(7);

function stringHeavy(bytes: number): string {
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

function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

type Contender = { name: string; quadratic: boolean; run: (parts: string[]) => Promise<void> | void };

/** A peer that re-parses the whole buffer after every fragment (some throw on incomplete prefixes). */
function reparsePerDelta(name: string, parse: (buffer: string) => unknown): Contender {
  return {
    name,
    quadratic: true,
    run: (parts) => {
      let buffer = '';
      for (const part of parts) {
        buffer += part;
        try {
          parse(buffer);
        } catch {
          // an incomplete prefix
        }
      }
    },
  };
}

const contenders: Contender[] = [
  {
    name: 'reins createPartialJsonParser',
    quadratic: false,
    run: (parts) => {
      const parser = createPartialJsonParser();
      for (const part of parts) {
        parser.push(part);
        parser.snapshot();
      }
      if (parser.finish().status !== 'complete') throw new Error('reins did not complete');
    },
  },
  {
    name: '@streamparser/json',
    quadratic: false,
    run: (parts) => {
      const parser = new JSONParser({ emitPartialValues: true, emitPartialTokens: true });
      let last: unknown;
      parser.onValue = ({ value }) => {
        last = value;
      };
      for (const part of parts) parser.write(part);
      void last;
    },
  },
  {
    name: 'jsonriver',
    quadratic: false,
    run: async (parts) => {
      async function* stream() {
        yield* parts;
      }
      for await (const value of jsonriver(stream())) void value;
    },
  },
  reparsePerDelta('try JSON.parse per delta', (buffer) => JSON.parse(buffer)),
  reparsePerDelta('partial-json', partialJson),
  reparsePerDelta('Anthropic SDK partialParse', anthropicPartialParse),
  {
    name: 'Vercel AI SDK parsePartialJson',
    quadratic: true,
    run: async (parts) => {
      let buffer = '';
      for (const part of parts) {
        buffer += part;
        await parsePartialJson(buffer);
      }
    },
  },
];

async function time(fn: () => Promise<void> | void): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const oneMb = stringHeavy(1_000_000);
const twoHundredKb = nested(200_000);
const workloads = [
  {
    name: '1 MB string-heavy, 16 B fragments',
    text: oneMb,
    fragment: 16,
    repeat: 1,
    quadraticText: full ? oneMb : oneMb.slice(0, 65_536),
  },
  {
    name: '200 KB nested, 8 B fragments',
    text: twoHundredKb,
    fragment: 8,
    repeat: 1,
    quadraticText: full ? twoHundredKb : twoHundredKb.slice(0, 32_768),
  },
  { name: '300 B call × 10,000, 5 B fragments', text: smallCall, fragment: 5, repeat: 10_000 },
];

for (const workload of workloads) {
  console.log(`\n${workload.name}`);
  const native = median(
    await Promise.all(
      Array.from({ length: 9 }, () =>
        time(() => {
          for (let r = 0; r < workload.repeat; r++) JSON.parse(workload.text);
        }),
      ),
    ),
  );
  for (const contender of contenders) {
    const quadraticCut =
      contender.quadratic && workload.quadraticText !== undefined && workload.quadraticText !== workload.text;
    const text = quadraticCut ? (workload.quadraticText as string) : workload.text;
    const parts = fragments(text, workload.fragment);
    const baseline = quadraticCut ? (native * text.length) / workload.text.length : native;
    const samples: number[] = [];
    const runs = contender.quadratic && workload.repeat === 1 ? 1 : rounds;
    for (let round = 0; round < runs; round++) {
      samples.push(
        await time(async () => {
          for (let r = 0; r < workload.repeat; r++) await contender.run(parts);
        }),
      );
    }
    const ms = median(samples);
    const label = quadraticCut
      ? `${contender.name} (${Math.round(text.length / 1024)} KB cut)`
      : contender.name;
    console.log(
      `  ${label.padEnd(42)} ${ms.toFixed(1).padStart(10)} ms  ${(ms / baseline).toFixed(1).padStart(10)}× JSON.parse`,
    );
  }
}

// Linear: doubling the document should double reins' time. Fragments are cut before timing, and
// the 2 MB text is the 1 MB one twice over (as two fields), so the content mix is the same.
{
  const one = stringHeavy(1_000_000);
  const two = `${one.slice(0, -1)}, "second": ${one}}`;
  const run = (parts: string[]) => () => {
    const parser = createPartialJsonParser();
    for (const part of parts) {
      parser.push(part);
      parser.snapshot();
    }
  };
  const onePieces = fragments(one, 16);
  const twoPieces = fragments(two, 16);
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < 7; round++) {
    a.push(await time(run(onePieces)));
    b.push(await time(run(twoPieces)));
  }
  console.log(
    `\nlinearity: 1 MB ${median(a).toFixed(1)} ms, 2 MB ${median(b).toFixed(1)} ms: ${(median(b) / median(a)).toFixed(2)}× for 2× the text (median of 7, interleaved)`,
  );
}
