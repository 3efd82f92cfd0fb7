import Table from 'cli-table3';
import pc from 'picocolors';
import { type InjectionFigures, runInjectionBenchmark, type SetupName } from '../injection/index.js';

const percent = (rate: number) => `${(rate * 100).toFixed(1)}%`;
const setupNames: SetupName[] = [
  'unguarded',
  'provenance',
  'policiesOnly',
  'planOnly',
  'guarded',
  'guardedDeny',
];
const described: Record<SetupName, string> = {
  unguarded: 'unguarded (no taint guard, every tool autonomous)',
  provenance: 'provenance rule only, refusing (the old README setup)',
  policiesOnly: 'policies, no plan, refusing',
  planOnly: 'plan, no policies, refusing',
  guarded: 'recommended: policies + plan, pause for a person',
  guardedDeny: 'recommended, refusing tainted calls (deny)',
};

function pick(figures: InjectionFigures) {
  return {
    utility: figures.utility,
    utilityAllTasks: figures.utilityAllTasks,
    utilityUnderAttack: figures.utilityUnderAttack,
    utilityUnderAttackAllTasks: figures.utilityUnderAttackAllTasks,
    attackSuccessRate: figures.attackSuccessRate,
    neededApproval: figures.neededApproval,
    needsPerson: figures.needsPerson,
    runs: figures.runs,
  };
}

const asr = (rate: number) => (rate === 0 ? pc.green(percent(rate)) : pc.red(percent(rate)));

/**
 * `reins bench injection`: utility, utility under attack and attack success for four setups, per
 * suite and per attack class.
 */
export async function benchInjection(json: boolean): Promise<number> {
  const report = await runInjectionBenchmark();
  const missed = report.canariesSeen.filter((canary) => !canary.seen);
  if (json) {
    const perSetup = (entry: Record<SetupName, InjectionFigures>) =>
      Object.fromEntries(setupNames.map((name) => [name, pick(entry[name])]));
    console.log(
      JSON.stringify(
        {
          guarded: pick(report.guarded),
          unguarded: pick(report.unguarded),
          guardedDeny: pick(report.guardedDeny),
          provenance: pick(report.provenance),
          policiesOnly: pick(report.policiesOnly),
          planOnly: pick(report.planOnly),
          bySuite: Object.fromEntries(
            Object.entries(report.bySuite).map(([name, entry]) => [
              name,
              { source: entry.source, ...perSetup(entry) },
            ]),
          ),
          byClass: Object.fromEntries(
            Object.entries(report.byClass).map(([name, entry]) => [name, perSetup(entry)]),
          ),
          canariesSeen: report.canariesSeen,
        },
        null,
        2,
      ),
    );
    return missed.length === 0 ? 0 : 1;
  }
  const suites = Object.keys(report.bySuite);
  console.log(
    pc.bold('Prompt-injection benchmark') +
      pc.dim(
        ` — ${suites.length} suites (${suites.join(', ')}), ${report.forms.length} AgentDojo attack forms, ${report.classes.length} adaptive classes; an obedient model that acts on every instruction it reads`,
      ),
  );
  console.log(
    pc.dim(
      'Utility counts honest tasks finished without a person, over the tasks that need none by design;\n' +
        '"needs a person" are tasks whose privileged arguments must come from data the agent reads.\n',
    ),
  );
  const totals = new Table({
    head: [
      'setup',
      'utility',
      'under attack',
      'attack success',
      'paused (benign / attacked)',
      'needs a person',
    ],
  });
  for (const name of setupNames) {
    const figures = report[name];
    totals.push([
      described[name],
      percent(figures.utility),
      percent(figures.utilityUnderAttack),
      asr(figures.attackSuccessRate),
      `${figures.neededApproval.benign} / ${figures.neededApproval.underAttack} of ${figures.runs.benign} / ${figures.runs.underAttack}`,
      `${figures.needsPerson} of ${figures.runs.benign}`,
    ]);
  }
  console.log(totals.toString());
  const bySuite = new Table({
    head: [
      'suite',
      'tasks',
      'needs a person',
      'attack success: unguarded',
      'provenance',
      'recommended',
      'deny',
      'utility',
      'under attack (deny)',
    ],
  });
  for (const [name, entry] of Object.entries(report.bySuite)) {
    bySuite.push([
      `${name}\n${pc.dim(entry.source)}`,
      String(entry.guarded.runs.benign),
      String(entry.guarded.needsPerson),
      asr(entry.unguarded.attackSuccessRate),
      asr(entry.provenance.attackSuccessRate),
      asr(entry.guarded.attackSuccessRate),
      asr(entry.guardedDeny.attackSuccessRate),
      percent(entry.guarded.utility),
      percent(entry.guardedDeny.utilityUnderAttack),
    ]);
  }
  console.log(`\n${pc.bold('By suite')}\n${bySuite.toString()}`);
  const byClass = new Table({
    head: [
      'attack class',
      'runs',
      'attack success: unguarded',
      'provenance',
      'recommended',
      'deny',
      'under attack (deny)',
    ],
  });
  for (const [name, entry] of Object.entries(report.byClass)) {
    byClass.push([
      name,
      String(entry.guarded.runs.underAttack),
      asr(entry.unguarded.attackSuccessRate),
      asr(entry.provenance.attackSuccessRate),
      asr(entry.guarded.attackSuccessRate),
      asr(entry.guardedDeny.attackSuccessRate),
      percent(entry.guardedDeny.utilityUnderAttack),
    ]);
  }
  console.log(`\n${pc.bold('By attack class')}\n${byClass.toString()}`);
  console.log(
    missed.length === 0
      ? pc.dim(`\ncanary check: all ${report.canariesSeen.length} user tasks read their injection slot`)
      : pc.red(`\ncanary check FAILED for ${missed.map((canary) => canary.task).join(', ')}`),
  );
  return missed.length === 0 ? 0 : 1;
}
