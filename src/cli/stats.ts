import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Table from 'cli-table3';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
import { renderChartSvg } from '../plot/index.js';
import { checkTrigger } from '../routing/check-trigger.js';
import { type EscalationStats, escalationStats } from '../routing/escalation-stats.js';
import type { TriggerThreshold } from '../routing/trigger-threshold.js';
import type { ChartSpec } from '../sim/chart.js';
import { silentFailureKinds } from '../stats/silent-failure.js';
import { type TraceStats, traceStats } from '../stats/trace-stats.js';
import { type AgentWorkflowTell, workflowTell } from '../stats/workflow-tell.js';
import { type TraceEvent, traceVersion } from '../trace/events.js';
import { printJson, sanitize } from './sanitize.js';

/** What `reins stats` was asked for. */
export interface StatsCommandOptions {
  json: boolean;
  svg: string | undefined;
  maxSilentFailureRatio: number | undefined;
  maxStepLimitRate: number | undefined;
  maxCostPerSuccess: number | undefined;
  /** A calibrated trigger threshold (JSON: a `TriggerThreshold`, or a calibration holding one) to check. */
  triggerThreshold?: string | undefined;
  /** With `triggerThreshold`: a calibration older than this many days is stale. @default 30 */
  maxCalibrationAgeDays?: number | undefined;
}

/**
 * `reins stats PATH`: the run-outcome figures of a JSONL trace file, or of every `.jsonl` file under a
 * directory. Exit 0; 1 when a threshold is crossed; 2 when there is nothing usable to read.
 */
export function statsCommand(path: string, options: StatsCommandOptions): number {
  const read = readTraces(path);
  if (typeof read === 'string') {
    console.error(`reins stats: ${sanitize(path)}: ${read}`);
    return 2;
  }
  const stats = traceStats(read.events);
  if (stats.runs === 0) {
    console.error(`reins stats: ${sanitize(path)}: no run ended in these traces (no run-end event)`);
    return 2;
  }
  const agents = workflowTell(read.events);
  const routing = escalationStats(read.events);
  const calibration =
    options.triggerThreshold === undefined ? undefined : readThreshold(options.triggerThreshold);
  if (typeof calibration === 'string') {
    console.error(`reins stats: ${sanitize(options.triggerThreshold ?? '')}: ${calibration}`);
    return 2;
  }
  if (options.svg !== undefined) writeFileSync(options.svg, renderChartSvg(dailyChart(stats)));
  if (options.json) printJson({ files: read.files, ...stats, agents, routing });
  else
    console.log(
      [statsTables(stats, read.files), workflowTable(agents), routingTable(routing)]
        .filter(Boolean)
        .join('\n'),
    );
  const crossed = crossedThresholds(stats, options);
  if (calibration) {
    const check = checkTrigger(calibration, {
      maxAgeMs: (options.maxCalibrationAgeDays ?? 30) * 86_400_000,
      production: routing,
    });
    if (check.kind === 'findings')
      for (const finding of check.findings)
        crossed.push(
          finding.kind === 'stale'
            ? `trigger calibration ${(finding.ageMs / 86_400_000).toFixed(1)} days old > ${(finding.maxAgeMs / 86_400_000).toFixed(0)}`
            : `escalation rate ${percent(finding.production.estimate)} [${finding.production.interval.map(percent).join(', ')}] over ${finding.production.requests} requests, outside the calibrated ${finding.calibrated.interval.map(percent).join('–')}`,
        );
  }
  for (const line of crossed) console.error(`reins stats: threshold crossed: ${line}`);
  return crossed.length > 0 ? 1 : 0;
}

/** The trace events of a file or a directory's `.jsonl` files (recursively), or why there are none. */
function readTraces(path: string): { events: TraceEvent[]; files: number } | string {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path, { recursive: true, encoding: 'utf8' })
          .filter((name) => name.endsWith('.jsonl'))
          .sort()
          .map((name) => join(path, name))
      : [path];
  } catch (error) {
    return `cannot read (${error instanceof Error ? error.message : String(error)})`;
  }
  if (files.length === 0) return 'no .jsonl trace files in this directory';
  const events: TraceEvent[] = [];
  for (const file of files) {
    try {
      // A newer writer's event types are skipped; a different schema version is not ours to read.
      for (const event of readJsonlTrace(file).events)
        if (typeof event === 'object' && event !== null && event.v === traceVersion) events.push(event);
    } catch (error) {
      return `${sanitize(file)} is not a reins trace (${sanitize(error instanceof Error ? error.message : String(error))})`;
    }
  }
  return { events, files: files.length };
}

function crossedThresholds(stats: TraceStats, options: StatsCommandOptions): string[] {
  const crossed: string[] = [];
  const check = (
    name: string,
    value: number | null,
    max: number | undefined,
    format: (n: number) => string,
  ) => {
    if (max !== undefined && value !== null && value > max)
      crossed.push(`${name} ${format(value)} > ${format(max)}`);
  };
  check('silent-failure ratio', stats.silentFailureRatio, options.maxSilentFailureRatio, percent);
  check('step-limit rate', stats.stepLimitRate, options.maxStepLimitRate, percent);
  check('cost per success', stats.costPerSuccessUsd, options.maxCostPerSuccess, usd);
  if (options.maxCostPerSuccess !== undefined && stats.costPerSuccessUsd === null && stats.endedRuns > 0)
    crossed.push('cost per success: no run succeeded, so every dollar bought nothing');
  return crossed;
}

/** A trigger threshold from a JSON file: the threshold itself or a calibration (`{ threshold }`). */
function readThreshold(path: string): TriggerThreshold | string {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return `cannot read a trigger threshold (${error instanceof Error ? error.message : String(error)})`;
  }
  const candidate = (value as { threshold?: unknown })?.threshold ?? value;
  const threshold = candidate as Partial<TriggerThreshold>;
  if (
    typeof threshold?.value !== 'number' ||
    typeof threshold.fittedAtMs !== 'number' ||
    !threshold.escalationRate
  )
    return 'not a trigger threshold (needs value, fittedAtMs and escalationRate: calibrateTrigger writes one)';
  return threshold as TriggerThreshold;
}

/** Per agent: how predictable its next step is, flagged at post-15's 95 %. */
function workflowTable(agents: readonly AgentWorkflowTell[]): string {
  const rows = agents.filter((agent) => agent.decisions > 0);
  if (rows.length === 0) return '';
  const table = new Table({
    head: ['agent (system prompt)', 'runs', 'decisions', 'same next step', 'typical path'],
  });
  for (const agent of rows)
    table.push([
      sanitize(agent.label || agent.agent),
      agent.runs,
      agent.decisions,
      `${orDash(agent.predictability, percent)}${agent.straightLine ? ' loop around a straight line' : ''}`,
      sanitize(agent.typicalPath.join(' → ')),
    ]);
  return table.toString();
}

/** What cascades did: escalation rate with its interval, by trigger, by answering tier. */
function routingTable(routing: EscalationStats): string {
  if (routing.requests === 0 || !routing.escalationRate) return '';
  const table = new Table();
  const { estimate, interval } = routing.escalationRate;
  const tally = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([name, count]) => `${sanitize(name)} ${count}`)
      .join(', ') || '–';
  table.push(
    { 'cascade requests': String(routing.requests) },
    { 'escalation rate': `${percent(estimate)} [${interval.map(percent).join(', ')}]` },
    { 'escalated by': tally(routing.byTrigger) },
    { 'answered by': tally(routing.answeredBy) },
    { 'tiers skipped (breaker open)': String(routing.skipped) },
    { 'degraded answers': String(routing.degraded) },
  );
  return table.toString();
}

/** The figures as tables: outcomes, the headline ratios and costs, then tools by error rate. */
export function statsTables(stats: TraceStats, files: number): string {
  const outcomes = new Table({ head: ['outcome', 'runs', 'share', ''] });
  for (const [kind, runs] of Object.entries(stats.byOutcome).sort(([, a], [, b]) => b - a))
    outcomes.push([
      kind,
      runs,
      percent(runs / stats.runs),
      (silentFailureKinds as readonly string[]).includes(kind) ? 'silent failure' : '',
    ]);
  const figures = new Table();
  figures.push(
    { runs: `${stats.runs} (${files} file${files === 1 ? '' : 's'})` },
    { 'silent-failure ratio': orDash(stats.silentFailureRatio, percent) },
    { 'step-limit rate': orDash(stats.stepLimitRate, percent) },
    { 'hard-error rate': orDash(stats.hardErrorRate, percent) },
    { 'cost per run': orDash(stats.costPerRunUsd, usd) },
    { 'cost per success': orDash(stats.costPerSuccessUsd, usd) },
    { 'spent on failed runs': `${usd(stats.failureCostUsd)} of ${usd(stats.costUsd)}` },
    { 'model calls (errors)': `${stats.modelCalls} (${stats.modelErrors})` },
    { 'tool error rate': orDash(stats.toolErrorRate, percent) },
    {
      'next tool predictable': `${orDash(stats.nextToolPredictability, percent)} of ${stats.toolTransitions} transitions${
        (stats.nextToolPredictability ?? 0) >= 0.9 && stats.toolTransitions >= 10
          ? ' (a workflow would do)'
          : ''
      }`,
    },
  );
  const tools = new Table({ head: ['tool', 'calls', 'errors', 'error rate', 'by status'] });
  for (const [name, tool] of Object.entries(stats.tools).sort(([, a], [, b]) => b.errorRate - a.errorRate))
    tools.push([
      sanitize(name),
      tool.calls,
      tool.errors,
      percent(tool.errorRate),
      Object.entries(tool.byStatus)
        .map(([status, count]) => `${status} ${count}`)
        .join(', '),
    ]);
  return [outcomes.toString(), figures.toString(), stats.toolCalls > 0 ? tools.toString() : '']
    .filter(Boolean)
    .join('\n');
}

/** Silent-failure ratio and step-limit rate per UTC day, x in days since the first. */
export function dailyChart(stats: TraceStats): ChartSpec {
  const first = stats.days[0]?.day ?? '1970-01-01';
  const origin = Date.parse(`${first}T00:00:00Z`);
  const x = (day: string) => (Date.parse(`${day}T00:00:00Z`) - origin) / 86_400_000;
  const line = (name: string, read: (day: TraceStats['days'][number]) => number | null) => ({
    name,
    points: stats.days.flatMap((day) => {
      const value = read(day);
      return value === null ? [] : [[x(day.day), value] as const];
    }),
  });
  return {
    title: `Silent failures per day (${stats.runs} runs)`,
    x: { label: `days since ${first} (UTC)` },
    y: { label: 'share of ended runs', format: 'percent', min: 0 },
    lines: [
      line('silent-failure ratio', (day) => day.silentFailureRatio),
      line('step-limit rate', (day) => day.stepLimitRate),
    ],
  };
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const usd = (value: number) => `$${value.toFixed(value < 1 ? 4 : 2)}`;
const orDash = (value: number | null, format: (n: number) => string) =>
  value === null ? '—' : format(value);
