/**
 * The lesson's incident agent as an eval suite: 12 questions an on-call engineer asks, each with a
 * success predicate written before the run, played by a simulated model that fails the way real
 * ones do (seeded per trial): it sometimes calls a tool that does not exist, sends malformed
 * arguments, repeats itself, wanders off into log searches, gives up, or answers with the wrong
 * fact. Harder questions fail more often, so pass@k and pass^k tell different stories.
 *
 * Run it: npx tsx examples/eval-incident-agent.ts
 * Or:     npx reins eval run examples/eval-incident-agent.ts --trials 10 --k 3
 */
import type { Message, ModelRequest, RandomSource } from 'reins';
import { type EvalCase, type EvalSuite, runEval, runFaultMatrix } from 'reins/eval';
import { incidentTools, inputKey, type ScenarioData } from 'reins/scenarios';
import { type ScriptedTurn, scriptedModel } from 'reins/testing';

/** One call of a case's plan: the tool, its input, and the fact its answer holds. */
interface PlannedCall {
  name: string;
  input: Record<string, unknown>;
  answer: unknown;
}

interface IncidentCase {
  id: string;
  question: string;
  plan: PlannedCall[];
  /** The fact a right answer names. */
  fact: string;
  /** A plausible fact a confused model names instead. */
  decoy: string;
  /** 0 (easy) to 1 (hard): scales every way the simulated model can go wrong. */
  difficulty: number;
}

const health = (service: string, status: string, errorRate: number, p99Ms: number): PlannedCall => ({
  name: 'get_service_health',
  input: { service },
  answer: { status, error_rate: errorRate, p99_ms: p99Ms },
});
const deploys = (service: string, id: string, summary: string): PlannedCall => ({
  name: 'list_deploys',
  input: { service, since: 'today' },
  answer: [{ id, at: '09:42', author: 'mlee', summary }],
});
const errors = (service: string, top: string, count: number): PlannedCall => ({
  name: 'get_error_summary',
  input: { service, window_minutes: 60 },
  answer: {
    window_minutes: 60,
    top: [
      { error: top, count },
      { error: 'CartNotFound', count: 12 },
    ],
  },
});
const latency = (service: string, slowest: string, ms: number): PlannedCall => ({
  name: 'get_latency_breakdown',
  input: { service },
  answer: {
    total_p99_ms: ms + 80,
    calls: [
      { downstream: slowest, p99_ms: ms },
      { downstream: 'cache', p99_ms: 4 },
    ],
  },
});
const dependency = (service: string, name: string, healthy: boolean): PlannedCall => ({
  name: 'get_dependency_status',
  input: { service, dependency: name },
  answer: { dependency: name, healthy, detail: healthy ? 'ok' : 'connection pool exhausted' },
});

const cases: IncidentCase[] = [
  {
    id: 'checkout-health',
    question: 'Is checkout healthy?',
    plan: [health('checkout', 'degraded', 0.04, 2400)],
    fact: 'degraded',
    decoy: 'healthy',
    difficulty: 0.05,
  },
  {
    id: 'search-health',
    question: 'Is search healthy right now?',
    plan: [health('search', 'healthy', 0.001, 180)],
    fact: 'healthy',
    decoy: 'degraded',
    difficulty: 0.05,
  },
  {
    id: 'payments-deploy',
    question: 'Did anything deploy to payments today?',
    plan: [deploys('payments', 'd-7731', 'Retry card auth twice')],
    fact: 'd-7731',
    decoy: 'd-7713',
    difficulty: 0.1,
  },
  {
    id: 'checkout-top-error',
    question: 'What is the top error on checkout in the last hour?',
    plan: [errors('checkout', 'PaymentClientTimeout', 1284)],
    fact: 'PaymentClientTimeout',
    decoy: 'CartNotFound',
    difficulty: 0.15,
  },
  {
    id: 'search-slow',
    question: 'Why is search slow?',
    plan: [latency('search', 'ranking-service', 1900)],
    fact: 'ranking-service',
    decoy: 'cache',
    difficulty: 0.2,
  },
  {
    id: 'inventory-deploy',
    question: 'Was inventory deployed today, and what changed?',
    plan: [deploys('inventory', 'd-5120', 'New stock reservation query')],
    fact: 'd-5120',
    decoy: 'd-5210',
    difficulty: 0.2,
  },
  {
    id: 'checkout-cause',
    question: 'Checkout is degraded: did a deploy cause it?',
    plan: [
      health('checkout', 'degraded', 0.04, 2400),
      deploys('checkout', 'd-4812', 'Bump payment client to 3.2.0'),
    ],
    fact: 'd-4812',
    decoy: 'd-4821',
    difficulty: 0.35,
  },
  {
    id: 'payments-db',
    question: 'Payments errors are up: is its database healthy?',
    plan: [errors('payments', 'DbPoolTimeout', 311), dependency('payments', 'postgres', false)],
    fact: 'connection pool',
    decoy: 'network',
    difficulty: 0.4,
  },
  {
    id: 'search-cause',
    question: 'Search p99 doubled: which downstream is it, and is it down?',
    plan: [latency('search', 'ranking-service', 1900), dependency('search', 'ranking-service', true)],
    fact: 'ranking-service',
    decoy: 'cache',
    difficulty: 0.45,
  },
  {
    id: 'checkout-full',
    question: 'Walk me through the checkout incident: health, errors and the cause.',
    plan: [
      health('checkout', 'degraded', 0.04, 2400),
      errors('checkout', 'PaymentClientTimeout', 1284),
      deploys('checkout', 'd-4812', 'Bump payment client to 3.2.0'),
    ],
    fact: 'd-4812',
    decoy: 'CartNotFound',
    difficulty: 0.6,
  },
  {
    id: 'inventory-chain',
    question: 'Inventory is slow: find the slow call and check that dependency.',
    plan: [
      latency('inventory', 'stock-db', 2600),
      dependency('inventory', 'stock-db', false),
      deploys('inventory', 'd-5120', 'New stock reservation query'),
    ],
    fact: 'stock-db',
    decoy: 'cache',
    difficulty: 0.7,
  },
  {
    id: 'payments-full',
    question: 'Full diagnosis of payments: health, top error, database, recent deploys.',
    plan: [
      health('payments', 'degraded', 0.09, 3100),
      errors('payments', 'DbPoolTimeout', 311),
      dependency('payments', 'postgres', false),
      deploys('payments', 'd-7731', 'Retry card auth twice'),
    ],
    fact: 'DbPoolTimeout',
    decoy: 'CardDeclined',
    difficulty: 0.85,
  },
];

/** The canned data the incident tools answer from, for one case. */
function dataOf(kase: IncidentCase): ScenarioData {
  const data: ScenarioData = { search_logs: { byInput: {}, fallback: { lines: ['(no matching lines)'] } } };
  for (const call of kase.plan) {
    const name = call.name as keyof ScenarioData;
    const existing = data[name] ?? { byInput: {} };
    existing.byInput[inputKey(call.input)] = call.answer;
    data[name] = existing;
  }
  return data;
}

/** How many of the plan's calls have come back successfully so far. */
function progressOf(
  messages: readonly Message[],
  plan: PlannedCall[],
): { done: number; lastFailed: boolean } {
  let done = 0;
  let lastFailed = false;
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const text = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
      const expected = plan[done];
      lastFailed = block.isError === true;
      if (!lastFailed && expected && text.includes(JSON.stringify(expected.answer).slice(2, 20))) done++;
    }
  }
  return { done, lastFailed };
}

/**
 * A simulated on-call model: it follows the case's plan, and at each turn may go wrong with odds that
 * grow with the case's difficulty. Every draw comes from the trial's seeded source.
 */
function simulatedModel(kase: IncidentCase, random: RandomSource) {
  const odds = (base: number) => base * (0.3 + 1.4 * kase.difficulty);
  let hallucinated = false;
  let retriedAfterError = false;
  const turn = (request: ModelRequest): ScriptedTurn => {
    const { done, lastFailed } = progressOf(request.messages, kase.plan);
    if (request.tools.length === 0)
      return { text: `Best answer so far: ${done > 0 ? kase.fact : kase.decoy}.` };
    if (lastFailed && !retriedAfterError) {
      retriedAfterError = true;
      const planned = kase.plan[done];
      if (planned)
        return {
          text: 'That failed; trying once more.',
          toolCalls: [{ name: planned.name, input: planned.input }],
        };
    }
    if (lastFailed && random() < 0.5)
      return {
        text: 'The tools are failing.',
        toolCalls: [{ name: 'cannot_complete', input: { reason: 'tools failing' } }],
      };
    if (!hallucinated && random() < odds(0.06)) {
      hallucinated = true;
      return {
        text: 'Let me query everything at once.',
        toolCalls: [{ name: 'get_all_signals', input: { service: 'checkout' } }],
      };
    }
    if (random() < odds(0.15))
      return {
        text: 'Searching the logs for clues.',
        toolCalls: [
          {
            name: 'search_logs',
            input: { service: 'checkout', query: `timeout ${Math.floor(random() * 4)}` },
          },
        ],
      };
    const planned = kase.plan[done];
    if (planned) {
      if (random() < odds(0.08))
        return {
          text: 'Checking.',
          toolCalls: [{ name: planned.name, input: { ...planned.input, service: undefined } }],
        };
      return { text: `Next: ${planned.name}.`, toolCalls: [{ name: planned.name, input: planned.input }] };
    }
    if (random() < odds(0.05))
      return {
        text: 'I cannot tell.',
        toolCalls: [{ name: 'cannot_complete', input: { reason: 'unclear' } }],
      };
    const right = random() >= odds(0.25);
    return { text: `Diagnosis: ${right ? kase.fact : kase.decoy}.` };
  };
  return scriptedModel(
    Array.from({ length: 12 }, () => (request: ModelRequest) => turn(request)),
    { name: 'sim-oncall' },
  );
}

const evalCases: EvalCase<IncidentCase>[] = cases.map((kase) => ({
  id: kase.id,
  input: kase.question,
  world: () => kase,
  // Written before any run: the answer names the fact, and never the decoy.
  expect: ({ answer }) =>
    answer === undefined
      ? { pass: false, reason: 'no answer' }
      : answer.includes(kase.fact) && !answer.includes(kase.decoy)
        ? true
        : { pass: false, reason: `expected ${kase.fact}` },
  trajectory: { maxSteps: kase.plan.length + 4 },
}));

/** The suite, as `reins eval run` loads it. */
const suite: EvalSuite<IncidentCase> = {
  name: 'incident-agent',
  cases: evalCases,
  agent: ({ world, random }) => ({
    model: simulatedModel(world, random),
    system:
      'You are an on-call assistant. Diagnose with the tools; answer as soon as the evidence supports it.',
    tools: incidentTools(dataOf(world)),
    actor: { id: 'oncall', scopes: ['incidents:read'] },
    maxSteps: 8,
    repeatLimit: 3,
    toolTimeoutMs: 200,
    maxToolErrors: 4,
    prices: { 'sim-oncall': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } },
  }),
};
export default suite;

/**
 * The eval (k = 3 over `trials` trials a case), then the fault matrix: each of the tools the plans
 * use broken one way at a time, on its first call, with `trials` trials a case per cell.
 */
export async function main(trials = 10, matrixTrials = 3) {
  const run = { trials, k: 3, concurrency: 4, seed: 20261203 };
  const report = await runEval(suite, run);
  const matrix = await runFaultMatrix(suite, {
    tools: ['get_service_health', 'list_deploys', 'get_error_summary', 'get_dependency_status'],
    atCall: 1,
    delayMs: 50,
    run: { ...run, trials: matrixTrials },
  });
  return { report, matrix };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { report, matrix } = await main();
  const { summary } = report;
  console.log(
    `${report.suite}: ${summary.trials} trials, pass rate ${(summary.passRate * 100).toFixed(1)} %`,
  );
  console.log(`pass@3 ${summary.passAtK?.toFixed(3)}  pass^3 ${summary.passHatK?.toFixed(3)}`);
  for (const one of report.cases)
    console.log(
      `  ${one.id.padEnd(20)} ${one.passes}/${one.n}  pass@3 ${one.passAtK?.toFixed(2)}  pass^3 ${one.passHatK?.toFixed(2)}`,
    );
  console.log('failure classes:', report.failureClasses);
  console.log('fault matrix: recovered (the same trials unfaulted) · cost ×');
  for (const cell of matrix.cells)
    console.log(
      `  ${cell.tool.padEnd(22)} ${cell.fault.padEnd(15)} ${cell.recoveryRate === null ? 'untested' : `${(cell.recoveryRate * 100).toFixed(0)} % (${((cell.baselinePassRateOnFaulted ?? 0) * 100).toFixed(0)} %)`} · ${cell.costMultiplier?.toFixed(2) ?? '—'}×`,
    );
}
