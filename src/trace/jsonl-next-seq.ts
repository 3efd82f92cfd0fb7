/**
 * The `seq` after the last event a JSONL trace (plain, compact or both) holds for `runId`, for a
 * sink resuming the run. Lenient where the readers are strict: a line that is not JSON (cut off by a
 * crash) holds no event. Compact lines are counted, not decoded: under a header, `seq` runs on by
 * one a line.
 */
export function jsonlNextSeq(text: string, runId: string): number | undefined {
  let next: number | undefined;
  const note = (seq: number) => {
    if (next === undefined || seq >= next) next = seq + 1;
  };
  /** This run's headers, by id: the first `seq` under each and how many lines followed it. */
  const headers = new Map<string, { seq: number; count: number }>();
  // The run id as JSON writes it, so one with a quote or a control character is found too.
  const needle = JSON.stringify(runId).slice(1, -1);
  for (const line of text.split('\n')) {
    const first = line.trimStart()[0];
    if (first === '[') {
      if (headers.size === 0) continue;
      const parsed = parse(line);
      const header =
        Array.isArray(parsed) && typeof parsed[0] === 'string' ? headers.get(parsed[0]) : undefined;
      if (header) note(header.seq + header.count++);
      continue;
    }
    if (first !== '{' || (!line.includes(needle) && !line.includes('"encoding"'))) continue;
    const parsed = parse(line) as Record<string, unknown> | undefined;
    if (typeof parsed !== 'object' || parsed === null) continue;
    if (typeof parsed.encoding === 'string' && !('type' in parsed)) {
      // A header: of this run, or of another that takes over an id this run's header had.
      if (typeof parsed.id !== 'string') continue;
      if (parsed.runId === runId && typeof parsed.seq === 'number')
        headers.set(parsed.id, { seq: parsed.seq, count: 0 });
      else headers.delete(parsed.id);
    } else if (parsed.runId === runId && typeof parsed.seq === 'number') note(parsed.seq);
  }
  return next;
}

function parse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
