import { cyrb53 } from '../controls/text-hash.js';
import { toolCallsOf } from '../model/content.js';
import type { RunStartEvent, TraceEvent } from '../trace/events.js';

/** One agent's "agent or workflow?" figures (post-15). */
export interface AgentWorkflowTell {
  /** The agent's key: by default a hash of its system prompt and tool names. */
  agent: string;
  /** Its system prompt's first line, for a person. */
  label: string;
  runs: number;
  /** Decisions seen (model calls), each the set of tools it called or `(answer)`. */
  decisions: number;
  /**
   * Of the decisions, the share that were the most common choice given the previous one (a run's
   * first given `(start)`). 1: the model always picks the same next step.
   */
  predictability: number | null;
  /** `predictability ≥ threshold` over at least `minDecisions`: a loop around a straight line. */
  straightLine: boolean;
  /** The most common path from `(start)`, following each step's most common successor. */
  typicalPath: string[];
}

export interface WorkflowTellOptions {
  /** @default 0.95 (post-15: "the same next step 95 % of the time") */
  threshold?: number;
  /** Fewer decisions than this never flag: one run always looks predictable. @default 20 */
  minDecisions?: number;
  /** Which agent a run belongs to. @default a hash of the system prompt and the offered tools' names */
  agentOf?: (runStart: RunStartEvent) => string;
}

const start = '(start)';
const answer = '(answer)';

/**
 * "If the decide-what's-next step picks the same next step 95 % of the time, you built a loop
 * around a straight line" (post-15): per agent, how often a model call chose what that agent most
 * often chooses after the previous choice, from trace events (`run-start` and `model-response`).
 *
 * @example
 * for (const tell of workflowTell(trace.events)) if (tell.straightLine) console.log(tell.typicalPath.join(' → '));
 */
export function workflowTell(
  events: Iterable<TraceEvent>,
  options: WorkflowTellOptions = {},
): AgentWorkflowTell[] {
  const { threshold = 0.95, minDecisions = 20, agentOf = defaultAgentOf } = options;
  const byRun = new Map<string, TraceEvent[]>();
  for (const event of events) {
    if (event.type !== 'run-start' && event.type !== 'model-response') continue;
    const run = byRun.get(event.runId);
    if (run) run.push(event);
    else byRun.set(event.runId, [event]);
  }
  const agents = new Map<
    string,
    { label: string; runs: number; transitions: Map<string, Map<string, number>> }
  >();
  for (const run of byRun.values()) {
    run.sort((a, b) => a.seq - b.seq);
    const first = run.find((event): event is RunStartEvent => event.type === 'run-start');
    if (!first) continue;
    const key = agentOf(first);
    let agent = agents.get(key);
    if (!agent) {
      agent = { label: firstLine(first.system), runs: 0, transitions: new Map() };
      agents.set(key, agent);
    }
    agent.runs++;
    let previous = start;
    for (const event of run) {
      // A resumed run's next segment opens with its own run-start: it continues, it does not restart.
      if (event.type !== 'model-response') continue;
      const names = [...new Set(toolCallsOf(event.response.content).map((call) => call.name))].sort();
      const choice = names.length > 0 ? names.join('+') : answer;
      let next = agent.transitions.get(previous);
      if (!next) {
        next = new Map();
        agent.transitions.set(previous, next);
      }
      next.set(choice, (next.get(choice) ?? 0) + 1);
      previous = choice;
    }
  }
  return [...agents].map(([key, agent]) => {
    let decisions = 0;
    let predictable = 0;
    for (const next of agent.transitions.values()) {
      let most = 0;
      for (const times of next.values()) {
        decisions += times;
        most = Math.max(most, times);
      }
      predictable += most;
    }
    const predictability = decisions > 0 ? predictable / decisions : null;
    return {
      agent: key,
      label: agent.label,
      runs: agent.runs,
      decisions,
      predictability,
      straightLine: predictability !== null && decisions >= minDecisions && predictability >= threshold,
      typicalPath: typicalPath(agent.transitions),
    };
  });
}

function typicalPath(transitions: Map<string, Map<string, number>>): string[] {
  const path: string[] = [];
  const seen = new Set<string>();
  let at = start;
  while (path.length < 12) {
    const next = transitions.get(at);
    if (!next) break;
    let best: string | undefined;
    let most = 0;
    for (const [choice, times] of next) if (times > most) [best, most] = [choice, times];
    if (best === undefined) break;
    path.push(best);
    if (best === answer || seen.has(best)) break;
    seen.add(best);
    at = best;
  }
  return path;
}

function defaultAgentOf(runStart: RunStartEvent): string {
  const tools = (runStart.tools ?? []).map((tool) => tool.name).sort();
  return cyrb53(`${runStart.system}\u0000${tools.join(',')}`);
}

function firstLine(text: string): string {
  const line = (text ?? '').split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
