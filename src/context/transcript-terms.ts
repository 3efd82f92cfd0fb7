import { asciiBytes } from './ascii-bytes.js';

/**
 * The combining marks FTS5 folds away inside a token (`sqlite3Fts5UnicodeIsdiacritic`: most of
 * U+0300–U+0331). Any other mark, and one of these before any letter, separates terms.
 */
const diacritics =
  '\\u0300-\\u0304\\u0306-\\u030c\\u030f\\u0311\\u031b\\u0323-\\u0328\\u032d\\u032e\\u0330\\u0331';
/**
 * A letter, a number, a private-use or an unassigned code point starts a term (FTS5's default
 * categories, and its tables read an unassigned code point as a token character), except
 * U+FFFE/U+FFFF, which SQLite decodes as U+FFFD.
 */
const termCharacter = '(?![\\uFFFE\\uFFFF])[\\p{L}\\p{N}\\p{Co}\\p{Cn}]';
/** The term starting at `lastIndex`, if one does (sticky). */
const termAt = new RegExp(`${termCharacter}(?:${termCharacter}|[${diacritics}])*`, 'uy');
/**
 * ASCII's term characters, its letters and digits, each as it folds (lower case), 0 for the rest:
 * most text is ASCII, read here without a regex.
 */
const asciiFold = new Uint8Array(128);
for (const character of '0123456789abcdefghijklmnopqrstuvwxyz')
  asciiFold[character.charCodeAt(0)] = character.charCodeAt(0);
for (const character of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')
  asciiFold[character.charCodeAt(0)] = character.charCodeAt(0) + 32;
const diacritic = new RegExp(`^[${diacritics}]$`, 'u');
const termOrDiacritic = new RegExp(`^(?:${termCharacter}|[${diacritics}])$`, 'u');
/**
 * BMP code units beyond ASCII known to separate terms (1), known not to (2), or not yet looked at
 * (0): text beyond ASCII is mostly punctuation (→ … “ ” — ’), and a separator read from here skips
 * the regex. A separator is neither a term character nor a diacritic, so it also ends an ASCII run.
 */
const unicodeSeparator = new Uint8Array(0x10000);

function isUnicodeSeparator(code: number): boolean {
  // Surrogates are read as pairs, by the regex.
  if (code >= 0xd800 && code <= 0xdfff) return false;
  let known = unicodeSeparator[code]!;
  if (known === 0) {
    known = termOrDiacritic.test(String.fromCharCode(code)) ? 2 : 1;
    unicodeSeparator[code] = known;
  }
  return known === 1;
}
const asciiOnly = /^[\x00-\x7f]*$/;
const latinLetterWithMarks = /^[a-z]\p{M}+$/u;
/** Characters whose fold stays as it is in FTS5's tables, where the rule below would change them. */
const foldedAsIs = new Set(['ı', 'ǡ']);

/** Fold results by character: text is mostly ASCII, and what is not repeats a few characters. */
const folds = new Map<string, string>();
const maxCachedFolds = 4_096;

/**
 * Where {@link readTerms} delivers each term as it occurs: an ASCII one as its place in the text
 * and its {@link termHash} (so a reader that already knows the term allocates nothing), any other
 * one folded.
 */
export interface TermSink {
  /**
   * The term `text.slice(start, end).toLowerCase()` (ASCII letters and digits only), hashed; with
   * `bytes` when the text was read from them (all ASCII: `bytes[i]` is `text.charCodeAt(i)`).
   */
  asciiTerm(text: string, start: number, end: number, hash: number, bytes: Uint8Array | undefined): void;
  /** A term with a character beyond ASCII, folded as FTS5 folds it. */
  term(term: string): void;
}

const hashBasis = 0x811c9dc5;
const hashPrime = 0x01000193;

/** FNV-1a of a term's UTF-16 code units: what {@link readTerms} hands an ASCII term with. */
export function termHash(term: string): number {
  let hash = hashBasis;
  for (let i = 0; i < term.length; i++) hash = Math.imul(hash ^ term.charCodeAt(i), hashPrime);
  return hash;
}

/**
 * The terms of `text`, as SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer reads it, so
 * the memory and the SQLite indexes match the same entries: a term is a run of letters and numbers
 * (anything else separates, digits stay: `INC-4471` is `inc`, `4471`), case-folded, with the
 * diacritics taken off Latin letters (`Café` is `cafe`; Greek and Cyrillic keep theirs, as FTS5
 * does). Terms repeat as often as they occur.
 *
 * Checked against SQLite 3.53 on every code point: the two agree except on about 4,700 code points
 * Unicode assigned or reclassified after version 6 (FTS5's tables are older than the runtime's):
 * letters and signs of newer scripts, emoji added since 2013 (a separator here, a letter to FTS5).
 *
 * @example
 * ```ts
 * transcriptTerms('INC-4471: Café timeout'); // ['inc', '4471', 'cafe', 'timeout']
 * ```
 */
export function transcriptTerms(text: string): string[] {
  const terms: string[] = [];
  readTerms(text, {
    asciiTerm: (from, start, end) => terms.push(from.slice(start, end).toLowerCase()),
    term: (term) => terms.push(term),
  });
  return terms;
}

/** The terms of `text` as {@link transcriptTerms} reads them, each handed to `sink` in order. */
export function readTerms(text: string, sink: TermSink): void {
  const length = text.length;
  if (length >= minByteRead && length <= maxByteRead && readAsciiTerms(text, sink)) return;
  let index = 0;
  while (index < length) {
    let code = text.charCodeAt(index);
    if (code >= 128) {
      index = isUnicodeSeparator(code) ? index + 1 : readUnicodeTerm(text, index, sink);
      continue;
    }
    let folded = asciiFold[code]!;
    if (folded === 0) {
      index++;
      continue;
    }
    // The run's hash as it is read: a sink that knows the term need not look at it again.
    let hash = hashBasis;
    let end = index;
    do {
      hash = Math.imul(hash ^ folded, hashPrime);
      if (++end === length) break;
      code = text.charCodeAt(end);
      folded = code < 128 ? asciiFold[code]! : 0;
    } while (folded !== 0);
    // An ASCII run that stops at a non-ASCII character may go on (`café`): read it again whole.
    if (code >= 128 && end < length && !isUnicodeSeparator(code)) {
      index = readUnicodeTerm(text, index, sink);
      continue;
    }
    sink.asciiTerm(text, index, end, hash, undefined);
    index = end;
  }
}

/** Texts this long and no longer are read from their bytes when they are all ASCII (a tool result's head is). */
const minByteRead = 256;
const maxByteRead = 65_536;

/**
 * {@link readTerms} for a text that is all ASCII, from its bytes ({@link asciiBytes}). False,
 * having handed on nothing, when the text holds anything beyond ASCII.
 */
function readAsciiTerms(text: string, sink: TermSink): boolean {
  const length = text.length;
  const bytes = asciiBytes(text);
  if (!bytes) return false;
  let index = 0;
  while (index < length) {
    let folded = asciiFold[bytes[index]!]!;
    if (folded === 0) {
      index++;
      continue;
    }
    let hash = hashBasis;
    let end = index;
    do {
      hash = Math.imul(hash ^ folded, hashPrime);
      if (++end === length) break;
      folded = asciiFold[bytes[end]!]!;
    } while (folded !== 0);
    sink.asciiTerm(text, index, end, hash, bytes);
    index = end;
  }
  return true;
}

/** Hands on the term that starts at `start`, if one does; returns where reading goes on. */
function readUnicodeTerm(text: string, start: number, sink: TermSink): number {
  termAt.lastIndex = start;
  const match = termAt.exec(text);
  if (match === null) return start + (text.codePointAt(start)! > 0xffff ? 2 : 1);
  const term = match[0];
  if (asciiOnly.test(term)) {
    const folded = term.toLowerCase();
    sink.asciiTerm(text, start, start + term.length, termHash(folded), undefined);
  } else sink.term(foldTerm(term));
  return start + term.length;
}

function foldTerm(term: string): string {
  let folded = '';
  for (const character of term) {
    let fold = folds.get(character);
    if (fold === undefined) {
      fold = foldCharacter(character);
      if (folds.size < maxCachedFolds) folds.set(character, fold);
    }
    folded += fold;
  }
  return folded;
}

function foldCharacter(character: string): string {
  if (diacritic.test(character)) return '';
  const upper = character.toUpperCase();
  // Simple case folding, as FTS5's tables do it: through the upper case when that is one
  // character (µ → μ, ſ → s, ς → σ), never through an expansion (ß → SS) or Turkish ı → I.
  const lower = [...upper].length === 1 && character !== 'ı' ? upper.toLowerCase() : character.toLowerCase();
  let folded = '';
  for (const part of lower) {
    if (diacritic.test(part)) continue;
    if (foldedAsIs.has(part)) {
      folded += part;
      continue;
    }
    const decomposed = part.normalize('NFD');
    folded += decomposed.length > 1 && latinLetterWithMarks.test(decomposed) ? decomposed[0] : part;
  }
  return folded;
}
