import type { Redis } from 'ioredis';
import type { DeadLetter, DeadLetterStore } from '../resilience/dead-letter.js';

const addScript = `
local existing = redis.call('HGET', KEYS[1], ARGV[1])
local letter = cjson.decode(ARGV[2])
if existing then
  letter.firstFailedAtMs = cjson.decode(existing).firstFailedAtMs
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(letter))
redis.call('ZADD', KEYS[2], letter.lastFailedAtMs, ARGV[1])
return 1
`;

/** Dead letters in Redis: a hash of letters and a sorted index by last failure, shared by a fleet. */
export class RedisDeadLetterStore implements DeadLetterStore {
  readonly #redis: Redis;
  readonly #letters: string;
  readonly #index: string;

  constructor(options: { redis: Redis; key: string }) {
    this.#redis = options.redis;
    this.#letters = `${options.key}:letters`;
    this.#index = `${options.key}:index`;
  }

  async add(letter: DeadLetter): Promise<void> {
    await this.#redis.eval(addScript, 2, this.#letters, this.#index, letter.id, JSON.stringify(letter));
  }

  async list(options: { limit?: number } = {}): Promise<DeadLetter[]> {
    const ids = await this.#redis.zrange(this.#index, 0, (options.limit ?? 0) - 1);
    if (ids.length === 0) return [];
    const raw = await this.#redis.hmget(this.#letters, ...ids);
    return raw.filter((text): text is string => text !== null).map((text) => JSON.parse(text) as DeadLetter);
  }

  async get(id: string): Promise<DeadLetter | undefined> {
    const text = await this.#redis.hget(this.#letters, id);
    return text === null ? undefined : (JSON.parse(text) as DeadLetter);
  }

  async release(id: string): Promise<DeadLetter | undefined> {
    const [[, text]] = (await this.#redis
      .multi()
      .hget(this.#letters, id)
      .hdel(this.#letters, id)
      .zrem(this.#index, id)
      .exec()) as [[unknown, string | null]];
    return text === null ? undefined : (JSON.parse(text) as DeadLetter);
  }

  async purge(): Promise<number> {
    const count = await this.#redis.hlen(this.#letters);
    await this.#redis.del(this.#letters, this.#index);
    return count;
  }

  count(): Promise<number> {
    return this.#redis.hlen(this.#letters);
  }
}
