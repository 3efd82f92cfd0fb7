import { leavesAt, leavesOf } from '../../controls/taint-ledger.js';
import { errorInfo } from '../../errors/error-info.js';
import type { TokenEstimator } from '../../tokens/token-estimator.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { sizeResult, type Truncation } from '../../tools/result-size.js';
import { isUntrustedResult } from '../../tools/untrusted-result.js';
import type { CallSettlement } from '../call-plan.js';
import { base, errorContent } from './settlement.js';

/** What sizing a result needs from the run. */
export interface SizingOptions {
  maxResultTokens: number | undefined;
  estimator: TokenEstimator;
}

/**
 * Stage 10: a result that passed its checks, as the model sees it: serialized, cut to the result
 * cap, wrapped in a delimiter when untrusted, with the values its trusted fields vouch for.
 */
export function sizedSettlement(tool: AnyTool, output: unknown, options: SizingOptions): CallSettlement {
  try {
    const text = typeof output === 'string' ? output : JSON.stringify(output === undefined ? null : output);
    return shown(tool, output, text ?? 'null', options);
  } catch (thrown) {
    // Not JSON (a BigInt, a cycle, a throwing toJSON or getter, a Proxy whose traps throw).
    return {
      ...base(
        'invalid_output',
        errorContent('internal_error', `${tool.name} returned a result that could not be read.`),
        true,
      ),
      error: errorInfo(thrown),
      terminal: true,
    };
  }
}

/** Shared, frozen empties for the common untrusted result (a push would throw, not corrupt them). */
const noLeaves = Object.freeze([]) as unknown as { path: string; value: unknown }[];
const noValues = Object.freeze([]) as unknown as unknown[];

function shown(tool: AnyTool, output: unknown, serialized: string, options: SizingOptions): CallSettlement {
  let text = serialized;
  const limit = tool.maxResultTokens ?? options.maxResultTokens;
  let truncation: Truncation | undefined;
  if (limit !== undefined) {
    const sized = sizeResult(output, text, limit, options.estimator, {
      tool: tool.name,
      paging: tool.paging,
    });
    text = sized.content;
    truncation = sized.truncation;
  }
  // A trusted tool may mark one result untrusted (`untrustedResult`: a sub-agent that read untrusted data).
  const untrusted = !tool.trustedOutput || isUntrustedResult(output);
  // Each trusted value keeps the path it came from, so the ledger binds it to its field's kind.
  const trustedLeaves = !untrusted
    ? leavesOf(output)
    : tool.trustedOutputFields.length === 0
      ? noLeaves
      : tool.trustedOutputFields.flatMap((path) => leavesAt(output, path));
  // One literal, not a spread of `base()`: in V8 11 (Node 20) `{ ...x, more }` makes a new hidden
  // class for every object, which costs microseconds and memory on every call.
  const settlement: CallSettlement = {
    status: 'ok',
    content: untrusted ? delimitUntrusted(tool.name, text) : text,
    isError: false,
    error: null,
    fatal: false,
    untrusted,
    trustedValues: trustedLeaves.length === 0 ? noValues : trustedLeaves.map((leaf) => leaf.value),
    trustedLeaves,
  };
  if (tool.privateOutput) settlement.privateValues = primitivesOf(output, [], true);
  if (truncation) settlement.truncation = truncation;
  return settlement;
}

// Made once: a regular expression literal and an arrow are new objects at every evaluation. (replace
// starts a global expression at 0 and leaves it there, so one serves every call.)
const lookAlikeTag = /<\/?tool-output/gi;
const escapeTag = (tag: string): string => tag.replace('<', '&lt;');

/**
 * Wraps untrusted output in a structural delimiter the model can see, escaping any look-alike
 * closing tag inside it. A delimiter is not a defence on its own (the taint guard is); it keeps
 * the boundary visible.
 */
export function delimitUntrusted(tool: string, text: string): string {
  // Joined, not concatenated: a template literal makes a tree of cons strings (five nodes) that the
  // transcript then keeps for the whole run; join gives one flat string.
  return [
    '<tool-output tool="',
    tool,
    '" trust="untrusted">\n',
    text.replace(lookAlikeTag, escapeTag),
    '\n</tool-output>',
  ].join('');
}

/** Whether `text` is wrapped by {@link delimitUntrusted}. */
export function isDelimited(text: string): boolean {
  return text.startsWith('<tool-output');
}

/**
 * What {@link delimitUntrusted} wrapped, without the wrapper (look-alike tags inside stay escaped);
 * any other text as it is.
 */
export function undelimited(text: string): string {
  if (!isDelimited(text)) return text;
  const open = text.indexOf('>\n');
  const close = text.lastIndexOf('\n</tool-output>');
  return open === -1 || close === -1 || close < open ? text : text.slice(open + 2, close);
}

/** The strings and numbers of a value; with `keys`, object keys too (a secret may be a key). */
function primitivesOf(value: unknown, out: unknown[], keys = false): unknown[] {
  if (typeof value === 'string' || typeof value === 'number') out.push(value);
  else if (Array.isArray(value)) for (const item of value) primitivesOf(item, out, keys);
  else if (value !== null && typeof value === 'object')
    for (const [key, member] of Object.entries(value)) {
      if (keys) out.push(key);
      primitivesOf(member, out, keys);
    }
  return out;
}
