import { Redis } from 'ioredis';
import type { AgentRegistry } from '../queue/agent-definition.js';
import { agentRegistry } from '../queue/agent-definition.js';
import { scriptedStepsAgent } from '../queue/scripted-steps-agent.js';

/**
 * The agents `reins bench queue` starts its workers with: the 0-latency 6-step agent, each step's
 * effect counted in Redis (sent without waiting: it rides the next round trip) so duplicates can be
 * counted afterwards. REINS_BENCH_PREFIX names the counters' hash.
 */
export function agents({ redisUrl }: { redisUrl: string }): AgentRegistry {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const effects = `${process.env['REINS_BENCH_PREFIX'] ?? 'reins-bench'}:effects`;
  return agentRegistry([
    scriptedStepsAgent({
      steps: 6,
      effect: ({ key }) => {
        redis.hincrby(effects, key, 1).catch(() => {});
      },
    }),
  ]);
}
