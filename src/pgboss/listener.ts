import type { Pool, PoolClient } from 'pg';

type Handler = (payload: string) => void;

/**
 * One connection that LISTENs on a few channels for its owner (a run event log's followers, a
 * worker's cancels and job wake-ups). A notification is delivered only to a connection listening
 * when it is sent: when the connection fails, it is made again on the next `listen`, and
 * `onReconnect` handlers run once it listens again, so their owners read what they may have missed.
 */
export class PostgresListener {
  readonly #pool: Pick<Pool, 'connect'>;
  readonly #handlers = new Map<string, Set<Handler>>();
  readonly #reconnected = new Set<() => void>();
  #client: Promise<PoolClient> | undefined;
  /** Names the connection attempt `#client` is: a failure of an older one leaves a newer one be. */
  #attempt: object | undefined;
  #lost = false;
  #closed = false;

  constructor(pool: Pick<Pool, 'connect'>) {
    this.#pool = pool;
  }

  /** Listens on `channel` (waits until the server confirmed it); returns a function that stops. */
  async listen(channel: string, handler: Handler): Promise<() => void> {
    let handlers = this.#handlers.get(channel);
    const fresh = handlers === undefined;
    if (!handlers) {
      handlers = new Set();
      this.#handlers.set(channel, handlers);
    }
    handlers.add(handler);
    const client = await this.#connected();
    if (fresh) await client.query(`LISTEN ${quote(channel)}`);
    return () => {
      handlers.delete(handler);
    };
  }

  /** Runs `handler` each time the connection is made again after it failed. */
  onReconnect(handler: () => void): () => void {
    this.#reconnected.add(handler);
    return () => this.#reconnected.delete(handler);
  }

  /** Makes the connection again now if it failed (a follower about to wait calls this). */
  async ensure(): Promise<void> {
    if (this.#handlers.size > 0) await this.#connected();
  }

  #connected(): Promise<PoolClient> {
    if (this.#closed) return Promise.reject(new Error('listener closed'));
    if (!this.#client) {
      const attempt = {};
      this.#attempt = attempt;
      this.#client = this.#connect(attempt);
    }
    return this.#client;
  }

  #forget(attempt: object): void {
    if (this.#attempt !== attempt) return;
    this.#attempt = undefined;
    this.#client = undefined;
  }

  async #connect(attempt: object): Promise<PoolClient> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#forget(attempt);
      throw error;
    }
    let gone = false;
    const lost = () => {
      // 'error' and 'end' both come for one failure; a later connection is not this one's to drop.
      if (gone) return;
      gone = true;
      this.#forget(attempt);
      this.#lost = true;
      try {
        client.release(true);
      } catch {
        // Released already (by close()).
      }
      if (!this.#closed) this.#retry(100);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      for (const handler of this.#handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    try {
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${quote(channel)}`);
    } catch (error) {
      lost();
      throw error;
    }
    if (this.#lost) {
      this.#lost = false;
      for (const handler of this.#reconnected) handler();
    }
    return client;
  }

  /** Connects again after `delayMs` (doubling to 5 s while the server is away), while anyone listens. */
  #retry(delayMs: number): void {
    const timer = setTimeout(() => {
      if (this.#closed || this.#handlers.size === 0) return;
      this.#connected().catch(() => this.#retry(Math.min(delayMs * 2, 5_000)));
    }, delayMs);
    (timer as { unref?: () => void }).unref?.();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#client;
    this.#client = undefined;
    this.#attempt = undefined;
    this.#handlers.clear();
    const client = await pending?.catch(() => undefined);
    if (client) {
      await client.query('UNLISTEN *').catch(() => {});
      try {
        client.release();
      } catch {
        // Its connection failed meanwhile and it was released then.
      }
    }
  }
}

function quote(channel: string): string {
  return `"${channel.replaceAll('"', '""')}"`;
}
