import { writeFileSync } from 'node:fs';
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
import { wholeNumber } from './whole-number.js';

/**
 * A progress bar on stderr that appears only once a Monte Carlo run has taken a second, and only
 * where someone can see it (a terminal, or REINS_PROGRESS=1; REINS_PROGRESS_AFTER_MS moves the second).
 */
function progressReporter(now: () => number = Date.now): {
  onProgress: (done: number, total: number) => void;
  stop: () => void;
} {
  const visible = process.stderr.isTTY || process.env.REINS_PROGRESS === '1';
  const afterMs = Number(process.env.REINS_PROGRESS_AFTER_MS ?? 1000);
  const started = now();
  let bar: cliProgress.SingleBar | undefined;
  return {
    onProgress(done, total) {
      if (!visible) return;
      if (!bar && now() - started >= afterMs && done < total) {
        bar = new cliProgress.SingleBar(
          {
            stream: process.stderr,
            noTTYOutput: !process.stderr.isTTY,
            notTTYSchedule: 500,
            format: 'Monte Carlo [{bar}] {percentage}% | {value}/{total} trials | {eta}s left',
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, done);
      }
      bar?.update(done);
    },
    stop() {
      bar?.stop();
    },
  };
}

function printHuman(model: ModelDefinition, run: ModelRun): void {
  console.log(pc.bold(`${model.title}`) + pc.dim(`  — reins model ${model.name}, from ${model.source}`));
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
    .description(`Run a cost or reliability model from the seeds: ${simModels.map((m) => m.name).join(', ')}`)
    .showHelpAfterError(
      `(models: ${simModels.map((m) => m.name).join(', ')}; reins model NAME --help for its flags)`,
    );
  for (const definition of simModels) {
    const command = model
      .command(definition.name)
      .description(`${definition.title} — from ${definition.source}`);
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
      .option('--plot <file.svg>', 'write the chart as SVG');
    if (definition.monteCarlo) {
      command
        .addOption(
          new Option('--trials <n>', 'Monte Carlo trials (default: the post’s)').argParser(
            wholeNumber('--trials', 1),
          ),
        )
        .addOption(new Option('--seed <s>', 'Monte Carlo seed').argParser(wholeNumber('--seed', 0)));
    }
    command.action((options: Record<string, unknown>) => {
      process.exitCode = runModel(definition, options);
    });
  }
}

/** Runs one model from parsed CLI options; returns the exit code (2 for a bad parameter). */
export function runModel(definition: ModelDefinition, options: Record<string, unknown>): number {
  const params: Record<string, unknown> = {};
  for (const spec of definition.params)
    if (options[spec.key] !== undefined) params[spec.key] = options[spec.key];
  const progress = progressReporter();
  let run: ModelRun;
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
  if (options.json) console.log(JSON.stringify(run.json, null, 2));
  else printHuman(definition, run);
  if (typeof options.plot === 'string') {
    writeFileSync(options.plot, renderChartSvg(run.chart));
    if (!options.json) console.log(pc.dim(`\nchart written to ${options.plot}`));
  }
  return 0;
}
