import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { MemoryIdempotencyStore } from '../../src/idempotency/memory-store.js';
import { PgBossRunQueue, type PgBossRunQueueOptions } from '../../src/pgboss/pgboss-run-queue.js';
import {
  createPgBossWorker,
  type PgBossWorker,
  type PgBossWorkerOptions,
} from '../../src/pgboss/pgboss-run-worker.js';
import { type AgentDefinition, agentRegistry } from '../../src/queue/agent-definition.js';
import type { RunRecord } from '../../src/queue/run-queue.js';
import { type ScriptedStepsAgentOptions, scriptedStepsAgent } from '../../src/queue/scripted-steps-agent.js';
import type { TraceEvent } from '../../src/trace/events.js';
import { dropBossQueue, uniqueTable } from '../support/pg-tables.js';
import { postgresUrl } from '../support/postgres.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const actor = { id: 'ana' };

/** A queue and its workers on fresh tables and a fresh pg-boss queue (as src/pgboss/pgboss-run-queue.test.ts). */
export async function fleet(
  options: {
    agent?: Partial<ScriptedStepsAgentOptions>;
    extraAgents?: AgentDefinition[];
    workers?: number;
    queue?: Partial<PgBossRunQueueOptions>;
    worker?: Partial<PgBossWorkerOptions>;
    table?: string;
  } = {},
) {
  const table = options.table ?? uniqueTable('rv');
  const common = { connectionString: postgresUrl, schema: 'reins_test', table, queueName: table };
  const effects: string[] = [];
  const checkpoint = new MemoryCheckpointStore();
  const agents = agentRegistry([
    scriptedStepsAgent({
      steps: 4,
      effect: ({ key }) => void effects.push(key),
      idempotency: { store: new MemoryIdempotencyStore() },
      ...options.agent,
    }),
    ...(options.extraAgents ?? []),
  ]);
  const queue = new PgBossRunQueue({ ...common, ...options.queue });
  const started: PgBossWorker[] = [];
  const start = async (extra: Partial<PgBossWorkerOptions> = {}) => {
    const one = await createPgBossWorker({
      ...common,
      agents,
      checkpoint,
      concurrency: 4,
      ...options.worker,
      ...extra,
    });
    started.push(one);
    return one;
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await start();
  const settled = async (runId: string, timeoutMs = 20_000): Promise<RunRecord> => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const record = await queue.registry.get(runId);
      if (record?.status === 'ended' || record?.status === 'awaiting_approval') return record;
      await sleep(20);
    }
    throw new Error(`run ${runId} did not settle: ${JSON.stringify(await queue.registry.get(runId))}`);
  };
  const close = async () => {
    await Promise.all(started.map((one) => one.close()));
    await dropBossQueue(queue);
    await queue.close();
  };
  return { queue, effects, start, settled, close, table, checkpoint, agents, started };
}

export function seqs(events: readonly TraceEvent[]): number[] {
  return events.map((event) => event.seq);
}
