import { RepeatDetector } from '../../src/index.js';
import { runScenario } from '../../src/scenarios/index.js';
import { loopCost, loopCostSteps } from '../../src/sim/index.js';
import { formatNumber, h, table } from './dom.js';

interface Choice {
  text: string;
  /** Why it is right or wrong, computed. */
  why: string;
}

function quiz(
  id: string,
  title: string,
  prompt: string,
  choices: Choice[],
  correct: number,
  explanation: () => Node[],
): HTMLElement {
  const verdict = h('p', { class: 'verdict', 'aria-live': 'polite', 'data-testid': `${id}-verdict` });
  const detail = h('div', { hidden: true, 'data-testid': `${id}-explanation` }, ...explanation());
  const fieldset = h(
    'fieldset',
    {},
    h('legend', {}, prompt),
    h(
      'ul',
      { class: 'choices' },
      ...choices.map((choice, index) => {
        const input = h('input', { type: 'radio', name: id, id: `${id}-${index}`, value: String(index) });
        input.addEventListener('change', () => {
          const right = index === correct;
          verdict.className = `verdict ${right ? 'right' : 'wrong'}`;
          verdict.textContent = `${right ? 'Right' : 'Not quite'}: ${choice.why}`;
          detail.hidden = false;
        });
        return h('li', {}, input, ' ', h('label', { for: `${id}-${index}` }, choice.text));
      }),
    ),
  );
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': `${id}-title` },
    h('h3', { id: `${id}-title` }, title),
    fieldset,
    verdict,
    detail,
  );
}

/** The lesson's two checks, with answers and arithmetic from the library. */
export async function mountChecks(root: HTMLElement): Promise<void> {
  const params = { steps: 10, base: 2_000, result: 800 };
  const cost = loopCost(params);
  const rows = loopCostSteps(params);
  const options = [
    {
      tokens: cost.billedTokens,
      label: 'the whole context is re-sent each step, so cost is the sum of prefix sizes',
    },
    { tokens: cost.finalContextTokens, label: 'the final context size, sent once at the end' },
    { tokens: 28_000, label: 'ten steps at the average context size' },
    {
      tokens: params.steps * params.result,
      label: 'only the new tokens each step are billed, since the rest is cached',
    },
  ];
  // The library's figure picks the right answer: the option equal to loopCost().billedTokens.
  const correctCost = options.findIndex((option) => option.tokens === cost.billedTokens);
  root.append(
    h('h2', {}, "The lesson's checks"),
    quiz(
      'complexity',
      'Predict the complexity',
      `An agent runs ${params.steps} steps with a ${formatNumber(params.base)}-token base prompt and ${formatNumber(params.result)}-token tool results. Roughly how many tokens are billed?`,
      options.map((option, index) => ({
        text: `~${formatNumber(option.tokens)} — ${option.label}`,
        why:
          index === correctCost
            ? `the library sums the prefixes: ${formatNumber(cost.billedTokens)} tokens, ${cost.ratioToOneStep}× one call.`
            : `the library bills ${formatNumber(cost.billedTokens)}: every step re-sends everything before it.`,
      })),
      correctCost,
      () => [
        h(
          'p',
          {},
          'Step k sends the base plus every earlier result: ',
          h('code', {}, `${formatNumber(params.base)} + ${formatNumber(params.result)}·(k−1)`),
          '.',
        ),
        table(
          ['step', 'sent', 'billed so far'],
          rows.map((row) => [String(row.step), formatNumber(row.sentTokens), formatNumber(row.billedSoFar)]),
        ),
        h(
          'p',
          { 'data-testid': 'complexity-arithmetic' },
          `${params.steps} × ${formatNumber(params.base)} + ${formatNumber(params.result)} × (0 + 1 + … + ${params.steps - 1}) = ${formatNumber(params.steps * params.base)} + ${formatNumber(params.result)} × ${(params.steps * (params.steps - 1)) / 2} = ${formatNumber(cost.billedTokens)} tokens — ${cost.ratioToOneStep}× one call (the lesson's table says 65,000 and 24×; see docs/seed-errata.md). The rule of thumb steps × base + steps²/2 × result gives ${formatNumber(cost.estimateRuleTokens)}.`,
        ),
      ],
    ),
  );

  // Check yourself: run the wandering scenario's calls through two detectors and see which one fires.
  const wanders = await runScenario('wanders');
  const calls = wanders.trace.flatMap((event) =>
    event.type === 'tool-call' ? [{ tool: event.tool, input: event.input }] : [],
  );
  const byPair = new RepeatDetector(3);
  const byName = new RepeatDetector(3);
  const pairHits = calls.map((call) => byPair.check(call.tool, call.input));
  const nameHits = calls.map((call) => byName.check(call.tool, null));
  const firstNameHit = nameHits.findIndex((hit) => hit.repeated);
  const loops = await runScenario('loops');
  root.append(
    quiz(
      'detection',
      'Check yourself',
      'You add loop detection to an agent. What should the detection key be?',
      [
        {
          text: 'The (tool name, arguments) pair — the same tool with different arguments is normal progress',
          why: 'the pair separates a loop from a sequence of lookups.',
        },
        {
          text: 'The tool name, so any repeated use of one tool is caught early',
          why: `keyed on the name, the detector stops an honest run${firstNameHit >= 0 ? ` at call ${firstNameHit + 1}` : ''}.`,
        },
        {
          text: "The model's stated reasoning text, since a looping agent repeats its thoughts",
          why: 'a looping model rephrases; the repeated call is what is identical.',
        },
        {
          text: 'The number of steps taken, since loops are what step limits exist to catch',
          why: 'the step limit ends it, but only after paying for every step.',
        },
      ],
      0,
      () => [
        h(
          'p',
          {},
          `The "wanders" scenario makes ${calls.length} calls. With repeatLimit 3, the real RepeatDetector keyed on (tool, arguments) fires ${pairHits.filter((hit) => hit.repeated).length} times; keyed on the name alone it fires ${nameHits.filter((hit) => hit.repeated).length} times.`,
        ),
        table(
          ['call', '(tool, args) count', 'name-only count'],
          calls.map((call, index) => [
            `${call.tool}(${JSON.stringify(call.input)})`,
            `${pairHits[index]?.count}${pairHits[index]?.repeated ? ' — repeat' : ''}`,
            `${nameHits[index]?.count}${nameHits[index]?.repeated ? ' — repeat' : ''}`,
          ]),
        ),
        h(
          'p',
          { 'data-testid': 'detection-loops' },
          `And on the "loops" scenario the real loop ends with: ${loops.outcome.kind === 'looped' && loops.outcome.reason === 'repeated_call' ? `looped — ${loops.outcome.key} proposed ${loops.outcome.count}×` : loops.outcome.kind}.`,
        ),
      ],
    ),
  );
}
