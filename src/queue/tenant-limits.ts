/** Per-tenant limits for a fleet of workers. */
export interface TenantLimits {
  /** Runs of one tenant executing at once, over every worker. @default unlimited */
  maxRunning?: number;
  /** Starts (and resumes) of one tenant's runs per window. @default unlimited */
  rate?: { max: number; windowMs: number };
}

/** Whether a run may start now, or how long to wait. */
export type Admission = { ok: true } | { ok: false; reason: 'concurrency' | 'rate'; retryInMs: number };
