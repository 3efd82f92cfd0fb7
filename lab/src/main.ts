import { mountChecks } from './checks.js';
import { mountEvals } from './evals.js';
import { modelList } from './model-list.js';
import { mountPlaygrounds } from './playground.js';
import { mountStepper } from './stepper.js';

const views = ['loop', 'models', 'checks', 'evals'] as const;
type View = (typeof views)[number];
const mounted = new Set<View>();

function mount(view: View): void {
  if (mounted.has(view)) return;
  mounted.add(view);
  const root = document.getElementById(view);
  if (!root) return;
  if (view === 'loop') mountStepper(root);
  if (view === 'models') mountPlaygrounds(root, modelList);
  if (view === 'checks') void mountChecks(root);
  if (view === 'evals') mountEvals(root);
}

function show(view: View): void {
  for (const other of views) {
    const panel = document.getElementById(other);
    const tab = document.getElementById(`tab-${other}`);
    if (panel) panel.hidden = other !== view;
    if (other === view) tab?.setAttribute('aria-current', 'page');
    else tab?.removeAttribute('aria-current');
  }
  mount(view);
}

const fromHash = (): View => {
  const name = location.hash.slice(1);
  return (views as readonly string[]).includes(name) ? (name as View) : 'loop';
};
window.addEventListener('hashchange', () => show(fromHash()));
show(fromHash());
