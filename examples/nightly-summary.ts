/**
 * The lesson's nightly summary, as a pipeline instead of an agent: query yesterday's tickets, group
 * them, summarize each category with one bounded model call, render, send. Nothing here decides
 * what happens next at runtime, so it is a `chain` (with a fan-out over the categories). The send
 * fails the first night (SMTP down); the re-run resumes from the stage store and pays for no
 * summary twice. One job budget covers every call. Offline, with a scripted model:
 *
 *   npx tsx examples/nightly-summary.ts
 */
import { JobBudget } from 'reins';
import {
  chain,
  describePipelineOutcome,
  fanIn,
  fanOut,
  MemoryStageStore,
  modelStage,
  runPipeline,
  step,
} from 'reins/pipeline';
import { scriptedModel } from 'reins/testing';
import { z } from 'zod';

interface Ticket {
  id: string;
  category: 'billing' | 'bug' | 'howto';
  subject: string;
}

const yesterday: Ticket[] = [
  { id: 't-1', category: 'billing', subject: 'Charged twice for March' },
  { id: 't-2', category: 'bug', subject: 'Export to CSV drops the last row' },
  { id: 't-3', category: 'billing', subject: 'Refund not received' },
  { id: 't-4', category: 'howto', subject: 'How do I invite a teammate?' },
  { id: 't-5', category: 'bug', subject: 'Dark mode resets on reload' },
];

const summary = z.object({ headline: z.string().min(1), count: z.number().int(), action: z.string() });

export async function main() {
  // One scripted answer per category, in the order the fan-out asks (concurrency 1 here).
  const model = scriptedModel(
    [
      { headline: 'Duplicate charges and a missing refund', count: 2, action: 'Finance to reconcile March' },
      { headline: 'CSV export and dark mode regressions', count: 2, action: 'File both for the next sprint' },
      { headline: 'Teammate invites', count: 1, action: 'Link the invite guide in the app' },
    ].map((input) => ({ toolCalls: [{ name: 'summarize', input }] })),
    { name: 'claude-haiku-4-5' },
  );
  const sent: string[] = [];
  let smtpUp = false;

  const nightly = chain(
    'nightly',
    step('query', (day: string) => yesterday.filter(() => day === '2026-12-02')),
    step('group', (tickets: Ticket[]) => {
      const groups = new Map<string, string[]>();
      for (const ticket of tickets)
        groups.set(ticket.category, [...(groups.get(ticket.category) ?? []), ticket.subject]);
      return [...groups].map(([category, subjects]) => ({ category, subjects }));
    }),
    fanOut({
      name: 'categories',
      items: (groups: { category: string; subjects: string[] }[]) => groups,
      concurrency: 1,
      branch: modelStage({
        name: 'summarize',
        model,
        output: summary,
        system: 'You write one line for a nightly support digest.',
        prompt: ({ category, subjects }: { category: string; subjects: string[] }) =>
          `Category ${category}, ${subjects.length} ticket(s):\n${subjects.join('\n')}`,
        maxOutputTokens: 200,
      }),
    }),
    fanIn<{ category: string; subjects: string[] }, z.infer<typeof summary>>({ name: 'gather' }),
    step('render', ({ outputs, items }) =>
      outputs
        .map((line, i) => `${items[i]?.category}: ${line.headline} (${line.count}) → ${line.action}`)
        .join('\n'),
    ),
    step('send', (digest: string) => {
      if (!smtpUp) throw new Error('SMTP 421: service not available');
      sent.push(digest);
      return { sent: true, lines: digest.split('\n').length };
    }),
  );

  const store = new MemoryStageStore();
  const budget = new JobBudget({
    maxSpendUsd: 0.05,
    prices: { 'claude-haiku-4-5': { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 5 } },
  });
  const options = { runId: 'nightly-2026-12-02', checkpoint: store, jobBudget: budget };
  const first = await runPipeline(nightly, '2026-12-02', options);
  smtpUp = true;
  const second = await runPipeline(nightly, '2026-12-02', options);
  return { first, second, sent, model, budget };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { first, second, sent, budget } = await main();
  console.log(`night 1: ${describePipelineOutcome(first.outcome)} (${first.modelCalls} model calls)`);
  console.log(
    `re-run:  ${describePipelineOutcome(second.outcome)} (${second.restoredStages} stages restored, ${second.modelCalls} model calls)`,
  );
  console.log(sent[0]);
  console.log(
    `job: ${budget.spent().calls} calls, ${budget.spent().tokens} tokens, $${budget.spent().usd.toFixed(6)}`,
  );
}
