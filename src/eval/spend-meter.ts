import type { TraceEvent } from '../trace/events.js';
import type { TraceSink } from '../trace/sink.js';
import type { TrialRecord } from './eval-types.js';

/** Tokens and dollars spent. */
export interface Spend {
  tokens: number;
  usd: number;
}

/** Spend of an eval's finished trials and of those in flight, read from their traces as they run. */
export class SpendMeter {
  finished: Spend = { tokens: 0, usd: 0 };
  private readonly live = new Map<object, Spend>();

  sink(owner: object, onChange: () => void): TraceSink {
    const spend: Spend = { tokens: 0, usd: 0 };
    this.live.set(owner, spend);
    return {
      write: (event: TraceEvent) => {
        if (event.type === 'model-response' || event.type === 'step-end') {
          spend.tokens = event.billedTokens;
          spend.usd = event.costUsd;
          onChange();
        }
      },
    };
  }

  /** Forgets a trial in flight and gives back what it had spent. */
  settle(owner: object): Spend {
    const spend = this.live.get(owner) ?? { tokens: 0, usd: 0 };
    this.live.delete(owner);
    return spend;
  }

  add(record: TrialRecord): void {
    this.finished.tokens += record.billedTokens + (record.gradingTokens ?? 0);
    this.finished.usd += record.costUsd + (record.gradingCostUsd ?? 0);
  }

  total(): Spend {
    let { tokens, usd } = this.finished;
    for (const spend of this.live.values()) {
      tokens += spend.tokens;
      usd += spend.usd;
    }
    return { tokens, usd };
  }
}
