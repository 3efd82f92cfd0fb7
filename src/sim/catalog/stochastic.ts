import { curve, sweep } from '../chart.js';
import { cascadeDefaults, cascadeExact, cascadeMonteCarlo, cascadeParamSpecs } from '../models/cascade.js';
import {
  compactionDefaults,
  compactionExact,
  compactionMonteCarlo,
  compactionParamSpecs,
  compactionSurvivalCurve,
} from '../models/compaction.js';
import { latencyDefaults, latencyExact, latencyMonteCarlo, latencyParamSpecs } from '../models/latency.js';
import {
  retryDefaults,
  retryDefaultTrials,
  retryExact,
  retryMonteCarlo,
  retryParamSpecs,
  retryParams,
} from '../models/retry.js';
import {
  timeoutCostAt,
  timeoutDefaults,
  timeoutExact,
  timeoutMonteCarlo,
  timeoutParamSpecs,
} from '../models/timeout.js';
import { withDefaults } from '../params.js';
import { int, num, pct, range, times, usd } from './format.js';
import { defineModel } from './types.js';

export const retryModel = defineModel({
  name: 'retry',
  title: 'Retry in place versus restart',
  source: 'post-22 (retry budgets)',
  params: retryParamSpecs,
  defaults: retryDefaults,
  monteCarlo: { defaultTrials: (params) => retryDefaultTrials[params.mode] },
  run(given, options) {
    const params = retryParams(given);
    const exact = retryExact(params);
    const monteCarlo = retryMonteCarlo(params, options);
    const other = params.mode === 'inplace' ? 'restart' : 'inplace';
    const otherExact =
      params.p < 1 || other === 'inplace' ? retryExact({ ...params, mode: other }) : undefined;
    const ps = [0, 0.05, 0.1, 0.15, 0.2, 0.3]
      .filter((p) => p !== params.p)
      .concat(params.p)
      .sort((a, b) => a - b);
    const top = Math.max(0.35, Math.min(params.p * 1.25, 0.95));
    const multipliers = (mode: 'inplace' | 'restart') =>
      sweep(0, top, 71).map((p) => [p, retryExact({ ...params, mode, p }).multiplier] as const);
    return {
      json: { params, exact, monteCarlo },
      tables: [
        {
          title: `${params.mode === 'inplace' ? 'In place' : 'Restart'}: ${params.steps} steps, cap ${params.retryCap}`,
          head: ['p', 'mean $/1k runs', 'multiplier', 'gave up', 'other mode'],
          rows: ps
            .filter((p) => params.mode === 'inplace' || p < 1)
            .map((p) => {
              const row = retryExact({ ...params, p });
              const alt =
                p < 1 || other === 'inplace' ? retryExact({ ...params, p, mode: other }) : undefined;
              return [
                p === params.p ? `${p} ◀` : String(p),
                usd(row.meanCostUsd * 1000, 3),
                times(row.multiplier),
                pct(row.gaveUpRate, 2),
                alt ? `${times(alt.multiplier)} ${other}` : '—',
              ];
            }),
        },
        {
          title: 'Exact versus Monte Carlo',
          head: ['', 'mean cost', '95% CI', 'multiplier', 'gave up'],
          rows: [
            ['exact', usd(exact.meanCostUsd, 6), '', times(exact.multiplier, 4), pct(exact.gaveUpRate, 3)],
            'skipped' in monteCarlo
              ? ['Monte Carlo', 'skipped', monteCarlo.skipped, '', '']
              : [
                  `Monte Carlo (${int(monteCarlo.trials)}, seed ${monteCarlo.seed})`,
                  usd(monteCarlo.meanCostUsd, 6),
                  range(monteCarlo.ci95, (x) => usd(x, 6)),
                  times(monteCarlo.multiplier, 4),
                  pct(monteCarlo.gaveUpRate, 3),
                ],
          ],
        },
      ],
      chart: {
        title: `Retry multiplier versus per-step failure (${params.steps} steps)`,
        x: { label: 'per-step failure probability p', format: 'percent' },
        y: { label: 'cost ÷ cost at p = 0', format: 'multiplier', min: 1 },
        lines: [
          { name: 'retry in place', points: multipliers('inplace') },
          { name: 'restart from step 0', points: multipliers('restart').filter(([, m]) => m < 50) },
        ],
        points: [{ x: params.p, y: exact.multiplier, label: `${times(exact.multiplier)} (${params.mode})` }],
      },
      notes: [
        `At p = ${params.p}: ${times(exact.multiplier)} ${params.mode === 'inplace' ? 'in place' : 'with restarts'}` +
          (otherExact
            ? `, ${times(otherExact.multiplier)} ${other === 'inplace' ? 'in place' : 'with restarts'}`
            : '') +
          ` — the naive guess is ${times(1 + params.p)}.`,
        ...(params.mode === 'restart'
          ? ['Restart discards the transcript, so --retry-cap and --error do not apply.']
          : []),
      ],
    };
  },
});

export const cascadeModel = defineModel({
  name: 'cascade',
  title: 'One bad step, N bad steps',
  source: 'post-04 (failure cascades)',
  params: cascadeParamSpecs,
  defaults: cascadeDefaults,
  monteCarlo: { defaultTrials: () => 200_000 },
  run(given, options) {
    const exact = cascadeExact(given);
    const monteCarlo = cascadeMonteCarlo(given, options);
    const params = withDefaults(cascadeDefaults, given);
    const lengths = [4, 8, 16, 25]
      .filter((n) => n !== params.steps)
      .concat(params.steps)
      .sort((a, b) => a - b);
    const longest = Math.max(30, params.steps * 2);
    return {
      json: { params, exact, monteCarlo },
      tables: [
        {
          title: `p = ${params.p}, p_c = ${params.pc}`,
          head: ['', 'faults/run', '95% CI', 'contaminated', 'independent', 'amplification'],
          rows: [
            [
              'exact',
              num(exact.faultsPerRun),
              '',
              pct(exact.contaminatedRate),
              num(exact.independentFaultsPerRun),
              times(exact.amplification),
            ],
            [
              `Monte Carlo (${int(monteCarlo.trials)})`,
              num(monteCarlo.faultsPerRun),
              range(monteCarlo.faultsPerRunCi95, (x) => num(x)),
              pct(monteCarlo.contaminatedRate),
              num(monteCarlo.independentFaultsPerRun),
              times(monteCarlo.amplification),
            ],
          ],
        },
        {
          title: 'Amplification by run length',
          head: ['steps', 'faults/run', 'independent', 'amplification'],
          rows: lengths.map((steps) => {
            const row = cascadeExact({ ...params, steps });
            return [
              String(steps),
              num(row.faultsPerRun),
              num(row.independentFaultsPerRun),
              times(row.amplification, 1),
            ];
          }),
        },
      ],
      chart: {
        title: 'Faults per run: coupled through the context versus independent',
        x: { label: 'steps per run' },
        y: { label: 'expected faults per run' },
        lines: [
          curve(
            `coupled (p_c = ${params.pc})`,
            sweep(1, longest, longest),
            (n) => cascadeExact({ ...params, steps: n }).faultsPerRun,
          ),
          curve('independent', sweep(1, longest, longest), (n) => n * params.p, { dashed: true }),
        ],
        points: [{ x: params.steps, y: exact.faultsPerRun, label: times(exact.amplification) }],
      },
      notes: [
        `${pct(exact.contaminatedRate, 0)} of runs carry a fault; coupling turns ${num(exact.independentFaultsPerRun, 2)} expected faults into ${num(exact.faultsPerRun, 2)}.`,
      ],
    };
  },
});

export const latencyModel = defineModel({
  name: 'latency',
  title: "The run's p99 is a different animal",
  source: 'post-10 (latency tails)',
  params: latencyParamSpecs,
  defaults: latencyDefaults,
  monteCarlo: { defaultTrials: () => 200_000 },
  run(given, options) {
    const exact = latencyExact(given);
    const monteCarlo = latencyMonteCarlo(given, options);
    const params = withDefaults(latencyDefaults, given);
    const ms = (x: number) => `${Math.round(x)} ms`;
    const statRow = (label: string, stats: typeof monteCarlo.run) => [
      label,
      ...(['mean', 'p50', 'p95', 'p99'] as const).map(
        (key) => `${ms(stats[key].value)} (${range(stats[key].ci95, (x) => String(Math.round(x)))})`,
      ),
    ];
    const { histogram } = monteCarlo;
    return {
      // The contract's shape: step and run statistics at the top, each { value, ci95 }.
      json: {
        params,
        step: monteCarlo.step,
        run: monteCarlo.run,
        exact,
        histogram,
        trials: monteCarlo.trials,
        seed: monteCarlo.seed,
      },
      tables: [
        {
          title: `${params.steps} steps, lognormal(mu ${params.mu}, sigma ${params.sigma})${params.fatStep !== undefined ? `, step ${params.fatStep} sigma ${params.fatSigma}` : ''}${params.parallel ? `, groups ${params.parallel.join(',')}` : ''} — Monte Carlo ${int(monteCarlo.trials)} draws, 95% CI in brackets`,
          head: ['', 'mean', 'p50', 'p95', 'p99'],
          rows: [
            statRow('step', monteCarlo.step),
            ['step (exact)', ms(exact.step.mean), ms(exact.step.p50), ms(exact.step.p95), ms(exact.step.p99)],
            statRow('run', monteCarlo.run),
          ],
        },
      ],
      chart: {
        title: `Run latency, ${int(monteCarlo.trials)} simulated runs`,
        x: { label: 'run latency', format: 'ms' },
        y: { label: 'runs' },
        bins: {
          name: 'runs per bin',
          bins: histogram.counts.map((count, i) => ({
            x0: histogram.startMs + i * histogram.widthMs,
            x1: histogram.startMs + (i + 1) * histogram.widthMs,
            y: count,
          })),
        },
        rules: [
          { x: monteCarlo.run.p50.value, label: 'p50' },
          { x: monteCarlo.run.p95.value, label: 'p95' },
          { x: monteCarlo.run.p99.value, label: 'p99' },
        ],
      },
      notes: [
        `A step's p99 is ${times(monteCarlo.step.p99.value / monteCarlo.step.p50.value, 1)} its median; the run's is ${times(monteCarlo.run.p99.value / monteCarlo.run.p50.value, 1)} — but ${ms(monteCarlo.run.p99.value - monteCarlo.run.p50.value)} slower in absolute terms.`,
        `${pct(exact.atLeastOneSlowStep, 0)} of runs contain a step from its own slowest 10 %.`,
      ],
    };
  },
});

export const compactionModel = defineModel({
  name: 'compaction',
  title: 'Does the early constraint survive compaction?',
  source: 'post-11 (compaction is lossy)',
  params: compactionParamSpecs,
  defaults: compactionDefaults,
  monteCarlo: { defaultTrials: () => 200_000 },
  run(given, options) {
    const exact = compactionExact(given);
    const monteCarlo = compactionMonteCarlo(given, options);
    const params = withDefaults(compactionDefaults, given);
    const other = params.policy === 'recency' ? 'salience' : 'recency';
    const survival = (policy: 'recency' | 'salience') =>
      compactionSurvivalCurve({
        ...params,
        policy,
        turns: Math.max(params.turns, params.keyTurn + params.budget * 2),
      }).map((point) => [point.turns, point.survival] as const);
    return {
      json: { params, exact, monteCarlo },
      tables: [
        {
          title: `${params.turns} turns, ${params.budget} facts verbatim, summary keeps ${pct(params.retain, 0)}, key fact at turn ${params.keyTurn}`,
          head: ['policy', 'exact', 'Monte Carlo', '95% CI'],
          rows: [
            [
              params.policy,
              pct(exact.survival),
              pct(monteCarlo.survival, 2),
              range(monteCarlo.ci95, (x) => pct(x, 2)),
            ],
            [other, pct(compactionExact({ ...params, policy: other }).survival), '', ''],
          ],
        },
      ],
      chart: {
        title: 'Load-bearing fact present at the last turn, by run length',
        x: { label: 'turns in the run' },
        y: { label: 'survival', format: 'percent', min: 0 },
        lines: [
          { name: 'recency compaction', points: survival('recency'), step: true },
          { name: 'salience (pinned)', points: survival('salience'), step: true, dashed: true },
        ],
        points: [{ x: params.turns, y: exact.survival, label: pct(exact.survival, 0) }],
      },
      notes: [
        exact.agedOut
          ? `The fact left the verbatim window at turn ${params.keyTurn + params.budget}; under recency it survives only if the summary kept it.`
          : 'The fact is still in the verbatim window at the last turn.',
      ],
    };
  },
});

export const timeoutModel = defineModel({
  name: 'timeout',
  title: 'Your timeout is a bet',
  source: 'dev-feed-crossposts (the timeout post)',
  params: timeoutParamSpecs,
  defaults: timeoutDefaults,
  monteCarlo: { defaultTrials: () => 20_000 },
  run(given, options) {
    const exact = timeoutExact(given);
    const monteCarlo = timeoutMonteCarlo(given, options);
    const params = withDefaults(timeoutDefaults, given);
    const points = exact.curve.map((point, i) => ({
      ...point,
      monteCarloCostUsd: monteCarlo.curve[i]?.monteCarloCostUsd ?? Number.NaN,
      ci95: monteCarlo.curve[i]?.ci95,
    }));
    const low = Math.min(...params.timeouts);
    const high = Math.max(...params.timeouts);
    return {
      json: {
        params,
        curve: points,
        optimum: exact.optimum,
        continuousOptimum: exact.continuousOptimum,
        trials: monteCarlo.trials,
        seed: monteCarlo.seed,
      },
      tables: [
        {
          title: `Average cost per call by timeout (Monte Carlo: ${int(monteCarlo.trials)} calls each, seed ${monteCarlo.seed})`,
          head: ['timeout', 'exact $/call', 'Monte Carlo', '95% CI', ''],
          rows: points.map((point) => [
            `${point.timeoutSeconds} s`,
            usd(point.exactCostUsd),
            usd(point.monteCarloCostUsd),
            point.ci95 ? range(point.ci95, (x) => usd(x)) : '',
            point.timeoutSeconds === exact.optimum.timeoutSeconds ? '◀ cheapest' : '',
          ]),
        },
      ],
      chart: {
        title: 'Cost per call versus timeout',
        x: { label: 'timeout', format: 'seconds' },
        y: { label: 'average cost per call', format: 'usd', min: 0 },
        lines: [
          curve('exact', sweep(low, high, 241), (t) => timeoutCostAt(params, t)),
          {
            name: 'Monte Carlo',
            points: points.map((point) => [point.timeoutSeconds, point.monteCarloCostUsd] as const),
            dashed: true,
          },
        ],
        points: [
          {
            x: exact.optimum.timeoutSeconds,
            y: exact.optimum.exactCostUsd,
            label: `minimum ${exact.optimum.timeoutSeconds} s`,
          },
        ],
      },
      notes: [
        `The cheapest timeout asked about is ${exact.optimum.timeoutSeconds} s at ${usd(exact.optimum.exactCostUsd, 5)} per call; the shortest costs ${times(exact.curve[0] ? exact.curve[0].exactCostUsd / exact.optimum.exactCostUsd : Number.NaN)} that.`,
      ],
    };
  },
});
