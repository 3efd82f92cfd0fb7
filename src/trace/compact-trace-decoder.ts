import { compactTraceEncoding } from './compact-trace-encoder.js';
import type { TraceEvent } from './events.js';
import { applyJsonDelta, maxPatchDepth, setOwn } from './json-delta.js';

interface TypeShape {
  type: string;
  keys: string[];
  /** The last event of this type's values, one per key: the base of the next delta. */
  values: unknown[];
}

interface Header {
  v: number | string;
  runId: string;
  nextSeq: number;
  at: number;
  /** By number, in order of first appearance. */
  types: TypeShape[];
  byName: Map<string, TypeShape>;
}

const stampKeys: ReadonlySet<string> = new Set(['v', 'runId', 'seq', 'at', 'type']);

/**
 * Turns the parsed lines of a JSONL trace back into events, plain and compact alike
 * (docs/trace-format.md): a header line opens a header and yields nothing, an array line is a
 * compact event under the header it names, anything else is a plain event and passes through as it
 * is (old files read as they always did). Throws a plain `Error` saying what is wrong with a line;
 * the caller labels it with where the line is.
 *
 * Decoded events are built afresh but are the bases of later deltas: read them once every line is
 * decoded, not in between.
 */
export class CompactTraceDecoder {
  readonly #headers = new Map<string, Header>();

  decode(line: unknown): TraceEvent | undefined {
    if (Array.isArray(line)) return this.#event(line);
    if (isHeader(line)) {
      this.#open(line);
      return undefined;
    }
    return line as TraceEvent;
  }

  #open(line: Record<string, unknown>): void {
    const { encoding, id, v, runId, seq, at } = line;
    if (encoding !== compactTraceEncoding)
      throw new Error(
        `unsupported trace encoding ${JSON.stringify(encoding)}; this reins reads "${compactTraceEncoding}"`,
      );
    if (typeof id !== 'string' || id === '') throw new Error('a header needs an id (a non-empty string)');
    if (typeof runId !== 'string') throw new Error('a header needs a runId (a string)');
    if (typeof v !== 'number' && typeof v !== 'string') throw new Error('a header needs a trace version v');
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq))
      throw new Error('a header needs a seq (a whole number)');
    if (typeof at !== 'number' || !Number.isFinite(at)) throw new Error('a header needs an at (a number)');
    this.#headers.set(id, { v, runId, nextSeq: seq, at, types: [], byName: new Map() });
  }

  #event(line: unknown[]): TraceEvent {
    const [id, ref, deltaAt, body, ...children] = line;
    if (typeof id !== 'string') throw new Error('a compact event line starts with the id of its header');
    const header = this.#headers.get(id);
    if (!header)
      throw new Error(
        `a compact event line names header ${JSON.stringify(id)}, which no earlier line opened`,
      );
    if (typeof deltaAt !== 'number' || !Number.isFinite(deltaAt))
      throw new Error('a compact event line gives its time as a number (the milliseconds since the last)');
    let shape: TypeShape | undefined;
    if (typeof ref === 'string') shape = header.byName.get(ref);
    else if (typeof ref === 'number' && Number.isInteger(ref)) {
      shape = header.types[ref];
      if (!shape)
        throw new Error(`a compact event line names event type #${ref}, which its header has not defined`);
    } else throw new Error('a compact event line names its type by name or number');
    const type = shape?.type ?? (ref as string);

    let keys: string[];
    let values: unknown[];
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      if (children.length > 0)
        throw new Error('a compact event line with a whole body holds nothing after it');
      keys = Object.keys(body);
      const stamp = keys.find((key) => stampKeys.has(key));
      if (stamp !== undefined) throw new Error(`a compact event body repeats the field "${stamp}"`);
      values = keys.map((key) => (body as Record<string, unknown>)[key]);
      if (shape) {
        shape.keys = keys;
      } else {
        shape = { type, keys, values };
        header.types.push(shape);
        header.byName.set(type, shape);
      }
    } else if (typeof body === 'string') {
      if (!shape) throw new Error(`a compact event line patches a ${type} event, but none came before it`);
      keys = shape.keys;
      try {
        // The line's mask over the body's fields is a level of its own above each field's patch,
        // which the encoder nests up to `maxPatchDepth` deep.
        values = applyJsonDelta([body, ...children], shape.values, maxPatchDepth + 1) as unknown[];
      } catch (error) {
        throw new Error(
          `a compact ${type} event does not fit the one before it: ${(error as Error).message}`,
        );
      }
    } else throw new Error('a compact event line holds its body or a mask of what changed');
    shape.values = values;

    header.at += deltaAt;
    const event: Record<string, unknown> = {
      v: header.v,
      runId: header.runId,
      seq: header.nextSeq++,
      at: header.at,
      type,
    };
    keys.forEach((key, index) => {
      setOwn(event, key, values[index]);
    });
    return event as unknown as TraceEvent;
  }
}

/** A header line: an object naming an `encoding`, and no event `type`. */
function isHeader(line: unknown): line is Record<string, unknown> {
  return (
    typeof line === 'object' &&
    line !== null &&
    !Array.isArray(line) &&
    typeof (line as { encoding?: unknown }).encoding === 'string' &&
    !('type' in line)
  );
}
