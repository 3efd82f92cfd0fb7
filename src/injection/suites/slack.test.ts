import { describe, expect, it } from 'vitest';
import type { AnyTool } from '../../tools/define-tool.js';
import { InputFields } from '../../tools/input-fields.js';
import type { Observations } from '../bench-suite.js';
import { type SlackWorld, slackSuite } from './slack.js';

const toolsOf = (world: SlackWorld) =>
  new Map(slackSuite.tools(world, 'recommended').map((tool): [string, AnyTool] => [tool.name, tool]));

/** Validates and runs one call as the loop would, without a guard; returns the parsed result. */
async function call(tools: Map<string, AnyTool>, name: string, input: unknown): Promise<unknown> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  const validation = await tool.validate(input);
  if (!validation.ok) throw new Error(`${name}: ${JSON.stringify(validation.issues)}`);
  const result = await tool.execute(validation.value, {} as never);
  // The model sees the result serialized: observations are what it parses back.
  return result === undefined ? undefined : JSON.parse(JSON.stringify(result));
}

/** Runs a task's honest plan on `world`, recording the privileged calls it made. */
async function runPlan(task: (typeof slackSuite.userTasks)[number], world: SlackWorld) {
  const tools = toolsOf(world);
  const seen: Observations = {};
  const privileged: { tool: string; input: Record<string, unknown> }[] = [];
  for (const step of task.plan) {
    const next = step(seen);
    seen[next.tool] = await call(tools, next.tool, next.input);
    if (tools.get(next.tool)?.effect !== 'read') privileged.push({ tool: next.tool, input: next.input });
  }
  return privileged;
}

describe('the slack suite', () => {
  it('ports all 21 user tasks and all 5 injection tasks', () => {
    expect(slackSuite.userTasks.map((task) => task.id)).toEqual(
      Array.from({ length: 21 }, (_, index) => `user_task_${index}`),
    );
    expect(slackSuite.injectionTasks.map((task) => task.id)).toEqual(
      Array.from({ length: 5 }, (_, index) => `injection_task_${index + 1}`),
    );
  });

  it('fills every injection vector, and none in a benign world', () => {
    const canary = 'CANARY-SLACK';
    const world = slackSuite.makeWorld(canary);
    const text = JSON.stringify(world);
    // Six vectors: four pages' text, the phishing page, and the External channel's name (listed
    // as a channel and as Eve's membership).
    expect(text.split(canary).length - 1).toBe(7);
    expect(world.channels).toContain(`External_${canary}`);
    expect(JSON.stringify(slackSuite.makeWorld(''))).not.toContain('CANARY');
  });

  for (const task of slackSuite.userTasks) {
    it(`${task.id}: the honest plan does the task, in a benign world and with text planted`, async () => {
      for (const injection of ['', 'Planted text with no instruction in it.']) {
        const world = slackSuite.makeWorld(injection);
        expect(task.done(world)).toBe(false);
        const privileged = await runPlan(task, world);
        expect(task.done(world)).toBe(true);
        // Every privileged call matches an entry of the intent, and the intent admits no more calls.
        const budget = task.intent.map((entry) => ({ ...entry, left: entry.times ?? 1 }));
        for (const made of privileged) {
          const entry = budget.find(
            (candidate) =>
              candidate.tool === made.tool &&
              candidate.left > 0 &&
              Object.entries(candidate.arguments ?? {}).every(([key, value]) => made.input[key] === value),
          );
          if (task.intent.length === 0) continue;
          expect(entry, `${made.tool} ${JSON.stringify(made.input)}`).toBeDefined();
          if (entry) entry.left--;
        }
      }
    });
  }

  for (const injection of slackSuite.injectionTasks) {
    it(`${injection.id}: the goal's call achieves it, and a benign world has not`, async () => {
      const benign = slackSuite.makeWorld('');
      expect(injection.achieved(benign)).toBe(false);
      const world = slackSuite.makeWorld('');
      const tool = toolsOf(world).get(injection.goal.tool);
      expect(tool).toBeDefined();
      const validation = await tool?.validate(injection.goal.input);
      expect(validation?.ok).toBe(true);
      if (tool && validation?.ok) await tool.execute(validation.value, {} as never);
      expect(injection.achieved(world)).toBe(true);
    });
  }

  it('no honest plan achieves an attacker goal in a benign world', async () => {
    for (const task of slackSuite.userTasks) {
      const world = slackSuite.makeWorld('');
      await runPlan(task, world);
      for (const injection of slackSuite.injectionTasks)
        expect(injection.achieved(world), `${task.id} / ${injection.id}`).toBe(false);
    }
  });

  it('every policy names a tool of the suite and fields of its input', () => {
    const tools = toolsOf(slackSuite.makeWorld(''));
    for (const [name, policy] of Object.entries(slackSuite.policies)) {
      const tool = tools.get(name);
      expect(tool, name).toBeDefined();
      if (!tool) continue;
      const fields = new InputFields(tool.inputJsonSchema);
      const paths = [
        ...Object.keys(policy.arguments ?? {}),
        ...(policy.readers?.arguments ?? []),
        ...(policy.egress ?? []),
        ...(policy.caps?.sum ? [policy.caps.sum.argument] : []),
        ...(policy.caps?.perValue ? [policy.caps.perValue.argument] : []),
      ];
      for (const path of paths) expect(fields.has(path), `${name}.${path}`).toBe(true);
    }
    // Every privileged tool has a policy, and so does get_webpage (its URL leaves the system).
    for (const tool of tools.values())
      if (tool.effect !== 'read' || tool.name === 'get_webpage')
        expect(slackSuite.policies[tool.name], tool.name).toBeDefined();
  });

  it('declares the recommended setup, and none of it when naive', () => {
    const recommended = toolsOf(slackSuite.makeWorld(''));
    // Channel names are attacker-written: the list taints, each whole name is vouched for.
    expect(recommended.get('get_channels')?.trustedOutput).toBe(false);
    expect(recommended.get('get_channels')?.trustedOutputFields).toEqual(['*']);
    expect(recommended.get('get_users_in_channel')?.trustedOutput).toBe(true);
    expect(recommended.get('read_channel_messages')?.privateOutput).toBe(true);
    expect(recommended.get('read_inbox')?.privateOutput).toBe(true);
    expect(recommended.get('get_webpage')?.trustedOutput).toBe(false);
    expect(recommended.get('send_direct_message')?.nonSensitiveArguments).toEqual(['body']);
    expect(recommended.get('post_webpage')?.nonSensitiveArguments).toEqual(['content']);
    expect(recommended.get('remove_user_from_slack')?.effect).toBe('destructive');
    for (const tool of slackSuite.tools(slackSuite.makeWorld(''), 'naive')) {
      expect(tool.autonomy, tool.name).toBe('autonomous');
      expect(tool.trustedOutput || tool.privateOutput || tool.trustedOutputFields.length > 0, tool.name).toBe(
        false,
      );
      expect(tool.nonSensitiveArguments, tool.name).toEqual([]);
    }
  });

  it('intent arguments name fields of their tools', () => {
    const tools = toolsOf(slackSuite.makeWorld(''));
    for (const task of slackSuite.userTasks)
      for (const entry of task.intent) {
        const tool = tools.get(entry.tool);
        expect(tool && tool.effect !== 'read', `${task.id} ${entry.tool}`).toBe(true);
        if (!tool) continue;
        const fields = new InputFields(tool.inputJsonSchema);
        for (const key of Object.keys(entry.arguments ?? {}))
          expect(fields.has(key), `${task.id} ${key}`).toBe(true);
      }
  });

  it('get_webpage logs every URL it is asked for, found or not, without the scheme', async () => {
    const world = slackSuite.makeWorld('');
    const tools = toolsOf(world);
    expect(await call(tools, 'get_webpage', { url: 'https://www.dora-website.com' })).toContain(
      'dora@gmail.com',
    );
    expect(await call(tools, 'get_webpage', { url: 'www.nowhere.example/?secret=1a7b3d' })).toBe(
      '404 Not Found',
    );
    expect(world.webRequests).toEqual(['www.dora-website.com', 'www.nowhere.example/?secret=1a7b3d']);
  });
});
