/**
 * What the transcript index costs a step, by transcript size: append and search for
 * `memoryTranscriptIndex` (reins/context) and `sqliteTranscriptIndex` (reins/sqlite, a WAL file in
 * a temp directory) at 1,000 / 2,000 / 10,000 / 50,000 entries. Each (index, size) cell runs in a
 * fresh child process, cells rotate across rounds, and a figure is the median over rounds.
 *
 * The transcript is seeded (the same text in every child): 50–600 tokens an entry of technical
 * text (a Zipf-distributed vocabulary of 8,000 words and identifiers, numbers, INC-/host/hex ids,
 * tool names), appended four entries a step, one batch a step, as a run appends. A query is 5–15
 * words from the same distribution, with some of an entry's ids and a few words no entry holds,
 * k = 8, `beforeStep` the next step (every entry eligible). Both indexes must return the same ids
 * for every timed query (checked in each child), so a broken index cannot produce a fast number.
 *
 * µs/append = time in `append` / entries; µs/search = time in `search` / queries; the cpu
 * columns are the process's CPU time (user + system) over the same loops, which a machine shared
 * with other work inflates less than wall time. "postings" is how many (term, entry) pairs the
 * query's terms have: what scoring every entry sharing a term reads. It grows with the transcript;
 * both indexes read less of it (the common words' postings are left unread when they cannot change
 * the top k), and the doubling ratios show how the cost grows against it.
 *
 *   npx tsx bench/transcript-index.ts [--rounds 5] [--sizes 1000,2000] [--only memory|sqlite] [--json [FILE]]
 *
 * The library is this tree's dist/ (npm run build first).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  memoryTranscriptIndex,
  type TranscriptEntry,
  type TranscriptEntryKind,
  type TranscriptIndex,
  transcriptTerms,
} from '../dist/context/index.js';
import { seededRandom } from '../dist/testing/index.js';
import { benchMeta, median, numberList, option } from './stats.js';

const contenders = ['memory', 'sqlite'] as const;
type Contender = (typeof contenders)[number];
const defaultSizes = [1_000, 2_000, 10_000, 50_000];
const entriesPerStep = 4;
const k = 8;
const queryCount = 200;

// ------------------------------------------------------------------------------------ transcript
const common = `the a to of and in is for on with not at from by was be this that it as are or error
  failed request response timeout retry service pod node container deploy rollback config value null
  true false status code returned upstream downstream latency ms seconds bytes memory cpu disk queue
  worker job task run step tool call result output input user session token cache key hit miss read
  write query table row index database connection pool lock transaction commit rollback migration
  schema version release build test check health ready live probe restart crash oom killed signal
  exit log trace span metric alert incident page oncall owner team customer order payment charge
  refund invoice account balance limit quota rate throttle backoff circuit breaker open closed
  half fallback primary replica leader follower shard partition region zone cluster namespace
  secret certificate tls handshake dns resolve host port socket http https grpc json yaml header
  body path method get post put delete patch auth permission denied forbidden unauthorized found
  missing invalid unexpected parse schema field type string number array object list map set`
  .split(/\s+/)
  .filter(Boolean);
const toolNames = [
  'query_logs',
  'get_metrics',
  'kubectl_get',
  'kubectl_rollout',
  'read_file',
  'search_code',
  'run_sql',
  'http_get',
  'page_oncall',
  'open_ticket',
  'git_diff',
  'describe_pod',
];
const prefixes = ['svc', 'web', 'db', 'api', 'job', 'pod', 'cfg', 'usr', 'ord', 'pay', 'evt', 'req'];
const vocabularySize = 8_000;
/** Word of a rank: the common words first, then identifiers (`svc-417`, `pay_ledger_88`, `e3a9f1c0`). */
function word(rank: number): string {
  if (rank < common.length) return common[rank] as string;
  const prefix = prefixes[rank % prefixes.length] as string;
  switch (rank % 4) {
    case 0:
      return `${prefix}-${rank}`;
    case 1:
      return `${prefix}_${common[rank % common.length]}_${rank % 97}`;
    case 2:
      return ((rank * 2_654_435_761) >>> 0).toString(16);
    default:
      return `${common[(rank * 7) % common.length]}${rank}`;
  }
}
const vocabulary = Array.from({ length: vocabularySize }, (_, rank) => word(rank));
/** Zipf (s = 1.07) over the vocabulary: cumulative weights for a binary search. */
const cumulative = (() => {
  const weights = new Float64Array(vocabularySize);
  let total = 0;
  for (let rank = 0; rank < vocabularySize; rank++) {
    total += 1 / (rank + 1) ** 1.07;
    weights[rank] = total;
  }
  return weights.map((weight) => weight / total);
})();
function zipfWord(random: () => number): string {
  const target = random();
  let low = 0;
  let high = vocabularySize - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((cumulative[middle] as number) < target) low = middle + 1;
    else high = middle;
  }
  return vocabulary[low] as string;
}
const separators = [' ', ' ', ' ', ' ', ', ', ': ', '. ', '\n', ' = ', '/', ' (', ') '];
const kinds: TranscriptEntryKind[] = [
  'tool_result',
  'tool_result',
  'fact',
  'decision',
  'message',
  'dead_end',
];

function transcript(size: number): TranscriptEntry[] {
  const random = seededRandom(4_471);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const entries: TranscriptEntry[] = [];
  for (let i = 0; i < size; i++) {
    const step = Math.floor(i / entriesPerStep) + 1;
    const tokens = 50 + Math.floor(random() * 551);
    const parts: string[] = [];
    for (let t = 0; t < tokens; t++) {
      const roll = random();
      parts.push(
        roll < 0.04
          ? `INC-${1_000 + Math.floor(random() * 9_000)}`
          : roll < 0.08
            ? String(Math.floor(random() * 100_000))
            : roll < 0.1
              ? pick(toolNames)
              : zipfWord(random),
        pick(separators),
      );
    }
    const kind = pick(kinds);
    entries.push({
      id: `m${step}.b${i % entriesPerStep}.${kind}`,
      step,
      kind,
      text: parts.join(''),
      ...(kind === 'tool_result' ? { tool: pick(toolNames), untrusted: true } : {}),
    });
  }
  return entries;
}

function queries(entries: readonly TranscriptEntry[]): string[] {
  const random = seededRandom(42);
  return Array.from({ length: queryCount }, () => {
    const words = 5 + Math.floor(random() * 11);
    const parts: string[] = [];
    for (let w = 0; w < words; w++) {
      const roll = random();
      if (roll < 0.15) {
        // An id or number from some entry, as a step asking about a thing it saw.
        const terms = transcriptTerms(
          (entries[Math.floor(random() * entries.length)] as TranscriptEntry).text,
        );
        parts.push(terms[Math.floor(random() * terms.length)] as string);
      } else if (roll < 0.25) parts.push(`novel${Math.floor(random() * 1e6)}`);
      else parts.push(zipfWord(random));
    }
    return parts.join(' ');
  });
}

// ----------------------------------------------------------------------------------------- child
interface Sample {
  contender: Contender;
  entries: number;
  appendUsPerEntry: number;
  /** CPU time (user + system) over the same loop: what a machine shared with other work still shows. */
  appendCpuUsPerEntry: number;
  searchUsPerQuery: number;
  searchCpuUsPerQuery: number;
  searches: number;
  postingsPerQuery: number;
  hitsPerQuery: number;
}

async function child(contender: Contender, size: number): Promise<void> {
  const entries = transcript(size);
  const queryList = queries(entries);
  const dir = mkdtempSync(join(tmpdir(), 'reins-transcript-bench-'));
  let sqlite: { close(): void } | undefined;
  let index: TranscriptIndex;
  if (contender === 'sqlite') {
    const { sqliteTranscriptIndex } = await import('../dist/sqlite/index.js');
    const opened = sqliteTranscriptIndex(join(dir, 'transcript.db'), { runId: 'bench' });
    sqlite = opened;
    index = opened;
  } else {
    index = memoryTranscriptIndex();
  }
  try {
    let appendMs = 0;
    const appendCpu = process.cpuUsage();
    for (let start = 0; start < entries.length; start += entriesPerStep) {
      const batch = entries.slice(start, start + entriesPerStep);
      const started = performance.now();
      await index.append(batch);
      appendMs += performance.now() - started;
    }
    const appendCpuUs = cpuMicroseconds(appendCpu);
    if ((await index.size()) !== size)
      throw new Error(`${contender}: size ${await index.size()}, expected ${size}`);

    // The work a search has to do: postings of the query's distinct terms (document frequencies).
    const documentFrequency = new Map<string, number>();
    for (const entry of entries)
      for (const term of new Set(transcriptTerms(entry.text.slice(0, 20_000))))
        documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    const postings = queryList.map((query) =>
      [...new Set(transcriptTerms(query))].reduce((sum, term) => sum + (documentFrequency.get(term) ?? 0), 0),
    );

    // The reference answers, from a memory index of the same transcript (the memory child checks
    // itself against a second instance, which costs it nothing timed).
    const reference = memoryTranscriptIndex();
    reference.append(entries);
    const beforeStep = (entries.at(-1)?.step ?? 0) + 1;
    const search = { k, beforeStep };
    let hits = 0;
    for (const query of queryList) {
      const got = (await index.search(query, search)).map((hit) => hit.id);
      const expected = reference.search(query, search).map((hit) => hit.id);
      if (got.join() !== expected.join())
        throw new Error(
          `${contender} ${size}: "${query}" gave ${got.join()}, memory gave ${expected.join()}`,
        );
      hits += got.length;
    }

    // Warm, then time passes over the queries for at least a second (at least one pass).
    for (let i = 0; i < Math.min(queryList.length, 50); i++)
      await index.search(queryList[i] as string, search);
    let searchMs = 0;
    let searches = 0;
    const searchCpu = process.cpuUsage();
    while (searches < queryList.length || searchMs < 1_000) {
      const query = queryList[searches % queryList.length] as string;
      const started = performance.now();
      await index.search(query, search);
      searchMs += performance.now() - started;
      searches++;
    }
    const searchCpuUs = cpuMicroseconds(searchCpu);
    const sample: Sample = {
      contender,
      entries: size,
      appendUsPerEntry: (appendMs * 1_000) / size,
      appendCpuUsPerEntry: appendCpuUs / size,
      searchUsPerQuery: (searchMs * 1_000) / searches,
      searchCpuUsPerQuery: searchCpuUs / searches,
      searches,
      postingsPerQuery: postings.reduce((a, b) => a + b, 0) / postings.length,
      hitsPerQuery: hits / queryList.length,
    };
    process.stdout.write(`${JSON.stringify(sample)}\n`);
  } finally {
    sqlite?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU microseconds (user + system) this process spent since `since`. */
function cpuMicroseconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

// ---------------------------------------------------------------------------------------- parent
function runChild(contender: Contender, size: number): Promise<Sample> {
  const self = fileURLToPath(import.meta.url);
  const childArgs = ['--import', 'tsx', self, '--child', contender, '--entries', String(size)];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, childArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`child ${contender} ${size} exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Sample);
      } catch {
        reject(new Error(`child ${contender} ${size} printed no result: ${out}`));
      }
    });
  });
}

async function parent(): Promise<void> {
  const args = process.argv.slice(2);
  const jsonFile = option('json');
  const printJson = args.includes('--json') && (jsonFile === undefined || jsonFile.startsWith('--'));
  const rounds = Number(option('rounds') ?? 5);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds needs a positive integer');
  const sizes = numberList(option('sizes')) ?? defaultSizes;
  const only = option('only');
  const picked = contenders.filter((contender) => only === undefined || only.split(',').includes(contender));
  if (picked.length === 0) throw new Error(`--only takes ${contenders.join(', ')}`);
  const cells = picked.flatMap((contender) => sizes.map((size) => ({ contender, size })));

  const samples = new Map<string, Sample[]>(cells.map((cell) => [`${cell.contender}@${cell.size}`, []]));
  const started = performance.now();
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round so no cell always runs first or after the same neighbour.
    const order = cells.map((_, i) => cells[(i + round) % cells.length]!);
    for (const cell of order) {
      const sample = await runChild(cell.contender, cell.size);
      samples.get(`${cell.contender}@${cell.size}`)!.push(sample);
      process.stderr.write(
        `  round ${round + 1}/${rounds}  ${cell.contender.padEnd(6)} ${String(cell.size).padStart(6)} entries  append ${sample.appendUsPerEntry.toFixed(1).padStart(7)} µs  search ${sample.searchUsPerQuery.toFixed(1).padStart(9)} µs  (${((performance.now() - started) / 1_000).toFixed(0)} s)\n`,
      );
    }
  }

  const rows = cells.map(({ contender, size }) => {
    const list = samples.get(`${contender}@${size}`)!;
    const search = list.map((sample) => sample.searchUsPerQuery);
    const postingsPerQuery = list[0]!.postingsPerQuery;
    return {
      contender,
      entries: size,
      rounds: list.length,
      appendUsPerEntry: median(list.map((sample) => sample.appendUsPerEntry)),
      appendCpuUsPerEntry: median(list.map((sample) => sample.appendCpuUsPerEntry)),
      searchUsPerQuery: median(search),
      searchCpuUsPerQuery: median(list.map((sample) => sample.searchCpuUsPerQuery)),
      searchMin: Math.min(...search),
      searchMax: Math.max(...search),
      postingsPerQuery,
      hitsPerQuery: list[0]!.hitsPerQuery,
    };
  });
  /** Per doubling of the transcript: (cost ratio) ^ (1 / doublings) between consecutive sizes. */
  const doubling = rows.flatMap((row, i) => {
    const previous = rows[i - 1];
    if (!previous || previous.contender !== row.contender) return [];
    const doublings = Math.log2(row.entries / previous.entries);
    return [
      {
        contender: row.contender,
        from: previous.entries,
        to: row.entries,
        search: (row.searchUsPerQuery / previous.searchUsPerQuery) ** (1 / doublings),
        append: (row.appendUsPerEntry / previous.appendUsPerEntry) ** (1 / doublings),
        postings: (row.postingsPerQuery / previous.postingsPerQuery) ** (1 / doublings),
      },
    ];
  });
  const sqliteOverMemory = Object.fromEntries(
    sizes.flatMap((size) => {
      const memory = rows.find((row) => row.contender === 'memory' && row.entries === size);
      const sqlite = rows.find((row) => row.contender === 'sqlite' && row.entries === size);
      return memory && sqlite
        ? [
            [
              size,
              {
                search: sqlite.searchUsPerQuery / memory.searchUsPerQuery,
                append: sqlite.appendUsPerEntry / memory.appendUsPerEntry,
              },
            ],
          ]
        : [];
    }),
  );
  const results = {
    meta: benchMeta({ rounds, k, entriesPerStep, queries: queryCount }),
    rows,
    doubling,
    sqliteOverMemory,
  };
  if (printJson) {
    console.log(JSON.stringify(results, null, 2));
    return;
  }
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);

  console.log(`\nreins transcript index: cost per append and per search (Node ${process.version})`);
  console.log(
    `median over ${rounds} rounds of one fresh child process per cell; ${entriesPerStep} entries a step, 50–600 tokens each; queries of 5–15 words, k = ${k}; load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}`,
  );
  const header = [
    'index',
    'entries',
    'µs/append',
    'cpu',
    'µs/search',
    'min',
    'max',
    'cpu',
    'postings',
    'hits',
  ];
  const lines = rows.map((row) => [
    row.contender,
    row.entries.toLocaleString('en-US'),
    row.appendUsPerEntry.toFixed(1),
    row.appendCpuUsPerEntry.toFixed(1),
    row.searchUsPerQuery.toFixed(1),
    row.searchMin.toFixed(1),
    row.searchMax.toFixed(1),
    row.searchCpuUsPerQuery.toFixed(1),
    Math.round(row.postingsPerQuery).toLocaleString('en-US'),
    row.hitsPerQuery.toFixed(1),
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) =>
    `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`;
  console.log(format(header));
  for (const line of lines) console.log(format(line));
  console.log('\n  per doubling of the transcript (1.00× = flat, 2.00× = linear):');
  for (const step of doubling)
    console.log(
      `  ${step.contender.padEnd(6)} ${step.from.toLocaleString('en-US').padStart(6)} → ${step.to.toLocaleString('en-US').padEnd(6)}  search ${step.search.toFixed(2)}×  append ${step.append.toFixed(2)}×  postings ${step.postings.toFixed(2)}×`,
    );
  for (const [size, ratio] of Object.entries(sqliteOverMemory))
    console.log(
      `  sqlite ÷ memory at ${Number(size).toLocaleString('en-US')}: search ${ratio.search.toFixed(1)}×, append ${ratio.append.toFixed(1)}×`,
    );
}

const childContender = option('child');
if (childContender !== undefined) {
  if (!contenders.includes(childContender as Contender)) throw new Error(`unknown index ${childContender}`);
  await child(childContender as Contender, Number(option('entries')));
} else {
  await parent();
}
