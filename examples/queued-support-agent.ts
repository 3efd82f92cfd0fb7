/**
 * The lesson's support agent as a queued run, end to end and offline: a person's request goes in
 * over HTTP, the trace streams back as Server-Sent Events, the run pauses before the refund (a
 * write behind approval), a person approves, the run resumes and answers.
 *
 * The model is scripted by the transcript (a resumed run builds a fresh model that must go on
 * where the run stopped), the queue is the in-process one (no Redis needed), and the service is
 * `reins/server` on loopback. `reins serve --in-process --agents examples/queued-support-agent.ts`
 * serves the same agent with the run viewer at `/`.
 *
 * Run it: npx tsx examples/queued-support-agent.ts
 * On BullMQ (a Redis on loopback, a worker in this process): npx tsx examples/queued-support-agent.ts --bullmq
 */
import { defineTool, MemoryCheckpointStore, type Model, type ModelResponse, type TraceEvent } from 'reins';
import { BullmqRunQueue, createRunWorker } from 'reins/bullmq';
import {
  type AgentDefinition,
  agentRegistry,
  defineAgent,
  InProcessRunQueue,
  MemoryRunEventLog,
  MemoryRunRegistry,
  type RunEventLog,
  type RunQueue,
  type RunRegistry,
} from 'reins/queue';
import { RedisCheckpointStore } from 'reins/redis';
import { createRunService, listenOnLoopback, staticTokens, viewerDirectory } from 'reins/server';
import { z } from 'zod';

const orders: Record<string, { owner: string; status: string; total: number }> = {
  'o-1001': { owner: 'cust-ana', status: 'delayed: carrier exception', total: 84.5 },
};

/** A refund that reached the payment system. */
export interface Refund {
  orderId: string;
  amount: number;
}

/** What the scripted model does at call k (k = assistant turns so far + 1). */
function supportTurn(step: number, lastResult: string): ModelResponse {
  const usage = { inputTokens: 300 + step * 120, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 };
  if (step === 1)
    return {
      content: [
        { type: 'text', text: 'The customer asks about order o-1001. I will look it up first.' },
        { type: 'tool_use', id: 'call_order', name: 'get_order', input: { orderId: 'o-1001' } },
      ],
      stopReason: 'tool_use',
      usage,
    };
  if (step === 2)
    return {
      content: [
        { type: 'text', text: 'Delayed by a carrier exception; policy allows a refund of the full 84.50.' },
        { type: 'tool_use', id: 'call_refund', name: 'refund', input: { orderId: 'o-1001', amount: 84.5 } },
      ],
      stopReason: 'tool_use',
      usage,
    };
  const refunded = lastResult.includes('refundId');
  return {
    content: [
      {
        type: 'text',
        text: refunded
          ? 'Your refund of 84.50 for o-1001 is on its way. Sorry about the delay.'
          : 'I could not refund o-1001; a person on our team will follow up with you.',
      },
    ],
    stopReason: 'end_turn',
    usage,
  };
}

/** A model whose answer depends on the transcript, so a run resumed on any worker goes on where it stopped. */
function supportModel(stepDelayMs: number): Model {
  return {
    name: 'scripted-support',
    async generate(request) {
      if (stepDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, stepDelayMs));
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      const last = request.messages.at(-1);
      const lastResult =
        last && typeof last.content !== 'string'
          ? last.content
              .map((block) => (block.type === 'tool_result' ? JSON.stringify(block.content) : ''))
              .join('')
          : '';
      return supportTurn(step, lastResult);
    },
  };
}

/**
 * The support agent as a named definition: `get_order` (a read, scoped to the customer) and
 * `refund` (a write that always asks a person first).
 */
export function supportAgent(options: { refunds?: Refund[]; stepDelayMs?: number } = {}): AgentDefinition {
  const refunds = options.refunds ?? [];
  return defineAgent({
    name: 'support',
    build: () => ({
      model: supportModel(options.stepDelayMs ?? 0),
      system: 'You are a support agent. Look orders up; refunds need a person’s approval.',
      tools: [
        defineTool({
          name: 'get_order',
          effect: 'read',
          trustedOutput: true,
          description: 'Look up one order of the current customer by id.',
          input: z.object({ orderId: z.string() }),
          execute: ({ orderId }, { actor }) => {
            const order = orders[orderId];
            return order && order.owner === actor?.id
              ? { orderId, status: order.status, total: order.total }
              : { orderId, status: 'not found' };
          },
        }),
        defineTool({
          name: 'refund',
          effect: 'write',
          autonomy: 'confirm',
          trustedOutput: true,
          description: 'Refund an order of the current customer, in full or in part.',
          input: z.object({ orderId: z.string(), amount: z.number().positive() }),
          execute: ({ orderId, amount }) => {
            refunds.push({ orderId, amount });
            return { refundId: `R-${refunds.length}`, orderId, amount };
          },
        }),
      ],
      maxSteps: 6,
      maxContextTokens: 8_000,
      maxBilledTokens: 20_000,
    }),
  });
}

/** `reins serve --agents <this file>` reads this. */
export const agents = [supportAgent({ stepDelayMs: 400 })];

/** The queue, its stores and how to close them: in this process, or BullMQ with a worker here. */
async function supportQueue(
  agents: ReturnType<typeof agentRegistry>,
  bullmq: string | undefined,
): Promise<{ queue: RunQueue; runs: RunRegistry; events: RunEventLog; close: () => Promise<void> }> {
  if (!bullmq) {
    const registry = new MemoryRunRegistry();
    const events = new MemoryRunEventLog();
    const queue = new InProcessRunQueue({
      agents,
      checkpoint: new MemoryCheckpointStore(),
      registry,
      events,
    });
    return { queue, runs: registry, events, close: () => queue.close() };
  }
  // A prefix of its own, so the example shares nothing with other users of this Redis.
  const prefix = `reins-example-${globalThis.crypto.randomUUID()}`;
  const { Redis } = await import('ioredis');
  const redis = new Redis(bullmq, { maxRetriesPerRequest: null });
  const queue = new BullmqRunQueue({ redis, prefix });
  const worker = await createRunWorker({
    redis,
    prefix,
    agents,
    checkpoint: new RedisCheckpointStore({ redis, keyPrefix: `${prefix}:checkpoint` }),
  });
  return {
    queue,
    runs: queue.registry,
    events: queue.events,
    close: async () => {
      await worker.close();
      await queue.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
}

/** The service on loopback: the in-process queue by default, BullMQ on `bullmq` (a Redis URL). */
export async function startSupportService(
  options: {
    tokens?: Record<string, string>;
    stepDelayMs?: number;
    port?: number;
    viewer?: boolean;
    bullmq?: string;
  } = {},
) {
  const refunds: Refund[] = [];
  const agents = agentRegistry([supportAgent({ refunds, stepDelayMs: options.stepDelayMs ?? 0 })]);
  const { queue, runs, events, close } = await supportQueue(agents, options.bullmq);
  const app = createRunService({
    queue,
    runs,
    events,
    authenticate: staticTokens(options.tokens ?? { 'token-for-cust-ana': 'cust-ana' }),
    agents: ['support'],
    ...(options.viewer ? { viewer: viewerDirectory() } : {}),
  });
  const listener = await listenOnLoopback(app, { port: options.port ?? 0 });
  return {
    url: listener.url,
    refunds,
    queue,
    close: async () => {
      await listener.close();
      await close();
    },
  };
}

/** Reads `event:`/`id:`/`data:` blocks from a Server-Sent Events response. */
async function* serverSentEvents(response: Response) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .filter((line) => line.startsWith(`${name}: `))
          .map((line) => line.slice(name.length + 2))
          .join('\n');
      if (field('data')) yield { event: field('event'), id: field('id'), data: field('data') };
      end = buffer.indexOf('\n\n');
    }
  }
}

export async function main(log: (line: string) => void = () => {}, bullmq?: string) {
  const service = await startSupportService(bullmq ? { bullmq } : {});
  const auth = { Authorization: 'Bearer token-for-cust-ana', 'Content-Type': 'application/json' };
  try {
    const started = await fetch(`${service.url}runs`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ agent: 'support', input: 'Order o-1001 is late. Can I get my money back?' }),
    });
    const { runId } = (await started.json()) as { runId: string };
    log(`queued ${runId}`);
    const seqs: number[] = [];
    let paused: { tool: string; input: unknown } | undefined;
    let approvedBy: string | null | undefined;
    let final: { status: string; outcome?: { kind: string; text?: string } } | undefined;
    const stream = await fetch(`${service.url}runs/${runId}/events`, { headers: auth });
    for await (const message of serverSentEvents(stream)) {
      if (message.event === 'end') {
        final = JSON.parse(message.data);
        break;
      }
      const event = JSON.parse(message.data) as TraceEvent;
      seqs.push(event.seq);
      if (event.type === 'approval') approvedBy = event.by;
      if (event.type === 'model-response')
        for (const block of event.response.content)
          if (block.type === 'tool_use')
            log(`  step ${event.step}: ${block.name}(${JSON.stringify(block.input)})`);
      if (event.type === 'tool-result') log(`    → ${event.status}: ${event.content}`);
      if (event.type === 'run-end' && event.outcome.kind === 'awaiting_approval') {
        // The run is parked; a person looks at the call and approves it.
        const record = (await (await fetch(`${service.url}runs/${runId}`, { headers: auth })).json()) as {
          pendingApprovals: { approvalId: string; tool: string; input: unknown }[];
        };
        const [request] = record.pendingApprovals;
        if (!request) throw new Error('paused without a pending approval');
        paused = { tool: request.tool, input: request.input };
        log(`paused: ${request.tool}(${JSON.stringify(request.input)}) waits for a person — approving`);
        const verdict = await fetch(`${service.url}runs/${runId}/approvals`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ verdicts: [{ approvalId: request.approvalId, decision: 'approve' }] }),
        });
        log(`verdict: HTTP ${verdict.status}`);
      }
    }
    log(`outcome: ${final?.outcome?.kind}: ${final?.outcome?.text ?? ''}`);
    return { runId, seqs, paused, approvedBy, final, refunds: service.refunds };
  } finally {
    await service.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  await main(
    console.log,
    process.argv.includes('--bullmq')
      ? (process.env['REINS_REDIS_URL'] ?? 'redis://127.0.0.1:6379')
      : undefined,
  );
