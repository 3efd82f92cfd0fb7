import { ConfigurationError } from '../errors/index.js';

/** What a parameter holds: one number, a whole number, a comma list, or one of a few words. */
export type ParamKind = 'number' | 'integer' | 'numbers' | 'integers' | 'choice' | 'custom';

/**
 * One typed, range-checked parameter of a model. The same description drives the CLI flags, the
 * lab's sliders and the checks a direct call from code gets.
 */
export interface ParamSpec {
  /** The camelCase key in the parameter object and in JSON. */
  key: string;
  /** The CLI flag, `--kebab-case`. */
  flag: string;
  kind: ParamKind;
  description: string;
  min?: number;
  max?: number;
  /** The bound itself is not allowed (p < 1 rather than p ≤ 1). */
  minExclusive?: boolean;
  maxExclusive?: boolean;
  choices?: readonly string[];
  /** May be left out (`--kept` defaults to `--result`). */
  optional?: boolean;
  /** For `custom`: how to read the flag, check a value, and name the valid form. */
  custom?: {
    parse(text: string): unknown;
    problem(value: unknown): string | undefined;
    /** Writes a value back in the form `parse` reads. */
    format(value: unknown): string;
    form: string;
  };
  /** A sensible slider range for the lab, when it differs from the valid range. */
  slider?: { min: number; max: number; step: number };
}

const simParameterErrorMarker = Symbol.for('reins.sim-parameter-error');

/** A parameter value that failed its check, named by key and flag, with the range it must be in. */
export class SimParameterError extends ConfigurationError {
  /** The CLI flag at fault (`--p`). */
  readonly flag: string;
  /** What is wrong, starting with the flag: `--p must be a number in [0, 1], got -1`. */
  readonly problem: string;
  readonly [simParameterErrorMarker] = true;

  constructor(spec: Pick<ParamSpec, 'key' | 'flag'>, problem: string) {
    super(spec.key, `${spec.flag} ${problem}`);
    this.flag = spec.flag;
    this.problem = `${spec.flag} ${problem}`;
  }
}

/** True for a {@link SimParameterError}, even from a second copy of reins. */
export function isSimParameterError(value: unknown): value is SimParameterError {
  return typeof value === 'object' && value !== null && simParameterErrorMarker in value;
}

const flagOf = (key: string) => `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;

/** A quantity ≥ 0 (tokens, dollars, seconds) with a slider from 0 to `sliderMax`; the flag is the key in kebab-case. */
export function amountParam(
  key: string,
  description: string,
  sliderMax: number,
  sliderStep: number,
): ParamSpec {
  return {
    key,
    flag: flagOf(key),
    kind: 'number',
    min: 0,
    description,
    slider: { min: 0, max: sliderMax, step: sliderStep },
  };
}

/** A probability in [0, 1] with a slider from 0 to `sliderMax`. */
export function probabilityParam(
  key: string,
  description: string,
  sliderMax = 1,
  sliderStep = 0.01,
): ParamSpec {
  return {
    key,
    flag: flagOf(key),
    kind: 'number',
    min: 0,
    max: 1,
    description,
    slider: { min: 0, max: sliderMax, step: sliderStep },
  };
}

/** `[0, 1)`, `≥ 0`, `whole number in [1, 1000]`: the valid range as people read it. */
export function describeRange(spec: ParamSpec): string {
  if (spec.kind === 'choice') return `one of ${(spec.choices ?? []).join(', ')}`;
  if (spec.kind === 'custom') return spec.custom?.form ?? 'valid';
  const what =
    spec.kind === 'integer'
      ? 'a whole number'
      : spec.kind === 'integers'
        ? 'a comma list of whole numbers'
        : spec.kind === 'numbers'
          ? 'a comma list of numbers'
          : 'a number';
  const { min, max } = spec;
  if (min !== undefined && max !== undefined) {
    return `${what} in ${spec.minExclusive ? '(' : '['}${min}, ${max}${spec.maxExclusive ? ')' : ']'}`;
  }
  if (min !== undefined) return `${what} ${spec.minExclusive ? '>' : '≥'} ${min}`;
  if (max !== undefined) return `${what} ${spec.maxExclusive ? '<' : '≤'} ${max}`;
  return what;
}

function inRange(spec: ParamSpec, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (spec.min !== undefined && (spec.minExclusive ? value <= spec.min : value < spec.min)) return false;
  if (spec.max !== undefined && (spec.maxExclusive ? value >= spec.max : value > spec.max)) return false;
  if ((spec.kind === 'integer' || spec.kind === 'integers') && !Number.isInteger(value)) return false;
  return true;
}

/** Throws {@link SimParameterError} unless `value` fits `spec`. */
export function checkParam(spec: ParamSpec, value: unknown): void {
  const fail = (): never => {
    throw new SimParameterError(spec, `must be ${describeRange(spec)}, got ${JSON.stringify(value)}`);
  };
  if (value === undefined) {
    if (spec.optional) return;
    fail();
  }
  switch (spec.kind) {
    case 'custom': {
      const problem = spec.custom?.problem(value);
      if (problem) throw new SimParameterError(spec, `must be ${describeRange(spec)}: ${problem}`);
      return;
    }
    case 'choice':
      if (typeof value !== 'string' || !(spec.choices ?? []).includes(value)) fail();
      return;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !inRange(spec, value)) fail();
      return;
    case 'numbers':
    case 'integers':
      if (!Array.isArray(value) || value.length === 0) fail();
      for (const item of value as unknown[]) if (typeof item !== 'number' || !inRange(spec, item)) fail();
      return;
  }
}

/**
 * Reads one flag's text into its typed value. Numbers must be plain decimals (`0.2`, `1e-3`,
 * `1500`); anything else, and anything out of range, throws naming the flag and its range.
 */
export function parseParam(spec: ParamSpec, text: string): unknown {
  const number = (part: string): number => {
    const trimmed = part.trim();
    if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) {
      throw new SimParameterError(spec, `must be ${describeRange(spec)}, got "${text}"`);
    }
    return Number(trimmed);
  };
  let value: unknown;
  switch (spec.kind) {
    case 'custom':
      value = spec.custom?.parse(text);
      break;
    case 'choice':
      value = text;
      break;
    case 'number':
    case 'integer':
      value = number(text);
      break;
    case 'numbers':
    case 'integers':
      value = text.split(',').map(number);
      break;
  }
  checkParam(spec, value);
  return value;
}

/** Writes a value the way its flag takes it (`0.85:1-6,0.1:6-30`, `5,5,3`): the inverse of {@link parseParam}. */
export function formatParam(spec: ParamSpec, value: unknown): string {
  if (value === undefined) return '';
  if (spec.kind === 'custom' && spec.custom) return spec.custom.format(value);
  if (Array.isArray(value)) return value.map(String).join(',');
  return String(value);
}

/** The defaults with every given value that is not `undefined` laid over them (no checks). */
export function withDefaults<P extends object>(defaults: P, given: Partial<P> | undefined): P {
  const params = { ...defaults };
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value !== undefined) (params as Record<string, unknown>)[key] = value;
  }
  return params;
}

/**
 * Fills in defaults and checks every parameter of a model; `cross` checks rules that join two
 * parameters (restart needs p < 1). Returns the complete parameter object.
 */
export function resolveParams<P extends object>(
  specs: readonly ParamSpec[],
  defaults: P,
  given: Partial<P> | undefined,
  cross?: (params: P) => { key: string; problem: string } | undefined,
): P {
  const known = new Set(specs.map((spec) => spec.key));
  for (const key of Object.keys(given ?? {})) {
    if (!known.has(key)) {
      throw new ConfigurationError(key, `is not a parameter of this model (known: ${[...known].join(', ')})`);
    }
  }
  const params = withDefaults(defaults, given);
  for (const spec of specs) checkParam(spec, (params as Record<string, unknown>)[spec.key]);
  const problem = cross?.(params);
  if (problem) {
    const spec = specs.find((candidate) => candidate.key === problem.key);
    throw new SimParameterError(spec ?? { key: problem.key, flag: problem.key }, problem.problem);
  }
  return params;
}
