import type { Actor } from '../tools/define-tool.js';

/**
 * Maps a bearer token to the actor it stands for, or `undefined` for a token nobody issued. The
 * actor is the only source of identity the service trusts: never a field of a request body.
 */
export type Authenticate = (token: string) => Actor | undefined | Promise<Actor | undefined>;

/** RFC 6750's `b64token`: what may follow `Bearer `. */
const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const tokenPattern = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The token of an `Authorization: Bearer …` header, or `undefined` when there is none or it is malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 4_096) return undefined;
  return bearerPattern.exec(header)?.[1];
}

/** Compares without stopping at the first difference, so a guess learns nothing from the time taken. */
function sameText(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let index = 0; index < length; index += 1)
    difference |= (a.charCodeAt(index) || 0) ^ (b.charCodeAt(index) || 0);
  return difference === 0;
}

/**
 * A fixed table of tokens, for the CLI and for tests: each token maps to an actor (or an actor id).
 * Every entry is compared on each lookup, in time that does not depend on where a guess differs.
 *
 * @example
 * const authenticate = staticTokens({ 'token-ana': 'ana', 'token-ben': { id: 'ben', scopes: ['refunds'] } });
 */
export function staticTokens(tokens: Readonly<Record<string, Actor | string>>): Authenticate {
  const entries = Object.entries(tokens).map(([token, actor]): [string, Actor] => {
    if (token.length < 8) throw new TypeError('staticTokens: every token needs at least 8 characters');
    // A token no Authorization header can carry would only ever be refused: say so at start-up.
    if (!tokenPattern.test(token))
      throw new TypeError('staticTokens: a token may hold only A-Z a-z 0-9 - . _ ~ + / and trailing =');
    return [token, typeof actor === 'string' ? { id: actor } : actor];
  });
  return (token) => {
    let found: Actor | undefined;
    for (const [candidate, actor] of entries) if (sameText(candidate, token)) found = actor;
    return found;
  };
}

/**
 * Reads a token table: JSON (`{ "token": "actor-id" }` or `{ "token": { "id": …, "scopes": [...] } }`)
 * or lines of `token actor-id` (`#` starts a comment). Throws a `TypeError` naming what is wrong.
 */
export function parseTokenTable(text: string): Record<string, Actor | string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const parsed = JSON.parse(trimmed) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new TypeError('a token table must be a JSON object');
    const table: Record<string, Actor | string> = {};
    for (const [token, actor] of Object.entries(parsed)) {
      // JSON.parse keeps the last of two equal keys: a token listed twice would silently change hands.
      const key = new RegExp(`${JSON.stringify(token).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\s*:`, 'g');
      if ((trimmed.match(key)?.length ?? 0) > 1) throw new TypeError('token table: a token is listed twice');
      if (typeof actor === 'string') table[token] = actor;
      else if (typeof actor === 'object' && actor !== null && typeof (actor as Actor).id === 'string')
        table[token] = actor as Actor;
      else throw new TypeError(`token table: the entry of a token is neither an actor id nor { id }`);
    }
    return table;
  }
  const table: Record<string, string> = {};
  for (const [index, raw] of trimmed.split(/\r?\n/).entries()) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const [token, actorId, ...rest] = line.split(/\s+/);
    if (!token || !actorId || rest.length > 0)
      throw new TypeError(`token table line ${index + 1}: expected "token actor-id"`);
    if (Object.hasOwn(table, token))
      throw new TypeError(`token table line ${index + 1}: the token is listed twice`);
    table[token] = actorId;
  }
  return table;
}
