import type { TraceEvent } from '../../src/index.js';
import { approvalCards } from './approval-cards.js';
import { formatNumber, h } from './dom.js';
import { showOutcome, showPending } from './outcome-badge.js';
import { RunApiError, type RunRecordView, runApi, type SessionView, type VerdictInput } from './run-api.js';
import { stepPhases } from './step-phases.js';
import { stepViews } from './step-views.js';

/** Where the page keeps the token: this tab only, gone when it closes. */
const tokenKey = 'reins-viewer-token';

const statusText: Record<RunRecordView['status'], string> = {
  queued: 'queued',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  cancelling: 'cancelling',
  ended: 'ended',
};

const describeError = (error: unknown) =>
  error instanceof RunApiError
    ? `${error.status} ${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);

/**
 * The run viewer (served by `reins/server` at `/`): sign in with a token, the actor's runs, one
 * run's think → act → observe timeline as its trace streams in, its budgets and billed tokens, the
 * outcome badge, and approve / deny / edit for a paused run. The timeline and the badge are the
 * lab's own modules (`stepViews`, `stepPhases`, `showOutcome`).
 */
export function mountRunViewer(root: HTMLElement): void {
  let token = sessionStorage.getItem(tokenKey) ?? undefined;
  const api = runApi(() => token);
  let session: SessionView | undefined;
  let current:
    | { runId: string; record: RunRecordView | undefined; events: TraceEvent[]; stop: AbortController }
    | undefined;
  let approvalsKey = '';

  const errorLine = h('p', { id: 'viewer-error', role: 'alert', class: 'cause' });
  const tokenInput = h('input', {
    type: 'password',
    id: 'token',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'token-hint',
  });
  const signInForm = h(
    'form',
    { id: 'sign-in', class: 'panel row' },
    h('label', { for: 'token' }, 'Bearer token'),
    tokenInput,
    h('button', { type: 'submit', id: 'sign-in-button' }, 'Sign in'),
    h(
      'p',
      { id: 'token-hint', class: 'hint' },
      'Kept in this tab’s session storage only, and sent as an Authorization header to this service.',
    ),
  );
  const who = h('span', { 'data-testid': 'actor' });
  const signOut = h('button', { type: 'button', id: 'sign-out' }, 'Sign out');
  const signedIn = h('div', { class: 'row', hidden: true }, h('span', {}, 'Signed in as '), who, signOut);

  const agentSelect = h('select', { id: 'run-agent' });
  const agentText = h('input', { type: 'text', id: 'run-agent-name', value: 'support' });
  const runInput = h('input', { type: 'text', id: 'run-input', value: '', size: 40 });
  const startForm = h(
    'form',
    { id: 'start-run', class: 'panel row', hidden: true, 'aria-label': 'Start a run' },
    h('label', { for: 'run-agent' }, 'Agent'),
    agentSelect,
    agentText,
    h('label', { for: 'run-input' }, 'Message'),
    runInput,
    h('button', { type: 'submit', id: 'start-button' }, 'Start run'),
  );

  const runList = h('ul', { id: 'run-list', class: 'run-list' });
  const refresh = h('button', { type: 'button', id: 'refresh-runs' }, 'Refresh');
  const listSection = h(
    'section',
    { id: 'runs', 'aria-labelledby': 'runs-heading', hidden: true },
    h('div', { class: 'row' }, h('h2', { id: 'runs-heading' }, 'Your runs'), refresh),
    runList,
  );

  const runHeading = h('h2', { id: 'run-heading', tabindex: -1 });
  const badge = h('span', { class: 'badge pending', 'data-testid': 'outcome-kind' });
  const cause = h('p', { class: 'cause', 'data-testid': 'outcome-cause' });
  const steps = h('span', { 'data-testid': 'steps' });
  const billed = h('span', { 'data-testid': 'billed' });
  const billedLimit = h('p', { class: 'hint', 'data-testid': 'billed-limit' });
  const cost = h('span', { 'data-testid': 'cost' });
  const contextUsed = h('span', { 'data-testid': 'context-used' });
  const meterFill = h('div', {});
  const meter = h(
    'div',
    { class: 'meter', role: 'meter', 'aria-label': 'Context used', 'aria-valuemin': 0 },
    meterFill,
  );
  const live = h('p', { class: 'hint', 'data-testid': 'stream-state', 'aria-live': 'polite' });
  const approvals = h('div', { id: 'approvals', 'aria-live': 'polite' });
  const timeline = h('ol', { id: 'timeline', class: 'timeline', 'aria-label': 'Steps' });
  const cancel = h('button', { type: 'button', id: 'cancel-run', hidden: true }, 'Cancel run');
  const counter = (label: string, ...value: (Node | string)[]) =>
    h(
      'div',
      { class: 'counter' },
      h('div', { class: 'label' }, label),
      h('div', { class: 'value' }, ...value),
    );
  const runSection = h(
    'section',
    { id: 'run', 'aria-labelledby': 'run-heading', hidden: true },
    runHeading,
    h(
      'div',
      { class: 'counters' },
      h(
        'div',
        { class: 'counter' },
        h('div', { class: 'label' }, 'outcome'),
        h('div', { class: 'value', 'aria-live': 'polite' }, badge),
        cause,
      ),
      counter('steps', steps),
      h(
        'div',
        { class: 'counter' },
        h('div', { class: 'label' }, 'billed tokens'),
        h('div', { class: 'value' }, billed),
        billedLimit,
      ),
      counter('cost (USD)', cost),
      h(
        'div',
        { class: 'counter' },
        h('div', { class: 'label' }, 'context'),
        h('div', { class: 'value' }, contextUsed),
        meter,
      ),
    ),
    approvals,
    cancel,
    live,
    h('h3', {}, 'Think → act → observe'),
    timeline,
  );

  root.append(errorLine, signInForm, signedIn, startForm, listSection, runSection);

  const fail = (error: unknown) => {
    errorLine.textContent = describeError(error);
  };

  const renderRun = () => {
    if (!current) return;
    const { record, events } = current;
    const start = events.find((event) => event.type === 'run-start');
    const limits = start?.type === 'run-start' ? start.limits : undefined;
    const views = stepViews(events);
    const last = views.at(-1);
    const runEnd = events.findLast((event) => event.type === 'run-end');
    const billedTokens =
      runEnd?.type === 'run-end' ? runEnd.billedTokens : (last?.billedTokens ?? record?.billedTokens ?? 0);
    const costUsd = runEnd?.type === 'run-end' ? runEnd.costUsd : (record?.costUsd ?? 0);
    billed.textContent = formatNumber(billedTokens);
    billed.dataset.value = String(billedTokens);
    billedLimit.textContent =
      limits?.maxBilledTokens != null
        ? `of ${formatNumber(limits.maxBilledTokens)} budgeted`
        : 'no billed-token budget';
    cost.textContent = costUsd.toFixed(4);
    cost.dataset.value = String(costUsd);
    const completed = Math.max(record?.steps ?? 0, views.length);
    steps.textContent = limits ? `${completed} / ${limits.maxSteps}` : String(completed);
    steps.dataset.value = String(completed);
    const context = last?.contextTokens ?? 0;
    contextUsed.textContent =
      limits?.maxContextTokens != null
        ? `${formatNumber(context)} / ${formatNumber(limits.maxContextTokens)}`
        : formatNumber(context);
    contextUsed.dataset.value = String(context);
    if (limits?.maxContextTokens != null) {
      const share = context / limits.maxContextTokens;
      meterFill.style.width = `${Math.min(100, share * 100)}%`;
      meter.classList.toggle('over', share > 1);
      meter.setAttribute('aria-valuemax', String(limits.maxContextTokens));
      meter.setAttribute('aria-valuenow', String(context));
    }
    if (record?.status === 'ended' && record.outcome) showOutcome(badge, cause, record.outcome);
    else if (record?.status === 'ended')
      showPending(
        badge,
        cause,
        'no outcome',
        'The trace ends without a run-end event (the run was cut off).',
      );
    else if (record?.status === 'awaiting_approval')
      showPending(
        badge,
        cause,
        'awaiting approval',
        'The run is paused until a person decides on the calls below.',
      );
    else
      showPending(badge, cause, record ? statusText[record.status] : 'loading', `Step ${completed} so far.`);
    timeline.replaceChildren(
      ...views.map((view) =>
        h(
          'li',
          { 'data-step': view.step },
          h('h4', {}, `Step ${view.step}${view.toolsEnabled ? '' : ' — tools disabled: best answer'}`),
          stepPhases(view),
        ),
      ),
    );
    cancel.hidden = !record || record.status === 'ended' || session?.readOnly === true;
    renderApprovals();
  };

  const renderApprovals = () => {
    const record = current?.record;
    const pending = record?.status === 'awaiting_approval' ? (record.pendingApprovals ?? []) : [];
    const key = `${current?.runId}|${pending.map((request) => request.approvalId).join(',')}|${session?.readOnly}`;
    if (key === approvalsKey) return;
    approvalsKey = key;
    if (pending.length === 0) {
      approvals.replaceChildren();
      return;
    }
    const submit = async (verdicts: VerdictInput[]) => {
      if (!current) return;
      const runId = current.runId;
      try {
        await api.verdicts(runId, verdicts);
        errorLine.textContent = '';
        approvals.replaceChildren(
          h('p', { role: 'status', 'data-testid': 'verdict-sent' }, 'Verdict sent; the run resumes.'),
        );
        approvalsKey = '';
        await refreshRecord();
        follow();
      } catch (error) {
        fail(error);
        approvalsKey = '';
        await refreshRecord();
      }
    };
    const cards = approvalCards(pending, {
      readOnly: session?.readOnly === true,
      onDecided: (verdicts) => void submit(verdicts),
    });
    approvals.replaceChildren(h('h3', {}, 'Waiting for your verdict'), ...cards);
  };

  const refreshRecord = async () => {
    if (!current) return;
    const mine = current;
    try {
      mine.record = await api.get(mine.runId);
    } catch (error) {
      fail(error);
    }
    if (current === mine) renderRun();
    void refreshList();
  };

  let renderQueued = false;
  const scheduleRender = () => {
    if (renderQueued) return;
    renderQueued = true;
    setTimeout(() => {
      renderQueued = false;
      renderRun();
    }, 0);
  };

  /** Follows the current run's trace; reconnects after a drop with the last seq it holds. */
  const follow = () => {
    if (!current) return;
    current.stop.abort();
    const mine = current;
    const stop = new AbortController();
    mine.stop = stop;
    void (async () => {
      while (!stop.signal.aborted) {
        live.textContent = 'following the trace live';
        try {
          for await (const item of api.events(mine.runId, mine.events.at(-1)?.seq, stop.signal)) {
            if (item.kind === 'trace') {
              const last = mine.events.at(-1)?.seq ?? -1;
              if (item.event.seq <= last) continue;
              mine.events.push(item.event);
              if (['run-end', 'run-start', 'approval-request', 'approval'].includes(item.event.type))
                void refreshRecord();
              scheduleRender();
            } else {
              mine.record = item.record;
              renderRun();
              void refreshList();
              if (item.record.status === 'ended' || item.record.status === 'awaiting_approval') {
                live.textContent =
                  item.record.status === 'ended' ? 'the run has ended' : 'paused: waiting for a verdict';
                return;
              }
            }
          }
        } catch (error) {
          if (stop.signal.aborted) return;
          if (error instanceof RunApiError) {
            fail(error);
            live.textContent = 'not following';
            return;
          }
        }
        live.textContent = 'reconnecting…';
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    })();
  };

  const open = async (runId: string) => {
    current?.stop.abort();
    current = { runId, record: undefined, events: [], stop: new AbortController() };
    approvalsKey = '';
    runSection.hidden = false;
    runHeading.textContent = `Run ${runId}`;
    timeline.replaceChildren();
    errorLine.textContent = '';
    await refreshRecord();
    if (current?.runId !== runId) return;
    if (current.record) follow();
  };

  const refreshList = async () => {
    if (!session) return;
    try {
      const runs = await api.list();
      runList.replaceChildren(
        ...runs.map((run) =>
          h(
            'li',
            {},
            h(
              'a',
              {
                href: `#run/${encodeURIComponent(run.runId)}`,
                'data-run-id': run.runId,
                'aria-current': current?.runId === run.runId ? 'true' : undefined,
              },
              run.runId,
            ),
            ` · ${run.agent} · `,
            h(
              'span',
              { 'data-status': run.status },
              run.outcome && run.status === 'ended' ? run.outcome.kind : statusText[run.status],
            ),
            ` · ${formatNumber(run.billedTokens)} tokens`,
          ),
        ),
      );
      if (runs.length === 0) runList.replaceChildren(h('li', {}, 'No runs yet.'));
    } catch (error) {
      fail(error);
    }
  };

  const fromHash = () => {
    const match = /^#run\/(.+)$/.exec(location.hash);
    return match?.[1] ? decodeURIComponent(match[1]) : undefined;
  };

  const signIn = async () => {
    let answer: SessionView | undefined;
    try {
      answer = await api.session();
    } catch (error) {
      fail(error);
    }
    if (!answer || answer.actorId === null) {
      session = undefined;
      signInForm.hidden = false;
      signedIn.hidden = true;
      startForm.hidden = true;
      listSection.hidden = true;
      runSection.hidden = true;
      if (answer && token !== undefined) errorLine.textContent = 'The service refused that token.';
      root.dataset.ready = 'signed-out';
      return;
    }
    session = answer;
    errorLine.textContent = '';
    signInForm.hidden = true;
    signedIn.hidden = false;
    signOut.hidden = token === undefined;
    who.textContent = answer.actorId;
    startForm.hidden = session.readOnly;
    listSection.hidden = false;
    agentSelect.replaceChildren(
      ...(session.agents ?? []).map((agent) => h('option', { value: agent }, agent)),
    );
    agentSelect.hidden = session.agents === null;
    agentText.hidden = session.agents !== null;
    await refreshList();
    const runId = fromHash();
    if (runId) await open(runId);
    root.dataset.ready = 'signed-in';
  };

  signInForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = tokenInput.value.trim();
    if (!value) return;
    token = value;
    sessionStorage.setItem(tokenKey, value);
    tokenInput.value = '';
    void signIn();
  });
  signOut.addEventListener('click', () => {
    token = undefined;
    sessionStorage.removeItem(tokenKey);
    current?.stop.abort();
    current = undefined;
    void signIn().then(() => tokenInput.focus());
  });
  startForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const agent = session?.agents ? agentSelect.value : agentText.value.trim();
    const input = runInput.value.trim();
    if (!agent || !input) return;
    void api.start(agent, input).then(({ runId }) => {
      errorLine.textContent = '';
      runInput.value = '';
      location.hash = `#run/${encodeURIComponent(runId)}`;
    }, fail);
  });
  refresh.addEventListener('click', () => void refreshList());
  cancel.addEventListener('click', () => {
    if (current) void api.cancel(current.runId).then(() => refreshRecord(), fail);
  });
  window.addEventListener('hashchange', () => {
    const runId = fromHash();
    if (runId && session && runId !== current?.runId) void open(runId).then(() => runHeading.focus());
  });
  void signIn();
}
