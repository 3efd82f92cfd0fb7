import { canonicalJson } from '../../controls/canonical-json.js';
import { fingerprint } from '../../controls/fingerprint.js';
import type { ToolUseBlock } from '../../model/content.js';

/** A tool call the model proposed, with its input serialized once for every control that keys on it. */
export interface ProposedCall {
  call: ToolUseBlock;
  /** `canonicalJson` of the input (of `{ __invalidJson: text }` when the input was not JSON). */
  canonical: string;
}

export function proposedCall(call: ToolUseBlock): ProposedCall {
  return {
    call,
    canonical: canonicalJson(call.input === undefined ? { __invalidJson: call.inputText ?? '' } : call.input),
  };
}

/**
 * The call's approval id from its canonical input: the same string `approvalIdFor` builds
 * (`canonicalJson({ tool, input })` sorts `input` before `tool`), without serializing again.
 */
export function approvalIdOf({ call, canonical }: ProposedCall): string {
  const input = call.input === undefined ? 'null' : canonical;
  return `${call.id}:${fingerprint(`{"input":${input},"tool":${JSON.stringify(call.name)}}`)}`;
}
