import type { ToolUseBlock } from '../../model/content.js';
import type { AnyTool } from '../../tools/define-tool.js';
import type { ApprovalVerdict } from '../approval.js';
import type { CallPlan } from '../call-plan.js';
import { errorContent, handoff, type Settled, settled } from './settlement.js';

/** A call a person declined when the batch paused for them: refused before anything else is checked. */
export function checkHumanDenial(verdict: ApprovalVerdict | undefined): Settled | undefined {
  if (verdict?.decision !== 'deny') return undefined;
  return settled(
    'denied_by_human',
    errorContent(
      'denied_by_human',
      `A person declined this call: ${verdict.reason}. Do not try it again; continue without it or explain what you need.`,
    ),
    null,
    true,
    true,
  );
}

/** True when a person approved the call (as it is, or edited): autonomy and the taint guard are settled. */
export function approvedBy(verdict: ApprovalVerdict | undefined): boolean {
  return verdict?.decision === 'approve' || verdict?.decision === 'edit';
}

/** Pause the run for a person's verdict on this call. */
export function askPerson(
  call: ToolUseBlock,
  tool: AnyTool,
  input: unknown,
  cause: 'confirm' | 'tainted_context',
  untrustedArguments: string[],
): CallPlan {
  return {
    kind: 'approval',
    request: { callId: call.id, tool: tool.name, input, effect: tool.effect, cause, untrustedArguments },
  };
}

/**
 * Stage 6: autonomy, for a call no person approved yet. `never` records the proposal, `draft` hands
 * the drafted action to a person, `confirm` pauses the run. Returns undefined for an autonomous tool.
 */
export function checkAutonomy(call: ToolUseBlock, tool: AnyTool, input: unknown): CallPlan | undefined {
  switch (tool.autonomy) {
    case 'never':
      return handoff(
        'proposed',
        { message: `Recorded as a proposal for a person to review; ${tool.name} was not run.` },
        input,
      );
    case 'draft':
      return handoff(
        'drafted',
        { message: `Drafted for a person to carry out; ${tool.name} was not run.`, draft: input },
        input,
      );
    case 'confirm':
      return askPerson(call, tool, input, 'confirm', []);
    default:
      return undefined;
  }
}
