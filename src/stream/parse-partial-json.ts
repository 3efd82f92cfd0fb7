import { ConfigurationError } from '../errors/reins-error.js';
import { StreamedNumber } from './streamed-number.js';
import { StreamedString } from './streamed-string.js';

declare const displayBrand: unique symbol;

/**
 * What a partial parse shows while text is still arriving: for display only. The brand keeps it
 * from being passed where executable tool input is expected; only `finish()` yields that.
 */
export type PartialDisplay = { readonly [displayBrand]: true } & Readonly<Record<string, unknown>>;

/** A path into the document: object keys and array indexes. */
export type JsonPath = (string | number)[];

/** What `finish()` concluded about the whole text. */
export type PartialJsonResult =
  | { status: 'complete'; value: unknown }
  /** A valid prefix that stopped early (`max_tokens`, a dropped stream): never executable. */
  | { status: 'truncated'; offset: number; openPath: JsonPath }
  | { status: 'invalid'; offset: number; message: string; reason: 'syntax' | 'depth_limit' | 'size_limit' };

/** One visible change, for a UI that updates only what changed. */
export type PartialJsonChange =
  | { type: 'set'; path: JsonPath; value: unknown }
  | { type: 'append'; path: JsonPath; text: string }
  | { type: 'push'; path: JsonPath; value: unknown };

export interface PartialJsonParserOptions {
  /** Deepest nesting allowed. @default 512 */
  maxDepth?: number;
  /** Most characters accepted. @default 67_108_864 */
  maxLength?: number;
  /**
   * Called with each visible change, as `push` makes it. Each event carries a fresh path, so with
   * a listener every change costs time in proportion to its depth; without one no path is built.
   * @default undefined
   */
  onChange?: (change: PartialJsonChange) => void;
}

export interface PartialJsonParser {
  /** Feeds the next fragment. Costs time in proportion to the fragment, never to the text so far. */
  push(fragment: string): void;
  /**
   * The current display value, or undefined before any value is visible. Constant time: it is
   * the parser's own display tree, updated in place, so the same root object comes back on every
   * call and its containers keep filling in; a growing string's slot holds a new, longer string
   * after each push (read a snapshot's strings, or clone it, to keep what it showed then).
   * A growing string is a rope: reading all of its characters copies it once, so a UI that redraws
   * a long string on every fragment should draw the `append` changes instead.
   */
  snapshot(): PartialDisplay | unknown[] | string | number | boolean | null | undefined;
  /** The verdict on everything pushed: exactly `JSON.parse`'s grammar. */
  finish(): PartialJsonResult;
}

enum Mode {
  Value, // expecting a value
  AfterValue, // after a value: `,` `]` `}` or end
  Key, // expecting a key string or `}` (right after `{`)
  KeyRequired, // expecting a key string (after `,` in an object)
  Colon,
  ValueRequired, // after `,` in an array: `]` not allowed
  Done,
}

enum Token {
  None,
  String,
  Number,
  Literal,
}

interface Frame {
  container: Record<string, unknown> | unknown[];
  isArray: boolean;
  /** The key of the value being read in this object, once its closing quote arrived. */
  key: string | undefined;
}

type Failure = { offset: number; message: string; reason: 'syntax' | 'depth_limit' | 'size_limit' };

const whitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
const numberCharacter = (code: number) =>
  isDigit(code) || code === 0x2e || code === 0x65 || code === 0x45 || code === 0x2b || code === 0x2d;
const literals = ['true', 'false', 'null'] as const;
/** Characters of a number kept for an error message. */
const quotedNumberLength = 64;

function assign(container: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  // `__proto__` as a key is data (as JSON.parse makes it), never the prototype.
  if (key === '__proto__')
    Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
  else (container as Record<string, unknown>)[key] = value;
}

/**
 * An incremental JSON parser for streamed tool-call arguments. Values appear as they become
 * certain: keys once closed, strings as growing prefixes, numbers once valid, literals once
 * complete; nothing shown ever vanishes or changes type. `finish()` tells a complete document from a
 * cut-off one (`truncated`) and from a malformed one (`invalid`, at the first bad character).
 *
 * Linear in the text on every shape, with `snapshot()` after every push included: a growing
 * string is extended by each fragment's part (V8 keeps `a + b` as a rope, so nothing already
 * shown is copied or rescanned), a growing number keeps only its significant digits and is
 * converted when the display is read, and paths are built only for an `onChange` listener.
 *
 * @example
 * const parser = createPartialJsonParser();
 * parser.push('{"to": "ana@ex');
 * parser.snapshot(); // { to: 'ana@ex' }
 * parser.push('ample.com"}');
 * parser.finish(); // { status: 'complete', value: { to: 'ana@example.com' } }
 */
export function createPartialJsonParser(options: PartialJsonParserOptions = {}): PartialJsonParser {
  const maxDepth = options.maxDepth ?? 512;
  const maxLength = options.maxLength ?? 67_108_864;
  if (!(maxDepth >= 1) || !(maxLength >= 1))
    throw new ConfigurationError('partialJson', 'maxDepth and maxLength must be ≥ 1');
  const onChange = options.onChange;

  const stack: Frame[] = [];
  let root: unknown;
  let hasRoot = false;
  let mode: Mode = Mode.Value;
  let arrayStart = false; // right after `[`, where `]` may close an empty array
  let offset = 0;
  let error: Failure | undefined;
  let token: Token = Token.None;

  // String state: the string being read, and whether it is a key (shown only once closed).
  const string = new StreamedString();
  let isKey = false;

  // Number state. `numberDirty`: digits arrived that the display has not been updated with.
  const number = new StreamedNumber();
  let numberShown = false;
  let numberDirty = false;
  let shownNumber = 0;
  let raw = ''; // a number's first characters (for messages) or a literal so far

  const fail = (at: number, message: string, reason: Failure['reason'] = 'syntax'): number => {
    error = { offset: at, message, reason };
    return -1;
  };

  // The path of the value in the current slot, once it is in place. Only for `onChange`: building
  // it on every placement made deep nesting quadratic.
  const slotPath = (): JsonPath => {
    const path: JsonPath = [];
    for (const frame of stack)
      path.push(frame.isArray ? (frame.container as unknown[]).length - 1 : (frame.key as string));
    return path;
  };

  // The path where the text stopped, for a truncated verdict. In the innermost container: an
  // array's slot is its last element once the value is in place, else the next one; an object's
  // key counts once it is closed.
  const openPath = (): JsonPath => {
    const path: JsonPath = [];
    const placed =
      token === Token.String ? !isKey : token === Token.Number ? numberShown : mode === Mode.AfterValue;
    const readingKey = mode === Mode.Key || mode === Mode.KeyRequired;
    for (let i = 0; i < stack.length; i++) {
      const frame = stack[i] as Frame;
      const innermost = i === stack.length - 1;
      if (frame.isArray) path.push((frame.container as unknown[]).length - (!innermost || placed ? 1 : 0));
      else if (!(innermost && readingKey)) path.push(frame.key as string);
    }
    return path;
  };

  // Places a value in the current slot (the first time it becomes visible).
  const place = (value: unknown) => {
    const frame = stack[stack.length - 1];
    if (!frame) {
      root = value;
      hasRoot = true;
      onChange?.({ type: 'set', path: [], value });
    } else if (frame.isArray) {
      (frame.container as unknown[]).push(value);
      if (onChange) onChange({ type: 'push', path: slotPath().slice(0, -1), value });
    } else {
      assign(frame.container, frame.key as string, value);
      if (onChange) onChange({ type: 'set', path: slotPath(), value });
    }
  };

  // Replaces the value in the current slot (a growing string or number).
  const replace = (value: unknown) => {
    const frame = stack[stack.length - 1];
    if (!frame) root = value;
    else if (frame.isArray) {
      const array = frame.container as unknown[];
      array[array.length - 1] = value;
    } else assign(frame.container, frame.key as string, value);
  };

  const valueDone = () => {
    token = Token.None;
    mode = stack.length === 0 ? Mode.Done : Mode.AfterValue;
  };

  const open = (isArray: boolean, at: number): boolean => {
    if (stack.length >= maxDepth) {
      fail(at, `nesting deeper than ${maxDepth}`, 'depth_limit');
      return false;
    }
    const container = isArray ? [] : {};
    place(container);
    stack.push({ container, isArray, key: undefined });
    mode = isArray ? Mode.Value : Mode.Key;
    arrayStart = isArray;
    return true;
  };

  // Shows the number as it was marked (at the end of the last push that left it whole).
  const showNumber = () => {
    numberDirty = false;
    if (!number.hasMark) return;
    const value = number.value();
    if (!numberShown) {
      numberShown = true;
      shownNumber = value;
      place(value);
    } else if (!Object.is(value, shownNumber)) {
      shownNumber = value;
      replace(value);
      if (onChange) onChange({ type: 'set', path: slotPath(), value });
    }
  };

  const quotedNumber = () =>
    JSON.stringify(raw.length > quotedNumberLength ? `${raw.slice(0, quotedNumberLength)}…` : raw);

  const endNumber = (at: number): boolean => {
    if (!number.mark()) {
      fail(at, `invalid number ${quotedNumber()}`);
      return false;
    }
    showNumber();
    valueDone();
    return true;
  };

  // Each reader takes the fragment at `i` and returns where it stopped, or -1 on an error.

  const readString = (fragment: string, i: number, base: number): number => {
    const end = string.read(fragment, i);
    if (end < 0) {
      const failure = string.failure as { index: number; message: string };
      return fail(base + failure.index, failure.message);
    }
    if (end === fragment.length) return end;
    const whole = string.close();
    if (isKey) {
      (stack[stack.length - 1] as Frame).key = whole;
      token = Token.None;
      mode = Mode.Colon;
    } else {
      if (onChange) onChange({ type: 'set', path: slotPath(), value: whole });
      replace(whole);
      valueDone();
    }
    return end + 1;
  };

  // Keeps a number's first characters for a message.
  const keepRaw = (fragment: string, from: number, to: number) => {
    if (raw.length <= quotedNumberLength)
      raw += fragment.slice(from, Math.min(to, from + quotedNumberLength + 1));
  };

  const readNumber = (fragment: string, i: number, base: number): number => {
    const j = number.read(fragment, i);
    if (j < fragment.length) {
      const invalid = numberCharacter(fragment.charCodeAt(j)); // a number character out of place
      keepRaw(fragment, i, invalid ? j + 1 : j);
      if (invalid) return fail(base + j, `invalid number ${quotedNumber()}`);
      return endNumber(base + j) ? j : -1; // the next character is read again as what follows
    }
    keepRaw(fragment, i, j);
    // The fragment ended inside the number: shown now for a listener, else when read.
    if (number.mark()) numberDirty = true;
    return j;
  };

  const readLiteral = (fragment: string, i: number, base: number): number => {
    raw += fragment[i];
    const expected = literals.find((literal) => literal.startsWith(raw));
    if (!expected) return fail(base + i, `invalid literal ${JSON.stringify(raw)}`);
    if (raw === expected) {
      place(expected === 'true' ? true : expected === 'false' ? false : null);
      valueDone();
    }
    return i + 1;
  };

  const startValue = (fragment: string, i: number, base: number): number => {
    const code = fragment.charCodeAt(i);
    if (code === 0x5d && mode === Mode.Value && arrayStart) {
      arrayStart = false;
      stack.pop();
      valueDone();
      return i + 1;
    }
    arrayStart = false;
    if (code === 0x7b || code === 0x5b) return open(code === 0x5b, base + i) ? i + 1 : -1;
    if (code === 0x22) {
      token = Token.String;
      isKey = false;
      string.reset();
      place('');
      return i + 1;
    }
    if (code === 0x2d || isDigit(code)) {
      token = Token.Number;
      raw = '';
      number.reset();
      numberShown = false;
      numberDirty = false;
      return i; // the number reader takes its first character too
    }
    if (code === 0x74 || code === 0x66 || code === 0x6e) {
      token = Token.Literal;
      raw = '';
      return i;
    }
    return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} where a value was expected`);
  };

  // Whitespace, punctuation and the first character of each value.
  const readStructure = (fragment: string, i: number, base: number): number => {
    const code = fragment.charCodeAt(i);
    if (whitespace(code)) return i + 1;
    switch (mode) {
      case Mode.Value:
      case Mode.ValueRequired:
        return startValue(fragment, i, base);
      case Mode.Key:
      case Mode.KeyRequired:
        if (code === 0x7d && mode === Mode.Key) {
          stack.pop();
          valueDone();
        } else if (code === 0x22) {
          token = Token.String;
          isKey = true;
          string.reset();
        } else return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} where a key was expected`);
        return i + 1;
      case Mode.Colon:
        if (code !== 0x3a)
          return fail(base + i, `expected ':' after a key, found ${JSON.stringify(fragment[i])}`);
        mode = Mode.ValueRequired;
        return i + 1;
      case Mode.AfterValue: {
        const frame = stack[stack.length - 1] as Frame;
        if (code === 0x2c) mode = frame.isArray ? Mode.ValueRequired : Mode.KeyRequired;
        else if (code === (frame.isArray ? 0x5d : 0x7d)) {
          stack.pop();
          valueDone();
        } else return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} after a value`);
        return i + 1;
      }
      case Mode.Done:
        return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} after the end of the document`);
    }
  };

  const push = (fragment: string) => {
    if (error || fragment.length === 0) return;
    if (offset + fragment.length > maxLength) {
      fail(maxLength, `text longer than ${maxLength} characters`, 'size_limit');
      return;
    }
    const base = offset;
    offset += fragment.length;
    const length = fragment.length;
    let i = 0;
    while (i < length) {
      if (token === Token.String) i = readString(fragment, i, base);
      else if (token === Token.Number) i = readNumber(fragment, i, base);
      else if (token === Token.Literal) i = readLiteral(fragment, i, base);
      else i = readStructure(fragment, i, base);
      if (i < 0) return;
    }
    if (token === Token.String) {
      const added = string.commit();
      if (!isKey && added.length > 0) {
        replace(string.text);
        if (onChange) onChange({ type: 'append', path: slotPath(), text: added });
      }
    } else if (token === Token.Number && onChange) showNumber();
  };

  return {
    push,
    snapshot() {
      if (token === Token.Number && numberDirty && !error) showNumber();
      return hasRoot ? (root as PartialDisplay) : undefined;
    },
    finish(): PartialJsonResult {
      if (error) return { status: 'invalid', ...error };
      if (token === Token.Number && stack.length === 0 && mode === Mode.Value) {
        // A top-level number ends with the text: `12` is complete, `12.` is cut off.
        if (number.mark()) {
          showNumber();
          return { status: 'complete', value: number.value() };
        }
        return { status: 'truncated', offset, openPath: [] };
      }
      if (mode === Mode.Done && token === Token.None) return { status: 'complete', value: root };
      return { status: 'truncated', offset, openPath: openPath() };
    },
  };
}
