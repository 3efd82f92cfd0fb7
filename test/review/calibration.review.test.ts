import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/model/model.js';
import { calibrateTrigger, type LabeledSample } from '../../src/routing/calibrate-trigger.js';
import { confidenceTrigger } from '../../src/routing/confidence-trigger.js';
import { seededRandom } from '../../src/testing/seeded-random.js';

const request: ModelRequest = {
  system: '',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
  tools: [],
  toolChoice: 'auto',
};
const sample = (
  i: number,
  confidence: number,
  needsEscalation: boolean,
  strongCorrect: boolean,
): LabeledSample => ({
  id: `s${i}`,
  request,
  response: { content: [{ type: 'text', text: `{"confidence": ${confidence}}` }], stopReason: 'end_turn' },
  needsEscalation,
  strongCorrect,
  cheapCost: 1,
  strongCost: 15,
  cheapLatencyMs: 100,
  strongLatencyMs: 400,
});

describe('review: calibrateTrigger', () => {
  it("the 'upper' bound on accuracy loss does not call three samples enough evidence", async () => {
    const three = [sample(0, 0.9, false, true), sample(1, 0.8, false, true), sample(2, 0.95, false, true)];
    const byMisroutes = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), three, {
      targetMisrouteRate: 0.01,
      random: seededRandom(1),
    });
    // The misroute target is (rightly) unmet on three samples: Wilson's upper bound is ~0.56.
    expect(byMisroutes.kind).toBe('unmet');
    const byLoss = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), three, {
      targetAccuracyLoss: 0.01,
      random: seededRandom(1),
    });
    // The same three samples "show" a ≤ 1-point loss at the 95 % upper bound, keeping every request cheap.
    expect(byLoss.kind).toBe('unmet');
  });

  it("the 'upper' bound on accuracy loss does not collapse when every kept sample agrees (n = 20)", async () => {
    // 20 samples, all kept-cheap answers right: the normal interval has zero width, whatever n.
    const many = Array.from({ length: 20 }, (_, i) => sample(i, 0.9, false, true));
    const result = await calibrateTrigger(confidenceTrigger({ threshold: 0.5 }), many, {
      targetAccuracyLoss: 0.01,
      random: seededRandom(1),
    });
    // With 20 samples and no error seen, a 95 % bound on the loss is about 3/20 (rule of three) = 0.15.
    expect(result.accuracyLoss?.interval[1]).toBeGreaterThan(0.05);
  });
});
