import { contextPolicy } from '../../src/context/index.js';
import { renderTrace } from '../../src/index.js';
import {
  runScenario,
  type ScenarioName,
  type ScenarioRun,
  scenarioNames,
  scenarios,
} from '../../src/scenarios/index.js';
import { contextViewBody } from './context-view.js';
import { formatNumber, h } from './dom.js';
import { showOutcome } from './outcome-badge.js';
import { stepPhases } from './step-phases.js';
import { type StepView, stepViews } from './step-views.js';
import { windowAtStep } from './window-at-step.js';

export { type StepView, stepViews };

export interface StepperSettings {
  scenario: ScenarioName;
  repeatDetection: boolean;
  maxSteps: number;
  maxContextTokens: number;
  capResults: boolean;
  /** Run with {@link labContextPolicy}. */
  contextPolicy: boolean;
  /** The policy's budget: the whole prefill it keeps the window under. */
  windowBudgetTokens: number;
  compaction: 'summarize' | 'evict';
}

/**
 * The lab's context policy. The lesson's runs are small (about 900 tokens of system and tools, a
 * few hundred per step), so its budget is small too, or nothing would ever be compacted: at the
 * default 1,300 `drowns` gets its 41,000-token result admitted capped and answers, `wanders`
 * compacts its oldest steps at step 5, `loops` pins its dead end. The policy offers `recall`, so
 * the handle an admitted result carries is a tool the model has.
 */
export function labContextPolicy(settings: Pick<StepperSettings, 'windowBudgetTokens' | 'compaction'>) {
  return contextPolicy({
    budgetTokens: settings.windowBudgetTokens,
    compaction: settings.compaction,
    pinDecisions: true,
  });
}

/** The toggles as `runScenario` overrides, exactly as `reins demo` passes them. */
export function scenarioOverrides(settings: StepperSettings) {
  return {
    maxSteps: settings.maxSteps,
    maxContextTokens: settings.maxContextTokens,
    ...(settings.repeatDetection ? {} : { repeatLimit: false as const }),
    ...(settings.capResults ? { maxResultTokens: 2_000 } : {}),
    ...(settings.contextPolicy ? { context: labContextPolicy(settings) } : {}),
  };
}

/** The settings the stepper starts with. */
export const defaultStepperSettings: Readonly<StepperSettings> = {
  scenario: 'happy',
  repeatDetection: true,
  maxSteps: scenarios.happy.limits.maxSteps,
  maxContextTokens: scenarios.happy.limits.maxContextTokens,
  capResults: false,
  contextPolicy: false,
  windowBudgetTokens: 1_300,
  compaction: 'summarize',
};

/** Builds the stepper into `root`: scenario picker, toggles, step controls, counters, trace. */
export function mountStepper(root: HTMLElement): void {
  const settings: StepperSettings = { ...defaultStepperSettings };
  let run: ScenarioRun | undefined;
  let policyTools: string[] = [];
  let views: StepView[] = [];
  let position = 1;
  let timer: ReturnType<typeof setInterval> | undefined;
  let generation = 0;

  const scenarioButtons = scenarioNames.map((name) =>
    h(
      'button',
      { type: 'button', 'data-scenario': name, 'aria-pressed': String(name === settings.scenario) },
      scenarios[name].title,
    ),
  );
  const repeat = h('input', { type: 'checkbox', id: 'toggle-repeat', checked: true });
  const steps = h('input', { type: 'number', id: 'toggle-steps', min: 1, max: 20, value: settings.maxSteps });
  const budget = h('input', {
    type: 'number',
    id: 'toggle-budget',
    min: 500,
    max: 200_000,
    step: 500,
    value: settings.maxContextTokens,
  });
  const cap = h('input', { type: 'checkbox', id: 'toggle-cap' });
  const policy = h('input', { type: 'checkbox', id: 'toggle-context' });
  const windowBudget = h('input', {
    type: 'number',
    id: 'toggle-window',
    min: 500,
    max: 200_000,
    step: 100,
    value: settings.windowBudgetTokens,
  });
  const compaction = h(
    'select',
    { id: 'toggle-compaction' },
    h('option', { value: 'summarize', selected: true }, 'summarize'),
    h('option', { value: 'evict' }, 'evict'),
  );
  const policyOptions = [
    h('label', { for: 'toggle-window', hidden: true }, 'window budget', windowBudget),
    h('label', { for: 'toggle-compaction', hidden: true }, 'compaction', compaction),
  ];
  const contextSummary = h('summary', {}, 'What the window holds');
  const contextBody = h('div', { 'data-testid': 'context-body' });
  const contextView = h('details', { class: 'panel', id: 'context-view' }, contextSummary, contextBody);
  const back = h('button', { type: 'button', id: 'step-back', 'aria-label': 'Step back' }, '‹ Back');
  const play = h('button', { type: 'button', id: 'step-play', 'aria-label': 'Play' }, '▶ Play');
  const forward = h(
    'button',
    { type: 'button', id: 'step-forward', 'aria-label': 'Step forward' },
    'Forward ›',
  );
  const restart = h('button', { type: 'button', id: 'step-restart', 'aria-label': 'Back to step 1' }, '↺');
  const positionText = h('span', { 'data-testid': 'step-position', 'aria-live': 'polite' });
  const lesson = h('p', { class: 'lesson' });
  const question = h('p', {});
  const stepBody = h('div', { 'data-testid': 'step-body' });
  const contextUsed = h('span', { 'data-testid': 'context-used' });
  const contextBudget = h('span', { 'data-testid': 'context-budget' });
  const meterFill = h('div', {});
  const meter = h(
    'div',
    { class: 'meter', role: 'meter', 'aria-label': 'Context used', 'aria-valuemin': 0 },
    meterFill,
  );
  const billed = h('span', { 'data-testid': 'billed' });
  const billedNote = h('p', { class: 'hint' });
  const bills = h('div', { class: 'bills', 'aria-hidden': 'true' });
  const badge = h('span', { class: 'badge pending', 'data-testid': 'outcome-kind' });
  const cause = h('p', { class: 'cause', 'data-testid': 'outcome-cause' });
  const tracePre = h('pre', { 'data-testid': 'trace' });
  const traceSummary = h('summary', {}, 'The trace of the run');

  const stepper = h(
    'div',
    { class: 'panel', id: 'stepper', 'aria-label': 'Stepper: arrow keys step, space plays' },
    h(
      'div',
      { class: 'row', role: 'group', 'aria-label': 'Step controls' },
      restart,
      back,
      play,
      forward,
      positionText,
    ),
    stepBody,
  );

  root.append(
    h('h2', {}, 'Stepping the agent loop'),
    h(
      'p',
      {},
      'Think → act → observe, with the real loop controls. Pick a scenario, step through it, and flip the controls: each change re-runs the real ',
      h('code', {}, 'runAgent'),
      '.',
    ),
    h('div', { class: 'row', role: 'group', 'aria-label': 'Scenario' }, ...scenarioButtons),
    lesson,
    h(
      'div',
      { class: 'row toggles panel', role: 'group', 'aria-label': 'Controls' },
      h('label', { for: 'toggle-repeat' }, repeat, 'detect repeated calls'),
      h('label', { for: 'toggle-steps' }, 'step limit', steps),
      h('label', { for: 'toggle-budget' }, 'token budget', budget),
      h('label', { for: 'toggle-cap' }, cap, 'cap tool results (2,000 tokens)'),
      h('label', { for: 'toggle-context' }, policy, 'context policy'),
      ...policyOptions,
    ),
    question,
    stepper,
    contextView,
    h(
      'div',
      { class: 'counters' },
      h(
        'div',
        { class: 'counter' },
        h('div', { class: 'label' }, 'context'),
        h('div', { class: 'value' }, contextUsed, ' / ', contextBudget),
        meter,
      ),
      h(
        'div',
        { class: 'counter' },
        h('div', { class: 'label' }, 'billed so far'),
        h('div', { class: 'value' }, billed),
        billedNote,
        bills,
      ),
      h(
        'div',
        { class: 'counter' },
        h('div', { class: 'label' }, 'outcome'),
        h('div', { class: 'value', 'aria-live': 'polite' }, badge),
        cause,
      ),
    ),
    h('details', {}, traceSummary, tracePre),
  );

  const render = () => {
    if (!run) return;
    const total = views.length;
    position = Math.min(Math.max(1, position), total);
    const view = views[position - 1];
    const atEnd = position === total;
    positionText.textContent = `step ${position} / ${total}`;
    // A button that becomes disabled drops keyboard focus to <body>; keep it in the stepper.
    const active = document.activeElement;
    if ((active === forward && atEnd) || ((active === back || active === restart) && position <= 1))
      stepper.focus();
    back.disabled = position <= 1;
    restart.disabled = position <= 1;
    forward.disabled = atEnd;
    play.textContent = timer ? '❚❚ Pause' : '▶ Play';
    play.setAttribute('aria-label', timer ? 'Pause' : 'Play');
    stepBody.replaceChildren();
    if (view) {
      stepBody.append(
        h('h3', {}, `Step ${view.step}${view.toolsEnabled ? '' : ' — tools disabled: best answer'}`),
        stepPhases(view),
      );
      contextUsed.textContent = formatNumber(view.contextTokens);
      contextUsed.dataset.value = String(view.contextTokens);
      const share = view.contextTokens / settings.maxContextTokens;
      meterFill.style.width = `${Math.min(100, share * 100)}%`;
      meter.classList.toggle('over', share > 1);
      meter.setAttribute('aria-valuemax', String(settings.maxContextTokens));
      meter.setAttribute('aria-valuenow', String(view.contextTokens));
      meter.setAttribute(
        'aria-valuetext',
        `${formatNumber(view.contextTokens)} of ${formatNumber(settings.maxContextTokens)} tokens`,
      );
      billed.textContent = formatNumber(view.billedTokens);
      billed.dataset.value = String(view.billedTokens);
      const first = views[0]?.billedTokens ?? 0;
      billedNote.textContent =
        position > 1 && first > 0
          ? `${position} steps have billed ${(view.billedTokens / first).toFixed(1)}× the first — context is re-sent every step`
          : 'context re-sent each step';
      const top = Math.max(...views.map((v) => v.billedTokens), 1);
      bills.replaceChildren(
        ...views.map((v, index) =>
          h('div', {
            class: index < position ? '' : 'future',
            style: `height:${Math.max(2, (v.billedTokens / top) * 100)}%`,
          }),
        ),
      );
    }
    contextSummary.textContent = view
      ? `What the window holds at step ${view.step}${settings.contextPolicy ? '' : ' (no context policy)'}`
      : 'What the window holds';
    contextBody.replaceChildren(
      ...contextViewBody(view ? windowAtStep(run.trace, run.result.messages, view.step) : undefined, {
        on: settings.contextPolicy,
        budgetTokens: settings.windowBudgetTokens,
        tools: policyTools,
      }),
    );
    contextBudget.textContent = formatNumber(settings.maxContextTokens);
    contextBudget.dataset.value = String(settings.maxContextTokens);
    if (atEnd) {
      showOutcome(badge, cause, run.outcome);
    } else {
      badge.textContent = 'running';
      badge.className = 'badge pending';
      badge.dataset.value = 'running';
      cause.textContent = `Step ${position} of ${total}: ${view?.acts.length ? `calling ${view.acts.map((act) => act.call.split('(')[0]).join(', ')}` : 'answering'}.`;
    }
  };

  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  const rerun = async (resetPosition: boolean) => {
    const mine = ++generation;
    stop();
    const overrides = scenarioOverrides(settings);
    const result = await runScenario(settings.scenario, overrides);
    if (mine !== generation) return;
    run = result;
    policyTools = overrides.context?.tools.map((tool) => tool.name) ?? [];
    views = stepViews(result.trace);
    if (resetPosition) position = 1;
    const scenario = scenarios[settings.scenario];
    lesson.textContent = scenario.lesson;
    question.replaceChildren(h('strong', {}, 'question '), scenario.question);
    tracePre.textContent = renderTrace(result.trace);
    traceSummary.textContent = `The trace of the run (${result.trace.length} events)`;
    root.dataset.ready = String(generation);
    render();
  };

  const go = (to: number) => {
    position = to;
    render();
  };
  const togglePlay = () => {
    if (timer) stop();
    else {
      if (position >= views.length) position = 1;
      timer = setInterval(() => {
        if (position >= views.length) stop();
        else position += 1;
        render();
      }, 900);
    }
    render();
  };

  for (const button of scenarioButtons) {
    button.addEventListener('click', () => {
      settings.scenario = button.dataset.scenario as ScenarioName;
      for (const other of scenarioButtons) other.setAttribute('aria-pressed', String(other === button));
      void rerun(true);
    });
  }
  repeat.addEventListener('change', () => {
    settings.repeatDetection = repeat.checked;
    void rerun(false);
  });
  cap.addEventListener('change', () => {
    settings.capResults = cap.checked;
    void rerun(false);
  });
  policy.addEventListener('change', () => {
    settings.contextPolicy = policy.checked;
    for (const label of policyOptions) label.hidden = !policy.checked;
    void rerun(false);
  });
  compaction.addEventListener('change', () => {
    settings.compaction = compaction.value === 'evict' ? 'evict' : 'summarize';
    void rerun(false);
  });
  const numberSetting = (
    input: HTMLInputElement,
    key: 'maxSteps' | 'maxContextTokens' | 'windowBudgetTokens',
  ) =>
    input.addEventListener('change', () => {
      const value = Number(input.value);
      const min = Number(input.min);
      const max = Number(input.max);
      if (!Number.isInteger(value) || value < min || value > max) {
        input.setCustomValidity(`Whole number from ${min} to ${max}`);
        input.reportValidity();
        return;
      }
      input.setCustomValidity('');
      settings[key] = value;
      void rerun(false);
    });
  numberSetting(steps, 'maxSteps');
  numberSetting(budget, 'maxContextTokens');
  numberSetting(windowBudget, 'windowBudgetTokens');
  back.addEventListener('click', () => go(position - 1));
  forward.addEventListener('click', () => go(position + 1));
  restart.addEventListener('click', () => go(1));
  play.addEventListener('click', togglePlay);
  stepper.addEventListener('keydown', (event) => {
    const key = event.key;
    if (key === 'ArrowRight') go(position + 1);
    else if (key === 'ArrowLeft') go(position - 1);
    else if (key === 'Home') go(1);
    else if (key === 'End') go(views.length);
    else return;
    event.preventDefault();
  });
  stepper.tabIndex = 0;
  void rerun(true);
}
