import { canonicalJson } from '../../controls/canonical-json.js';
import {
  type ArgumentLeaf,
  argumentsAt,
  type FieldNames,
  leavesUnder,
  type TaintLedger,
  underAny,
} from '../../controls/taint-ledger.js';
import type { PlannedCall, ToolPolicy } from '../../controls/taint-policy.js';
import { addressKey } from '../../controls/trusted-text.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { InputFields } from '../../tools/input-fields.js';
import { type Guarded, guard } from '../boundary.js';
import type { CallPlan, Emit, PlanRequest } from '../call-plan.js';
import type { ResolvedTaintOptions, TaintOptions } from '../options.js';
import { askPerson } from './check-autonomy.js';
import { andThen, emitted, type MaybePromise } from './maybe-async.js';
import { errorContent, planOf, type Settled, settled } from './settlement.js';

type AllowEntry = Required<TaintOptions>['allowWhileTainted'][number];
const numeric = /^-?\d+(?:\.\d+)?$/;

/** Which keys of a tool's input are field names and which are data, read from its schema once. */
const fieldNamesOf = new WeakMap<AnyTool, FieldNames>();
export function fieldNames(tool: AnyTool): FieldNames {
  let names = fieldNamesOf.get(tool);
  if (!names) {
    const fields = new InputFields(tool.inputJsonSchema);
    names = (objectPath, key) => fields.isFieldName(objectPath, key);
    fieldNamesOf.set(tool, names);
  }
  return names;
}

/** One reason the guard stopped a call: the argument at fault and why. */
interface Problem {
  path: string;
  reason: string;
}

/**
 * Stage 7: the taint guard. While untrusted content is in the context, a privileged tool runs only
 * if the plan (when the run has one) admits the call, its policy holds (argument sources, readers
 * of private data, egress) and its remaining sensitive arguments have trusted provenance or an
 * allow-list entry waives that rule; otherwise it pauses for a person (`ask`) or is refused
 * (`deny`). A read with an egress policy is checked the same way. Recorded as a `taint-check`
 * event. Returns undefined when the call may run.
 */
export function checkTaint(
  tool: AnyTool,
  input: unknown,
  request: PlanRequest,
  taint: ResolvedTaintOptions,
  emit: Emit,
): MaybePromise<CallPlan | undefined> {
  const policy = taint.policies[tool.name];
  const ledger = request.taint;
  if (!taint.enabled || !ledger.tainted) return undefined;
  // A read is checked when it has a policy (its URL must come from the user, its egress is watched).
  if (!tool.requiresTrustedContext && policy === undefined) return undefined;
  const fields = fieldNames(tool);
  const problems: Problem[] = [];
  const vouched = new Set<string>();
  if (tool.requiresTrustedContext && taint.plan !== undefined) {
    const entry = taint.plan[plannedIndex(taint.plan, tool, input, ledger)];
    if (entry === undefined)
      problems.push({ path: '(call)', reason: 'the plan fixed from the request has no such call' });
    else for (const path of Object.keys(entry.arguments ?? {})) vouched.add(path);
  }
  // One walk of the input serves every check below.
  const leaves = argumentsAt(input, fields);
  if (policy) policyProblems(policy, leaves, ledger, vouched, taint.plan !== undefined, problems);
  // What the plan fixed and what the policy decides are not checked a second time.
  const settledPaths =
    vouched.size === 0 && policy?.arguments === undefined
      ? tool.nonSensitiveArguments
      : [...tool.nonSensitiveArguments, ...vouched, ...Object.keys(policy?.arguments ?? {})];
  const provenance = tool.requiresTrustedContext
    ? ledger.untrustedAmong(leaves, tool.sensitiveArguments, settledPaths)
    : [];
  // The allow-list waives only the provenance rule; the plan and the policy still hold.
  const listed =
    provenance.length === 0 ? false : allowListed(taint.allowWhileTainted, 0, tool, input, request.signal);
  return andThen(listed, (allowed) => {
    if (typeof allowed !== 'boolean') return allowed;
    if (!allowed) for (const path of provenance) problems.push({ path, reason: 'no trusted source' });
    const untrustedArguments = [...new Set(problems.map((problem) => problem.path))];
    const verdict =
      problems.length > 0
        ? 'blocked'
        : provenance.length > 0
          ? 'allow_list'
          : policy
            ? 'policy'
            : 'provenance';
    const recorded = emitted(
      emit({
        type: 'taint-check',
        step: request.step,
        callId: request.call.id,
        tool: tool.name,
        tainted: true,
        verdict,
        untrustedArguments,
        ...(problems.length > 0
          ? { reasons: problems.map((problem) => `${problem.path}: ${problem.reason}`) }
          : {}),
      }),
    );
    return andThen(recorded, () => {
      if (verdict !== 'blocked') return undefined;
      if (taint.onTaintedCall === 'deny') {
        return settled(
          'blocked_tainted',
          errorContent('tainted_context', refusalOf(tool.name, problems)),
          null,
          true,
          true,
        );
      }
      return askPerson(request.call, tool, input, 'tainted_context', untrustedArguments);
    });
  });
}

/** What the model is told: which arguments, and why when it is more than a missing source. */
function refusalOf(tool: string, problems: readonly Problem[]): string {
  const lead = `${tool} was not run: content from an untrusted source is in the conversation and`;
  if (problems.every((problem) => problem.reason === 'no trusted source'))
    return `${lead} these arguments do not come from the user: ${problems.map((problem) => problem.path).join(', ')}. Ask the user to confirm them.`;
  return `${lead} ${problems.map((problem) => `${problem.path} ${problem.reason}`).join('; ')}. Ask the user to confirm.`;
}

/** The value at a dotted path of the input (no wildcards), or undefined. */
function valueAt(input: unknown, path: string): unknown {
  let node = input;
  for (const segment of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** Whether a planned call admits this input: every listed argument equal, or its predicate true. */
function plannedMatches(entry: PlannedCall, tool: AnyTool, input: unknown): boolean {
  if (entry.tool !== tool.name) return false;
  for (const [path, expected] of Object.entries(entry.arguments ?? {})) {
    const actual = valueAt(input, path);
    if (typeof expected === 'function') {
      try {
        if ((expected as (value: unknown) => unknown)(actual) !== true) return false;
      } catch {
        return false;
      }
    } else if (actual === undefined) return false;
    else if (typeof expected !== 'object' || expected === null) {
      if (actual !== expected) return false;
    } else if (canonicalJson(actual) !== canonicalJson(expected)) return false;
  }
  return true;
}

/** The index of the first planned entry that admits the call and has a use left, or -1. */
function plannedIndex(
  plan: readonly PlannedCall[],
  tool: AnyTool,
  input: unknown,
  ledger: TaintLedger,
): number {
  return plan.findIndex(
    (entry, index) =>
      plannedMatches(entry, tool, input) && ledger.counter(`plan:${index}`) < (entry.times ?? 1),
  );
}

function policyProblems(
  policy: ToolPolicy,
  leaves: readonly ArgumentLeaf[],
  ledger: TaintLedger,
  vouched: ReadonlySet<string>,
  planned: boolean,
  problems: Problem[],
): void {
  for (const [pattern, sources] of Object.entries(policy.arguments ?? {})) {
    if (vouched.has(pattern)) continue;
    for (const leaf of leavesUnder(leaves, pattern)) {
      if (leaf.value === undefined) continue;
      const found = ledger.sourcesOf(leaf.value, leaf.field);
      if (!sources.some((source) => found.has(source)))
        problems.push({ path: leaf.path, reason: `must come from ${sources.join(' or ')}` });
    }
  }
  // Once private data is in the context, token matching cannot see it re-encoded (base64, split,
  // reversed): every reader and every egress value must then come from the user or the plan.
  const privateRead = ledger.privateRead;
  if (policy.readers) {
    const readerPaths = policy.readers.arguments;
    const carried =
      privateRead || leaves.some((leaf) => !underAny(leaf, readerPaths) && carriesPrivate(ledger, leaf));
    if (carried) {
      // Under a plan, a reader the plan did not fix is not one the user asked for, even if the user
      // wrote it ("never send to bob@…"); without a plan, a reader the user wrote. A predicate of
      // the policy's own (an allow-list of domains) decides instead.
      const allowed =
        policy.readers.allowed ??
        (planned ? () => false : (reader: string) => ledger.sourcesOf(reader, 'to').has('user'));
      for (const leaf of readerPaths.flatMap((path) => leavesUnder(leaves, path))) {
        if (vouched.has(leaf.path)) continue;
        let ok = false;
        try {
          ok = typeof leaf.value === 'string' && allowed(leaf.value) === true;
        } catch {
          ok = false;
        }
        if (!ok) problems.push({ path: leaf.path, reason: 'may not read data derived from private results' });
      }
    }
  }
  for (const leaf of (policy.egress ?? []).flatMap((path) => leavesUnder(leaves, path))) {
    if (vouched.has(leaf.path)) continue;
    if (carriesPrivate(ledger, leaf))
      problems.push({ path: leaf.path, reason: 'carries data derived from private results out' });
    else if (privateRead && !ledger.sourcesOf(leaf.value, leaf.field).has('user'))
      problems.push({
        path: leaf.path,
        reason: 'leaves the system after private data was read, and the user did not give it',
      });
  }
}

/**
 * Whether an argument carries private data out: it holds a private token, and it is not a value
 * the user wrote themselves (a URL the user typed that also appears in their mail is the user's).
 */
function carriesPrivate(ledger: TaintLedger, leaf: ArgumentLeaf): boolean {
  return ledger.derivedFromPrivate(leaf.value) && !ledger.sourcesOf(leaf.value, leaf.field).has('user');
}

/**
 * At execution, the run-wide commitments of a call that was admitted: its use of a plan entry and
 * its policy's caps, checked and counted in one synchronous step so parallel calls of one batch
 * see each other (twenty split payments cannot all pass one check). Returns a refusal when a cap
 * is reached, or when the context is tainted and the plan has no use left for the call.
 */
export function commitCall(
  tool: AnyTool,
  input: unknown,
  ledger: TaintLedger,
  taint: ResolvedTaintOptions,
): Settled | undefined {
  if (!taint.enabled) return undefined;
  const policy = taint.policies[tool.name];
  const caps = policy?.caps;
  const counts: [string, number][] = [];
  if (caps) {
    const leaves = argumentsAt(input, fieldNames(tool));
    if (caps.maxCalls !== undefined) {
      if (ledger.counter(`calls:${tool.name}`) + 1 > caps.maxCalls)
        return capReached(tool, `at most ${caps.maxCalls} calls per run`);
      counts.push([`calls:${tool.name}`, 1]);
    }
    if (caps.sum) {
      let amount = 0;
      for (const leaf of leavesUnder(leaves, caps.sum.argument)) {
        // A numeric string counts as its number ("1500", as many payment APIs take money); a
        // negative counts as its size; anything else cannot be capped, so the call is refused.
        const number =
          typeof leaf.value === 'string' && numeric.test(leaf.value.trim()) ? Number(leaf.value) : leaf.value;
        if (typeof number !== 'number' || !Number.isFinite(number))
          return capReached(tool, `${caps.sum.argument} capped by its sum, and ${leaf.path} is not a number`);
        amount += Math.abs(number);
      }
      const key = `sum:${tool.name}`;
      if (ledger.counter(key) + amount > caps.sum.max)
        return capReached(
          tool,
          `${caps.sum.argument} may add up to ${caps.sum.max} per run; ${ledger.counter(key)} is spent`,
        );
      counts.push([key, amount]);
    }
    if (caps.perValue) {
      for (const leaf of leavesUnder(leaves, caps.perValue.argument)) {
        const key = `per:${tool.name}:${caps.perValue.argument}:${capKey(leaf.value)}`;
        if (ledger.counter(key) + 1 > caps.perValue.maxCalls)
          return capReached(
            tool,
            `at most ${caps.perValue.maxCalls} calls per ${caps.perValue.argument} per run`,
          );
        counts.push([key, 1]);
      }
    }
  }
  if (tool.requiresTrustedContext && taint.plan !== undefined) {
    const index = plannedIndex(taint.plan, tool, input, ledger);
    if (index >= 0) counts.push([`plan:${index}`, 1]);
    else if (ledger.tainted)
      return settled(
        'blocked_tainted',
        errorContent(
          'tainted_context',
          `${tool.name} was not run: the plan fixed from the user's request has no use left for this call.`,
        ),
        null,
        true,
        true,
      );
  }
  for (const [key, by] of counts) ledger.count(key, by);
  return undefined;
}

/**
 * One key per recipient, not per spelling: NFKC, an address with its domain in lower case (as the
 * provenance rule compares it), other text without case or surrounding space.
 */
function capKey(value: unknown): string {
  if (typeof value !== 'string') return canonicalJson(value);
  const text = value.normalize('NFKC').trim();
  return addressKey(text) ?? text.toLowerCase();
}

function capReached(tool: AnyTool, limit: string): Settled {
  return settled(
    'denied',
    errorContent('policy_cap', `${tool.name} was not run: its policy allows ${limit}.`),
    null,
    true,
    true,
  );
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
