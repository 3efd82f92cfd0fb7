import { ConfigurationError } from '../errors/reins-error.js';
import type { RunOptions } from '../loop/options.js';
import type { RunRequest } from './run-queue.js';

/**
 * What a definition builds for one run: the model, the tools and the limits. The executor adds
 * what belongs to the run itself (input, actor, run id, checkpoint store, trace, signal, verdicts).
 */
export type AgentRunOptions = Omit<
  RunOptions,
  'input' | 'actor' | 'runId' | 'checkpoint' | 'trace' | 'signal' | 'approvals'
>;

/** What a definition's `build` is told: the request as queued, with its run id. */
export interface AgentBuildContext {
  runId: string;
  request: RunRequest;
  /** 1 on the first start, 2 and up on a resume (after a crash, a drain or an approval). */
  attempt: number;
}

/**
 * A named agent: the only thing a queued run names. Jobs carry data, never functions, so every
 * worker registers the same definitions and builds the run from them (fresh tools and model per
 * run, so nothing leaks between runs).
 */
export interface AgentDefinition {
  name: string;
  build(context: AgentBuildContext): AgentRunOptions | Promise<AgentRunOptions>;
}

/**
 * Names one agent definition.
 *
 * @example
 * import { defineAgent } from 'reins/queue';
 * import { scriptedModel } from 'reins/testing';
 * const support = defineAgent({
 *   name: 'support',
 *   build: () => ({ model: scriptedModel([{ text: 'Done.' }]), maxSteps: 6 }),
 * });
 */
export function defineAgent(definition: AgentDefinition): AgentDefinition {
  if (typeof definition?.name !== 'string' || definition.name === '')
    throw new ConfigurationError('name', 'must be a non-empty string');
  if (typeof definition.build !== 'function')
    throw new ConfigurationError('build', 'must be a function (context) => run options');
  return definition;
}

/** The definitions a worker (and a service validating requests) knows, by name. */
export interface AgentRegistry {
  get(name: string): AgentDefinition | undefined;
  names(): string[];
}

/**
 * A registry of agent definitions; two with one name is a configuration error.
 *
 * @example
 * import { agentRegistry, defineAgent } from 'reins/queue';
 * import { scriptedModel } from 'reins/testing';
 * const agents = agentRegistry([
 *   defineAgent({ name: 'echo', build: () => ({ model: scriptedModel([{ text: 'hi' }]) }) }),
 * ]);
 * agents.get('echo');
 */
export function agentRegistry(definitions: readonly AgentDefinition[]): AgentRegistry {
  const byName = new Map<string, AgentDefinition>();
  for (const definition of definitions) {
    defineAgent(definition);
    if (byName.has(definition.name))
      throw new ConfigurationError('agents', `two definitions are named "${definition.name}"`);
    byName.set(definition.name, definition);
  }
  return {
    get: (name) => byName.get(name),
    names: () => [...byName.keys()],
  };
}
