const encoder = new TextEncoder();
let buffer = new Uint8Array(1_024);

/**
 * The first `length` characters of `text` as bytes when they are all ASCII (then `bytes[i]` is
 * `text.charCodeAt(i)`), else undefined. `encodeInto` copies them natively, and a typed array
 * reads ~40 % faster than `charCodeAt` on a sliced string, which is what a tool result's head is.
 * The buffer is reused by the next call: read it first.
 */
export function asciiBytes(text: string, length: number = text.length): Uint8Array | undefined {
  if (buffer.length < length) buffer = new Uint8Array(Math.max(length, 2 * buffer.length));
  const { read, written } = encoder.encodeInto(length === text.length ? text : text.slice(0, length), buffer);
  // One byte a character, every character read: nothing beyond ASCII.
  return read === length && written === length ? buffer : undefined;
}
