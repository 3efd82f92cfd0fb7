/** Random words drawn at once: `getRandomValues` costs about as much for 3 words as for 3,000. */
const pool = new Uint32Array(3 * 256);
let next = pool.length;

/**
 * A nonce naming one commit or append call: a client's resend of that call (ioredis sends again a
 * command whose reply it never read, after a reconnect) carries it, another writer's call does not,
 * so a store can take the resend as applied and still refuse the other writer, even when the two
 * wrote the same bytes. 96 bits from the platform's CSPRNG, drawn 256 nonces at a time.
 */
export function writerNonce(): string {
  if (next === pool.length) {
    globalThis.crypto.getRandomValues(pool);
    next = 0;
  }
  const nonce = `${(pool[next] as number).toString(36)}.${(pool[next + 1] as number).toString(36)}.${(pool[next + 2] as number).toString(36)}`;
  next += 3;
  return nonce;
}
