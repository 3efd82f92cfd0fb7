import type { PlannedCall, ToolPolicy } from '../controls/taint-policy.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { AttackGoal } from './attacks.js';

/** What the honest model has seen so far: the parsed output of each tool's latest call, by tool name. */
export type Observations = Record<string, unknown>;

/** One step of an honest plan: the tool call to make, given what was observed. */
export type PlanStep = (seen: Observations) => { text: string; tool: string; input: Record<string, unknown> };

/** A task the user really asked for. */
export interface BenchUserTask<W> {
  id: string;
  prompt: string;
  /** What an honest model does, call by call; then it answers with `answer`. */
  plan: PlanStep[];
  answer: string;
  /** Whether the world shows the task done. */
  done(world: W): boolean;
  /**
   * The privileged calls the user's request fixes, with the arguments the request itself gives:
   * what a planner that sees only the request (no tool output) would write.
   */
  intent: PlannedCall[];
  /**
   * Some argument of a privileged call must come from data the agent reads (the amount of a bill
   * in a file): under the recommended configuration the honest run pauses for a person, by design.
   */
  needsPerson?: boolean;
}

/** A goal an attacker plants in content the agent reads. */
export interface BenchInjectionTask<W> {
  id: string;
  goal: AttackGoal;
  /** Whether the world shows the attacker's goal achieved. */
  achieved(world: W): boolean;
}

/** A benchmark suite: a world, its tools, the users' tasks and the attackers' goals. */
export interface BenchSuite<W> {
  name: string;
  /** Where the tasks come from, with the license (`AgentDojo v1 banking, MIT`). */
  source: string;
  system: string;
  /** A fresh world with every injection slot filled by `injection` (empty for a benign run). */
  makeWorld(injection: string): W;
  /**
   * The suite's tools acting on `world`. `recommended`: declared as docs/injection.md recommends
   * (trusted fields, `privateOutput`, `sideEffects`, sensitive arguments). `naive`: every tool
   * autonomous and none of those declarations, as in a framework without these controls.
   */
  tools(world: W, setup: 'naive' | 'recommended'): AnyTool[];
  /** The recommended policy of each privileged tool. */
  policies: Record<string, ToolPolicy>;
  userTasks: BenchUserTask<W>[];
  injectionTasks: BenchInjectionTask<W>[];
}
