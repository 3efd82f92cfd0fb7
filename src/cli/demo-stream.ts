import pc from 'picocolors';
import { z } from 'zod';
import { describeOutcome, type Outcome } from '../loop/outcome.js';
import { runAgent } from '../loop/run-agent.js';
import type { Model } from '../model/model.js';
import { type AnthropicStreamEvent, assembleAnthropicStream } from '../stream/assemble-anthropic.js';
import { defineTool } from '../tools/define-tool.js';

const form = {
  applicant: 'Ana Lima',
  email: 'ana@example.com',
  role: 'Site reliability engineer',
  startDate: '2027-01-11',
  salaryEur: 84000,
  remote: true,
  references: ['Bob Otieno (former lead)', 'Chen Wu (peer)'],
  coverLetter:
    'I have run on-call for payment systems for six years. I like boring dashboards, short postmortems and retries that cannot become a bill. ' +
    'At my last job I cut pages by 40 % by deleting alerts nobody acted on, and wrote the runbooks that replaced them.',
};

function events(json: string, fragment: number, cutAt?: number): AnthropicStreamEvent[] {
  const parts: string[] = [];
  for (let at = 0; at < json.length; at += fragment) parts.push(json.slice(at, at + fragment));
  const kept = cutAt === undefined ? parts : parts.slice(0, cutAt);
  const list: AnthropicStreamEvent[] = [
    {
      type: 'message_start',
      message: { id: 'msg_demo', model: 'scripted-stream', usage: { input_tokens: 400, output_tokens: 1 } },
    },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_form', name: 'submit_application', input: {} },
    },
    ...kept.map((partial_json) => ({
      type: 'content_block_delta' as const,
      index: 0,
      delta: { type: 'input_json_delta' as const, partial_json },
    })),
  ];
  if (cutAt !== undefined) return list;
  return [
    ...list,
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 220 } },
    { type: 'message_stop' },
  ];
}

async function* paced<T>(items: T[], delayMs: number): AsyncIterable<T> {
  for (const item of items) {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    yield item;
  }
}

const render = (display: unknown) =>
  Object.entries((display ?? {}) as Record<string, unknown>)
    .map(
      ([key, value]) =>
        `  ${pc.dim(key.padEnd(12))} ${typeof value === 'string' ? value.slice(-90) : JSON.stringify(value)}`,
    )
    .join('\n');

/** What `reins demo stream --json` prints for each of the two streams. */
export interface StreamDemoRun {
  stream: 'complete' | 'cut-off';
  /** Argument fragments the display was updated with. */
  fragments: number;
  /** Times the tool ran: 1 for the complete stream, 0 for the cut-off one. */
  toolRuns: number;
  outcome: Outcome;
  /** The arguments the tool ran with, or null when it never ran. */
  executedInput: unknown;
}

/**
 * `reins demo stream`: a form filling in field by field; execution only after the block closed;
 * then a cut-off stream. With `json`, one object per stream and no live display.
 */
export async function demoStream(flags: { json?: boolean } = {}): Promise<number> {
  const json = Boolean(flags.json);
  const live = !json && Boolean(process.stdout.isTTY);
  const say = (text: string) => {
    if (!json) console.log(text);
  };
  const runs: StreamDemoRun[] = [];
  const formJson = JSON.stringify(form);
  const executed: unknown[] = [];
  const tool = defineTool({
    name: 'submit_application',
    description: 'Submit a job application.',
    effect: 'read',
    input: z.object({
      applicant: z.string(),
      email: z.string(),
      role: z.string(),
      startDate: z.string(),
      salaryEur: z.number(),
      remote: z.boolean(),
      references: z.array(z.string()),
      coverLetter: z.string(),
    }),
    execute: (input) => {
      executed.push(input);
      return { received: true };
    },
  });

  for (const cut of [undefined, 14]) {
    say(
      pc.bold(
        pc.cyan(
          cut === undefined
            ? '\n━━ A tool argument streaming in ━━'
            : '\n━━ The same stream, cut off mid-argument ━━',
        ),
      ),
    );
    let updates = 0;
    let lastLines = 0;
    let turn = 0;
    const model: Model = {
      name: 'scripted-stream',
      generate: async () => {
        if (turn++ > 0)
          return {
            content: [{ type: 'text', text: 'Application submitted.' }],
            stopReason: 'end_turn',
            usage: { inputTokens: 700, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
          };
        return assembleAnthropicStream(paced(events(formJson, 24, cut), live ? 25 : 0), {
          onToolInput: ({ display }) => {
            updates++;
            const text = render(display);
            if (live) {
              if (lastLines > 0) process.stdout.write(`\x1b[${lastLines}A\x1b[0J`);
              process.stdout.write(`${text}\n`);
              lastLines = text.split('\n').length;
            } else if (updates % 8 === 0) say(pc.dim(`after ${updates} fragments:`) + `\n${text}`);
          },
        });
      },
    };
    const before = executed.length;
    const result = await runAgent({
      model,
      input: 'Submit my application.',
      tools: [tool],
      giveUpTool: false,
    });
    runs.push({
      stream: cut === undefined ? 'complete' : 'cut-off',
      fragments: updates,
      toolRuns: executed.length - before,
      outcome: result.outcome,
      executedInput: executed.length > before ? executed[executed.length - 1] : null,
    });
    say(
      pc.dim(`${updates} fragments shown as they arrived; the tool ran ${executed.length - before} time(s)`),
    );
    say(
      `${pc.bold('outcome')} ${result.outcome.kind === 'answered' ? pc.green(describeOutcome(result.outcome)) : pc.yellow(describeOutcome(result.outcome))}`,
    );
    if (cut === undefined)
      say(pc.dim('execution started only after the tool block closed and its JSON parsed whole'));
    else say(pc.dim('the arguments were cut off: the partial form was shown, never submitted'));
  }
  if (json) console.log(JSON.stringify(runs, null, 2));
  return 0;
}
