import { ConfigurationError } from '../errors/reins-error.js';
import type { IdGenerator } from '../time/clock.js';
import type { TraceEvent } from './events.js';
import { jsonDeltaText, sameKeys, trimMask } from './json-delta.js';

/** The `encoding` a compact trace's header lines name; a reader refuses any other. */
export const compactTraceEncoding = 'reins-compact/1';

export interface CompactTraceEncoderOptions {
  /**
   * Names each header. Every line after a header carries its name, so keep it short, and unique
   * among the writers appending to one file (they interleave their lines).
   * @default `${prefix}` and eight random base64url characters (48 bits)
   */
  generateId?: IdGenerator;
}

interface TypeState {
  /** The type's number within its header, in order of first appearance. */
  index: number;
  keys: string[];
  /** The JSON text of each of `keys`, as the last event of this type had them. */
  texts: string[];
}

interface HeaderState {
  id: string;
  idText: string;
  vText: string;
  nextSeq: number;
  at: number;
  types: Map<string, TypeState>;
}

/** The fields a header carries (`v`, `runId`), implies (`seq`) or deltas (`at`), and the type. */
const stampKeys: ReadonlySet<string> = new Set(['v', 'runId', 'seq', 'at', 'type']);

/** Runs whose headers stay open at once; past this the oldest is closed (its next event opens another). */
const maxOpenRuns = 10_000;

/**
 * Writes trace events as compact JSONL lines (docs/trace-format.md): a header line per run segment
 * carries `v`, `runId` and the first `seq` and `at`; each event line after it names the header,
 * gives `at` as a delta, and writes only what changed since the last event of its type, nested
 * values as deltas too. The JSONL readers (`parseJsonlTrace`, `readJsonlTrace` from `reins/node`)
 * decode it back to the same events. An event the encoding cannot carry exactly (a `seq` that is not
 * a whole number, an `at` that is not finite) is written as a plain line. `jsonlTraceSink(path, {
 * encoding: 'compact' })` uses one; use one directly to keep a trace somewhere else.
 *
 * @example
 * import { CompactTraceEncoder, parseJsonlTrace, type TraceSink } from 'reins';
 *
 * const encoder = new CompactTraceEncoder();
 * let text = '';
 * const sink: TraceSink = {
 *   write: (event) => {
 *     text += encoder.encode(event);
 *   },
 * };
 * // runAgent({ ..., trace: sink }), then later:
 * const { events } = parseJsonlTrace(text);
 */
export class CompactTraceEncoder {
  readonly #generateId: IdGenerator;
  /** The open header of each run, by run id. */
  readonly #open = new Map<string, HeaderState>();
  readonly #ids = new Set<string>();

  constructor(options: CompactTraceEncoderOptions = {}) {
    if (options.generateId !== undefined && typeof options.generateId !== 'function')
      throw new ConfigurationError('generateId', 'must be a function');
    this.#generateId = options.generateId ?? shortRandomIds;
  }

  /** The text (one or two lines, each ending `\n`) that writes `event`. */
  encode(event: TraceEvent): string {
    if (typeof event !== 'object' || event === null || Array.isArray(event))
      return `${JSON.stringify(event)}\n`;
    const { v, runId, seq, at, type } = event as unknown as Record<string, unknown>;
    if (
      typeof runId !== 'string' ||
      typeof type !== 'string' ||
      typeof seq !== 'number' ||
      !Number.isSafeInteger(seq) ||
      typeof at !== 'number' ||
      !Number.isFinite(at) ||
      (typeof v !== 'number' && typeof v !== 'string')
    ) {
      if (typeof runId === 'string') this.#close(runId);
      return `${JSON.stringify(event)}\n`;
    }
    const keys: string[] = [];
    const texts: string[] = [];
    for (const key of Object.keys(event)) {
      if (stampKeys.has(key)) continue;
      // As JSON.stringify(event) would: a key whose value has no JSON form is left out.
      const text = JSON.stringify((event as unknown as Record<string, unknown>)[key]) as string | undefined;
      if (text === undefined) continue;
      keys.push(key);
      texts.push(text);
    }

    const vText = JSON.stringify(v);
    let header = this.#open.get(runId);
    let out = '';
    if (
      header === undefined ||
      type === 'run-start' ||
      seq !== header.nextSeq ||
      vText !== header.vText ||
      // A delta that does not add back to the same float (fractional clocks) starts afresh.
      header.at + (at - header.at) !== at
    ) {
      header = this.#openHeader(runId, vText, seq, at);
      out = `{"encoding":"${compactTraceEncoding}","id":${header.idText},"v":${vText},"runId":${JSON.stringify(runId)},"seq":${seq},"at":${at}}\n`;
    }
    const deltaAt = at - header.at;
    header.at = at;
    header.nextSeq = seq + 1;

    const known = header.types.get(type);
    if (known && sameKeys(known.keys, keys)) {
      let mask = '';
      let children = '';
      for (let i = 0; i < texts.length; i++) {
        const text = texts[i] as string;
        const base = known.texts[i] as string;
        if (text === base) {
          mask += '0';
          continue;
        }
        const delta = jsonDeltaText(text, base);
        mask += delta === undefined ? '1' : '2';
        children += `,${delta ?? text}`;
      }
      known.texts = texts;
      out += `[${header.idText},${known.index},${deltaAt},${JSON.stringify(trimMask(mask))}${children}]\n`;
    } else {
      // A new type, or a new shape of one (an optional field came or went): the body in full.
      let body = '';
      for (let i = 0; i < keys.length; i++)
        body += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${texts[i]}`;
      const ref = known ? String(known.index) : JSON.stringify(type);
      header.types.set(type, { index: known?.index ?? header.types.size, keys, texts });
      out += `[${header.idText},${ref},${deltaAt},{${body}}]\n`;
    }
    // A run's last event: nothing refers to this header again.
    if (type === 'run-end') this.#close(runId);
    return out;
  }

  #openHeader(runId: string, vText: string, seq: number, at: number): HeaderState {
    this.#close(runId);
    if (this.#open.size >= maxOpenRuns) {
      const [oldest] = this.#open.keys();
      if (oldest !== undefined) this.#close(oldest);
    }
    let id = this.#generateId('h');
    for (let tries = 1; this.#ids.has(id); tries++) {
      if (tries >= 100) throw new ConfigurationError('generateId', 'keeps returning ids already in use');
      id = this.#generateId('h');
    }
    if (typeof id !== 'string' || id === '')
      throw new ConfigurationError('generateId', `must return a non-empty string, got ${String(id)}`);
    const header: HeaderState = { id, idText: JSON.stringify(id), vText, nextSeq: seq, at, types: new Map() };
    this.#open.set(runId, header);
    this.#ids.add(id);
    return header;
  }

  #close(runId: string): void {
    const header = this.#open.get(runId);
    if (!header) return;
    this.#open.delete(runId);
    this.#ids.delete(header.id);
  }
}

const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `prefix` and eight random base64url characters, from `crypto.getRandomValues` (browsers and Node 20). */
const shortRandomIds: IdGenerator = (prefix) => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8));
  let id = prefix;
  for (const byte of bytes) id += base64url[byte & 63];
  return id;
};
