import { z } from 'zod';
import type { EvalSuite, JudgeSummary } from '../../src/eval/index.js';
import { fakeClock, type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define-tool.js';

/** Text a model might produce to break out of a report: every report view must show it inert. */
export const hostileAnswer = '</details></pre><script>alert("answer")</script> "quoted" & <b>bold</b>';
export const hostileCaseId = 'x"><img src=x onerror=alert(1)></th></table><script>alert("case")</script>';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up.',
  input: z.object({ orderId: z.string() }),
  effect: 'read',
  trustedOutput: true,
  execute: ({ orderId }) => ({ orderId, status: 'shipped' }),
});
const cancel = defineTool({
  name: 'cancel_order',
  description: 'Cancels an order.',
  input: z.object({ orderId: z.string() }),
  effect: 'write',
  execute: () => ({ cancelled: true }),
});

const look: ScriptedTurn = {
  text: 'Looking.',
  toolCalls: [{ name: 'lookup_order', input: { orderId: 'A-1' } }],
};

/**
 * A small suite with every kind of trial a report shows: passes, wrong answers carrying hostile
 * text, loops, and a case id built to break out of HTML.
 */
export function sampleEvalSuite(): EvalSuite {
  return {
    name: 'orders <sample>',
    cases: [
      { id: 'status', input: 'Where is A-1?', expect: ({ answer }) => answer?.includes('shipped') === true },
      {
        id: hostileCaseId,
        input: 'Say something nasty.',
        expect: ({ answer }) => ({ pass: answer === 'fine', reason: `answered ${answer ?? ''}` }),
      },
      { id: 'loops', input: 'Check A-1 forever.', expect: ({ answer }) => answer !== undefined },
    ],
    agent: ({ caseId, random }) => {
      const chatty = 'word '.repeat(Math.floor(random() * 40));
      const script: ScriptedTurn[] =
        caseId === 'status'
          ? random() < 0.75
            ? [look, { text: `A-1 has shipped. ${chatty}` }]
            : [look, { text: 'No idea.' }]
          : caseId === 'loops'
            ? [look, look, look, look]
            : [{ text: hostileAnswer }];
      return {
        model: scriptedModel(script, { name: 'sample-model' }),
        tools: [lookup, cancel],
        prices: { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } },
        repeatLimit: 3,
        maxSteps: 5,
        clock: fakeClock(),
      };
    },
  };
}

export const uncalibratedJudge: JudgeSummary = {
  judgeId: 'tone',
  model: 'judge-model',
  rubricVersion: 'r1',
  kappa: null,
  agreement: null,
  positionFlipRate: null,
  warning: 'Judge tone is uncalibrated <script>alert("judge")</script>: its verdicts are unmeasured.',
};
