import {
  describeRange,
  formatParam,
  type ParamSpec,
  parseParam,
  SimParameterError,
} from '../../src/sim/params.js';
import { h, table } from './dom.js';
import type { ModelSummary } from './model-list.js';
import type { SimJob, SimReply } from './sim-worker.js';

/** A worker that can be replaced when a newer job makes the running one pointless. */
class SimRunner {
  private worker: Worker | undefined;
  private busy = false;
  private nextId = 1;
  private current = 0;

  run(job: Omit<SimJob, 'id'>, onReply: (reply: SimReply) => void): void {
    // A Monte Carlo job cannot be interrupted inside the worker; a stale one is simply dropped.
    if (this.busy) {
      this.worker?.terminate();
      this.worker = undefined;
    }
    if (!this.worker)
      this.worker = new Worker(new URL('./sim-worker.ts', import.meta.url), { type: 'module' });
    const id = this.nextId++;
    this.current = id;
    this.busy = true;
    this.worker.onmessage = (event: MessageEvent<SimReply>) => {
      if (event.data.id !== this.current) return;
      if (event.data.type !== 'progress') this.busy = false;
      onReply(event.data);
    };
    this.worker.postMessage({ ...job, id } satisfies SimJob);
  }
}

/** Builds the playground for every model: a picker, then sliders, a chart and the readouts. */
export function mountPlaygrounds(root: HTMLElement, models: readonly ModelSummary[]): void {
  const runner = new SimRunner();
  const picker = h(
    'select',
    { id: 'model-picker' },
    ...models.map((model) => h('option', { value: model.name }, `${model.name} — ${model.title}`)),
  );
  const body = h('div', { id: 'playground' });
  root.append(
    h('h2', {}, 'A playground per model'),
    h(
      'p',
      {},
      'Each model from the seeds, computed by ',
      h('code', {}, 'reins/sim'),
      ' in a Web Worker: move a slider and the exact values, the seeded Monte Carlo and the chart follow.',
    ),
    h('div', { class: 'row' }, h('label', { for: 'model-picker' }, 'Model'), picker),
    body,
  );

  const show = (model: ModelSummary) => {
    const values: Record<string, unknown> = { ...model.defaults };
    const errors = new Map<string, string>();
    const status = h('p', { class: 'status', role: 'status', 'data-testid': 'sim-status' });
    const progress = h('progress', { max: 1, value: 0, 'aria-label': 'Monte Carlo progress', hidden: true });
    const chart = h('div', { class: 'chart', 'data-testid': 'chart' });
    const readouts = h('div', { 'data-testid': 'readouts', 'aria-live': 'polite' });
    const notes = h('div', { 'data-testid': 'notes' });
    const trials = h('input', {
      type: 'number',
      id: 'param-trials',
      min: 1,
      max: 5_000_000,
      value: model.defaultTrials ?? '',
    });
    const seed = h('input', { type: 'number', id: 'param-seed', min: 0, value: 1 });
    let debounce: ReturnType<typeof setTimeout> | undefined;

    const schedule = () => {
      if (debounce) clearTimeout(debounce);
      debounce = setTimeout(launch, 120);
    };
    const launch = () => {
      if (errors.size > 0) {
        status.textContent = `Fix ${[...errors.keys()].join(', ')} to run.`;
        return;
      }
      const params: Record<string, unknown> = {};
      for (const spec of model.params)
        if (values[spec.key] !== undefined) params[spec.key] = values[spec.key];
      status.textContent = 'Computing…';
      body.dataset.state = 'running';
      const job: Omit<SimJob, 'id'> = { model: model.name, params };
      if (model.defaultTrials !== undefined) {
        job.trials = Number(trials.value) || model.defaultTrials;
        job.seed = Number(seed.value) || 0;
      }
      runner.run(job, (reply) => {
        if (reply.type === 'progress') {
          progress.hidden = false;
          progress.value = reply.done / reply.total;
          status.textContent = `Monte Carlo: ${reply.done.toLocaleString('en-US')} of ${reply.total.toLocaleString('en-US')} trials…`;
          return;
        }
        progress.hidden = true;
        if (reply.type === 'error') {
          status.textContent = reply.message;
          body.dataset.state = 'error';
          return;
        }
        chart.innerHTML = reply.svg;
        readouts.replaceChildren(...reply.tables.map((t) => table(t.head, t.rows, t.title)));
        notes.replaceChildren(...reply.notes.map((note) => h('p', {}, note)));
        status.textContent = `Computed in ${reply.elapsedMs.toFixed(0)} ms${job.trials ? ` (${job.trials.toLocaleString('en-US')} trials, seed ${job.seed})` : ''}.`;
        body.dataset.state = 'done';
        body.dataset.json = JSON.stringify(reply.json);
        body.dataset.runs = String(Number(body.dataset.runs ?? 0) + 1);
      });
    };

    const control = (spec: ParamSpec) => {
      const id = `param-${spec.key}`;
      const error = h('span', { class: 'error', id: `${id}-error`, role: 'alert' });
      const hint = h('span', { class: 'hint', id: `${id}-hint` }, `${spec.flag}: ${describeRange(spec)}`);
      const set = (text: string, input: HTMLInputElement | HTMLSelectElement) => {
        try {
          values[spec.key] = text.trim() === '' && spec.optional ? undefined : parseParam(spec, text);
          errors.delete(spec.key);
          error.textContent = '';
          input.removeAttribute('aria-invalid');
        } catch (problem) {
          const message = problem instanceof SimParameterError ? problem.problem : String(problem);
          errors.set(spec.key, message);
          error.textContent = message;
          input.setAttribute('aria-invalid', 'true');
        }
        schedule();
      };
      const label = h('label', { for: id }, spec.description);
      if (spec.kind === 'choice') {
        const select = h(
          'select',
          { id, 'aria-describedby': `${id}-hint` },
          ...(spec.choices ?? []).map((choice) =>
            h('option', { value: choice, selected: choice === values[spec.key] }, choice),
          ),
        );
        select.addEventListener('change', () => set(select.value, select));
        return h('div', { class: 'param' }, label, select, hint, error);
      }
      if (
        (spec.kind === 'number' || spec.kind === 'integer') &&
        spec.slider &&
        values[spec.key] !== undefined
      ) {
        const value = values[spec.key] as number;
        const min = Math.min(spec.slider.min, value);
        const max = Math.max(spec.slider.max, value);
        const output = h('output', { for: id, 'data-testid': `${id}-value` }, String(value));
        const range = h('input', {
          type: 'range',
          id,
          min,
          max,
          step: spec.slider.step,
          value,
          'aria-describedby': `${id}-hint`,
        });
        range.addEventListener('input', () => {
          output.textContent = range.value;
          set(range.value, range);
        });
        return h('div', { class: 'param' }, h('div', { class: 'row' }, label, output), range, hint, error);
      }
      const input = h('input', {
        type: 'text',
        id,
        value: formatParam(spec, values[spec.key]),
        inputmode: spec.kind === 'custom' ? 'text' : 'decimal',
        'aria-describedby': `${id}-hint`,
        placeholder: spec.optional ? '(not set)' : undefined,
      });
      input.addEventListener('change', () => set(input.value, input));
      return h('div', { class: 'param' }, label, input, hint, error);
    };

    const monteCarloControls =
      model.defaultTrials !== undefined
        ? h(
            'div',
            { class: 'params' },
            h(
              'div',
              { class: 'param' },
              h('label', { for: 'param-trials' }, 'Monte Carlo trials'),
              trials,
              h(
                'span',
                { class: 'hint' },
                `the post's count is ${model.defaultTrials.toLocaleString('en-US')}`,
              ),
            ),
            h('div', { class: 'param' }, h('label', { for: 'param-seed' }, 'seed'), seed),
          )
        : undefined;
    trials.addEventListener('change', schedule);
    seed.addEventListener('change', schedule);

    body.replaceChildren(
      h('h3', {}, model.title),
      h('p', { class: 'hint' }, `From ${model.source}. CLI: reins model ${model.name}`),
      h(
        'div',
        { class: 'panel' },
        h('div', { class: 'params' }, ...model.params.map(control)),
        monteCarloControls,
      ),
      h('div', { class: 'row' }, progress, status),
      chart,
      notes,
      readouts,
    );
    launch();
  };

  picker.addEventListener('change', () => {
    const model = models.find((candidate) => candidate.name === picker.value);
    if (model) show(model);
  });
  const initial = models[0];
  if (initial) show(initial);
}
