import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { type Command, InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import { renderChartSvg } from '../plot/index.js';
import {
  describeRange,
  formatParam,
  isSimParameterError,
  type ModelDefinition,
  type ModelRun,
  parseParam,
  simModels,
} from '../sim/index.js';
import { glossary, sourceNote } from './glossary.js';
import { wholeNumber } from './whole-number.js';

/** Progress shows only where someone can see it: a terminal, or REINS_PROGRESS=1. */
const progressVisible = () => process.stderr.isTTY || process.env.REINS_PROGRESS === '1';
/** How long a run goes before its progress appears (REINS_PROGRESS_AFTER_MS, default a second). */
const progressAfterMs = () => Number(process.env.REINS_PROGRESS_AFTER_MS ?? 1000);

function progressBar(format: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    {
      stream: process.stderr,
      noTTYOutput: !process.stderr.isTTY,
      notTTYSchedule: 500,
      format,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
}

/**
 * A progress bar on stderr that appears only once a Monte Carlo run has taken a second, and only
 * where someone can see it (a terminal, or REINS_PROGRESS=1; REINS_PROGRESS_AFTER_MS moves the second).
 */
function progressReporter(now: () => number = Date.now): {
  onProgress: (done: number, total: number) => void;
  stop: () => void;
} {
  const visible = progressVisible();
  const afterMs = progressAfterMs();
  const started = now();
  let bar: cliProgress.SingleBar | undefined;
  return {
    onProgress(done, total) {
      if (!visible) return;
      if (!bar && now() - started >= afterMs && done < total) {
        bar = progressBar('Monte Carlo [{bar}] {percentage}% | {value}/{total} trials | {eta}s left');
        bar.start(total, done);
      }
      bar?.update(done);
    },
    stop() {
      bar?.stop();
    },
  };
}

type WorkerAnswer = { run: ModelRun } | { problem: string } | { error: string };

/**
 * Runs a model that reports no progress (the closed-form ones) in a worker thread, so that when it
 * takes longer than a second (a `--steps` in the millions makes its chart sweep that many points)
 * stderr shows it is working and for how long instead of a silent terminal. The chart crosses back
 * only for `--plot`.
 */
function runWithElapsedBar(
  definition: ModelDefinition,
  params: Record<string, unknown>,
  wantChart: boolean,
): Promise<WorkerAnswer> {
  const worker = new Worker(new URL('./model-worker.js', import.meta.url), {
    workerData: { name: definition.name, params, chart: wantChart },
  });
  let bar: cliProgress.SingleBar | undefined;
  const timer = setTimeout(() => {
    bar = progressBar(`reins model ${definition.name}: computing… {duration}s elapsed`);
    bar.start(1, 0);
  }, progressAfterMs());
  return new Promise<WorkerAnswer>((resolve, reject) => {
    worker.once('message', (answer: WorkerAnswer) => resolve(answer));
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`the model worker exited (code ${code}) without an answer`)),
    );
  }).finally(() => {
    clearTimeout(timer);
    bar?.update(1);
    bar?.stop();
    void worker.terminate();
  });
}

function printHuman(model: ModelDefinition, run: ModelRun): void {
  console.log(pc.bold(`${model.title}`) + pc.dim(`  — reins model ${model.name}, from ${model.source}`));
  console.log(pc.dim(sourceNote(model.source)));
  for (const table of run.tables) {
    if (table.title) console.log(`\n${table.title}`);
    const rendered = new Table({ head: table.head, style: { head: [], border: [], compact: true } });
    rendered.push(...table.rows);
    console.log(rendered.toString());
  }
  for (const note of run.notes) console.log(`\n${note}`);
}

/** Adds `reins model NAME …`: one subcommand per model, its flags taken from the model's parameters. */
export function addModelCommands(program: Command): void {
  const model = program
    .command('model')
    .description(
      `Run a cost or reliability model from ${glossary.seeds}: ${simModels.map((m) => m.name).join(', ')}`,
    )
    .summary(`Run a cost or reliability model: ${simModels.map((m) => m.name).join(', ')}`)
    .addHelpText('after', `\nlesson-agents is ${glossary.lesson}; ${glossary.postmortem}.`)
    .showHelpAfterError(
      `(models: ${simModels.map((m) => m.name).join(', ')}; reins model NAME --help for its flags)`,
    );
  for (const definition of simModels) {
    const command = model
      .command(definition.name)
      .summary(`${definition.title} — from ${definition.source}`)
      .description(`${definition.title} — from ${definition.source}\n${sourceNote(definition.source)}`);
    for (const spec of definition.params) {
      const fallback = definition.defaults[spec.key];
      const option = new Option(
        `${spec.flag} <${spec.kind === 'choice' ? (spec.choices ?? []).join('|') : 'value'}>`,
        `${spec.description}; ${describeRange(spec)}${fallback === undefined ? '' : ` (default ${formatParam(spec, fallback)})`}`,
      ).argParser((text: string) => {
        try {
          return parseParam(spec, text);
        } catch (error) {
          throw new InvalidArgumentError(isSimParameterError(error) ? error.problem : String(error));
        }
      });
      command.addOption(option);
    }
    command
      .option('--json', 'print the result as JSON')
      .addOption(new Option('--plot <file.svg>', 'write the chart as SVG').argParser(svgPath));
    if (definition.monteCarlo) {
      command
        .addOption(
          new Option('--trials <n>', 'Monte Carlo trials (default: the source post’s count)').argParser(
            wholeNumber('--trials', 1),
          ),
        )
        .addOption(new Option('--seed <s>', 'Monte Carlo seed').argParser(wholeNumber('--seed', 0)));
    }
    command.action(async (options: Record<string, unknown>) => {
      process.exitCode = await runModel(definition, options);
    });
  }
}

/** `--plot` writes SVG and nothing else: a `.png` name would get SVG bytes under the wrong extension. */
function svgPath(file: string): string {
  if (!/\.svg$/i.test(file))
    throw new InvalidArgumentError(
      `--plot writes SVG only: name a .svg file, got "${file}"${/\.[^./\\]+$/.test(file) ? '' : ' (no extension)'}`,
    );
  return file;
}

/** Runs one model from parsed CLI options; returns the exit code (2 for a bad parameter). */
export async function runModel(
  definition: ModelDefinition,
  options: Record<string, unknown>,
): Promise<number> {
  const params: Record<string, unknown> = {};
  for (const spec of definition.params)
    if (options[spec.key] !== undefined) params[spec.key] = options[spec.key];
  const wantChart = typeof options.plot === 'string';
  let run: ModelRun;
  if (!definition.monteCarlo && progressVisible()) {
    const answer = await runWithElapsedBar(definition, params, wantChart);
    if ('problem' in answer) {
      console.error(`reins model ${definition.name}: ${answer.problem}`);
      return 2;
    }
    if ('error' in answer) throw new Error(answer.error);
    run = answer.run;
  } else {
    const progress = progressReporter();
    try {
      run = definition.run(params, {
        ...(options.trials !== undefined ? { trials: options.trials as number } : {}),
        ...(options.seed !== undefined ? { seed: options.seed as number } : {}),
        onProgress: progress.onProgress,
      });
    } catch (error) {
      progress.stop();
      if (isSimParameterError(error)) {
        console.error(`reins model ${definition.name}: ${error.problem}`);
        return 2;
      }
      throw error;
    }
    progress.stop();
  }
  if (options.json) console.log(JSON.stringify(run.json, null, 2));
  else printHuman(definition, run);
  if (typeof options.plot === 'string') {
    writeFileSync(options.plot, renderChartSvg(run.chart));
    if (!options.json) console.log(pc.dim(`\nchart written to ${options.plot}`));
  }
  return 0;
}
