/**
 * Significant digits kept. Every halfway point between two adjacent doubles (subnormals included)
 * has at most 767 significant digits, so the first 800 plus one "sticky" digit standing for any
 * nonzero digit dropped after them round exactly as the whole number does.
 */
const keptDigits = 800;
/** Exponent digits saturate here: far past where every value is 0 or Infinity, and still exact. */
const exponentCap = 1e10;
/**
 * With the value written 0.d₁d₂… × 10^E (d₁ ≠ 0), E > 309 is Infinity and E < -324 is 0, so E is
 * clamped to ±400: a long integer part stops changing the conversion once it is Infinity.
 */
const exponentClamp = 400;
const digitRun = /[0-9]*/y;

/**
 * JSON's number grammar, one character at a time. States: 8 before the first character, 0 after
 * `-`, 1 after a leading `0`, 2 in integer digits, 3 after `.`, 4 in fraction digits, 5 after `e`,
 * 6 after the exponent's sign, 7 in exponent digits; -1 is an error.
 */
function numberStep(state: number, code: number): number {
  const digit = code >= 0x30 && code <= 0x39;
  switch (state) {
    case 8:
      return code === 0x2d ? 0 : code === 0x30 ? 1 : digit ? 2 : -1;
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

/**
 * A JSON number read as it streams, with `Number(text)`'s value available at any point for the
 * cost of at most 800 digits, and recomputed only when the result can have changed. Calling
 * `Number()` on the whole text after every fragment made a long number quadratic; this keeps the
 * significant digits (bounded), a sticky digit and the decimal exponent instead.
 */
export class StreamedNumber {
  private state = 8;
  private negative = false;
  /** The first `keptDigits` significant digits. */
  private digits = '';
  private digitCount = 0;
  private sticky = false;
  /** E in 0.digits × 10^E, before the explicit exponent. */
  private pointExponent = 0;
  private exponentNegative = false;
  private exponent = 0;
  // What `mark()` saved: the number as it stood at the end of the last push that left it whole.
  private marked = false;
  private markedDigitCount = 0;
  private markedSticky = false;
  private markedExponent = 0;
  // The last conversion and what it depended on.
  private cachedDigitCount = -1;
  private cachedSticky = false;
  private cachedExponent = 0;
  private cachedValue = 0;

  /** Starts a new number (before its first character). */
  reset(): void {
    this.state = 8;
    this.negative = false;
    this.digits = '';
    this.digitCount = 0;
    this.sticky = false;
    this.pointExponent = 0;
    this.exponentNegative = false;
    this.exponent = 0;
    this.marked = false;
    this.cachedDigitCount = -1;
  }

  /** Reads one character; false when it cannot continue a JSON number. */
  step(code: number): boolean {
    const next = numberStep(this.state, code);
    switch (next) {
      case -1:
        return false;
      case 0:
        this.negative = true;
        break;
      case 2:
        // Integer digits after a nonzero first one: all significant.
        this.pointExponent++;
        this.keep(code);
        break;
      case 4:
        if (this.digitCount === 0 && code === 0x30) this.pointExponent--;
        else this.keep(code);
        break;
      case 6:
        this.exponentNegative = code === 0x2d;
        break;
      case 7: {
        const exponent = this.exponent * 10 + (code - 0x30);
        this.exponent = Math.min(exponent, exponentCap);
        break;
      }
    }
    this.state = next;
    return true;
  }

  /**
   * Reads as many characters of `text` from `from` as continue the number, and returns where it
   * stopped: the end of `text`, or the first character that cannot continue it. Past the kept
   * digits, a run of digits changes only the exponent and the sticky digit, so it is skipped
   * natively (about 4× faster on a long number than a step per digit).
   */
  read(text: string, from: number): number {
    const length = text.length;
    let i = from;
    while (i < length) {
      const state = this.state;
      if (
        ((state === 2 || state === 4) && this.digitCount >= keptDigits) ||
        (state === 7 && this.exponent >= exponentCap)
      ) {
        digitRun.lastIndex = i;
        digitRun.test(text);
        const end = digitRun.lastIndex;
        if (end > i) {
          if (state === 2) this.pointExponent += end - i;
          if (state !== 7 && !this.sticky)
            for (let k = i; k < end; k++)
              if (text.charCodeAt(k) !== 0x30) {
                this.sticky = true;
                break;
              }
          i = end;
          continue;
        }
      }
      if (!this.step(text.charCodeAt(i))) return i;
      i++;
    }
    return i;
  }

  private keep(code: number): void {
    if (this.digitCount < keptDigits) {
      this.digits += String.fromCharCode(code);
      this.digitCount++;
    } else if (code !== 0x30) this.sticky = true;
  }

  /** Whether the text so far is a whole JSON number (`1`, `-0`, `2.5`, `1e3`; not `-`, `1.`, `1e`). */
  get complete(): boolean {
    const state = this.state;
    return state === 1 || state === 2 || state === 4 || state === 7;
  }

  /**
   * Saves the number as it stands, when it is whole, for `value()`: the display shows a number as
   * it was at the end of the last push that left it whole, and reading may come later, after the
   * text has gone on to `1e` or `2.`. Constant time.
   */
  mark(): boolean {
    if (!this.complete) return false;
    let exponent = this.pointExponent + (this.exponentNegative ? -this.exponent : this.exponent);
    if (exponent > exponentClamp) exponent = exponentClamp;
    else if (exponent < -exponentClamp) exponent = -exponentClamp;
    this.marked = true;
    this.markedDigitCount = this.digitCount;
    this.markedSticky = this.sticky;
    this.markedExponent = exponent;
    return true;
  }

  /** Whether `mark()` has saved a whole number since `reset()`. */
  get hasMark(): boolean {
    return this.marked;
  }

  /**
   * `Number(text)` for the text as it was at the last `mark()`, exactly. Converts at most 800
   * digits, and only when the digits kept, the sticky digit or the clamped exponent changed.
   */
  value(): number {
    const count = this.markedDigitCount;
    if (count === 0) return this.negative ? -0 : 0;
    if (
      this.cachedDigitCount !== count ||
      this.cachedSticky !== this.markedSticky ||
      this.cachedExponent !== this.markedExponent
    ) {
      this.cachedDigitCount = count;
      this.cachedSticky = this.markedSticky;
      this.cachedExponent = this.markedExponent;
      const digits = count === this.digitCount ? this.digits : this.digits.slice(0, count);
      this.cachedValue = Number(
        `${this.negative ? '-' : ''}0.${digits}${this.markedSticky ? '1' : ''}e${this.markedExponent}`,
      );
    }
    return this.cachedValue;
  }
}
