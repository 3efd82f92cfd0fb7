/**
 * A routing cascade for ticket classification, offline: fit the cheap model's confidence threshold
 * on 200 labeled tickets, run a week of traffic through the cascade inside `runAgent`, and check the
 * calibration against what the traces say. The cheap model (scripted) is overconfident when wrong,
 * as post-06 warns: a 0.5 threshold would keep most of its mistakes.
 *
 * Run it: npx tsx examples/route-support-tickets.ts
 */

import { type ModelRequest, type ModelResponse, memoryTraceSink, runAgent } from 'reins';
import {
  anyTrigger,
  calibrateTrigger,
  cascadeModel,
  checkTrigger,
  confidenceTrigger,
  escalationStats,
  type LabeledSample,
  structuralTrigger,
} from 'reins/routing';
import { fakeClock, seededRandom } from 'reins/testing';

interface Ticket {
  id: string;
  /** The cheap model gets it right. */
  cheapRight: boolean;
  /** What the cheap model says about its own answer. */
  confidence: number;
}

/** Tickets: 75 % the cheap model classifies right (confident), the rest wrong (less so, but not much). */
function tickets(count: number, seed: number): Ticket[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const cheapRight = random() < 0.75;
    const confidence = cheapRight ? 0.7 + 0.3 * random() : 0.45 + 0.4 * random();
    return { id: `T-${seed}-${i}`, cheapRight, confidence: Math.round(confidence * 100) / 100 };
  });
}

const usage = { inputTokens: 800, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 };
const prices = {
  'small-model': { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 5 },
  'large-model': { inputUsdPerMillionTokens: 15, outputUsdPerMillionTokens: 75 },
};

/** The cheap model as a `Model`: it finds the ticket id in the request and answers as drawn. */
function smallModel(byId: Map<string, Ticket>) {
  return {
    name: 'small-model',
    async generate(request: ModelRequest): Promise<ModelResponse> {
      const block = request.messages.at(-1)?.content[0];
      const ticket = byId.get(block?.type === 'text' ? block.text : '');
      const label = ticket?.cheapRight ? 'billing' : 'shipping';
      const text = `{"category": "${label}", "confidence": ${ticket?.confidence ?? 0}}`;
      return { content: [{ type: 'text', text }], stopReason: 'end_turn', usage, model: 'small-model' };
    },
  };
}
const largeModel = {
  name: 'large-model',
  async generate(): Promise<ModelResponse> {
    return {
      content: [{ type: 'text', text: '{"category": "billing"}' }],
      stopReason: 'end_turn',
      usage,
      model: 'large-model',
    };
  },
};

export async function main() {
  const clock = fakeClock();
  // 1. Calibrate on labeled tickets: the small model's answers, and whether each was right.
  const labeled = tickets(200, 1);
  const small = smallModel(new Map(labeled.map((ticket) => [ticket.id, ticket])));
  const samples: LabeledSample[] = [];
  for (const ticket of labeled) {
    const request: ModelRequest = {
      system: 'Classify the ticket.',
      messages: [{ role: 'user', content: [{ type: 'text', text: ticket.id }] }],
      tools: [],
      toolChoice: 'none',
    };
    samples.push({
      id: ticket.id,
      request,
      response: await small.generate(request),
      needsEscalation: !ticket.cheapRight,
      cheapCost: 0.001,
      strongCost: 0.015,
      cheapLatencyMs: 300,
      strongLatencyMs: 900,
    });
  }
  const structural = structuralTrigger({ minChars: 10 });
  const calibration = await calibrateTrigger(
    anyTrigger(structural, confidenceTrigger({ threshold: 0.5 })),
    samples,
    {
      targetMisrouteRate: 0.05,
      random: seededRandom(7),
      clock,
    },
  );
  if (calibration.kind !== 'met') throw new Error(calibration.reason);

  // 2. Production: a week of tickets through the calibrated cascade, traced.
  const week = tickets(100, 2);
  const trace = memoryTraceSink();
  const model = cascadeModel({
    tiers: [smallModel(new Map(week.map((ticket) => [ticket.id, ticket]))), largeModel],
    escalate: anyTrigger(structural, confidenceTrigger({ threshold: calibration.threshold })),
  });
  let costUsd = 0;
  for (const ticket of week) {
    const result = await runAgent({
      model,
      input: ticket.id,
      system: 'Classify the ticket.',
      trace,
      prices,
      clock,
    });
    costUsd += result.costUsd;
  }

  // 3. A week later: is the calibration still what production does?
  clock.advance(7 * 86_400_000);
  const production = escalationStats(trace.events);
  const check = checkTrigger(calibration.threshold, { maxAgeMs: 30 * 86_400_000, production, clock });
  return { calibration, production, check, costUsd };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { calibration, production, check, costUsd } = await main();
  const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
  console.log(
    `threshold ${calibration.threshold.value.toFixed(3)} fitted on ${calibration.threshold.fittedOn.size} tickets`,
  );
  console.log(
    `  misroutes ${percent(calibration.misrouteRate.estimate)}, escalations ${percent(calibration.escalationRate.estimate)}, savings ${percent(calibration.savings.estimate)} vs all-large`,
  );
  console.log(
    `production: ${production.escalated} of ${production.requests} escalated, $${costUsd.toFixed(4)}`,
  );
  console.log(`calibration check: ${check.kind}`);
}
