/**
 * Reads an SSE `Last-Event-ID` (the `seq` of the last trace event a client received). Absent: the
 * stream starts at the beginning (`-1`); so does an empty value, as EventSource treats it. Anything but a plain non-negative whole number in the
 * safe range is `undefined`: refused, never guessed at, so a resume cannot silently skip or repeat.
 */
export function parseLastEventId(header: string | undefined): number | undefined {
  if (header === undefined) return -1;
  const text = header.trim();
  if (text === '') return -1;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) return undefined;
  const seq = Number(text);
  return Number.isSafeInteger(seq) ? seq : undefined;
}
