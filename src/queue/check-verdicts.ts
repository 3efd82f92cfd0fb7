import type { ApprovalVerdict } from '../loop/approval.js';
import type { RunRecord, VerdictResult } from './run-queue.js';

/**
 * Whether `verdicts` may resume `record`: it must be waiting on approvals, and every verdict must
 * name an approval id it is waiting on (a stale id is refused, as `resumeAgent` would ignore it).
 */
export function checkVerdicts(
  record: RunRecord | undefined,
  verdicts: readonly ApprovalVerdict[],
): VerdictResult {
  if (!record) return { ok: false, reason: 'not_found' };
  if (record.status !== 'awaiting_approval') return { ok: false, reason: 'not_awaiting_approval' };
  const pending = new Set((record.pendingApprovals ?? []).map((request) => request.approvalId));
  const staleApprovalIds = verdicts.map((verdict) => verdict.approvalId).filter((id) => !pending.has(id));
  if (staleApprovalIds.length > 0 || verdicts.length === 0)
    return { ok: false, reason: 'stale_approval', staleApprovalIds };
  return { ok: true };
}
