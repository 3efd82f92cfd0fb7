import { z } from 'zod';
import { canonicalJson } from '../controls/canonical-json.js';
import { type AnyTool, defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';

/** Canned answers for one tool: by canonical input, with an optional fallback. */
export interface CannedResponses {
  /** Keyed by `canonicalJson(input)`. A value of `{ $error: {...} }` makes the tool throw a ToolError. */
  byInput: Record<string, unknown>;
  fallback?: unknown;
}

/** Canned answers for every tool a scenario uses. */
export type ScenarioData = Partial<Record<IncidentToolName, CannedResponses>>;

export type IncidentToolName =
  | 'get_service_health'
  | 'list_deploys'
  | 'get_error_summary'
  | 'get_latency_breakdown'
  | 'search_logs'
  | 'get_metrics'
  | 'get_dependency_status';

/** A canned key: the canonical JSON of an input. */
export const inputKey = canonicalJson;

const service = z.string().min(1).describe('Service name, for example "checkout".');

const specs = {
  get_service_health: {
    description: 'Current health of one service: status, error rate and p99 latency.',
    input: z.object({ service }),
  },
  list_deploys: {
    description: 'Deploys of one service since a point in time ("today", "7d" or an ISO date).',
    input: z.object({ service, since: z.string().min(1) }),
  },
  get_error_summary: {
    description: 'The most frequent errors of one service over the last window_minutes.',
    input: z.object({ service, window_minutes: z.number().int().positive().max(10_080) }),
  },
  get_latency_breakdown: {
    description: 'Where request time goes for one service, per downstream call.',
    input: z.object({ service }),
  },
  search_logs: {
    description: 'Full-text search over one service\u2019s logs. Returns every matching line.',
    input: z.object({ service, query: z.string().min(1) }),
  },
  get_metrics: {
    description: 'A daily time series for one metric of one service over a range such as "7d".',
    input: z.object({ service, metric: z.string().min(1), range: z.string().min(1) }),
  },
  get_dependency_status: {
    description: 'Whether a downstream dependency of a service is healthy.',
    input: z.object({ service, dependency: z.string().min(1) }),
  },
} as const;

/** The incident-diagnosis toolbox the lesson's scenarios share, answering from canned data. */
export function incidentTools(data: ScenarioData): AnyTool[] {
  return (Object.keys(specs) as IncidentToolName[]).map((name) => {
    const spec = specs[name];
    const canned = data[name];
    return defineTool({
      name,
      effect: 'read',
      paging: 'search again with a narrower query (a shorter time range or one error kind)',
      description: spec.description,
      input: spec.input,
      scopes: ['incidents:read'],
      execute: (input: unknown) => {
        const key = inputKey(input);
        const answer = canned && key in canned.byInput ? canned.byInput[key] : canned?.fallback;
        if (answer === undefined) {
          throw new ToolError(
            `No data for ${name} with ${key}. Check the service name, or try another tool.`,
            { code: 'not_found' },
          );
        }
        const failure = (answer as { $error?: { code: string; message: string } }).$error;
        if (failure)
          throw new ToolError(failure.message, { code: failure.code, retry: 'after', retryAfterSeconds: 60 });
        return answer;
      },
    });
  });
}
