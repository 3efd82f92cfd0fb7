import { errorInfo } from '../../errors/error-info.js';
import { checkModelSettings } from '../../model/check-settings.js';
import type { UserMessage } from '../../model/content.js';
import { mergeSettings, type ToolChoice } from '../../model/model.js';
import type { StepPrepareEvent } from '../../trace/events.js';
import { guard } from '../boundary.js';
import type { LoopState, PreparedCall } from '../loop-state.js';
import { isLoopStop, LoopStop } from '../loop-stop.js';
import type { PrepareStepResult } from '../options.js';
import { prepareWindow } from './prepare-window.js';

/**
 * Prepare: at the step limit, append the best-answer prompt and switch tools off; then let
 * `prepareStep` change what this call sends. Each change is a `step-prepare` event, so a replay
 * sends the same request.
 */
export function prepareCall(
  state: LoopState,
  step: number,
  final: boolean,
): PreparedCall | Promise<PreparedCall> {
  const { setup } = state;
  if (final) {
    const prompt: UserMessage = {
      role: 'user',
      content: [{ type: 'text', text: setup.limits.finalAnswerPrompt }],
    };
    state.messages.push(prompt);
    state.contextTokens += setup.counter.message(prompt);
  }
  const prepared: PreparedCall = {
    model: setup.model,
    system: setup.state.system,
    messages: state.messages,
    tools: setup.toolDefinitions,
    toolChoice: final ? 'none' : 'auto',
    maxOutputTokens: setup.limits.maxOutputTokens ?? undefined,
    settings: setup.modelSettings,
    offered: undefined,
    contextTokens: state.contextTokens,
  };
  if (state.window)
    return setup.prepareStep
      ? prepareWindow(state, step, final, prepared).then((windowed) =>
          askPrepareStep(state, step, final, windowed),
        )
      : prepareWindow(state, step, final, prepared);
  return setup.prepareStep ? askPrepareStep(state, step, final, prepared) : prepared;
}

/** `prepareStep`, inside the boundary; what it changed is checked, applied and recorded. */
async function askPrepareStep(
  state: LoopState,
  step: number,
  final: boolean,
  prepared: PreparedCall,
): Promise<PreparedCall> {
  const { setup } = state;
  const prepareStep = setup.prepareStep as NonNullable<typeof setup.prepareStep>;
  const context = {
    runId: setup.runId,
    step,
    final,
    messages: state.messages,
    sending: prepared.messages,
    system: prepared.system,
    tools: prepared.tools,
    model: prepared.model,
    toolChoice: prepared.toolChoice,
    maxOutputTokens: prepared.maxOutputTokens,
    settings: prepared.settings,
    contextTokens: prepared.contextTokens,
    billedTokens: state.billedTokens,
    costUsd: state.costUsd,
  };
  const answer = await guard('prepare_step', () => prepareStep(context), state.run.signal);
  if (!answer.ok) throw LoopStop.from(answer, 'before-call');
  if (answer.value === undefined || answer.value === null) return prepared;
  let changed: PreparedCall;
  try {
    changed = applyChanges(state, step, prepared, answer.value as PrepareStepResult);
  } catch (thrown) {
    // Its answer is the callback's too: a throwing getter or a Proxy is a prepare_step error.
    if (isLoopStop(thrown)) throw thrown;
    throw new LoopStop(
      { kind: 'hard_error', source: 'prepare_step', error: errorInfo(thrown) },
      'before-call',
    );
  }
  const changes = state.pendingPrepare;
  state.pendingPrepare = undefined;
  if (changes) {
    const written = state.trace.emit({
      type: 'step-prepare',
      step,
      changes,
      contextTokens: changed.contextTokens,
    });
    if (written) await written;
  }
  return changed;
}

/** A tool choice the step can honour: a named tool must be one it offers. */
function checkedToolChoice(
  choice: unknown,
  prepared: PreparedCall,
  fail: (message: string) => never,
): ToolChoice {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (
    typeof choice !== 'object' ||
    choice === null ||
    typeof (choice as { name?: unknown }).name !== 'string'
  )
    fail("prepareStep: toolChoice must be 'auto', 'none', 'required' or { name }");
  const name = (choice as { name: string }).name;
  if (!prepared.tools.some((tool) => tool.name === name))
    fail(`prepareStep: toolChoice names "${name}", which this step does not offer`);
  return { name };
}

/** Applies what `prepareStep` returned, checking each field, and records the changes. */
export function applyChanges(
  state: LoopState,
  _step: number,
  prepared: PreparedCall,
  result: PrepareStepResult,
): PreparedCall {
  const { setup } = state;
  const changes: StepPrepareEvent['changes'] = {};
  const fail = (message: string): never => {
    throw new LoopStop(
      { kind: 'hard_error', source: 'prepare_step', error: { name: 'PrepareStepError', message } },
      'before-call',
    );
  };
  if (typeof result !== 'object' || result === null) fail('prepareStep must return an object or undefined');
  if (result.messages !== undefined) {
    if (!Array.isArray(result.messages)) fail('prepareStep: messages must be an array');
    prepared.messages = result.messages;
    changes.messages = result.messages;
  }
  if (result.system !== undefined) {
    if (typeof result.system !== 'string') fail('prepareStep: system must be a string');
    prepared.system = result.system;
    changes.system = result.system;
  }
  if (result.activeTools !== undefined) {
    if (!Array.isArray(result.activeTools)) fail('prepareStep: activeTools must be an array of tool names');
    const active = new Set(result.activeTools);
    const known = new Set(setup.toolDefinitions.map((tool) => tool.name));
    for (const name of active)
      if (!known.has(name)) fail(`prepareStep: "${String(name)}" is not one of the run's tools`);
    prepared.tools = setup.toolDefinitions.filter((tool) => active.has(tool.name));
    prepared.offered = active;
    changes.activeTools = [...active];
  }
  if (result.model !== undefined) {
    if (typeof result.model?.generate !== 'function')
      fail('prepareStep: model must implement generate(request)');
    prepared.model = result.model;
    changes.model = result.model.name;
  }
  if (result.toolChoice !== undefined) {
    prepared.toolChoice = checkedToolChoice(result.toolChoice, prepared, fail);
    changes.toolChoice = prepared.toolChoice;
  }
  if (result.settings !== undefined) {
    try {
      checkModelSettings('settings', result.settings);
    } catch (error) {
      fail(`prepareStep: ${(error as Error).message}`);
    }
    prepared.settings = mergeSettings(prepared.settings, result.settings);
    changes.settings = prepared.settings;
  }
  if (result.maxOutputTokens !== undefined) {
    if (!Number.isInteger(result.maxOutputTokens) || result.maxOutputTokens < 1)
      fail('prepareStep: maxOutputTokens must be an integer ≥ 1');
    prepared.maxOutputTokens = result.maxOutputTokens;
    changes.maxOutputTokens = result.maxOutputTokens;
  }
  if (Object.keys(changes).length === 0) return prepared;
  if (changes.messages !== undefined || changes.system !== undefined || changes.activeTools !== undefined)
    prepared.contextTokens = setup.counter.request({
      system: prepared.system,
      tools: prepared.tools,
      messages: prepared.messages,
    });
  state.pendingPrepare = changes;
  return prepared;
}
