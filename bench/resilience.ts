/**
 * Resilience figures: in-process retry-budget decisions per second, `retry()` overhead around a
 * call that succeeds first time (against the bare call and cockatiel's retry policy), and the
 * Redis-shared budget's aggregate decisions per second from 12 processes with zero over-grant.
 *
 *   npm run bench:resilience   (--json FILE writes the figures)
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { retry as cockatielRetry, ExponentialBackoff, handleAll } from 'cockatiel';
import { Redis } from 'ioredis';
import { RedisRetryBudget } from '../dist/redis/index.js';
import { budgetViolations, retry, TokenBucketRetryBudget } from '../dist/resilience/index.js';
import { benchMeta, median } from './stats.js';

const rounds = 5;
/** What `--json FILE` writes. */
const collected: Record<string, number> = {};

// 1. In-process budget decisions.
{
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const budget = new TokenBucketRetryBudget({ ratio: 0.5, minPerSecond: 10, capacity: 100 });
    const decisions = 2_000_000;
    const started = performance.now();
    for (let i = 0; i < decisions; i++) {
      if (i % 2 === 0) budget.deposit();
      else budget.withdraw('transient');
    }
    samples.push(decisions / ((performance.now() - started) / 1_000));
  }
  const rate = median(samples);
  collected['budgetDecisionsPerSecond'] = rate;
  console.log(
    `\nin-process budget decisions: ${(rate / 1e6).toFixed(1)} M/s (median of ${rounds}; goal ≥ 5 M/s: ${rate >= 5e6 ? 'met' : 'NOT met'})`,
  );
}

// 2. retry() overhead on a first-try success.
{
  const fn = async () => 42;
  const calls = 200_000;
  const policy = cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() });
  const time = async (body: () => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await body();
    return ((performance.now() - started) * 1_000) / calls;
  };
  const bare: number[] = [];
  const reins: number[] = [];
  const reinsBudget: number[] = [];
  const cockatiel: number[] = [];
  const budget = new TokenBucketRetryBudget();
  for (let round = 0; round < rounds; round++) {
    bare.push(await time(fn));
    reins.push(await time(() => retry(fn)));
    reinsBudget.push(await time(() => retry(fn, { budget })));
    cockatiel.push(await time(() => policy.execute(fn)));
  }
  const b = median(bare);
  const r = median(reins);
  console.log(
    `\nretry() around a first-try success (median of ${rounds} × ${calls.toLocaleString('en-US')} calls)`,
  );
  collected['retryOverheadUs'] = r - b;
  collected['retryWithBudgetOverheadUs'] = median(reinsBudget) - b;
  collected['cockatielOverheadUs'] = median(cockatiel) - b;
  console.log(`  bare call                 ${b.toFixed(3)} µs`);
  console.log(
    `  reins retry()             ${r.toFixed(3)} µs  overhead ${(r - b).toFixed(3)} µs (goal ≤ 2 µs: ${r - b <= 2 ? 'met' : 'NOT met'})`,
  );
  console.log(
    `  reins retry() + budget    ${median(reinsBudget).toFixed(3)} µs  overhead ${(median(reinsBudget) - b).toFixed(3)} µs`,
  );
  console.log(
    `  cockatiel retry policy    ${median(cockatiel).toFixed(3)} µs  overhead ${(median(cockatiel) - b).toFixed(3)} µs  (${((median(cockatiel) - b) / (r - b)).toFixed(1)}× reins)`,
  );
}

// 3. The Redis-shared budget from 12 processes.
{
  const redisUrl = process.env['REINS_BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(redisUrl);
  const key = `reins-bench:budget:${Date.now()}`;
  const options = { ratio: 0.1, minPerSecond: 10, capacity: 100 };
  const processes = 12;
  const perProcessMs = 3_000;
  const child = fileURLToPath(new URL('./redis-budget-child.mjs', import.meta.url));
  const procs = Array.from({ length: processes }, (_, index) =>
    fork(child, [redisUrl, key, JSON.stringify(options), String(perProcessMs), String(index)]),
  );
  await Promise.all(procs.map((proc) => new Promise((resolve) => proc.once('message', resolve))));
  const started = Date.now();
  const results = procs.map(
    (proc) => new Promise<number>((resolve) => proc.once('message', (message) => resolve(Number(message)))),
  );
  for (const proc of procs) proc.send('go');
  const counts = await Promise.all(results);
  const elapsed = (Date.now() - started) / 1_000;
  const decisions = counts.reduce((sum, count) => sum + count, 0);
  const stats = await new RedisRetryBudget({ redis, key, ...options }).stats();
  const violations = budgetViolations(stats, options, Date.now());
  console.log(
    `\nRedis-shared budget, ${processes} processes: ${Math.round(decisions / (perProcessMs / 1_000)).toLocaleString('en-US')} decisions/s aggregate over ${(perProcessMs / 1_000).toFixed(0)} s, all running together (${elapsed.toFixed(1)} s wall); granted ${stats.granted}, successes ${stats.successes}, over-grant ${violations} (goal ≥ 20,000/s with 0 over-grant: ${decisions / (perProcessMs / 1_000) >= 20_000 && violations === 0 ? 'met' : 'NOT met'})`,
  );
  collected['redisDecisionsPerSecond'] = decisions / (perProcessMs / 1_000);
  collected['redisOverGrant'] = violations;
  await redis.del(key);
  redis.disconnect();
}

const jsonIndex = process.argv.indexOf('--json');
if (jsonIndex >= 0 && process.argv[jsonIndex + 1])
  writeFileSync(
    process.argv[jsonIndex + 1] as string,
    `${JSON.stringify({ meta: benchMeta({ rounds }), ...collected }, null, 2)}\n`,
  );
