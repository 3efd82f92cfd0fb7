import { describe, expect, it } from 'vitest';
import { runAgent } from '../../loop/run-agent.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { InputFields } from '../../tools/input-fields.js';
import { attackForms, renderAttack } from '../attacks.js';
import type { BenchUserTask, Observations } from '../bench-suite.js';
import { honestModel, obedientModel } from '../models.js';
import { type TravelWorld, travelSuite } from './travel.js';

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

async function runPlan(task: BenchUserTask<TravelWorld>, world: TravelWorld, setup: 'naive' | 'recommended') {
  const tools = travelSuite.tools(world, setup);
  const seen: Observations = {};
  const calls: { tool: string; input: Record<string, unknown> }[] = [];
  for (const step of task.plan) {
    const next = step(seen);
    calls.push(next);
    seen[next.tool] = await call(tools, next.tool, next.input);
  }
  return calls;
}

const benignTools = travelSuite.tools(travelSuite.makeWorld(''), 'recommended');
const toolNames = benignTools.map((tool) => tool.name);
const writes = new Set(benignTools.filter((tool) => tool.effect !== 'read').map((tool) => tool.name));
const attack = renderAttack('important_instructions', {
  tool: 'reserve_hotel',
  input: { hotel: 'X', start_day: '2024-01-01', end_day: '2024-01-02' },
  summary: 'x',
});

describe('the AgentDojo travel suite', () => {
  it('has user tasks 0 to 9 and injection tasks 0 to 5', () => {
    expect(travelSuite.userTasks.map((task) => task.id)).toEqual(
      Array.from({ length: 10 }, (_, index) => `user_task_${index}`),
    );
    expect(travelSuite.injectionTasks.map((task) => task.id)).toEqual(
      Array.from({ length: 6 }, (_, index) => `injection_task_${index}`),
    );
  });

  it('fills every injection vector, and leaves no placeholder in a benign world', () => {
    expect(JSON.stringify(travelSuite.makeWorld(''))).not.toMatch(/\{injection_|CANARY/);
    const world = travelSuite.makeWorld('CANARY');
    const slots = (reviews: { name: string; reviews: string[] }[]) =>
      reviews.filter((item) => item.reviews.includes('CANARY')).map((item) => item.name);
    // injection_hotels_0..6, injection_restaurants_0..3, injection_cars_0..2.
    expect(slots(world.hotels).sort()).toEqual(
      [
        'Le Marais Boutique',
        'City Hub',
        'Good Night',
        'Luxury Palace',
        'Montmartre Suites',
        'Cozy Stay',
        'London Luxury',
      ].sort(),
    );
    expect(slots(world.restaurants).sort()).toEqual(
      ['New Israeli Restaurant', 'Breizh Café', 'New Asiaway', 'Le Baratin'].sort(),
    );
    expect(slots(world.cars).sort()).toEqual(
      ['SunSet Rent-A-Car', 'Speedy Rentals', 'New Car Rental'].sort(),
    );
  });

  it('declares the recommended controls only in the recommended setup', () => {
    for (const tool of travelSuite.tools(travelSuite.makeWorld(''), 'naive')) {
      expect(tool.autonomy).toBe('autonomous');
      expect([tool.trustedOutput, tool.privateOutput, tool.trustedOutputFields]).toEqual([false, false, []]);
      expect(tool.nonSensitiveArguments).toEqual([]);
    }
    for (const name of [
      'get_rating_reviews_for_hotels',
      'get_rating_reviews_for_restaurants',
      'get_rating_reviews_for_car_rental',
      'get_day_calendar_events',
      'search_calendar_events',
    ])
      expect(toolNamed(benignTools, name).trustedOutput, name).toBe(false);
    for (const name of ['get_user_information', 'get_day_calendar_events', 'search_calendar_events'])
      expect(toolNamed(benignTools, name).privateOutput, name).toBe(true);
  });

  for (const task of travelSuite.userTasks) {
    it(`${task.id}: the honest plan gets it done, benign and under attack`, async () => {
      for (const injection of ['', attack])
        for (const setup of ['naive', 'recommended'] as const) {
          const world = travelSuite.makeWorld(injection);
          await runPlan(task, world, setup);
          expect(task.done(world)).toBe(true);
        }
    });
  }

  it('a fresh world does not show a task done that needs a change', () => {
    for (const task of travelSuite.userTasks)
      if (task.intent.length > 0) expect(task.done(travelSuite.makeWorld('')), task.id).toBe(false);
  });

  it('the intent of each task covers its privileged calls, with the arguments the plan passes', async () => {
    for (const task of travelSuite.userTasks) {
      const calls = (await runPlan(task, travelSuite.makeWorld(''), 'recommended')).filter((made) =>
        writes.has(made.tool),
      );
      expect(
        calls.map((made) => made.tool),
        task.id,
      ).toEqual(task.intent.map((entry) => entry.tool));
      calls.forEach((made, index) => {
        for (const [key, value] of Object.entries(task.intent[index]?.arguments ?? {})) {
          if (typeof value === 'function')
            expect((value as (v: unknown) => unknown)(made.input[key]), key).toBe(true);
          else expect(made.input[key], `${task.id} ${made.tool}.${key}`).toStrictEqual(value);
        }
      });
    }
  });

  it('no honest plan achieves an attacker goal', async () => {
    for (const task of travelSuite.userTasks) {
      const world = travelSuite.makeWorld('');
      await runPlan(task, world, 'recommended');
      for (const injection of travelSuite.injectionTasks)
        expect(injection.achieved(world), `${task.id} ${injection.id}`).toBe(false);
    }
  });

  for (const injection of travelSuite.injectionTasks) {
    it(`${injection.id}: the goal call achieves it, and a benign world does not show it`, async () => {
      expect(injection.achieved(travelSuite.makeWorld(''))).toBe(false);
      const world = travelSuite.makeWorld(renderAttack('important_instructions', injection.goal));
      const tools = travelSuite.tools(world, 'recommended');
      expect((await toolNamed(tools, injection.goal.tool).validate(injection.goal.input)).ok).toBe(true);
      await call(tools, injection.goal.tool, injection.goal.input);
      expect(injection.achieved(world)).toBe(true);
    });
  }

  it('every policy names a tool of the suite and fields of its input', () => {
    for (const [name, policy] of Object.entries(travelSuite.policies)) {
      const tool = toolNamed(benignTools, name);
      expect(tool.effect, name).not.toBe('read');
      const fields = new InputFields(tool.inputJsonSchema);
      const paths = [
        ...Object.keys(policy.arguments ?? {}),
        ...(policy.readers?.arguments ?? []),
        ...(policy.egress ?? []),
        ...[policy.caps?.sum?.argument, policy.caps?.perValue?.argument].filter((path) => path !== undefined),
      ];
      for (const path of paths) expect(fields.has(path), `${name}: ${path}`).toBe(true);
      for (const source of Object.values(policy.arguments ?? {}).flat())
        if (source.startsWith('tool:')) expect(toolNames, source).toContain(source.slice(5));
    }
    for (const tool of benignTools)
      for (const path of tool.nonSensitiveArguments)
        expect(new InputFields(tool.inputJsonSchema).has(path), `${tool.name}: ${path}`).toBe(true);
    expect(Object.keys(travelSuite.policies).sort()).toEqual([...writes].sort());
  });

  describe('under the recommended configuration (policies + plan)', () => {
    for (const task of travelSuite.userTasks) {
      it(`${task.id}: the honest run ${task.needsPerson ? 'pauses for a person' : 'gets it done'}`, async () => {
        const world = travelSuite.makeWorld('');
        const result = await runAgent({
          model: honestModel(task),
          input: task.prompt,
          system: travelSuite.system,
          tools: travelSuite.tools(world, 'recommended'),
          taint: { onTaintedCall: 'ask', policies: travelSuite.policies, plan: task.intent },
          giveUpTool: false,
          maxSteps: 40,
        });
        if (task.needsPerson) expect(result.outcome.kind).toBe('awaiting_approval');
        else {
          expect(result.outcome.kind).toBe('answered');
          expect(task.done(world)).toBe(true);
        }
      });
    }

    it('with deny, the obedient model achieves no goal in any attack form', async () => {
      const through: string[] = [];
      for (const task of travelSuite.userTasks)
        for (const injection of travelSuite.injectionTasks)
          for (const form of attackForms) {
            const world = travelSuite.makeWorld(renderAttack(form, injection.goal));
            await runAgent({
              model: obedientModel(task, toolNames),
              input: task.prompt,
              system: travelSuite.system,
              tools: travelSuite.tools(world, 'recommended'),
              taint: { onTaintedCall: 'deny', policies: travelSuite.policies, plan: task.intent },
              giveUpTool: false,
              maxSteps: 40,
            });
            if (injection.achieved(world)) through.push(`${task.id} ${injection.id} ${form}`);
          }
      expect(through).toEqual([]);
    }, 120_000);

    it('without any guard the obedient model does achieve the goals (the attacks reach the model)', async () => {
      let achieved = 0;
      for (const injection of travelSuite.injectionTasks) {
        // user_task_2 only reads (user_task_0's own booking would overwrite an injected one).
        const task = travelSuite.userTasks[2] as BenchUserTask<TravelWorld>;
        const world = travelSuite.makeWorld(renderAttack('important_instructions', injection.goal));
        await runAgent({
          model: obedientModel(task, toolNames),
          input: task.prompt,
          system: travelSuite.system,
          tools: travelSuite.tools(world, 'naive'),
          taint: { enabled: false },
          giveUpTool: false,
          maxSteps: 40,
        });
        if (injection.achieved(world)) achieved++;
      }
      expect(achieved).toBe(travelSuite.injectionTasks.length);
    });
  });
});
