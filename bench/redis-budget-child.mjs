// One of the processes hammering the shared Redis budget for bench/resilience.ts. Plain JS against
// the built package, so start-up costs no transpiling; it waits for "go" so all 12 run together.
import { Redis } from 'ioredis';
import { RedisRetryBudget } from '../dist/redis/index.js';

const [redisUrl, key, optionsJson, durationMs, index] = process.argv.slice(2);
// Auto-pipelining batches the decisions of one tick into one round trip, as a busy worker would.
const redis = new Redis(redisUrl, { enableAutoPipelining: true });
const budget = new RedisRetryBudget({ redis, key, ...JSON.parse(optionsJson) });
await budget.stats();
process.send('ready');
await new Promise((resolve) => process.once('message', resolve));
const until = Date.now() + Number(durationMs);
let decisions = 0;
await Promise.all(
  Array.from({ length: 16 }, async (_, lane) => {
    let i = lane + Number(index);
    while (Date.now() < until) {
      if (i++ % 3 === 0) await budget.deposit();
      else await budget.withdraw('transient');
      decisions++;
    }
  }),
);
process.send(decisions);
redis.disconnect();
