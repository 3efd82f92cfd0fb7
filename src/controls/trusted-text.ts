/**
 * The user's and the system prompt's own words, indexed by whole token, so that a value is
 * trusted only when it is a whole token (or a run of whole tokens) of that text.
 *
 * - Text is read in NFKC: fullwidth letters the user typed are the ASCII the model writes. A value
 *   NFKC would change (a Kelvin sign for a K) never matches: the tool would receive a different
 *   string than the one the user wrote.
 * - No case folding: `Kate` and `kate` are different ids, and Unicode case mapping makes
 *   look-alikes equal (`'\u212A'.toLowerCase() === 'k'`). The one exception is an e-mail address's
 *   domain, compared in ASCII lowercase: DNS names are case-insensitive (RFC 4343), so every
 *   spelling reaches the same host. The local part may be case-sensitive (RFC 5321) and is exact.
 * - A token is a whitespace-delimited chunk (split at `,` and `;` unless between digits), less the
 *   punctuation around it. A match must start and end at a token's edge, so neither `nchen.de` in
 *   `münchen.de` nor `long@google.com` in `jane.long@google.com` is a token.
 * - Numbers: a number is trusted when a whole token is that number (`$1,250.50` vouches for
 *   1250.5). A list marker at the start of a line (`1.`, `2)`) is not a token at all, and the parts
 *   of a date (`March 5, 2024`, `2024-04-01`) are not tokens on their own: only the whole date is.
 *   A number the user mentioned for another purpose ("never more than 5000") is still a token:
 *   telling mention from intent is the plan's job, not the matcher's.
 */
export class TrustedText {
  #text = '';
  /** Offsets where a match may start, and where one may end. */
  readonly #starts = new Set<number>();
  readonly #ends = new Set<number>();
  readonly #numbers = new Set<number>();
  /** E-mail addresses, keyed with the domain in ASCII lowercase. */
  readonly #addresses = new Set<string>();

  note(raw: string): void {
    const offset = this.#text.length + 1;
    const text = raw.normalize('NFKC');
    this.#text += `\n${text}`;
    const dates = dateSpans(text);
    for (const token of tokensOf(text)) {
      const date = dates.find((span) => token.start >= span.start && token.end <= span.end);
      if (date) {
        // Inside a date only the date's own edges are edges.
        if (token.start === date.start) this.#starts.add(offset + token.outerStart).add(offset + token.start);
        if (token.end === date.end) this.#ends.add(offset + token.end).add(offset + token.outerEnd);
        continue;
      }
      for (let at = token.outerStart; at <= token.start; at++) this.#starts.add(offset + at);
      for (let at = token.end; at <= token.outerEnd; at++) this.#ends.add(offset + at);
      const core = text.slice(token.start, token.end);
      const number = numberOf(core);
      if (number !== undefined) this.#numbers.add(number);
      const address = addressKey(core);
      if (address !== undefined) this.#addresses.add(address);
    }
  }

  /**
   * True when `value` is a whole token, or a run of whole tokens, of the text. `normalized`: the
   * caller already checked that NFKC leaves `value` unchanged.
   */
  has(value: string, normalized = false): boolean {
    if (this.#text === '') return false;
    if (value.trim() === '' || (!normalized && value.normalize('NFKC') !== value)) return false;
    if (this.#addresses.size > 0) {
      const address = addressKey(value);
      if (address !== undefined && this.#addresses.has(address)) return true;
    }
    for (let at = this.#text.indexOf(value); at >= 0; at = this.#text.indexOf(value, at + 1)) {
      if (this.#starts.has(at) && this.#ends.has(at + value.length)) return true;
    }
    return false;
  }

  /** True when a whole token of the text is this number. */
  hasNumber(value: number): boolean {
    return this.#numbers.has(value);
  }
}

interface Token {
  /** The chunk, with the punctuation around it. */
  outerStart: number;
  outerEnd: number;
  /** The token itself: from its first letter or digit to its last. */
  start: number;
  end: number;
}

/** A run of characters between whitespace, `,` and `;`, except a `,` or `;` between digits (`1,250`). */
const chunkPattern = /(?:[^\s,;]|(?<=\d)[,;](?=\d))+/gu;
const edgeCharacter = /[\p{L}\p{N}\p{M}]/u;
const listMarker = /^\(?\d{1,3}[.)]$/;

function tokensOf(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(chunkPattern)) {
    const outerStart = match.index;
    const outerEnd = outerStart + match[0].length;
    if (listMarker.test(match[0]) && startsLine(text, outerStart)) continue;
    let start = outerStart;
    let end = outerEnd;
    while (start < end && !edgeCharacter.test(text[start] as string)) start++;
    while (end > start && !edgeCharacter.test(text[end - 1] as string)) end--;
    if (start < end) tokens.push({ outerStart, outerEnd, start, end });
  }
  return tokens;
}

/** Whether only spaces stand between `at` and the start of its line. */
function startsLine(text: string, at: number): boolean {
  let before = at - 1;
  while (before >= 0 && text[before] !== '\n' && /\s/.test(text[before] as string)) before--;
  return before < 0 || text[before] === '\n';
}

const month =
  '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\\.?';
const day = '\\d{1,2}(?:st|nd|rd|th)?';
const datePattern = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:${month}\\s+${day}(?:,?\\s+\\d{4})?|${day}\\s+${month}(?:,?\\s+\\d{4})?|${month},?\\s+\\d{4})(?![\\p{L}\\p{N}])`,
  'giu',
);

/** Dates written with a month's name: their numbers are a day and a year, not amounts. */
function dateSpans(text: string): { start: number; end: number }[] {
  return [...text.matchAll(datePattern)].map((match) => ({
    start: match.index,
    end: match.index + match[0].length,
  }));
}

const plainNumber = /^\d+(?:\.\d+)?$/;
const groupedNumber = /^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/;

function numberOf(token: string): number | undefined {
  if (plainNumber.test(token)) return Number(token);
  if (groupedNumber.test(token)) return Number(token.replaceAll(',', ''));
  return undefined;
}

const addressPattern = /^([^\s@"<>(),;:]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$/;

/** `local@domain` with the domain in ASCII lowercase, or undefined for anything else. */
export function addressKey(value: string): string | undefined {
  const match = addressPattern.exec(value);
  if (!match) return undefined;
  return `${match[1]}@${(match[2] as string).toLowerCase()}`;
}
