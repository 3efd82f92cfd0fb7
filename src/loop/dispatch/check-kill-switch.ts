import type { AnyTool } from '../../tools/define-tool.js';
import { errorContent, type Settled, settled } from './settlement.js';

/** Stage 5: with writes switched off, every tool whose effect is not `read` refuses to run. */
export function checkKillSwitch(tool: AnyTool, writesDisabled: boolean): Settled | undefined {
  if (!writesDisabled || tool.effect === 'read') return undefined;
  return settled(
    'writes_disabled',
    errorContent(
      'writes_disabled',
      `${tool.name} changes things and writes are switched off right now. Do not retry; tell the user the action could not be taken.`,
    ),
    null,
    true,
    true,
  );
}
