import { canonicalJson } from '../controls/canonical-json.js';
import { fingerprint } from '../controls/fingerprint.js';
import type { ToolUseBlock } from '../model/content.js';
import type { ToolEffect } from '../tools/define-tool.js';

/** A call waiting for a person: shown with its input and the model's stated reason. */
export interface ApprovalRequest {
  /** Names this call with this exact input; a verdict for a changed call does not match. */
  approvalId: string;
  callId: string;
  tool: string;
  input: unknown;
  effect: ToolEffect;
  /** What the model wrote alongside the call: its stated reason. */
  reason: string;
  /** `confirm`: the tool always asks. `tainted_context`: untrusted content is in the context. */
  cause: 'confirm' | 'tainted_context';
  /** Under taint, the arguments whose values have no trusted source. */
  untrustedArguments: string[];
}

/** A person's decision on one {@link ApprovalRequest}. */
export type ApprovalVerdict =
  | { approvalId: string; decision: 'approve'; by?: string }
  | { approvalId: string; decision: 'deny'; reason: string; by?: string }
  | { approvalId: string; decision: 'edit'; input: unknown; by?: string };

/** The approval id of a call: its id plus a fingerprint of the tool and canonical input. */
export function approvalIdFor(call: Pick<ToolUseBlock, 'id' | 'name' | 'input'>): string {
  return `${call.id}:${fingerprint(canonicalJson({ tool: call.name, input: call.input ?? null }))}`;
}
