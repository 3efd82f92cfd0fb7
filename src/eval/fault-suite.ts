import { fnv1a32 } from '../controls/text-hash.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { seededRandom } from '../testing/seeded-random.js';
import type { Clock } from '../time/clock.js';
import type { EvalSuite } from './eval-types.js';
import { type FaultFiring, type ToolFault, withFault } from './fault-injection.js';

/** Options for {@link faultSuite}: which tool misbehaves, how, and when. */
export interface FaultSuiteOptions extends FaultFiring {
  /** The name of the tool to wrap (one the suite's agent offers). */
  tool: string;
  fault: ToolFault;
  /** What `slow` waits on. @default the agent config's `clock`, else the system clock */
  clock?: Clock;
}

/** Per trial of a faulted suite (key `caseId#trial`): calls to the tool and faults fired. */
export interface FaultLedger {
  /** Faults fired over every trial run so far. */
  readonly injected: number;
  /** Trials in which the fault fired at least once, by `caseId#trial`. */
  readonly faultedTrials: ReadonlySet<string>;
  /** The count of one trial (undefined when it never ran here, e.g. resumed from a store). */
  trial(caseId: string, trial: number): { calls: number; injected: number } | undefined;
}

/** A suite whose agent has one tool wrapped with a fault, and the ledger of what fired. */
export type FaultedSuite<World = unknown> = EvalSuite<World> & { readonly faults: FaultLedger };

/**
 * The suite with one tool of its agent wrapped by {@link withFault}. Each trial's fault draws come
 * from a source seeded by the trial's seed and the (tool, fault) pair, never from the trial's own
 * `random`: the model and the world see the same draws as in the unfaulted suite, so a cell differs
 * from its baseline by the fault alone.
 *
 * @example
 * const cell = faultSuite(suite, { tool: 'get_order', fault: 'http_429', atCall: 1 });
 * const report = await runEval(cell, { trials: 20 });
 * // cell.faults.injected: faults fired over the run
 */
export function faultSuite<World>(suite: EvalSuite<World>, options: FaultSuiteOptions): FaultedSuite<World> {
  const trials = new Map<string, { calls: number; injected: number }>();
  const salt = fnv1a32(`${options.tool}\u0000${options.fault}`);
  const { tool: toolName, clock, ...firing } = options;
  const ledger: FaultLedger = {
    get injected() {
      let total = 0;
      for (const count of trials.values()) total += count.injected;
      return total;
    },
    get faultedTrials() {
      return new Set([...trials].filter(([, count]) => count.injected > 0).map(([key]) => key));
    },
    trial: (caseId, trial) => {
      const count = trials.get(faultLedgerKey(caseId, trial));
      return count === undefined ? undefined : { calls: count.calls, injected: count.injected };
    },
  };
  return {
    ...suite,
    name: `${suite.name} [${toolName}: ${options.fault}]`,
    faults: ledger,
    agent: async (context) => {
      const config = await suite.agent(context);
      const tools = config.tools ?? [];
      const at = tools.findIndex((tool) => tool.name === toolName);
      if (at < 0)
        throw new ConfigurationError(
          'faultSuite.tool',
          `the agent of "${suite.name}" offers no tool "${toolName}" (it has ${tools.map((tool) => tool.name).join(', ') || 'none'})`,
        );
      const faulty = withFault(tools[at] as NonNullable<(typeof tools)[number]>, {
        ...firing,
        random: seededRandom((context.seed ^ salt) >>> 0),
        ...((clock ?? config.clock) ? { clock: (clock ?? config.clock) as Clock } : {}),
      });
      // The harness may build a trial's agent again (a retried trial): the last build counts.
      trials.set(faultLedgerKey(context.caseId, context.trial), faulty.faultCount);
      return { ...config, tools: tools.map((tool, index) => (index === at ? faulty : tool)) };
    },
  };
}

/** The ledger's key of one trial. */
export const faultLedgerKey = (caseId: string, trial: number) => `${caseId}#${trial}`;
