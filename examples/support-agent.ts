/**
 * A support-ticket agent from the lesson's practice problem 2, offline: a scripted model, real
 * controls. Read tools are scoped to the customer the run acts for, so asking about someone else's
 * order is denied in dispatch and nothing of that order reaches the model.
 *
 * Run it: npx tsx examples/support-agent.ts
 */
import {
  type Actor,
  type AuthorizationVerdict,
  defineTool,
  describeOutcome,
  memoryTraceSink,
  runAgent,
} from 'reins';
import { scriptedModel } from 'reins/testing';
import { z } from 'zod';

const orders: Record<string, { owner: string; status: string; total: number }> = {
  'o-1001': { owner: 'cust-ana', status: 'delayed: carrier exception', total: 84.5 },
  'o-2002': { owner: 'cust-ben', status: 'delivered', total: 12 },
};

const searchKb = defineTool({
  effect: 'read',
  name: 'search_kb',
  description: 'Search the help-center articles. Returns titles and short excerpts.',
  input: z.object({ query: z.string().min(2) }),
  execute: ({ query }) => [
    {
      title: 'Carrier exceptions',
      excerpt: `About "${query}": a carrier exception delays delivery 2-3 days.`,
    },
  ],
});

const getOrder = defineTool({
  effect: 'read',
  trustedOutput: true,
  name: 'get_order',
  description: 'Look up one order of the current customer by id.',
  input: z.object({ orderId: z.string() }),
  scopes: ['orders:read'],
  execute: ({ orderId }) => {
    const order = orders[orderId];
    return order ? { orderId, status: order.status, total: order.total } : { orderId, status: 'not found' };
  },
});

const createTicket = defineTool({
  // A write: it stops under the kill switch, and with untrusted help-center text in the context it
  // runs only because its one sensitive argument (the order id) comes from the customer's own words.
  effect: 'write',
  sensitiveArguments: ['orderId'],
  name: 'create_ticket',
  description: 'Open a follow-up ticket for a human agent. Reversible and low risk.',
  input: z.object({ summary: z.string().min(5), orderId: z.string() }),
  scopes: ['tickets:write'],
  execute: ({ summary, orderId }) => ({ ticketId: 'T-5521', summary, orderId }),
});

/** Scoped reads: an order is visible only to the customer who owns it. */
function ownsOrder({ input, actor }: { input: unknown; actor: Actor | undefined }): AuthorizationVerdict {
  const orderId = (input as { orderId?: string }).orderId;
  if (orderId === undefined) return { allow: true };
  return orders[orderId]?.owner === actor?.id
    ? { allow: true }
    : { allow: false, reason: `order ${orderId} is not one of this customer's orders` };
}

export async function main() {
  const model = scriptedModel([
    {
      text: 'The customer asks about two orders. First, their own.',
      toolCalls: [{ name: 'get_order', input: { orderId: 'o-1001' } }],
    },
    {
      text: 'And the other one they mentioned.',
      toolCalls: [{ name: 'get_order', input: { orderId: 'o-2002' } }],
    },
    {
      text: 'Delayed by a carrier exception. What does the help center say?',
      toolCalls: [{ name: 'search_kb', input: { query: 'carrier exception' } }],
    },
    {
      text: 'I will open a follow-up ticket.',
      toolCalls: [
        { name: 'create_ticket', input: { summary: 'Carrier exception on o-1001', orderId: 'o-1001' } },
      ],
    },
    {
      text: 'Order o-1001 is delayed by a carrier exception (usually 2-3 days); ticket T-5521 tracks it. I cannot share details of o-2002.',
    },
  ]);
  const trace = memoryTraceSink();
  const result = await runAgent({
    model,
    input: 'Where are my orders o-1001 and o-2002?',
    system: 'You are a support agent. Use the tools; never guess order details.',
    tools: [searchKb, getOrder, createTicket],
    actor: { id: 'cust-ana', scopes: ['orders:read', 'tickets:write'] },
    authorize: (request) => {
      const scoped = request.tool.scopes.every((scope) => request.actor?.scopes?.includes(scope));
      return scoped ? ownsOrder(request) : { allow: false, reason: 'missing scope' };
    },
    maxSteps: 6,
    maxContextTokens: 15_000,
    repeatLimit: 2,
    trace,
  });
  const denials = trace.events.filter((event) => event.type === 'authorization' && !event.allowed);
  return { result, denials, model };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { result, denials } = await main();
  console.log(describeOutcome(result.outcome));
  if (result.outcome.kind === 'answered') console.log(result.outcome.text);
  console.log(
    `${result.steps} steps, ${result.billedTokens} tokens billed, ${denials.length} call(s) denied`,
  );
}
