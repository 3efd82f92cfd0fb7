import { formatNumber, h } from './dom.js';
import type { StepView } from './step-views.js';

/** One step as think → act → observe (→ answer): the stepper's and the run viewer's rendering. */
export function stepPhases(view: StepView): HTMLDListElement {
  const phases = h('dl', { class: 'phase' });
  if (view.thought) phases.append(h('dt', {}, 'think'), h('dd', {}, view.thought));
  for (const act of view.acts) {
    phases.append(h('dt', {}, 'act'), h('dd', {}, h('code', {}, act.call)));
    phases.append(
      h('dt', {}, 'observe'),
      h(
        'dd',
        { 'data-status': act.status },
        act.isError || act.status === 'awaiting approval' ? h('strong', {}, `${act.status}: `) : '',
        act.observation.length > 400 ? `${act.observation.slice(0, 400)}…` : act.observation,
        h('span', { class: 'hint' }, ` +${formatNumber(act.tokens)} tokens`),
      ),
    );
  }
  if (view.answer !== undefined)
    phases.append(h('dt', {}, 'answer'), h('dd', {}, view.answer || '(no text)'));
  return phases;
}
