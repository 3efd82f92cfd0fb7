import type { FieldNames } from '../../controls/taint-ledger.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { InputFields } from '../../tools/input-fields.js';
import { type Guarded, guard } from '../boundary.js';
import type { CallPlan, Emit, PlanRequest } from '../call-plan.js';
import type { TaintOptions } from '../options.js';
import { askPerson } from './check-autonomy.js';
import { andThen, emitted, type MaybePromise } from './maybe-async.js';
import { errorContent, planOf, settled } from './settlement.js';

type AllowEntry = Required<TaintOptions>['allowWhileTainted'][number];

/** Which keys of a tool's input are field names and which are data, read from its schema once. */
const fieldNamesOf = new WeakMap<AnyTool, FieldNames>();
function fieldNames(tool: AnyTool): FieldNames {
  let names = fieldNamesOf.get(tool);
  if (!names) {
    const fields = new InputFields(tool.inputJsonSchema);
    names = (objectPath, key) => fields.isFieldName(objectPath, key);
    fieldNamesOf.set(tool, names);
  }
  return names;
}

/**
 * Stage 7: the taint guard. While untrusted content is in the context, a tool that needs trusted
 * context runs only if its sensitive arguments have trusted provenance or an allow-list entry
 * admits the call; otherwise it pauses for a person (`ask`) or is refused (`deny`). Recorded as a
 * `taint-check` event. Returns undefined when the call may run.
 */
export function checkTaint(
  tool: AnyTool,
  input: unknown,
  request: PlanRequest,
  taint: Required<TaintOptions>,
  emit: Emit,
): MaybePromise<CallPlan | undefined> {
  if (!taint.enabled || !tool.requiresTrustedContext || !request.taint.tainted) return undefined;
  const untrustedArguments = request.taint.untrustedArguments(
    input,
    tool.sensitiveArguments,
    fieldNames(tool),
  );
  // The allow-list is consulted only when provenance alone does not clear the call.
  const listed =
    untrustedArguments.length === 0
      ? false
      : allowListed(taint.allowWhileTainted, 0, tool, input, request.signal);
  return andThen(listed, (allowed) => {
    if (typeof allowed !== 'boolean') return allowed;
    const verdict = untrustedArguments.length === 0 ? 'provenance' : allowed ? 'allow_list' : 'blocked';
    const recorded = emitted(
      emit({
        type: 'taint-check',
        step: request.step,
        callId: request.call.id,
        tool: tool.name,
        tainted: true,
        verdict,
        untrustedArguments,
      }),
    );
    return andThen(recorded, () => {
      if (verdict !== 'blocked') return undefined;
      if (taint.onTaintedCall === 'deny') {
        return settled(
          'blocked_tainted',
          errorContent(
            'tainted_context',
            `${tool.name} was not run: content from an untrusted source is in the conversation and these arguments do not come from the user: ${untrustedArguments.join(', ')}. Ask the user to confirm them.`,
          ),
          null,
          true,
          true,
        );
      }
      return askPerson(request.call, tool, input, 'tainted_context', untrustedArguments);
    });
  });
}

/** Whether an entry from `from` on admits the call; each `when` predicate runs inside the boundary. */
function allowListed(
  entries: readonly AllowEntry[],
  from: number,
  tool: AnyTool,
  input: unknown,
  signal: AbortSignal,
): MaybePromise<boolean | CallPlan> {
  for (let index = from; index < entries.length; index++) {
    const entry = entries[index] as AllowEntry;
    if (typeof entry === 'string') {
      if (entry === tool.name) return true;
      continue;
    }
    if (entry.tool !== tool.name) continue;
    if (entry.when === undefined) return true;
    const answer = guard('predicate', () => entry.when?.(input), signal);
    const next = index + 1;
    const decide = (result: Guarded<boolean | undefined>): MaybePromise<boolean | CallPlan> => {
      if (!result.ok) return planOf(result);
      return (result.value ?? true) ? true : allowListed(entries, next, tool, input, signal);
    };
    return andThen(answer, decide);
  }
  return false;
}
