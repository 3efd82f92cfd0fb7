import { z } from 'zod';
import type { EvalReport } from './eval-types.js';

const count = z.number().finite();
const interval = z.tuple([count, count]);
const distribution = z.looseObject({ n: count, p50: count, p90: count, p99: count, max: count, mean: count });
const classes = z.record(z.string(), count);

// What the renderer reads, checked; anything else a newer writer adds passes through (loose objects).
// Trace events are checked only for their `type`: the trace renderer copes with the rest.
const reportSchema = z.looseObject({
  v: z.literal(1),
  suite: z.string(),
  config: z.looseObject({ trials: count, k: count, concurrency: count, seed: count }),
  stopped: z
    .looseObject({
      budget: z.enum(['tokens', 'usd', 'wall_ms', 'signal']),
      limit: count,
      actual: count,
      skippedTrials: count.optional(),
      cancelledTrials: count.optional(),
    })
    .nullable(),
  cases: z.array(
    z.looseObject({
      id: z.string(),
      n: count,
      passes: count,
      passRate: count,
      passAtK: count.nullable(),
      passHatK: count.nullable(),
      failureClasses: classes,
    }),
  ),
  summary: z.looseObject({
    k: count,
    trials: count,
    passRate: count,
    passRateCi95: interval,
    passAtK: count.nullable(),
    passAtKCi95: interval.nullable(),
    passHatK: count.nullable(),
    passHatKCi95: interval.nullable(),
    cost: distribution,
    latencyMs: distribution,
    steps: distribution,
    billedTokens: distribution,
  }),
  trajectory: z.looseObject({ toolCallValidity: count, meanWastedSteps: count, repeatedCalls: count }),
  failureClasses: classes,
  judge: z.looseObject({ warning: z.string().nullable() }).optional(),
  trials: z.array(
    z.looseObject({
      caseId: z.string(),
      trial: count,
      seed: count,
      pass: z.boolean(),
      reason: z.string().optional(),
      outcome: z.looseObject({ kind: z.string() }),
      failureClass: z.string().nullable(),
      costUsd: count,
      latencyMs: count,
      billedTokens: count,
      trace: z.array(z.looseObject({ type: z.string() })),
    }),
  ),
});

/** A report file read: the report, or why the text is not one (a sentence for a person). */
export type ParsedEvalReport = { ok: true; report: EvalReport } | { ok: false; error: string };

/**
 * Reads the JSON of an eval report (`reins eval run --json`, or a saved `runEval` result), checking
 * its version and the fields a report view reads. Never throws: a file from anywhere is expected to
 * be wrong sometimes.
 *
 * @example
 * const parsed = parseEvalReport(text);
 * if (parsed.ok) document.body.innerHTML = renderEvalReportBody(parsed.report);
 */
export function parseEvalReport(text: string): ParsedEvalReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (thrown) {
    return { ok: false, error: `This file is not JSON (${(thrown as Error).message}).` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, error: 'This file is JSON but not an eval report: it holds no object.' };
  const version = (value as { v?: unknown }).v;
  if (version !== 1)
    return {
      ok: false,
      error:
        version === undefined
          ? 'This file is JSON but not an eval report: it has no version field "v".'
          : `This eval report has version ${JSON.stringify(version)}; this reader knows version 1.`,
    };
  const checked = reportSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(report)';
    const more =
      checked.error.issues.length > 1 ? ` (and ${checked.error.issues.length - 1} more problems)` : '';
    return {
      ok: false,
      error: `This file is not a valid eval report: ${where}: ${issue?.message ?? 'invalid'}${more}.`,
    };
  }
  return { ok: true, report: checked.data as unknown as EvalReport };
}
