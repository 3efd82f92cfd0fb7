import { isDelimited } from '../loop/dispatch/size-result.js';
import type { Message } from '../model/content.js';
import type { BlockEdit, ContextEdit } from './context-edit.js';
import type { ContextPolicyInput } from './context-policy.js';
import { cutText, type StepRecord, type StepUnit } from './step-entries.js';

/** `admit` edits for the big results of a step just read. */
export function admissions(
  input: ContextPolicyInput,
  record: StepRecord,
  admit: { maxResultTokens: number; previewTokens?: number },
  handles: { recall: boolean; search: boolean },
): BlockEdit[] {
  const out: BlockEdit[] = [];
  const transcript = input.transcript;
  for (let index = record.start + 1; index < record.end; index++) {
    const message = transcript[index] as Message;
    if (message.role !== 'user') continue;
    message.content.forEach((block, blockIndex) => {
      if (block.type !== 'tool_result' || input.window.blockEdit(index, blockIndex)) return;
      const tokens = freshTokens(input, { role: 'user', content: [block] });
      if (tokens <= admit.maxResultTokens) return;
      const previewChars = (admit.previewTokens ?? 300) * 4;
      const head = cutText(block.content, 0, previewChars);
      const closes = isDelimited(block.content) ? '\n</tool-output>' : '';
      out.push({
        verb: 'admit',
        message: index,
        block: blockIndex,
        step: record.step,
        text: `${head}${closes}\n[reins: this result is ${tokens} tokens; the window shows its first ${admit.previewTokens ?? 300}.${
          handles.recall
            ? ` The whole result is kept: recall({ step: ${record.step} }) reads it in pages${handles.search ? ', recall({ query }) searches it' : ''}.`
            : ' Ask for a narrower result if you need more of it.'
        }]`,
      });
    });
  }
  return out;
}

/** `clear` edits for the results of a step that aged out of `clearToolResults`. */
export function clearings(
  input: ContextPolicyInput,
  unit: StepUnit,
  handles: { recall: boolean; search: boolean },
): BlockEdit[] {
  const out: BlockEdit[] = [];
  if (input.window.rangeCovering(unit.start)) return out;
  for (let index = unit.start + 1; index < unit.end; index++) {
    const message = input.transcript[index] as Message;
    if (message.role !== 'user') continue;
    message.content.forEach((block, blockIndex) => {
      if (block.type !== 'tool_result') return;
      const existing = input.window.blockEdit(index, blockIndex);
      if (existing?.verb === 'clear') return;
      const tokens = freshTokens(input, { role: 'user', content: [block] });
      out.push({
        verb: 'clear',
        message: index,
        block: blockIndex,
        step: unit.step,
        text: `[reins: the result of step ${unit.step} (${tokens} tokens) was cleared from the window${handles.recall ? `; recall({ step: ${unit.step} }) brings it back` : ''}]`,
      });
    });
  }
  return out;
}

/** Tokens of a message made only to be sized: not remembered by the loop's counter. */
function freshTokens(input: ContextPolicyInput, message: Message): number {
  return input.countFresh ? input.countFresh(message) : input.countMessage(message);
}

export function textTokens(input: ContextPolicyInput, text: string): number {
  return freshTokens(input, { role: 'user', content: [{ type: 'text', text }] });
}

/** Tokens the not-yet-applied edits add or remove, roughly (admit and clear shrink a result). */
export function pendingTokens(edits: readonly ContextEdit[], input: ContextPolicyInput): number {
  let delta = 0;
  for (const edit of edits) {
    if (edit.verb === 'admit' || edit.verb === 'clear') {
      const message = input.transcript[edit.message] as Message;
      const block = message.content[edit.block];
      if (block?.type !== 'tool_result') continue;
      delta += textTokens(input, edit.text) - freshTokens(input, { role: 'user', content: [block] });
    } else if (edit.verb === 'pin') delta += textTokens(input, edit.text);
  }
  return delta;
}
