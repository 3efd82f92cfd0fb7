/**
 * A nonce naming one commit or append call: a client's resend of that call (ioredis sends again a
 * command whose reply it never read, after a reconnect) carries it, another writer's call does not,
 * so a store can take the resend as applied and still refuse the other writer, even when the two
 * wrote the same bytes.
 */
export function writerNonce(): string {
  const words = globalThis.crypto.getRandomValues(new Uint32Array(3));
  return `${words[0]?.toString(36)}.${words[1]?.toString(36)}.${words[2]?.toString(36)}`;
}
