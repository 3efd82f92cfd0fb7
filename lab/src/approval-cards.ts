import { type ApprovalRequest, canonicalJson } from '../../src/index.js';
import { h } from './dom.js';
import type { VerdictInput } from './run-api.js';

/**
 * One card per call a paused run waits on: the tool, its input, the model's stated reason, and
 * approve / deny (with a reason) / edit (the input as JSON). When every call has a decision,
 * `onDecided` gets the verdicts, once. Read-only (a recorded trace): the cards without buttons.
 */
export function approvalCards(
  pending: readonly ApprovalRequest[],
  options: { readOnly: boolean; onDecided: (verdicts: VerdictInput[]) => void },
): HTMLElement[] {
  const decided = new Map<string, VerdictInput>();
  let sent = false;
  const record = (verdict: VerdictInput) => {
    decided.set(verdict.approvalId, verdict);
    if (sent || decided.size < pending.length) return;
    sent = true;
    options.onDecided([...decided.values()]);
  };
  return pending.map((request, index) => {
    const status = h('p', { class: 'hint', role: 'status' });
    const decide = (verdict: VerdictInput, text: string) => {
      status.textContent = text;
      record(verdict);
    };
    const approve = h(
      'button',
      { type: 'button', id: `approve-${index}`, 'data-approval': request.approvalId },
      'Approve',
    );
    const deny = h('button', { type: 'button', id: `deny-${index}` }, 'Deny…');
    const edit = h('button', { type: 'button', id: `edit-${index}` }, 'Edit…');
    const denyReason = h('input', { type: 'text', id: `deny-reason-${index}`, value: 'Not approved' });
    const denyConfirm = h('button', { type: 'submit' }, 'Send denial');
    const denyForm = h(
      'form',
      { class: 'row', hidden: true },
      h('label', { for: `deny-reason-${index}` }, 'Reason'),
      denyReason,
      denyConfirm,
    );
    const editInput = h('textarea', { id: `edit-input-${index}`, rows: 4, cols: 40 });
    editInput.value = JSON.stringify(request.input, null, 2);
    const editForm = h(
      'form',
      { class: 'row', hidden: true },
      h('label', { for: `edit-input-${index}` }, 'Input (JSON)'),
      editInput,
      h('button', { type: 'submit' }, 'Send edited call'),
    );
    approve.addEventListener('click', () =>
      decide({ approvalId: request.approvalId, decision: 'approve' }, 'approved'),
    );
    deny.addEventListener('click', () => {
      denyForm.hidden = false;
      editForm.hidden = true;
      denyReason.focus();
    });
    edit.addEventListener('click', () => {
      editForm.hidden = false;
      denyForm.hidden = true;
      editInput.focus();
    });
    denyForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const reason = denyReason.value.trim();
      if (!reason) return;
      decide({ approvalId: request.approvalId, decision: 'deny', reason }, 'denied');
    });
    editForm.addEventListener('submit', (event) => {
      event.preventDefault();
      try {
        decide(
          { approvalId: request.approvalId, decision: 'edit', input: JSON.parse(editInput.value) },
          'edited',
        );
      } catch {
        status.textContent = 'That is not JSON.';
      }
    });
    return h(
      'div',
      { class: 'panel approval', 'data-approval-id': request.approvalId },
      h('h4', {}, `${request.tool} asks for approval (${request.effect})`),
      h('pre', {}, canonicalJson(request.input)),
      request.reason ? h('p', {}, h('strong', {}, 'Why: '), request.reason) : undefined,
      options.readOnly
        ? h('p', { class: 'hint' }, 'A recorded trace: read-only.')
        : h(
            'div',
            { class: 'row', role: 'group', 'aria-label': `Verdict on ${request.tool}` },
            approve,
            deny,
            edit,
          ),
      denyForm,
      editForm,
      status,
    );
  });
}
