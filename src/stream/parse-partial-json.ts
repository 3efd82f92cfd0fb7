import { ConfigurationError } from '../errors/reins-error.js';

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
  onChange?: (change: PartialJsonChange) => void;
}

export interface PartialJsonParser {
  /** Feeds the next fragment. Costs time in proportion to the fragment, never to the text so far. */
  push(fragment: string): void;
  /** The current display value, or undefined before any value is visible. */
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

const whitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
const isDigit = (code: number) => code >= 0x30 && code <= 0x39;
/**
 * JSON's number grammar as a state machine, one character at a time (a regular expression over
 * the number so far made long numbers quadratic). States: 0 after `-`, 1 after a leading `0`,
 * 2 in integer digits, 3 after `.`, 4 in fraction digits, 5 after `e`, 6 after the exponent's
 * sign, 7 in exponent digits; -1 is an error. A number is complete in states 1, 2, 4 and 7.
 */
function numberStep(state: number, code: number): number {
  const digit = code >= 0x30 && code <= 0x39;
  switch (state) {
    case 0:
      return code === 0x30 ? 1 : digit ? 2 : -1;
    case 1:
      return code === 0x2e ? 3 : code === 0x65 || code === 0x45 ? 5 : -1;
    case 2:
      return digit ? 2 : code === 0x2e ? 3 : code === 0x65 || code === 0x45 ? 5 : -1;
    case 3:
      return digit ? 4 : -1;
    case 4:
      return digit ? 4 : code === 0x65 || code === 0x45 ? 5 : -1;
    case 5:
      return code === 0x2b || code === 0x2d ? 6 : digit ? 7 : -1;
    case 6:
    case 7:
      return digit ? 7 : -1;
    default:
      return -1;
  }
}
const numberComplete = (state: number) => state === 1 || state === 2 || state === 4 || state === 7;
const literals = ['true', 'false', 'null'] as const;

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
  let offset = 0;
  let error: { offset: number; message: string; reason: 'syntax' | 'depth_limit' | 'size_limit' } | undefined;

  let token: Token = Token.None;
  // String state.
  let text = ''; // decoded so far
  let shown = 0; // decoded length already visible
  let isKey = false;
  let escapeState = 0; // 0 none, 1 after backslash, 2..5 reading \u hex digits
  let hex = 0;
  // Number and literal state.
  let raw = '';
  let numberState = 0;
  let numberShown = false;

  const fail = (at: number, message: string, reason: 'syntax' | 'depth_limit' | 'size_limit' = 'syntax') => {
    error = { offset: at, message, reason };
  };

  const pathOf = (): JsonPath => {
    const path: JsonPath = [];
    for (const frame of stack) {
      if (frame.isArray)
        path.push(
          (frame.container as unknown[]).length -
            (mode === Mode.Value || mode === Mode.ValueRequired ? 0 : 1),
        );
      else if (frame.key !== undefined) path.push(frame.key);
    }
    return path;
  };

  // The path of the value being read; `placed` once it is in its container.
  const slotPath = (placed = true): JsonPath => {
    const path: JsonPath = [];
    for (let i = 0; i < stack.length; i++) {
      const frame = stack[i] as Frame;
      if (frame.isArray)
        path.push((frame.container as unknown[]).length - (i === stack.length - 1 && !placed ? 0 : 1));
      else path.push(frame.key as string);
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
      return;
    }
    if (frame.isArray) {
      const path = slotPath(false);
      (frame.container as unknown[]).push(value);
      onChange?.({ type: 'push', path: path.slice(0, -1), value });
    } else {
      assign(frame.container, frame.key as string, value);
      onChange?.({ type: 'set', path: slotPath(false), value });
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

  const open = (isArray: boolean, at: number) => {
    if (stack.length >= maxDepth) return fail(at, `nesting deeper than ${maxDepth}`, 'depth_limit');
    const container = isArray ? [] : {};
    place(container);
    stack.push({ container, isArray, key: undefined });
    mode = isArray ? Mode.Value : Mode.Key;
    if (isArray) arrayStart = true;
  };
  let arrayStart = false;

  // Shows the visible prefix of a string value: everything decoded, less a trailing high surrogate.
  const showString = () => {
    if (isKey) return;
    let visible = text.length;
    if (visible > 0) {
      const last = text.charCodeAt(visible - 1);
      if (last >= 0xd800 && last <= 0xdbff) visible--;
    }
    if (visible === shown) return;
    const value = text.slice(0, visible);
    if (onChange) onChange({ type: 'append', path: slotPath(), text: text.slice(shown, visible) });
    shown = visible;
    replace(value);
  };

  const showNumber = () => {
    if (numberComplete(numberState)) {
      const value = Number(raw);
      if (!numberShown) {
        numberShown = true;
        place(value);
      } else {
        replace(value);
        onChange?.({ type: 'set', path: slotPath(), value });
      }
    }
  };

  const endNumber = (at: number): boolean => {
    if (!numberComplete(numberState)) {
      fail(at, `invalid number ${JSON.stringify(raw)}`);
      return false;
    }
    showNumber();
    valueDone();
    return true;
  };

  const push = (fragment: string) => {
    if (error || fragment.length === 0) return;
    if (offset + fragment.length > maxLength)
      return fail(maxLength, `text longer than ${maxLength} characters`, 'size_limit');
    const base = offset;
    offset += fragment.length;
    const length = fragment.length;
    let i = 0;
    while (i < length) {
      if (token === Token.String) {
        // A run of plain characters is appended in one slice.
        if (escapeState === 0) {
          let j = i;
          while (j < length) {
            const code = fragment.charCodeAt(j);
            if (code === 0x22 || code === 0x5c || code < 0x20) break;
            j++;
          }
          if (j > i) {
            text += fragment.slice(i, j);
            i = j;
            if (i >= length) break;
          }
          const code = fragment.charCodeAt(i);
          if (code === 0x22) {
            i++;
            if (isKey) {
              (stack[stack.length - 1] as Frame).key = text;
              token = Token.None;
              mode = Mode.Colon;
            } else {
              shown = -1;
              const value = text;
              if (onChange) onChange({ type: 'set', path: slotPath(), value });
              replace(value);
              valueDone();
            }
            continue;
          }
          if (code === 0x5c) {
            escapeState = 1;
            i++;
            continue;
          }
          return fail(base + i, 'unescaped control character in a string');
        }
        const code = fragment.charCodeAt(i);
        if (escapeState === 1) {
          let decoded: string | undefined;
          switch (code) {
            case 0x22:
              decoded = '"';
              break;
            case 0x5c:
              decoded = '\\';
              break;
            case 0x2f:
              decoded = '/';
              break;
            case 0x62:
              decoded = '\b';
              break;
            case 0x66:
              decoded = '\f';
              break;
            case 0x6e:
              decoded = '\n';
              break;
            case 0x72:
              decoded = '\r';
              break;
            case 0x74:
              decoded = '\t';
              break;
            case 0x75:
              escapeState = 2;
              hex = 0;
              i++;
              continue;
            default:
              return fail(base + i, `invalid escapeState \\${fragment[i]}`);
          }
          text += decoded;
          escapeState = 0;
          i++;
          continue;
        }
        // Reading the four hex digits of \uXXXX.
        const digit =
          code >= 0x30 && code <= 0x39
            ? code - 0x30
            : code >= 0x61 && code <= 0x66
              ? code - 0x57
              : code >= 0x41 && code <= 0x46
                ? code - 0x37
                : -1;
        if (digit < 0) return fail(base + i, 'invalid \\u escapeState');
        hex = hex * 16 + digit;
        escapeState++;
        i++;
        if (escapeState === 6) {
          text += String.fromCharCode(hex);
          escapeState = 0;
        }
        continue;
      }

      const code = fragment.charCodeAt(i);
      if (token === Token.Number) {
        if (
          isDigit(code) ||
          code === 0x2e ||
          code === 0x65 ||
          code === 0x45 ||
          code === 0x2b ||
          code === 0x2d
        ) {
          raw += fragment[i];
          numberState = numberStep(numberState, code);
          if (numberState < 0) return fail(base + i, `invalid number ${JSON.stringify(raw)}`);
          i++;
          continue;
        }
        if (!endNumber(base + i)) return;
        continue; // the character is read again as what follows the number
      }
      if (token === Token.Literal) {
        raw += fragment[i];
        const expected = literals.find((literal) => literal.startsWith(raw));
        if (!expected) return fail(base + i, `invalid literal ${JSON.stringify(raw)}`);
        i++;
        if (raw === expected) {
          place(expected === 'true' ? true : expected === 'false' ? false : null);
          valueDone();
        }
        continue;
      }

      if (whitespace(code)) {
        i++;
        continue;
      }
      switch (mode) {
        case Mode.Value:
        case Mode.ValueRequired: {
          if (code === 0x5d && mode === Mode.Value && arrayStart) {
            arrayStart = false;
            stack.pop();
            valueDone();
            i++;
            continue;
          }
          arrayStart = false;
          if (code === 0x7b) open(false, base + i);
          else if (code === 0x5b) open(true, base + i);
          else if (code === 0x22) {
            token = Token.String;
            isKey = false;
            text = '';
            shown = 0;
            escapeState = 0;
            place('');
          } else if (code === 0x2d || isDigit(code)) {
            token = Token.Number;
            raw = fragment[i] as string;
            numberState = code === 0x2d ? 0 : code === 0x30 ? 1 : 2;
            numberShown = false;
          } else if (code === 0x74 || code === 0x66 || code === 0x6e) {
            token = Token.Literal;
            raw = '';
            continue;
          } else
            return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} where a value was expected`);
          if (error) return;
          i++;
          continue;
        }
        case Mode.Key:
        case Mode.KeyRequired:
          if (code === 0x7d && mode === Mode.Key) {
            stack.pop();
            valueDone();
          } else if (code === 0x22) {
            token = Token.String;
            isKey = true;
            text = '';
            escapeState = 0;
          } else return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} where a key was expected`);
          i++;
          continue;
        case Mode.Colon:
          if (code !== 0x3a)
            return fail(base + i, `expected ':' after a key, found ${JSON.stringify(fragment[i])}`);
          mode = Mode.ValueRequired;
          i++;
          continue;
        case Mode.AfterValue: {
          const frame = stack[stack.length - 1] as Frame;
          if (code === 0x2c) mode = frame.isArray ? Mode.ValueRequired : Mode.KeyRequired;
          else if (code === (frame.isArray ? 0x5d : 0x7d)) {
            stack.pop();
            valueDone();
          } else return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} after a value`);
          i++;
          continue;
        }
        case Mode.Done:
          return fail(base + i, `unexpected ${JSON.stringify(fragment[i])} after the end of the document`);
      }
    }
    if (token === Token.String && shown >= 0) showString();
    else if (token === Token.Number) showNumber();
  };

  return {
    push,
    snapshot: () => (hasRoot ? (root as PartialDisplay) : undefined),
    finish(): PartialJsonResult {
      if (error) return { status: 'invalid', ...error };
      if (token === Token.Number && stack.length === 0 && mode === Mode.Value) {
        // A top-level number ends with the text: `12` is complete, `12.` is cut off.
        if (numberComplete(numberState)) {
          showNumber();
          return { status: 'complete', value: Number(raw) };
        }
        return { status: 'truncated', offset, openPath: [] };
      }
      if (mode === Mode.Done && token === Token.None) return { status: 'complete', value: root };
      return { status: 'truncated', offset, openPath: pathOf() };
    },
  };
}
