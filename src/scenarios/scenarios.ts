import type { ModelRequest } from '../model/model.js';
import type { ScriptedTurn, ScriptStep } from '../testing/scripted-model.js';
import { randomInt, seededRandom } from '../testing/seeded-random.js';
import { inputKey, type ScenarioData } from './incident-tools.js';

export type ScenarioName = 'happy' | 'loops' | 'drowns' | 'wanders';

/** One of the lesson's four runs: the model's decisions are scripted, the controls are real. */
export interface Scenario {
  name: ScenarioName;
  title: string;
  /** What a person should notice. */
  lesson: string;
  question: string;
  system: string;
  data: ScenarioData;
  /** The model's turns while it may use tools. */
  turns: ScriptedTurn[];
  /** What the model says when asked for its best answer with tools disabled (the final-answer step). */
  finalAnswer: string;
  limits: { maxSteps: number; maxContextTokens: number; repeatLimit: number };
}

const system =
  'You are an on-call assistant for an e-commerce platform. Diagnose production questions with the tools. ' +
  'Use each observation to choose the next check, and answer as soon as the evidence supports it. ' +
  'Read-only tools only: you cannot change anything.';

const lessonLimits = { maxSteps: 6, maxContextTokens: 8_000, repeatLimit: 3 };

const call = (name: string, input: Record<string, unknown>) => ({ name, input });

const happy: Scenario = {
  name: 'happy',
  title: 'The happy path',
  lesson:
    'Each step uses the previous observation, and the agent stops as soon as it can answer. Watch the context grow every step.',
  question: 'Is the checkout service healthy, and did anything deploy today?',
  system,
  limits: lessonLimits,
  data: {
    get_service_health: {
      byInput: {
        [inputKey({ service: 'checkout' })]: { status: 'degraded', error_rate: 0.04, p99_ms: 2400 },
      },
    },
    list_deploys: {
      byInput: {
        [inputKey({ service: 'checkout', since: 'today' })]: [
          {
            id: 'd-4812',
            at: '09:42',
            commit: 'a1c9e3f',
            author: 'mlee',
            summary: 'Bump payment client to 3.2.0',
          },
        ],
      },
    },
    get_error_summary: {
      byInput: {
        [inputKey({ service: 'checkout', window_minutes: 240 })]: {
          window_minutes: 240,
          top: [
            { error: 'PaymentClientTimeout', count: 1284, first_seen: '09:44' },
            { error: 'CartNotFound', count: 37, first_seen: '06:10' },
          ],
        },
      },
    },
  },
  turns: [
    {
      text: 'I need the current health of the checkout service first.',
      toolCalls: [call('get_service_health', { service: 'checkout' })],
    },
    {
      text: 'It is degraded. Did anything deploy to checkout today that could explain it?',
      toolCalls: [call('list_deploys', { service: 'checkout', since: 'today' })],
    },
    {
      text: 'One deploy at 09:42 changed the payment client. Did the errors start after it?',
      toolCalls: [call('get_error_summary', { service: 'checkout', window_minutes: 240 })],
    },
    {
      text:
        'Checkout is degraded: 4% errors, p99 2.4 s. One deploy today: d-4812 at 09:42 (payment client 3.2.0). ' +
        'PaymentClientTimeout errors began at 09:44, two minutes later, and dominate the error log. ' +
        'The deploy is the likely cause; rolling back d-4812 is the first thing to try.',
    },
  ],
  finalAnswer:
    'Checkout is degraded (4% errors, p99 2.4 s); I did not finish checking whether today\u2019s deploy caused it.',
};

const latencyTimeout = {
  $error: {
    code: 'upstream_timeout',
    message: 'The metrics backend timed out. Try again in a minute, or use get_service_health.',
  },
};

const loops: Scenario = {
  name: 'loops',
  title: 'Loops',
  lesson:
    'A tool fails and the model reissues the identical call. You see it in two steps; only repeat detection on (tool, args) stops it inside the loop.',
  question: 'Why is checkout slow right now?',
  system,
  limits: lessonLimits,
  data: { get_latency_breakdown: { byInput: { [inputKey({ service: 'checkout' })]: latencyTimeout } } },
  turns: [
    {
      text: 'Let me see where checkout spends its request time.',
      toolCalls: [call('get_latency_breakdown', { service: 'checkout' })],
    },
    {
      text: 'That timed out. I will try the latency breakdown again.',
      toolCalls: [call('get_latency_breakdown', { service: 'checkout' })],
    },
    {
      text: 'Still timing out; one more try should get through.',
      toolCalls: [call('get_latency_breakdown', { service: 'checkout' })],
    },
    {
      text: 'The breakdown is what I need. Trying again.',
      toolCalls: [call('get_latency_breakdown', { service: 'checkout' })],
    },
    {
      text: 'Retrying the latency breakdown.',
      toolCalls: [call('get_latency_breakdown', { service: 'checkout' })],
    },
    { text: 'Trying once more.', toolCalls: [call('get_latency_breakdown', { service: 'checkout' })] },
  ],
  finalAnswer: 'I could not get a latency breakdown for checkout: the metrics backend kept timing out.',
};

/** About 41,000 tokens of log lines (4 characters a token), the same every time. */
export function drownsLogPayload(): { service: string; query: string; matches: number; lines: string[] } {
  const random = seededRandom(41_000);
  const kinds = [
    'PaymentClientTimeout',
    'CartNotFound',
    'InventoryStale',
    'TaxServiceSlow',
    'SessionExpired',
  ];
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < 163_000; i++) {
    const second = i * 7;
    const time = `${String(Math.floor(second / 3600) % 24).padStart(2, '0')}:${String(Math.floor(second / 60) % 60).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}`;
    const kind = kinds[randomInt(random, 0, kinds.length - 1)];
    const line = `${time}.${String(randomInt(random, 0, 999)).padStart(3, '0')} ERROR checkout-${randomInt(random, 1, 12)} ${kind} request_id=${Math.floor(
      random() * 0xffffffff,
    )
      .toString(16)
      .padStart(8, '0')} cart=${randomInt(random, 10_000, 99_999)} took_ms=${randomInt(random, 5, 9_000)}`;
    lines.push(line);
    length += line.length + 4;
  }
  return { service: 'checkout', query: 'level:error since:00:00', matches: lines.length, lines };
}

const drownsLog = drownsLogPayload();
// The answer quotes the log's first line, so it is true of the data a capped or admitted result shows.
const [firstErrorAt = '', , firstErrorHost = '', firstErrorKind = ''] = (drownsLog.lines[0] ?? '').split(' ');

const drowns: Scenario = {
  name: 'drowns',
  title: 'Drowns',
  lesson:
    'One tool returns about 41,000 tokens and the run is over on step one. The fix is in the tool (cap and page its output), not in the model.',
  question: 'When did the first checkout error happen today?',
  system,
  limits: lessonLimits,
  data: {
    search_logs: {
      byInput: { [inputKey({ service: 'checkout', query: 'level:error since:00:00' })]: drownsLog },
    },
  },
  turns: [
    {
      text: 'I will search the checkout logs for errors since midnight.',
      toolCalls: [call('search_logs', { service: 'checkout', query: 'level:error since:00:00' })],
    },
    { text: `The first error today was at ${firstErrorAt} (a ${firstErrorKind} on ${firstErrorHost}).` },
  ],
  finalAnswer: 'The first checkout error today was logged just after midnight.',
};

const series = (values: number[]) =>
  values.map((value, day) => ({ day: `2026-11-${String(20 + day).padStart(2, '0')}`, value }));

const wanders: Scenario = {
  name: 'wanders',
  title: 'Wanders',
  lesson:
    'Every step is reasonable and the sequence goes nowhere. Nothing in the loop can tell progress from motion: the step limit is a correctness control.',
  question: 'Why did checkout conversion drop last week?',
  system,
  limits: lessonLimits,
  data: {
    get_metrics: {
      byInput: {
        [inputKey({ service: 'checkout', metric: 'conversion_rate', range: '7d' })]: series([
          0.031, 0.031, 0.03, 0.029, 0.03, 0.029, 0.029,
        ]),
        [inputKey({ service: 'cart', metric: 'abandonment_rate', range: '7d' })]: series([
          0.68, 0.69, 0.68, 0.7, 0.69, 0.69, 0.7,
        ]),
        [inputKey({ service: 'payments', metric: 'decline_rate', range: '7d' })]: series([
          0.021, 0.02, 0.022, 0.021, 0.021, 0.022, 0.021,
        ]),
      },
    },
    list_deploys: {
      byInput: {
        [inputKey({ service: 'frontend', since: '7d' })]: [
          { id: 'd-4760', at: '2026-11-22 14:03', summary: 'Copy changes on the basket page' },
          { id: 'd-4791', at: '2026-11-25 10:17', summary: 'Dependency updates' },
        ],
      },
    },
    get_dependency_status: {
      byInput: {
        [inputKey({ service: 'checkout', dependency: 'tax-service' })]: { status: 'ok', p99_ms: 140 },
      },
    },
  },
  turns: [
    {
      text: 'First, how big was the drop? Let me get the conversion series.',
      toolCalls: [call('get_metrics', { service: 'checkout', metric: 'conversion_rate', range: '7d' })],
    },
    {
      text: 'A gentle slide. Maybe people abandon carts more.',
      toolCalls: [call('get_metrics', { service: 'cart', metric: 'abandonment_rate', range: '7d' })],
    },
    {
      text: 'Abandonment is flat-ish. Perhaps a frontend change shifted behaviour.',
      toolCalls: [call('list_deploys', { service: 'frontend', since: '7d' })],
    },
    {
      text: 'Routine deploys. Could payments be declining more cards?',
      toolCalls: [call('get_metrics', { service: 'payments', metric: 'decline_rate', range: '7d' })],
    },
    {
      text: 'Declines look normal. Maybe the tax service slowed checkout down.',
      toolCalls: [call('get_dependency_status', { service: 'checkout', dependency: 'tax-service' })],
    },
    {
      text: 'Tax is fine. Let me look at session metrics next.',
      toolCalls: [call('get_metrics', { service: 'checkout', metric: 'sessions', range: '7d' })],
    },
  ],
  finalAnswer:
    'I have not found a cause. Conversion slid from 3.1% to 2.9%; cart abandonment, card declines, frontend deploys and the tax service all look normal. ' +
    'The question may need a narrower scope (a segment, a region, or a specific day).',
};

/** The lesson's four scenarios, in the order worth stepping through. */
export const scenarios: Readonly<Record<ScenarioName, Scenario>> = { happy, loops, drowns, wanders };
export const scenarioNames = [
  'happy',
  'loops',
  'drowns',
  'wanders',
] as const satisfies readonly ScenarioName[];

/**
 * The scenario's script as model steps: its turns in order, except that a request with tools
 * disabled (the final-answer step) gets the scenario's best-answer text.
 */
export function scenarioScript(scenario: Scenario): ScriptStep[] {
  const steps: ScriptStep[] = [];
  const total = Math.max(scenario.turns.length, 64);
  for (let i = 0; i < total; i++) {
    const turn = scenario.turns[i];
    steps.push((request: ModelRequest) => {
      if (request.toolChoice === 'none') return { text: scenario.finalAnswer };
      return turn ?? { text: scenario.finalAnswer };
    });
  }
  return steps;
}
