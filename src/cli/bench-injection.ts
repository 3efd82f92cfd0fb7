import pc from 'picocolors';
import { type InjectionFigures, runInjectionBenchmark } from '../injection/index.js';

const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/** `reins bench injection`: utility, utility under attack and attack success, with and without the guard. */
export async function benchInjection(json: boolean): Promise<number> {
  const report = await runInjectionBenchmark();
  if (json) {
    const pick = (figures: InjectionFigures) => ({
      utility: figures.utility,
      utilityUnderAttack: figures.utilityUnderAttack,
      attackSuccessRate: figures.attackSuccessRate,
      neededApproval: figures.neededApproval,
      runs: figures.runs,
    });
    console.log(
      JSON.stringify(
        {
          guarded: pick(report.guarded),
          unguarded: pick(report.unguarded),
          guardedDeny: pick(report.guardedDeny),
          canariesSeen: report.canariesSeen,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  console.log(
    pc.bold('Prompt-injection benchmark') +
      pc.dim(
        ` — 3 suites, 6 user tasks, 8 attacker goals, ${report.forms.length} attack forms (${report.forms.join(', ')})`,
      ),
  );
  console.log(
    pc.dim('Utility counts only tasks finished without a person; paused runs are counted separately.\n'),
  );
  const rows: [string, InjectionFigures][] = [
    ['unguarded (no taint guard, every tool autonomous)', report.unguarded],
    ['guarded (default: pause for a person)', report.guarded],
    ['guarded, refusing tainted calls (onTaintedCall: deny)', report.guardedDeny],
  ];
  console.log(
    `  ${'setup'.padEnd(56)} ${'utility'.padStart(8)} ${'under attack'.padStart(13)} ${'attack success'.padStart(15)} ${'paused (benign / attacked)'.padStart(27)}`,
  );
  for (const [name, figures] of rows) {
    const asr = percent(figures.attackSuccessRate);
    console.log(
      `  ${name.padEnd(56)} ${percent(figures.utility).padStart(8)} ${percent(figures.utilityUnderAttack).padStart(13)} ${(figures.attackSuccessRate === 0 ? pc.green(asr) : pc.red(asr)).padStart(15 + (figures.attackSuccessRate === 0 ? pc.green('').length : pc.red('').length))} ${`${figures.neededApproval.benign} / ${figures.neededApproval.underAttack} of ${figures.runs.benign} / ${figures.runs.underAttack}`.padStart(27)}`,
    );
  }
  const missed = report.canariesSeen.filter((canary) => !canary.seen);
  console.log(
    missed.length === 0
      ? pc.dim(`\ncanary check: all ${report.canariesSeen.length} user tasks read their injection slot`)
      : pc.red(`\ncanary check FAILED for ${missed.map((canary) => canary.task).join(', ')}`),
  );
  return missed.length === 0 ? 0 : 1;
}
