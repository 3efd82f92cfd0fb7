/**
 * Calibrating an LLM judge before trusting it, offline: a scripted judge with two known biases (it
 * passes any answer long enough, and in a close pairwise call it picks whichever answer it saw
 * first) graded against 60 answers people labeled and 10 pairs they compared. Raw agreement looks
 * fine because most answers pass; κ, the position flips and the padding test show the judge for
 * what it is.
 *
 * Run it: npx tsx examples/judge-calibration.ts
 */

import type { ModelRequest } from 'reins';
import { type CalibrationSample, calibrateJudge, defineJudge, judgeSummary } from 'reins/eval';
import { fakeClock, type ScriptedTurn, scriptedModel, seededRandom } from 'reins/testing';

const question = 'How long do I have to return an order for a refund?';

// Answers people passed (correct: 30 days from delivery) and failed, long and short.
const correctLong = [
  'You can return an order within 30 days of delivery for a full refund. Start the return from the Orders page and the money goes back to your card.',
  'Returns are accepted for 30 days after the parcel arrives. Print the prepaid label from your account, drop the box at any carrier point, and the refund follows.',
  'The refund window is 30 days from the delivery date. Items must be unused and in their original packaging, and the refund lands within five business days.',
];
const correctShort = 'Within 30 days of delivery.';
const wrongLong = [
  'You can return an order within 90 days of purchase for a full refund. Start the return from the Orders page and the money goes back to your card.',
  'Returns are accepted at any time as long as you keep the receipt. Print the prepaid label from your account and drop the box at any carrier point for your refund.',
];
const wrongShort = 'No refunds, sorry.';

/** The text the judge was shown between `<tag>` and `</tag>`. */
function shown(text: string, tag: string): string {
  return new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(text)?.[1] ?? '';
}

function firstSentence(text: string): string {
  return text.split(/(?<=\.)\s/)[0] ?? text;
}

function words(text: string): number {
  return text.split(/\s+/).length;
}

/** The biased judge: what a real one might do, scripted so the biases are known. */
function biasedJudgeTurn(text: string): ScriptedTurn {
  if (text.includes('<answer>')) {
    const answer = shown(text, 'answer');
    // Verbosity bias: length reads as thoroughness; the refund window itself is never checked.
    const label = words(answer) >= 12 ? 'pass' : 'fail';
    return { toolCalls: [{ name: 'submit_verdict', input: { evidence: [firstSentence(answer)], label } }] };
  }
  const first = shown(text, 'first');
  const second = shown(text, 'second');
  // Position bias: unless one answer is clearly longer, the first one shown wins.
  const winner = words(second) > 1.5 * words(first) ? 'second' : 'first';
  const quote = firstSentence(winner === 'first' ? first : second);
  return { toolCalls: [{ name: 'submit_preference', input: { evidence: [quote], winner } }] };
}

/** 60 labeled answers, 50 passed by people (imbalanced, as real sets are), and 10 compared pairs. */
function samples(seed: number): CalibrationSample<'fail' | 'pass'>[] {
  const random = seededRandom(seed);
  const pickOne = (texts: readonly string[]) => texts[Math.floor(random() * texts.length)] as string;
  const pointwise = [
    ...Array.from({ length: 47 }, () => ({ answer: pickOne(correctLong), humanLabel: 'pass' as const })),
    ...Array.from({ length: 3 }, () => ({ answer: correctShort, humanLabel: 'pass' as const })),
    ...Array.from({ length: 7 }, () => ({ answer: pickOne(wrongLong), humanLabel: 'fail' as const })),
    ...Array.from({ length: 3 }, () => ({ answer: wrongShort, humanLabel: 'fail' as const })),
  ];
  // Shuffle (Fisher–Yates) so the labels are not in blocks.
  for (let i = pointwise.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pointwise[i], pointwise[j]] = [
      pointwise[j] as (typeof pointwise)[number],
      pointwise[i] as (typeof pointwise)[number],
    ];
  }
  const pairs = Array.from({ length: 10 }, (_, i) =>
    // Five close calls between a correct and a wrong answer of similar length, five against a terse wrong one.
    i < 5
      ? { a: correctLong[i % 3] as string, b: wrongLong[i % 2] as string, humanWinner: 'a' as const }
      : { a: wrongShort, b: correctLong[i % 3] as string, humanWinner: 'b' as const },
  );
  return [
    ...pointwise.map((sample, i) => ({ id: `answer-${i + 1}`, question, ...sample })),
    ...pairs.map((pair, i) => ({ id: `pair-${i + 1}`, question, ...pair })),
  ];
}

export async function main() {
  // Two calls per answer (as written, then padded with filler) and two per pair (both orders).
  const model = scriptedModel(
    Array.from({ length: 140 }, () => (request: ModelRequest) => {
      const block = request.messages[0]?.content[0];
      return { ...biasedJudgeTurn(block?.type === 'text' ? block.text : ''), model: 'judge-2026-01' };
    }),
  );
  const judge = defineJudge({
    id: 'refund-policy',
    model,
    modelId: 'judge-2026-01',
    rubric: { version: 'v1', text: 'Pass an answer that gives the refund window as 30 days from delivery.' },
  });
  const calibration = await calibrateJudge(judge, samples(2026), { clock: fakeClock() });
  const summary = judgeSummary(judge, calibration, { minKappa: 0.6 });
  return { calibration, summary, model };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { calibration, summary } = await main();
  const row = (name: string, value: number | null) =>
    console.log(`  ${name.padEnd(22)} ${value === null ? 'n/a' : value.toFixed(2)}`);
  console.log(`judge ${calibration.judgeId} (${calibration.model}, rubric ${calibration.rubricVersion})`);
  console.log(`  ${calibration.n} labeled answers, ${calibration.pairwiseN} compared pairs`);
  row('raw agreement', calibration.agreement);
  row("Cohen's kappa", calibration.kappa);
  row('invalid verdicts', calibration.invalidRate);
  row('position flips', calibration.positionFlipRate);
  row('verbosity sensitivity', calibration.verbositySensitivity);
  if (summary.warning !== null) console.log(`warning: ${summary.warning}`);
}
