/**
 * A JSON value written as a delta on the value it replaces, for the compact trace encoding. A delta
 * (a patch) applies to a base with the same keys in the same order, or to an array of the same
 * length; it is `[mask, ...children]`, where the mask has one digit per key, in order: `0` the
 * base's child is kept, `1` the next child is the value itself, `2` the next child is a patch on the
 * base's child. Trailing `0`s are left off.
 */

type JsonContainer = Record<string, unknown> | unknown[];

/** How deep patches nest; below this a changed value is written whole. */
export const maxPatchDepth = 8;
const maxDepth = maxPatchDepth;

/**
 * `current` as a patch on `base` when both are containers of one shape and the patch is the
 * shorter text, else undefined (write `current` whole). Both are JSON texts, and differ.
 */
export function jsonDeltaText(current: string, base: string): string | undefined {
  const open = current[0];
  if ((open !== '{' && open !== '[') || base[0] !== open) return undefined;
  const patch = deltaOf(JSON.parse(current) as JsonContainer, JSON.parse(base) as JsonContainer, maxDepth);
  return patch !== undefined && patch.length < current.length ? patch : undefined;
}

function deltaOf(current: JsonContainer, base: JsonContainer, depth: number): string | undefined {
  const keys = Object.keys(current);
  if (Array.isArray(current) !== Array.isArray(base) || !sameKeys(keys, Object.keys(base))) return undefined;
  let mask = '';
  let children = '';
  for (const key of keys) {
    const child = (current as Record<string, unknown>)[key];
    const baseChild = (base as Record<string, unknown>)[key];
    if (jsonEqual(child, baseChild)) {
      mask += '0';
      continue;
    }
    const whole = JSON.stringify(child);
    const patch =
      depth > 1 && isContainer(child) && isContainer(baseChild)
        ? deltaOf(child, baseChild, depth - 1)
        : undefined;
    if (patch !== undefined && patch.length < whole.length) {
      mask += '2';
      children += `,${patch}`;
    } else {
      mask += '1';
      children += `,${whole}`;
    }
  }
  return `[${JSON.stringify(trimMask(mask))}${children}]`;
}

/** The mask without its trailing `0`s (kept children need no digit at the end). */
export function trimMask(mask: string): string {
  let end = mask.length;
  while (end > 0 && mask[end - 1] === '0') end--;
  return mask.slice(0, end);
}

/**
 * The value a patch stands for. Nothing in it is shared with `base` (what it keeps is copied), so
 * events decoded from one base never alias each other; the values the patch holds are taken as they
 * are. Throws a plain `Error` naming what does not fit; the caller labels it with the line.
 */
export function applyJsonDelta(patch: unknown, base: unknown, depth = maxDepth): unknown {
  if (!Array.isArray(patch) || typeof patch[0] !== 'string' || !/^[012]*$/.test(patch[0]))
    throw new Error('a patch is [mask, ...children] with a mask of 0, 1 and 2');
  if (!isContainer(base)) throw new Error('a patch needs an object or array to apply to');
  if (depth < 1) throw new Error('patches nest too deep');
  const mask = patch[0];
  const keys = Object.keys(base);
  if (mask.length > keys.length)
    throw new Error(`the patch's mask has ${mask.length} digits for ${keys.length} values`);
  const changed = mask.replaceAll('0', '').length;
  if (patch.length - 1 !== changed)
    throw new Error(`the patch's mask names ${changed} changed values, it holds ${patch.length - 1}`);
  const result: JsonContainer = Array.isArray(base) ? [] : {};
  let next = 1;
  keys.forEach((key, index) => {
    const baseChild = (base as Record<string, unknown>)[key];
    const digit = mask[index];
    const value =
      digit === '1'
        ? patch[next++]
        : digit === '2'
          ? applyJsonDelta(patch[next++], baseChild, depth - 1)
          : copyJson(baseChild);
    setOwn(result, key, value);
  });
  return result;
}

/** A deep copy of parsed JSON. */
function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, copyJson((value as Record<string, unknown>)[key]));
  return copy;
}

/**
 * Sets an own property, `__proto__` included: JSON may hold that key, and assigning it would set the
 * prototype instead.
 */
export function setOwn(target: object, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}

/** Equal as JSON texts are: same keys in the same order, same values. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (!sameKeys(keys, Object.keys(b))) return false;
  for (const key of keys)
    if (!jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  return true;
}

export function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function isContainer(value: unknown): value is JsonContainer {
  return typeof value === 'object' && value !== null;
}
