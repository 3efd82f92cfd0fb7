import type { PriceTable } from '../controls/price.js';
import { textOf } from '../model/content.js';
import type { Model, ModelRequest, ModelResponse } from '../model/model.js';
import { simRandom } from '../sim/random.js';
import type { FakeClock } from '../testing/fake-clock.js';

/**
 * The stated distributions of the synthetic routing workload (`reins bench routing`). Where the
 * seeds give a figure it is theirs; the rest are assumptions, named as such in docs/routing.md.
 */
export interface RoutingWorkloadParams {
  /** Share of easy requests. post-06: 0.7; the routing simulator's `easy` default. */
  easyShare: number;
  /** Strong ÷ cheap price per token (so per request). post-06: 15; the simulator's `ratio`. */
  priceRatio: number;
  /** P(cheap answer right | easy), P(… | hard). Easy means the cheap model handles it (post-06). */
  cheapAccuracy: { easy: number; hard: number };
  strongAccuracy: { easy: number; hard: number };
  /** P(the cheap answer is malformed | it is wrong): post-06's "fails structurally before semantically". Right answers are well-formed. */
  structuralFailureWhenWrong: number;
  /** The cheap tier's self-reported confidence: logistic(Normal(mean, sd)) by whether it is right. */
  confidenceLogit: { right: number; wrong: number; sd: number };
  /** A judge's score, the same way: logistic(Normal(mean, sd)). Priced as the cheap tier. */
  judgeLogit: { right: number; wrong: number; sd: number };
  /** Lognormal latency per call: post-10's step default (mu 6, sigma 0.6) for the strong tier. */
  latency: {
    cheap: { mu: number; sigma: number };
    strong: { mu: number; sigma: number };
    judge: { mu: number; sigma: number };
  };
  /** Tokens per request, uniform whole numbers in [min, max], the same for both tiers. */
  inputTokens: [min: number, max: number];
  outputTokens: [min: number, max: number];
}

/** The workload `reins bench routing` runs: each figure's source is in docs/routing.md. */
export const routingWorkloadDefaults: RoutingWorkloadParams = {
  easyShare: 0.7,
  priceRatio: 15,
  cheapAccuracy: { easy: 0.98, hard: 0.3 },
  strongAccuracy: { easy: 0.98, hard: 0.92 },
  structuralFailureWhenWrong: 0.5,
  confidenceLogit: { right: 2, wrong: 0.5, sd: 1 },
  judgeLogit: { right: 2, wrong: 0, sd: 1 },
  latency: { cheap: { mu: 5.3, sigma: 0.6 }, strong: { mu: 6, sigma: 0.6 }, judge: { mu: 5.3, sigma: 0.6 } },
  inputTokens: [400, 1600],
  outputTokens: [100, 400],
};

/** One synthetic request with everything each tier will do on it, drawn up front. */
export interface WorkloadRequest {
  id: string;
  hard: boolean;
  inputTokens: number;
  outputTokens: number;
  cheap: { right: boolean; malformed: boolean; confidence: number; latencyMs: number };
  strong: { right: boolean; latencyMs: number };
  judge: { score: number; latencyMs: number };
}

const logistic = (x: number) => 1 / (1 + Math.exp(-x));

/** `n` requests drawn from `seed` (the same seed, the same requests, bit for bit). */
export function routingWorkload(
  n: number,
  seed: number,
  params: RoutingWorkloadParams = routingWorkloadDefaults,
  idPrefix = `s${seed}-`,
): WorkloadRequest[] {
  const random = simRandom(seed);
  const between = ([min, max]: [number, number]) => min + Math.floor(random.uniform() * (max - min + 1));
  const lognormal = ({ mu, sigma }: { mu: number; sigma: number }) => Math.exp(mu + sigma * random.normal());
  const requests: WorkloadRequest[] = [];
  for (let i = 0; i < n; i++) {
    const hard = random.uniform() >= params.easyShare;
    const cheapRight = random.uniform() < (hard ? params.cheapAccuracy.hard : params.cheapAccuracy.easy);
    const strongRight = random.uniform() < (hard ? params.strongAccuracy.hard : params.strongAccuracy.easy);
    const malformed = !cheapRight && random.uniform() < params.structuralFailureWhenWrong;
    const { confidenceLogit: c, judgeLogit: j } = params;
    requests.push({
      id: `${idPrefix}${i}`,
      hard,
      inputTokens: between(params.inputTokens),
      outputTokens: between(params.outputTokens),
      cheap: {
        right: cheapRight,
        malformed,
        confidence: logistic((cheapRight ? c.right : c.wrong) + c.sd * random.normal()),
        latencyMs: lognormal(params.latency.cheap),
      },
      strong: { right: strongRight, latencyMs: lognormal(params.latency.strong) },
      judge: {
        score: logistic((cheapRight ? j.right : j.wrong) + j.sd * random.normal()),
        latencyMs: lognormal(params.latency.judge),
      },
    });
  }
  return requests;
}

/** Prices for the workload's tiers: per token, the strong tier `priceRatio` × the cheap one. */
export function routingWorkloadPrices(params: RoutingWorkloadParams = routingWorkloadDefaults): PriceTable {
  const cheap = { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 5 };
  const times = (k: number) => ({ inputUsdPerMillionTokens: k, outputUsdPerMillionTokens: 5 * k });
  return { 'workload-cheap': cheap, 'workload-strong': times(params.priceRatio), 'workload-judge': cheap };
}

/** The request a workload item becomes: its id in the user message. */
export function workloadModelRequest(item: WorkloadRequest): ModelRequest {
  return {
    system: 'Answer with JSON: {"answer": …, "confidence": 0..1}.',
    messages: [{ role: 'user', content: [{ type: 'text', text: item.id }] }],
    tools: [],
    toolChoice: 'none',
  };
}

/** The answer text the label counts as right for a request. */
export const rightAnswer = (item: WorkloadRequest) => `right:${item.id}`;

/**
 * The workload's scripted tiers: each answers a request as drawn (right or wrong, well-formed or
 * not, its confidence), bills the request's tokens, and advances `clock` by its drawn latency.
 */
export function routingWorkloadTiers(
  items: readonly WorkloadRequest[],
  clock: FakeClock,
): { cheap: Model; strong: Model; judge: Model } {
  const byId = new Map(items.map((item) => [item.id, item]));
  const itemOf = (request: ModelRequest) => {
    const id = textOf(request.messages.at(-1)?.content ?? []);
    const item = byId.get(id) ?? byId.get(/Request:\n(.*)\n/.exec(id)?.[1] ?? '');
    if (!item) throw new Error(`no workload request ${JSON.stringify(id.slice(0, 40))}`);
    return item;
  };
  const usage = (item: WorkloadRequest) => ({
    inputTokens: item.inputTokens,
    outputTokens: item.outputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  const reply = (model: string, text: string, item: WorkloadRequest): ModelResponse => ({
    content: [{ type: 'text', text }],
    stopReason: 'end_turn',
    usage: usage(item),
    model,
  });
  const answerOf = (item: WorkloadRequest, right: boolean) =>
    right ? rightAnswer(item) : `wrong:${item.id}`;
  return {
    cheap: {
      name: 'workload-cheap',
      async generate(request) {
        const item = itemOf(request);
        clock.advance(item.cheap.latencyMs);
        const answer = answerOf(item, item.cheap.right);
        const confidence = item.cheap.confidence.toFixed(4);
        const text = item.cheap.malformed
          ? `answer: ${answer}, confidence: ${confidence}`
          : `{"answer":"${answer}","confidence":${confidence}}`;
        return reply('workload-cheap', text, item);
      },
    },
    strong: {
      name: 'workload-strong',
      async generate(request) {
        const item = itemOf(request);
        clock.advance(item.strong.latencyMs);
        return reply('workload-strong', `{"answer":"${answerOf(item, item.strong.right)}"}`, item);
      },
    },
    judge: {
      name: 'workload-judge',
      async generate(request) {
        const item = itemOf(request);
        clock.advance(item.judge.latencyMs);
        return {
          ...reply('workload-judge', `{"score":${item.judge.score.toFixed(4)}}`, item),
          usage: {
            inputTokens: item.inputTokens + item.outputTokens,
            outputTokens: 10,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
          },
        };
      },
    },
  };
}
