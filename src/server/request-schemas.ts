import { z } from 'zod';

/** Run ids the service accepts in a path; anything else is `not_found` without reaching a store. */
export const runIdPattern = /^[A-Za-z0-9_.:-]{1,128}$/;

/** BullMQ's highest priority number (lower runs first). */
const maxPriority = 2_097_152;

/**
 * `POST /runs`. Strict: an `actor`, `actorId`, `tenant` or `runId` in the body is refused, not
 * ignored, so a client that believes it can choose them learns at once that it cannot.
 */
export function startRunBody(maxInputChars: number) {
  return z.strictObject({
    agent: z.string().min(1).max(200),
    input: z.string().min(1).max(maxInputChars),
    priority: z.number().int().min(0).max(maxPriority).optional(),
  });
}

const approvalId = z.string().min(1).max(512);

/** One verdict as a person sends it; `by` comes from the token, so it is refused here. */
const verdict = z.discriminatedUnion('decision', [
  z.strictObject({ approvalId, decision: z.literal('approve') }),
  z.strictObject({ approvalId, decision: z.literal('deny'), reason: z.string().min(1).max(2_000) }),
  z.strictObject({ approvalId, decision: z.literal('edit'), input: z.unknown() }),
]);

/** `POST /runs/:id/approvals`. */
export const verdictsBody = z.strictObject({
  verdicts: z
    .array(verdict)
    .min(1)
    .max(64)
    .refine((list) => new Set(list.map((one) => one.approvalId)).size === list.length, {
      message: 'one verdict per approval id',
    }),
});

/** `GET /runs?limit=`. */
export const listRunsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

/** Turns zod issues into `{ path, message }` pairs for the error body. */
export function describeIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
  }));
}
