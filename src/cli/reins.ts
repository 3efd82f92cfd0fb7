#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { isMissingPackage, missingPeerError } from '../errors/missing-peer.js';
import { toolFaults } from '../eval/fault-injection.js';
import { scenarioNames } from '../scenarios/index.js';
import { benchContext } from './bench-context.js';
import { benchFleet } from './bench-fleet.js';
import { benchIdempotency } from './bench-idempotency.js';
import { benchInjection } from './bench-injection.js';
import { benchQueue } from './bench-queue.js';
import { benchRouting } from './bench-routing.js';
import { demo } from './demo.js';
import { demoStream } from './demo-stream.js';
import { dlq } from './dlq.js';
import { evalCompare, evalRegress, evalRun } from './eval.js';
import { glossary, sourceNote } from './glossary.js';
import { addModelCommands } from './model.js';
import { sanitize } from './sanitize.js';
import { statsCommand } from './stats.js';
import { traceReplay, traceShow } from './trace.js';
import { nonNegativeNumber, positiveNumber, wholeNumber } from './whole-number.js';
import { workerCommand } from './worker.js';

/** The serve commands, loaded when used: they need the optional peers hono and @hono/node-server. */
async function loadServer(command: string): Promise<typeof import('./serve.js') | undefined> {
  try {
    return await import('./serve.js');
  } catch (error) {
    const missing = serverPeers.filter((peer) => isMissingPackage(error, peer.name));
    if (missing.length === 0) throw error;
    console.error(missingPeerError(command, serverPeers).message);
    process.exitCode = 2;
    return undefined;
  }
}
const serverPeers = [
  { name: 'hono', range: '^4' },
  { name: '@hono/node-server', range: '^2' },
];

/** The package's version, from the package.json two levels above this file (dist/cli/ or src/cli/). */
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const program = new Command('reins')
  .description('Production controls for LLM agents')
  .version(version, '-V, --version', 'print the reins version')
  .exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : 2);
  });

program
  .command('demo')
  .summary('Play four scripted scenarios through the real loop, or `stream` for a streamed tool call')
  .description(
    `Play the four scenarios of ${glossary.lesson} through the real loop (scripted model, real controls); \`stream\` shows a tool argument streaming in`,
  )
  .addArgument(
    new Command()
      .createArgument('[scenario]', 'which scenario')
      .choices([...scenarioNames, 'all', 'stream'])
      .default('all'),
  )
  .option('--no-repeat-detection', 'turn off (tool, args) repeat detection')
  .addOption(new Option('--max-steps <n>', 'step limit').argParser(wholeNumber('--max-steps', 1)))
  .addOption(
    new Option('--max-context-tokens <n>', 'context budget').argParser(
      wholeNumber('--max-context-tokens', 1),
    ),
  )
  .addOption(
    new Option(
      '--cap-results [tokens]',
      'cap each tool result (default 2000 tokens), marking what was cut',
    ).argParser(wholeNumber('--cap-results', 1)),
  )
  .option('--trace-out <file>', 'also write the trace as JSONL')
  .addOption(
    new Option(
      '--trace-encoding <encoding>',
      'how --trace-out is written (compact: about a third of the bytes)',
    )
      .choices(['plain', 'compact'])
      .default('plain'),
  )
  .option('--json', 'print one JSON object per scenario (for stream: one per stream)')
  .action(async (scenario, options) => {
    if (scenario === 'stream') {
      process.exitCode = await demoStream({ json: Boolean(options.json) });
      return;
    }
    process.exitCode = await demo(scenario, {
      repeatDetection: options.repeatDetection,
      maxSteps: options.maxSteps,
      maxContextTokens: options.maxContextTokens,
      capResults: options.capResults === true ? 2_000 : options.capResults,
      json: Boolean(options.json),
      traceOut: options.traceOut,
      traceEncoding: options.traceEncoding,
    });
  });

const bench = program.command('bench').description('Benchmarks that need no live model');
bench
  .command('injection')
  .description(
    'Prompt injection: utility, utility under attack and attack success, with and without the taint guard',
  )
  .option('--json', 'print the figures as JSON')
  .action(async (options) => {
    process.exitCode = await benchInjection(Boolean(options.json));
  });

bench
  .command('context')
  .description(
    'The context window as a cache: the bill by run length per policy, and what compaction loses (recall of planted facts, dead ends retried)',
  )
  .option('--json', 'print the figures as JSON')
  .action(async (options) => {
    process.exitCode = await benchContext(Boolean(options.json));
  });

program
  .command('dlq')
  .description('Inspect and release dead-lettered work items')
  .addArgument(
    new Command().createArgument('<action>', 'what to do').choices(['list', 'show', 'retry', 'purge']),
  )
  .argument('[id]', 'the item, for show and retry')
  .option('--db <file>', 'a SQLite dead-letter file')
  .option('--redis <url>', 'a Redis URL (redis://127.0.0.1:6379)')
  .option('--key <key>', 'the table (SQLite) or key prefix (Redis)', 'reins_dead_letters')
  .option('--json', 'print JSON')
  .action(async (action, id, options) => {
    process.exitCode = await dlq(
      action,
      id,
      { db: options.db, redis: options.redis, key: options.key },
      Boolean(options.json),
    );
  });

bench
  .command('fleet')
  .description(
    `${glossary.night[0]?.toUpperCase()}${glossary.night.slice(1)} and an outage, replayed with worker processes, Redis and a loopback service`,
  )
  .option('--json', 'print the figures as JSON')
  .option('--redis <url>', 'Redis URL', 'redis://127.0.0.1:6379')
  .addOption(new Option('--workers <n>', 'worker processes').argParser(wholeNumber('--workers', 1)))
  .addOption(new Option('--outage-ms <n>', 'outage length').argParser(wholeNumber('--outage-ms', 1)))
  .action(async (options) => {
    process.exitCode = await benchFleet(Boolean(options.json), {
      redisUrl: options.redis,
      ...(options.workers ? { workers: options.workers } : {}),
      ...(options.outageMs ? { outageMs: options.outageMs } : {}),
    });
  });

bench
  .command('routing')
  .description(
    'Cheap first, smart later: all-cheap, all-strong and cascades per trigger, calibrated and not, on a seeded synthetic workload; cost, accuracy, misroutes, p50/p99',
  )
  .addHelpText(
    'after',
    `\nThe workload takes its price ratio and easy share from post-06; ${sourceNote('post-06')}.`,
  )
  .option('--json', 'print the figures as JSON')
  .action(async (options) => {
    process.exitCode = await benchRouting(Boolean(options.json));
  });

bench
  .command('queue')
  .description(
    'Queued runs on BullMQ worker processes (1, 4, 8) beside the same runs in-process: runs/s, enqueue-to-first-event latency, overhead per run',
  )
  .option('--json', 'print the figures as JSON')
  .option('--redis <url>', 'Redis URL', process.env['REINS_REDIS_URL'] ?? 'redis://127.0.0.1:6379')
  .addOption(
    new Option('--engine <engine>', 'the job engine: BullMQ on Redis, or pg-boss on PostgreSQL')
      .choices(['bullmq', 'pgboss'])
      .default('bullmq'),
  )
  .option(
    '--postgres <url>',
    'PostgreSQL URL for --engine pgboss',
    process.env['REINS_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  )
  .addOption(new Option('--runs <n>', 'runs per throughput measurement').argParser(wholeNumber('--runs', 1)))
  .addOption(
    new Option('--concurrency <n>', 'runs at once per worker process').argParser(
      wholeNumber('--concurrency', 1),
    ),
  )
  .action(async (options) => {
    process.exitCode = await benchQueue(Boolean(options.json), {
      redisUrl: options.redis,
      engine: options.engine,
      postgresUrl: options.postgres,
      ...(options.runs ? { runs: options.runs } : {}),
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    });
  });

bench
  .command('idempotency')
  .description(
    'Charges through idempotent tools against SQLite, PostgreSQL and Redis while workers are SIGKILLed',
  )
  .option('--json', 'print the figures as JSON')
  .option('--redis <url>', 'Redis URL', 'redis://127.0.0.1:6379')
  .option('--postgres <url>', 'PostgreSQL URL', 'postgres://postgres@127.0.0.1:5432/test')
  .addOption(
    new Option('--operations <n>', 'logical charges per worker').argParser(wholeNumber('--operations', 1)),
  )
  .action(async (options) => {
    process.exitCode = await benchIdempotency(Boolean(options.json), {
      redisUrl: options.redis,
      postgresUrl: options.postgres,
      ...(options.operations ? { operations: options.operations } : {}),
    });
  });

program
  .command('worker')
  .description(
    'Run queued agent runs (BullMQ on Redis, or pg-boss on PostgreSQL): resume crashed runs from the shared checkpoint store, drain on SIGTERM',
  )
  .requiredOption('--agents <module>', 'a module exporting `agents`: definitions by name (defineAgent)')
  .addOption(
    new Option('--engine <engine>', 'the job engine: BullMQ on Redis, or pg-boss on PostgreSQL (no Redis)')
      .choices(['bullmq', 'pgboss'])
      .default('bullmq'),
  )
  .option(
    '--redis <url>',
    'Redis URL (env REINS_REDIS_URL)',
    process.env['REINS_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
  )
  .option(
    '--postgres <url>',
    'PostgreSQL URL (env REINS_POSTGRES_URL)',
    process.env['REINS_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  )
  .addOption(
    new Option('--checkpoint <store>', 'where run checkpoints are shared')
      .choices(['postgres', 'redis', 'sqlite'])
      .default('postgres'),
  )
  .option('--sqlite <file>', 'SQLite file for --checkpoint sqlite (one machine only)')
  .option('--queue <name>', 'queue name', 'reins-runs')
  .option('--prefix <prefix>', 'Redis key prefix', 'reins')
  .addOption(
    new Option('--concurrency <n>', 'runs at once in this process')
      .argParser(wholeNumber('--concurrency', 1))
      .default(8),
  )
  .addOption(
    new Option(
      '--pool-size <n>',
      'PostgreSQL connections for --engine pgboss (default: concurrency + 4; mind max_connections over every worker)',
    ).argParser(wholeNumber('--pool-size', 2)),
  )
  .addOption(
    new Option('--tenant-max-running <n>', 'runs of one tenant at once, over every worker').argParser(
      wholeNumber('--tenant-max-running', 1),
    ),
  )
  .option('--tenant-rate <max/windowMs>', 'starts of one tenant per window, e.g. 10/1000')
  .addOption(
    new Option('--lock-duration-ms <n>', 'BullMQ job lock (a dead worker loses its jobs after it)').argParser(
      wholeNumber('--lock-duration-ms', 1),
    ),
  )
  .addOption(
    new Option('--stalled-interval-ms <n>', 'how often stalled jobs are looked for').argParser(
      wholeNumber('--stalled-interval-ms', 1),
    ),
  )
  .addOption(
    new Option('--drain-timeout-ms <n>', 'on SIGTERM, how long runs get to finish their step').argParser(
      wholeNumber('--drain-timeout-ms', 1),
    ),
  )
  .addOption(
    new Option(
      '--ended-ttl-ms <n>',
      'records, traces (and Redis checkpoints) of ended runs expire this long after they end',
    ).argParser(wholeNumber('--ended-ttl-ms', 1)),
  )
  .option('--quiet', 'print nothing')
  .action(async (options) => {
    process.exitCode = await workerCommand(options);
  });

const toolFaultNames = toolFaults.join(', ');
const evals = program
  .command('eval')
  .description('Run eval suites: k trials per case, pass@k and pass^k, failure classes');
evals
  .command('run')
  .argument('<file>', 'a suite module (export default { name, cases, agent }); .ts needs tsx installed')
  .description('Run every case k times and print what the numbers mean')
  .addOption(new Option('--trials <n>', 'trials per case (default 10)').argParser(wholeNumber('--trials', 1)))
  .addOption(
    new Option('--k <n>', 'the k of pass@k and pass^k (default min(3, trials))').argParser(
      wholeNumber('--k', 1),
    ),
  )
  .addOption(
    new Option('--concurrency <n>', 'trials in flight (default 4)').argParser(
      wholeNumber('--concurrency', 1),
    ),
  )
  .addOption(new Option('--seed <n>', 'the eval seed (default 1)').argParser(wholeNumber('--seed', 0)))
  .option('--results <file>', 'a SQLite results file: finished trials are kept, and a rerun resumes')
  .addOption(
    new Option('--budget-usd <usd>', 'stop the eval when this much is spent').argParser(
      positiveNumber('--budget-usd'),
    ),
  )
  .addOption(
    new Option('--budget-tokens <n>', 'stop the eval at this many billed tokens').argParser(
      wholeNumber('--budget-tokens', 1),
    ),
  )
  .addOption(
    new Option('--budget-wall-ms <n>', 'stop the eval after this long').argParser(
      wholeNumber('--budget-wall-ms', 1),
    ),
  )
  .option('--case <id...>', 'only these cases')
  .addOption(
    new Option('--min-pass-rate <rate>', 'exit 1 under this pass rate (0..1)').argParser(
      positiveNumber('--min-pass-rate'),
    ),
  )
  .option('--html <file>', 'where the self-contained HTML report goes', 'eval-report.html')
  .option('--no-html', 'write no HTML report')
  .option(
    '--fault-matrix [faults]',
    `also break each tool in turn, one fault at a time (comma-separated; default all: ${toolFaultNames})`,
  )
  .option('--fault-tools <tools>', 'with --fault-matrix: only these tools (comma-separated)')
  .addOption(
    new Option(
      '--fault-rate <rate>',
      'with --fault-matrix: fire on this share of calls (default: the first call)',
    ).argParser(positiveNumber('--fault-rate')),
  )
  .addOption(
    new Option('--fault-at-call <n>', 'with --fault-matrix: fire on the n-th call to the tool').argParser(
      wholeNumber('--fault-at-call', 1),
    ),
  )
  .option('--json', 'print the report as JSON')
  .option('--traces', 'with --json: keep each trial\u2019s trace')
  .option('--no-progress', 'no progress bar')
  .action(async (file, options) => {
    process.exitCode = await evalRun(file, {
      trials: options.trials,
      k: options.k,
      concurrency: options.concurrency,
      seed: options.seed,
      results: options.results,
      budgetUsd: options.budgetUsd,
      budgetTokens: options.budgetTokens,
      budgetWallMs: options.budgetWallMs,
      cases: options.case,
      json: Boolean(options.json),
      minPassRate: options.minPassRate,
      progress: options.progress !== false,
      traces: Boolean(options.traces),
      html: options.html === false ? undefined : options.html,
      faultMatrix:
        options.faultMatrix === undefined
          ? undefined
          : {
              faults:
                typeof options.faultMatrix === 'string' ? options.faultMatrix.split(',').filter(Boolean) : [],
              tools:
                typeof options.faultTools === 'string'
                  ? options.faultTools.split(',').filter(Boolean)
                  : undefined,
              rate: options.faultRate,
              atCall: options.faultAtCall,
            },
    });
  });
evals
  .command('compare')
  .argument('<baseline>', 'a report from `reins eval run --json`')
  .argument('<candidate>', 'another, run with the same seed')
  .option('--json', 'print the comparison as JSON')
  .description(
    'Paired comparison of two eval runs: the pass-rate change tested, cost and p99 deltas; exit 1 when the candidate is worse beyond noise',
  )
  .action((baseline, candidate, options) => {
    process.exitCode = evalCompare(baseline, candidate, Boolean(options.json));
  });
evals
  .command('regress')
  .argument('<trace>', 'a JSONL trace of recorded runs')
  .requiredOption('--agent <file>', 'a module exporting agent(run, context): the changed configuration')
  .option('--live', 'run calls the recording lacks with the configuration\u2019s own tools')
  .addOption(
    new Option('--trials <n>', 'replays per recorded run (default 1)').argParser(wholeNumber('--trials', 1)),
  )
  .option('--json', 'print the diffs and the report as JSON')
  .description('Replay recorded runs against a changed configuration; exit 1 if any outcome changed')
  .action(async (traceFile, options) => {
    process.exitCode = await evalRegress(traceFile, options.agent, {
      json: Boolean(options.json),
      live: Boolean(options.live),
      trials: options.trials,
    });
  });

addModelCommands(program);

const trace = program.command('trace').description('Read and replay run traces (JSONL)');
trace
  .command('show')
  .argument('<file>', 'a JSONL trace')
  .description('Render a trace as think → act → observe steps')
  .action((file) => {
    process.exitCode = traceShow(file);
  });
trace
  .command('replay')
  .argument('<file>', 'a JSONL trace')
  .option('--json', 'print the result as JSON')
  .description('Re-run the loop from the recorded responses and tool results; exits 1 if the outcome differs')
  .action(async (file, options) => {
    process.exitCode = await traceReplay(file, Boolean(options.json));
  });

trace
  .command('view')
  .argument('<file>', 'a JSONL trace')
  .description('Serve the run viewer over a recorded trace on loopback (read-only) and print its URL')
  .option('--host <host>', 'a loopback address', '127.0.0.1')
  .addOption(
    new Option('--port <n>', 'the port (0: any free port)').default(0).argParser(wholeNumber('--port', 0)),
  )
  .action(async (file, options) => {
    const server = await loadServer('reins trace view');
    if (server) process.exitCode = await server.traceView(file, { host: options.host, port: options.port });
  });

program
  .command('serve')
  .description(
    'Serve queued runs over HTTP with the run viewer at / (loopback): start runs, follow their traces (SSE), approve, cancel',
  )
  .option(
    '--agents <module>',
    'a module exporting `agents` (.ts needs tsx): required with --in-process; with BullMQ, refuses unknown names',
  )
  .option('--in-process', 'execute runs in this process (no Redis; nothing survives a restart)')
  .option('--host <host>', 'a loopback address', '127.0.0.1')
  .addOption(new Option('--port <n>', 'the port').default(8787).argParser(wholeNumber('--port', 0)))
  .option(
    '--tokens <file>',
    'bearer tokens: JSON { "token": "actor" } or lines "token actor" (else REINS_TOKENS="token=actor,…", else one is made up and printed)',
  )
  .option(
    '--redis <url>',
    'Redis URL for the BullMQ queue (env REINS_REDIS_URL)',
    process.env['REINS_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
  )
  .addOption(
    new Option('--engine <engine>', 'the job engine: BullMQ on Redis, or pg-boss on PostgreSQL (no Redis)')
      .choices(['bullmq', 'pgboss'])
      .default('bullmq'),
  )
  .option(
    '--postgres <url>',
    'PostgreSQL URL for --engine pgboss (env REINS_POSTGRES_URL)',
    process.env['REINS_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  )
  .option('--queue <name>', 'queue name (the workers must match)', 'reins-runs')
  .option('--prefix <prefix>', 'Redis key prefix (the workers must match)', 'reins')
  .addOption(
    new Option(
      '--ended-ttl-ms <n>',
      'records and traces of ended runs expire this long after they end',
    ).argParser(wholeNumber('--ended-ttl-ms', 1)),
  )
  .action(async (options) => {
    const server = await loadServer('reins serve');
    if (server)
      process.exitCode = await server.serve({
        agents: options.agents,
        inProcess: Boolean(options.inProcess),
        host: options.host,
        port: options.port,
        tokens: options.tokens,
        redis: options.redis,
        engine: options.engine,
        postgres: options.postgres,
        queue: options.queue,
        prefix: options.prefix,
        ...(options.endedTtlMs ? { endedRunTtlMs: options.endedTtlMs } : {}),
      });
  });

program
  .command('stats')
  .argument('<path>', 'a JSONL trace, or a directory of them (read recursively)')
  .description(
    'Runs by outcome, the silent-failure ratio, step-limit rate, cost per success and tool error rates; exits 1 when a threshold is crossed',
  )
  .option('--json', 'print the figures as JSON')
  .option('--svg <file>', 'write a chart of the daily silent-failure ratio and step-limit rate')
  .addOption(
    new Option(
      '--max-silent-failure-ratio <ratio>',
      'exit 1 above this silent-failure ratio (0..1)',
    ).argParser(nonNegativeNumber('--max-silent-failure-ratio')),
  )
  .addOption(
    new Option('--max-step-limit-rate <ratio>', 'exit 1 above this step-limit rate (0..1)').argParser(
      nonNegativeNumber('--max-step-limit-rate'),
    ),
  )
  .addOption(
    new Option('--max-cost-per-success <usd>', 'exit 1 above this cost per successful run').argParser(
      nonNegativeNumber('--max-cost-per-success'),
    ),
  )
  .option(
    '--trigger-threshold <file>',
    "a cascade trigger's calibrated threshold (JSON from calibrateTrigger): exit 1 when it is stale or the traces' escalation rate left its band",
  )
  .addOption(
    new Option(
      '--max-calibration-age-days <days>',
      'with --trigger-threshold: stale after this many days (default 30)',
    ).argParser(nonNegativeNumber('--max-calibration-age-days')),
  )
  .action((path, options) => {
    process.exitCode = statsCommand(path, {
      json: Boolean(options.json),
      svg: options.svg,
      maxSilentFailureRatio: options.maxSilentFailureRatio,
      maxStepLimitRate: options.maxStepLimitRate,
      maxCostPerSuccess: options.maxCostPerSuccess,
      triggerThreshold: options.triggerThreshold,
      maxCalibrationAgeDays: options.maxCalibrationAgeDays,
    });
  });

try {
  await program.parseAsync();
} catch (error) {
  console.error(`reins: ${sanitize(error instanceof Error ? error.message : String(error))}`);
  process.exitCode = 2;
  // A command that failed halfway may leave connections open (an agents module's, a pool): it
  // must still end, or a supervisor waiting for it (or for its 'ready') waits forever.
  setTimeout(() => process.exit(2), 1_000).unref();
}
