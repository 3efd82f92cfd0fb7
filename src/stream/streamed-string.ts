/**
 * A run of characters that stand for themselves in a string. Matched natively: a per-character
 * `charCodeAt` loop was the largest cost of a long string (about 2× slower on sliced fragments).
 */
const plainRun = /[^"\\\u0000-\u001f]*/y;

/** The decoded character of a one-letter escape (`\n` → newline), or undefined. */
function escaped(code: number): string | undefined {
  switch (code) {
    case 0x22:
      return '"';
    case 0x5c:
      return '\\';
    case 0x2f:
      return '/';
    case 0x62:
      return '\b';
    case 0x66:
      return '\f';
    case 0x6e:
      return '\n';
    case 0x72:
      return '\r';
    case 0x74:
      return '\t';
    default:
      return undefined;
  }
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}

/** Characters per flat block of a long string's rope. */
const blockLength = 8_192;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * A JSON string read as it streams, decoded, with its visible prefix kept as a rope: each push's
 * part is appended with `+` (V8 keeps `a + b` as a cons string, in constant time), and nothing
 * already decoded is sliced, scanned or copied again, so growing a 1 MB string by 16-byte
 * fragments, and showing it after each, costs time in proportion to the fragments.
 */
export class StreamedString {
  // What is visible: everything decoded, less a trailing high surrogate held until its pair. Kept
  // as flat blocks joined into a rope of few nodes, then the current block's parts: a rope of one
  // node per push kept the whole string's history alive, and made a 4 MB string 2× slower per byte.
  private blocks = '';
  private tail = '';
  private tailParts: string[] = [];
  /** Where and why `read` stopped at a character a string may not contain. */
  failure: { index: number; message: string } | undefined;
  private held = '';
  /** What the current push decoded, not yet in `text`. */
  private piece = '';
  private pieceLastCode = 0;
  private escapeState = 0; // 0 none, 1 after backslash, 2..5 reading \u hex digits
  private hex = 0;

  /** Starts a new string, after its opening quote. */
  reset(): void {
    this.blocks = '';
    this.tail = '';
    this.tailParts = [];
    this.held = '';
    this.piece = '';
    this.pieceLastCode = 0;
    this.escapeState = 0;
  }

  /**
   * Decodes `fragment` from `from`, and returns the index of the closing quote (not consumed),
   * the fragment's length when the string goes on, or -1 with `failure` set.
   */
  read(fragment: string, from: number): number {
    const length = fragment.length;
    let i = from;
    while (i < length) {
      const code = fragment.charCodeAt(i);
      if (this.escapeState === 0) {
        plainRun.lastIndex = i;
        plainRun.test(fragment);
        const end = plainRun.lastIndex;
        if (end > i) {
          // A fragment wholly inside the string (the common case for a long one) is taken as is.
          const run = i === 0 && end === length ? fragment : fragment.slice(i, end);
          this.piece = this.piece === '' ? run : this.piece + run;
          this.pieceLastCode = fragment.charCodeAt(end - 1);
          i = end;
          continue;
        }
        if (code === 0x22) return i;
        if (code !== 0x5c) return this.fail(i, 'unescaped control character in a string');
        this.escapeState = 1;
        i++;
      } else if (this.escapeState === 1) {
        i++;
        if (code === 0x75) {
          this.escapeState = 2;
          this.hex = 0;
          continue;
        }
        const decoded = escaped(code);
        if (decoded === undefined) return this.fail(i - 1, `invalid escape \\${fragment[i - 1]}`);
        this.append(decoded, decoded.charCodeAt(0));
        this.escapeState = 0;
      } else {
        // The four hex digits of \uXXXX.
        const digit = hexDigit(code);
        if (digit < 0) return this.fail(i, 'invalid \\u escape');
        this.hex = this.hex * 16 + digit;
        i++;
        if (++this.escapeState === 6) {
          this.append(String.fromCharCode(this.hex), this.hex);
          this.escapeState = 0;
        }
      }
    }
    return i;
  }

  /**
   * Moves what this push decoded into `text`, holding back a trailing high surrogate, and returns
   * what became visible. Costs the push's part, never the string so far.
   */
  commit(): string {
    let added = this.held === '' ? this.piece : this.held + this.piece;
    this.held = '';
    if (isHighSurrogate(this.pieceLastCode)) {
      this.held = added.slice(-1);
      added = added.slice(0, -1);
    }
    this.piece = '';
    if (added.length > 0) {
      this.tail = this.tail === '' ? added : this.tail + added;
      this.tailParts.push(added);
      if (this.tail.length >= blockLength) {
        const block = this.tailParts.join('');
        this.blocks = this.blocks === '' ? block : this.blocks + block;
        this.tail = '';
        this.tailParts = [];
      }
    }
    return added;
  }

  /** What is visible now. */
  get text(): string {
    if (this.tail === '') return this.blocks;
    return this.blocks === '' ? this.tail : this.blocks + this.tail;
  }

  /** The whole string, at its closing quote. */
  close(): string {
    const whole = this.text + this.held + this.piece;
    this.reset();
    return whole;
  }

  private append(decoded: string, lastCode: number): void {
    this.piece += decoded;
    this.pieceLastCode = lastCode;
  }

  private fail(index: number, message: string): number {
    this.failure = { index, message };
    return -1;
  }
}
