/**
 * Where a value in the context came from: the user's own messages, the system prompt, or a field
 * of a tool's result (`tool:lookup_contact`). Untrusted text is no source at all.
 */
export type ValueSource = 'user' | 'system' | `tool:${string}`;

/**
 * A policy for one privileged tool, checked by the taint guard (CaMeL's per-tool policies).
 * Argument paths are dotted, with `*` for every item or member.
 *
 * @example
 * const sendMoney: ToolPolicy = {
 *   arguments: { recipient: ['user'], amount: ['user'] },
 *   caps: { sum: { argument: 'amount', max: 2_000 }, perValue: { argument: 'recipient', maxCalls: 1 } },
 * };
 */
export interface ToolPolicy {
  /**
   * Under taint, where each argument may come from: a recipient named by the user (`['user']`), a
   * contact id from the directory (`['user', 'tool:find_contact']`). The system prompt is a
   * source only where listed: its phrases are public. An argument not listed gets the provenance
   * rule (any trusted source).
   */
  arguments?: Readonly<Record<string, readonly ValueSource[]>>;
  /**
   * The arguments that say who will read what the call sends (`to`, `cc`, `bcc`). Under taint,
   * when any other argument carries data derived from a private result, every reader must be
   * allowed. @default allowed: readers the user named
   */
  readers?: { arguments: readonly string[]; allowed?: (reader: string) => boolean };
  /**
   * Arguments that leave the system (a URL, a search query). Under taint, a call whose egress
   * carries data derived from a private result is refused, even for a read.
   */
  egress?: readonly string[];
  /** Caps over the whole run, enforced on every call, tainted context or not, so splitting fails. */
  caps?: {
    /** Calls of this tool that may run. */
    maxCalls?: number;
    /** The most the numbers at `argument` may add up to. */
    sum?: { argument: string; max: number };
    /** Calls per distinct value at `argument` (per recipient). */
    perValue?: { argument: string; maxCalls: number };
  };
}

/**
 * One privileged call the run may make, fixed from the user's request before any untrusted data
 * arrives (plan-then-execute). Listed arguments must be exactly these values (or pass the
 * predicate); arguments not listed are checked by the tool's policy, or the provenance rule.
 */
export interface PlannedCall {
  tool: string;
  arguments?: Readonly<Record<string, unknown>>;
  /** How many calls this entry admits. @default 1 */
  times?: number;
}
