import { addressKey } from './trusted-text.js';

/**
 * The kind of a value, so that a trusted value vouches only for an argument of the same kind: a
 * transaction id of 90817 is not a trusted amount of 90817, and a trusted name is not a trusted
 * URL. The kind is read from the value's shape and the name of its field.
 */
export type ValueKind = 'email' | 'url' | 'iban' | 'amount' | 'id' | 'text' | 'flag';

const idField =
  /(?:^|[_\-.])(?:id|ids|uuid|key|code|number|no|ref|reference)$|[a-z](?:Id|ID|Ids|Key|Code|Number|Ref)$/;
const amountField =
  /amount|price|total|sum|balance|cost|fee|usd|eur|gbp|quantity|qty|count|limit|percent|rate|value$/i;
const iban = /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/;
const url = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
const compactId = /^(?=\S*\d)[\p{L}\p{N}][\p{L}\p{N}_\-.:/#]*$/u;

/** The last field name of a dotted path that is not an array index. */
export function fieldNameOf(path: string): string {
  return lastFieldOf(path.split('.'));
}

/** The same, from a path's segments. */
export function lastFieldOf(segments: readonly string[]): string {
  for (let index = segments.length - 1; index >= 0; index--) {
    const segment = segments[index] as string;
    if (!/^\d+$/.test(segment) && segment !== '*' && segment !== '(input)') return segment;
  }
  return '';
}

/** The kind of `value` found in (or bound for) the field named `field` (`''` when unknown). */
export function kindOf(value: unknown, field: string): ValueKind {
  if (typeof value === 'boolean' || value === null || value === undefined) return 'flag';
  if (typeof value === 'number') return idField.test(field) ? 'id' : 'amount';
  const text = String(value);
  if (addressKey(text) !== undefined) return 'email';
  if (url.test(text)) return 'url';
  if (iban.test(text)) return 'iban';
  if (/^\d+(?:\.\d+)?$/.test(text)) return amountField.test(field) && !idField.test(field) ? 'amount' : 'id';
  if (compactId.test(text)) return 'id';
  return 'text';
}
