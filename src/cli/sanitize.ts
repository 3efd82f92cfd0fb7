/**
 * Characters a terminal may act on rather than show: C0 controls but tab and newline (ESC starts
 * CSI and OSC sequences: clear the screen, retitle the window, rewrite the clipboard), DEL, C1
 * controls (U+009B is a one-character CSI), the bidi embeddings, overrides and isolates, and the
 * Unicode line and paragraph separators.
 */
const unsafe =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Makes untrusted text (tool output and errors recorded in a trace or a dead letter) safe to print:
 * each character a terminal would act on becomes its visible `\uXXXX` escape, so `\x1b[2J` prints
 * as `\u001b[2J`. Tab and newline stay. The same escape is valid inside a JSON string, so applied to
 * `JSON.stringify` output it keeps the JSON valid and lossless (JSON.stringify already escapes C0,
 * but leaves DEL, C1 and bidi characters raw). Every CLI command that prints data it did not write
 * itself goes through this function; our own colours are added after it.
 */
export function sanitize(text: string): string {
  return text.replace(unsafe, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** {@link sanitize} applied to every string in a JSON-like value, object keys included, for renderers. */
export function sanitizeDeep<T>(value: T): T {
  if (typeof value === 'string') return sanitize(value) as T;
  if (Array.isArray(value)) return value.map(sanitizeDeep) as T;
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[sanitize(key)] = sanitizeDeep(item);
    return copy as T;
  }
  return value;
}

/** Prints `value` as JSON with every terminal-active character escaped (still valid, lossless JSON). */
export function printJson(value: unknown, space: number = 2): void {
  console.log(sanitize(JSON.stringify(value, null, space) ?? 'null'));
}
