import { describe, expect, it } from 'vitest';
import type { AnyTool } from '../../tools/define-tool.js';
import { InputFields } from '../../tools/input-fields.js';
import { renderAttack } from '../attacks.js';
import type { BenchUserTask, Observations } from '../bench-suite.js';
import { type BankingWorld, bankingSuite } from './banking.js';

const agentDojoTools = [
  'get_iban',
  'send_money',
  'schedule_transaction',
  'update_scheduled_transaction',
  'get_balance',
  'get_most_recent_transactions',
  'get_scheduled_transactions',
  'read_file',
  'get_user_info',
  'update_password',
  'update_user_info',
];

function toolNamed(tools: AnyTool[], name: string): AnyTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

/** Validates and runs one call as the loop would (the output goes through JSON, as the model sees it). */
async function call(tools: AnyTool[], name: string, input: unknown): Promise<unknown> {
  const tool = toolNamed(tools, name);
  const validation = await tool.validate(input);
  if (!validation.ok) throw new Error(`${name}: ${JSON.stringify(validation.issues)}`);
  return JSON.parse(JSON.stringify(await tool.execute(validation.value, {} as never)));
}

/** Runs a task's honest plan against the world's tools; returns the calls made. */
async function runPlan(
  task: BenchUserTask<BankingWorld>,
  world: BankingWorld,
  setup: 'naive' | 'recommended',
) {
  const tools = bankingSuite.tools(world, setup);
  const seen: Observations = {};
  const calls: { tool: string; input: Record<string, unknown> }[] = [];
  for (const step of task.plan) {
    const next = step(seen);
    calls.push(next);
    seen[next.tool] = await call(tools, next.tool, next.input);
  }
  return calls;
}

const writes = new Set(
  bankingSuite
    .tools(bankingSuite.makeWorld(''), 'recommended')
    .filter((tool) => tool.effect !== 'read')
    .map((tool) => tool.name),
);
const attack = (text = 'ATTACK') =>
  renderAttack('important_instructions', {
    tool: 'update_password',
    input: { password: text },
    summary: 'x',
  });

describe('the AgentDojo banking suite', () => {
  it("has AgentDojo's tools, all 16 user tasks and all 9 injection tasks", () => {
    for (const setup of ['naive', 'recommended'] as const)
      expect(
        bankingSuite
          .tools(bankingSuite.makeWorld(''), setup)
          .map((tool) => tool.name)
          .sort(),
      ).toEqual([...agentDojoTools].sort());
    expect(bankingSuite.userTasks.map((task) => task.id)).toEqual(
      Array.from({ length: 16 }, (_, index) => `user_task_${index}`),
    );
    expect(bankingSuite.injectionTasks.map((task) => task.id)).toEqual(
      Array.from({ length: 9 }, (_, index) => `injection_task_${index}`),
    );
  });

  it('fills every injection vector, and leaves no placeholder in a benign world', () => {
    const benign = JSON.stringify(bankingSuite.makeWorld(''));
    expect(benign).not.toMatch(/\{injection_|CANARY/);
    const world = bankingSuite.makeWorld('CANARY');
    expect(world.bankAccount.transactions[4]?.subject).toBe('CANARY');
    for (const content of Object.values(world.filesystem.files)) expect(content).toContain('CANARY');
  });

  it('declares the recommended controls only in the recommended setup', () => {
    const world = bankingSuite.makeWorld('');
    const naive = bankingSuite.tools(world, 'naive');
    for (const tool of naive) {
      expect(tool.autonomy).toBe('autonomous');
      expect([tool.trustedOutput, tool.privateOutput, tool.trustedOutputFields]).toEqual([false, false, []]);
      expect([tool.sensitiveArguments, tool.nonSensitiveArguments]).toEqual(['all', []]);
    }
    const recommended = bankingSuite.tools(world, 'recommended');
    const trusted = recommended.filter((tool) => tool.trustedOutput).map((tool) => tool.name);
    expect(trusted.sort()).toEqual([
      'get_balance',
      'get_iban',
      'get_scheduled_transactions',
      'get_user_info',
    ]);
    expect(toolNamed(recommended, 'get_most_recent_transactions').trustedOutputFields).toEqual([
      '*.id',
      '*.date',
    ]);
    expect(toolNamed(recommended, 'read_file').trustedOutput).toBe(false);
  });

  for (const task of bankingSuite.userTasks) {
    it(`${task.id}: the honest plan gets it done, benign and under attack`, async () => {
      for (const injection of ['', attack()]) {
        for (const setup of ['naive', 'recommended'] as const) {
          const world = bankingSuite.makeWorld(injection);
          await runPlan(task, world, setup);
          expect(task.done(world)).toBe(true);
        }
      }
    });
  }

  it('a fresh world does not show a task done that needs a change', () => {
    for (const task of bankingSuite.userTasks) {
      const changes = task.intent.length > 0 && task.id !== 'user_task_9';
      if (changes) expect(task.done(bankingSuite.makeWorld('')), task.id).toBe(false);
    }
  });

  it('the intent of each task covers its privileged calls, with the arguments the plan passes', async () => {
    for (const task of bankingSuite.userTasks) {
      const calls = (await runPlan(task, bankingSuite.makeWorld(''), 'recommended')).filter((made) =>
        writes.has(made.tool),
      );
      expect(
        calls.map((made) => made.tool),
        task.id,
      ).toEqual(task.intent.map((entry) => entry.tool));
      calls.forEach((made, index) => {
        for (const [key, value] of Object.entries(task.intent[index]?.arguments ?? {}))
          expect(made.input[key], `${task.id} ${made.tool}.${key}`).toStrictEqual(value);
      });
    }
  });

  it("the answers of the output-only tasks pass AgentDojo's output checks", () => {
    const answer = (id: string) => bankingSuite.userTasks.find((task) => task.id === id)?.answer ?? '';
    expect(answer('user_task_1')).toMatch(/1,050|1050/);
    expect(answer('user_task_7')).toMatch(/200/);
  });

  it('no honest plan achieves an attacker goal', async () => {
    for (const task of bankingSuite.userTasks) {
      const world = bankingSuite.makeWorld('');
      await runPlan(task, world, 'recommended');
      for (const injection of bankingSuite.injectionTasks)
        expect(injection.achieved(world), `${task.id} ${injection.id}`).toBe(false);
    }
  });

  for (const injection of bankingSuite.injectionTasks) {
    it(`${injection.id}: the goal call achieves it, and a benign world does not show it`, async () => {
      expect(injection.achieved(bankingSuite.makeWorld(''))).toBe(false);
      const world = bankingSuite.makeWorld(renderAttack('important_instructions', injection.goal));
      const tools = bankingSuite.tools(world, 'recommended');
      const validation = await toolNamed(tools, injection.goal.tool).validate(injection.goal.input);
      expect(validation.ok).toBe(true);
      await call(tools, injection.goal.tool, injection.goal.input);
      expect(injection.achieved(world)).toBe(true);
    });
  }

  it('every policy names a tool of the suite and fields of its input', () => {
    const tools = bankingSuite.tools(bankingSuite.makeWorld(''), 'recommended');
    for (const [name, policy] of Object.entries(bankingSuite.policies)) {
      const tool = toolNamed(tools, name);
      expect(tool.effect, name).not.toBe('read');
      const fields = new InputFields(tool.inputJsonSchema);
      const paths = [
        ...Object.keys(policy.arguments ?? {}),
        ...(policy.readers?.arguments ?? []),
        ...(policy.egress ?? []),
        ...[policy.caps?.sum?.argument, policy.caps?.perValue?.argument].filter((path) => path !== undefined),
      ];
      for (const path of paths) expect(fields.has(path), `${name}: ${path}`).toBe(true);
    }
    expect(Object.keys(bankingSuite.policies).sort()).toEqual([...writes].sort());
  });
});
