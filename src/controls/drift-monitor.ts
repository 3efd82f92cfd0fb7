import { canonicalJson } from './canonical-json.js';

/** Options for the progress detector. */
export interface DriftOptions {
  /**
   * How many recent actions (tool calls) to look at.
   * @default 8
   */
  window?: number;
  /**
   * The fewest distinct normalized actions the window must hold.
   * @default 3
   */
  minDistinct?: number;
}

/** Why the monitor tripped. */
export interface DriftVerdict {
  signal: 'novelty' | 'world_state';
  detail: string;
}

/** The monitor's state, for a serialized run state. */
export interface DriftState {
  actions: string[];
  worldStates: string[];
}

/**
 * The action fingerprint the drift monitor compares: strings lower-cased, trimmed, inner whitespace
 * collapsed and quotes dropped, keys sorted, so `grep "Discount"` and `grep discount`
 * count as the same action.
 */
export function actionFingerprint(tool: string, input: unknown): string {
  return `${tool}:${canonicalJson(normalize(input))}`;
}

/**
 * {@link actionFingerprint} from the canonical JSON of the input, already computed for the repeat
 * key: each string value is normalized in place of walking and serializing the input again.
 */
export function actionFingerprintOfCanonical(tool: string, canonical: string): string {
  if (canonical.indexOf('"') < 0) return `${tool}:${canonical}`;
  let out = '';
  let copied = 0;
  for (let at = canonical.indexOf('"'); at >= 0; ) {
    // A string of characters normalizing leaves alone (no capitals, whitespace, quotes, escapes or
    // non-ASCII) is skipped in one native scan, without parsing and printing it again.
    alreadyNormal.lastIndex = at + 1;
    alreadyNormal.test(canonical);
    let end = alreadyNormal.lastIndex;
    if (canonical.charCodeAt(end) === 34) {
      at = canonical.indexOf('"', end + 1);
      continue;
    }
    while (canonical.charCodeAt(end) !== 34) end += canonical.charCodeAt(end) === 92 ? 2 : 1;
    // A string followed by ':' is a key; keys are kept as they are.
    if (canonical.charCodeAt(end + 1) !== 58) {
      const value = JSON.parse(canonical.slice(at, end + 1)) as string;
      out += canonical.slice(copied, at) + JSON.stringify(normalize(value));
      copied = end + 1;
    }
    at = canonical.indexOf('"', end + 1);
  }
  return `${tool}:${out}${canonical.slice(copied)}`;
}

/** A run of characters `normalize` keeps as they are (sticky: it scans from `lastIndex`). */
const alreadyNormal = /[^"\\A-Z\s'`\u0080-\uffff]*/y;

function normalize(value: unknown): unknown {
  if (typeof value === 'string') {
    return value.trim().toLowerCase().replace(/\s+/g, ' ').replace(/["'`]/g, '');
  }
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) out[key] = normalize(member);
    return out;
  }
  return value;
}

/**
 * Detects loop drift from signals the model does not author: too few distinct actions in the last
 * `window` calls, or a world-state hash that has not changed across `window` steps.
 */
export class DriftMonitor {
  readonly window: number;
  readonly minDistinct: number;
  readonly #actions: string[];
  readonly #worldStates: string[];
  /** How often each action is in the window, kept as actions come and go (no set per check). */
  readonly #actionCounts = new Map<string, number>();
  readonly #stateCounts = new Map<string, number>();

  constructor(options: Required<DriftOptions>, state?: DriftState) {
    this.window = options.window;
    this.minDistinct = options.minDistinct;
    this.#actions = [];
    this.#worldStates = [];
    for (const action of state?.actions ?? []) this.recordFingerprint(action);
    for (const hash of state?.worldStates ?? []) this.recordWorldState(hash);
  }

  recordAction(tool: string, input: unknown): void {
    this.recordFingerprint(actionFingerprint(tool, input));
  }

  /** Records an action by its fingerprint ({@link actionFingerprintOfCanonical}). */
  recordFingerprint(fingerprint: string): void {
    slide(this.#actions, this.#actionCounts, fingerprint, this.window);
  }

  recordWorldState(hash: string): void {
    slide(this.#worldStates, this.#stateCounts, hash, this.window);
  }

  /** The verdict for the current window, or undefined while the run looks like it is progressing. */
  check(): DriftVerdict | undefined {
    if (this.#actions.length >= this.window) {
      const distinct = this.#actionCounts.size;
      if (distinct < this.minDistinct) {
        return {
          signal: 'novelty',
          detail: `only ${distinct} distinct actions in the last ${this.window} tool calls (at least ${this.minDistinct} expected)`,
        };
      }
    }
    if (this.#worldStates.length >= this.window && this.#stateCounts.size === 1) {
      return { signal: 'world_state', detail: `world state unchanged across the last ${this.window} steps` };
    }
    return undefined;
  }

  state(): DriftState {
    return { actions: [...this.#actions], worldStates: [...this.#worldStates] };
  }
}

/** Appends to a window of at most `size` entries, keeping each entry's count in the window. */
function slide(window: string[], counts: Map<string, number>, entry: string, size: number): void {
  window.push(entry);
  counts.set(entry, (counts.get(entry) ?? 0) + 1);
  while (window.length > size) {
    const gone = window.shift() as string;
    const left = (counts.get(gone) as number) - 1;
    if (left === 0) counts.delete(gone);
    else counts.set(gone, left);
  }
}
