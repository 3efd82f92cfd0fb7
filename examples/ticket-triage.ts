/**
 * post-15's ticket triage without the agent: one forced, bounded classification call, then a
 * fixed handler per category (the account lookup is a branch you control, the playbook a table
 * lookup). A category the handlers don't know goes to the explicit fallback, and the trace says
 * so. Each ticket costs exactly one model call. Offline, with a scripted model:
 *
 *   npx tsx examples/ticket-triage.ts
 */
import { memoryTraceSink, renderTrace } from 'reins';
import { describePipelineOutcome, modelStage, route, runPipeline, step } from 'reins/pipeline';
import { scriptedModel } from 'reins/testing';
import { z } from 'zod';

interface Ticket {
  userId: string;
  text: string;
}

const triage = z.object({
  category: z.string(),
  urgency: z.enum(['low', 'normal', 'high']),
  needsAccountLookup: z.boolean(),
});
type Triage = z.infer<typeof triage>;

const playbooks: Record<string, string> = {
  billing: 'Refund within 5 days; apologize for the double charge.',
  bug: 'Collect steps to reproduce; link the status page.',
  howto: 'Send the help-center article.',
  general: 'Route to a person in the general queue.',
};
const accounts: Record<string, string> = { 'u-1': 'enterprise', 'u-2': 'free' };

export async function main() {
  const model = scriptedModel(
    [
      { category: 'billing', urgency: 'high', needsAccountLookup: true },
      { category: 'bug', urgency: 'normal', needsAccountLookup: false },
      { category: 'legal', urgency: 'normal', needsAccountLookup: false },
    ].map((input) => ({ toolCalls: [{ name: 'classify', input }] })),
    { name: 'claude-haiku-4-5' },
  );
  const classify = modelStage({
    name: 'classify',
    model,
    output: triage,
    system:
      'Classify the support ticket: category (billing, bug, howto), urgency, and whether the account matters.',
    prompt: (ticket: Ticket) => ticket.text,
    maxOutputTokens: 64,
  });
  // Each handler is plain code you can test alone, given the ticket and its classification.
  type Classified = { ticket: Ticket; triage: Triage };
  const respond = (category: string) =>
    step(category, ({ ticket, triage }: Classified) => ({
      userId: ticket.userId,
      category,
      urgency: triage.urgency,
      // Your branch, not the model's: the account is looked up only when the classification asks.
      account: triage.needsAccountLookup ? (accounts[ticket.userId] ?? 'unknown') : null,
      playbook: playbooks[category] ?? playbooks['general'],
    }));
  const pipeline = route({
    name: 'triage',
    classify,
    label: (result: Triage) => result.category,
    branchInput: (ticket: Ticket, triage: Triage): Classified => ({ ticket, triage }),
    branches: {
      billing: respond('billing'),
      bug: respond('bug'),
      howto: respond('howto'),
      general: respond('general'),
    },
    fallback: 'general',
  });
  const trace = memoryTraceSink();
  const tickets: Ticket[] = [
    { userId: 'u-1', text: 'You charged me twice this month!' },
    { userId: 'u-2', text: 'The export button does nothing on Safari.' },
    { userId: 'u-2', text: 'Please send me your GDPR data processing agreement.' },
  ];
  const results = [];
  for (const ticket of tickets)
    results.push(await runPipeline(pipeline, ticket, { trace, runId: `ticket-${results.length + 1}` }));
  return { results, trace, model };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { results, trace } = await main();
  for (const result of results)
    console.log(
      `${result.runId}: ${describePipelineOutcome(result.outcome)} ${result.outcome.kind === 'completed' ? JSON.stringify(result.outcome.output) : ''} (${result.modelCalls} model call)`,
    );
  console.log('');
  console.log(renderTrace(trace.events.filter((event) => event.runId === 'ticket-3')));
}
