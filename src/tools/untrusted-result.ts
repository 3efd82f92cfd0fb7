const untrustedMark = Symbol.for('reins.untrusted-result');

/**
 * Marks one result of a tool with trusted output as untrusted: the loop then delimits it and
 * counts it in the taint ledger like any untrusted tool's output, and none of its fields vouch for
 * later arguments. For a tool whose trust depends on the call (`agentTool`: a sub-agent that read
 * untrusted content). The mark is a non-enumerable symbol: the model never sees it.
 */
export function untrustedResult<T extends object>(value: T): T {
  Object.defineProperty(value, untrustedMark, { value: true, enumerable: false });
  return value;
}

/** True for a value {@link untrustedResult} marked. */
export function isUntrustedResult(value: unknown): boolean {
  try {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[untrustedMark] === true
    );
  } catch {
    // A result that cannot be read vouches for nothing.
    return true;
  }
}
