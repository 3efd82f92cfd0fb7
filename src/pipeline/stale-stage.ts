/**
 * Thrown inside a pipeline, never out of it: the stage store's revision moved on (another resume
 * of the same run, or a second worker), so this run must stop before it does anything more.
 * `runPipeline` turns it into `stale_state`.
 */
export class StaleStage {
  readonly revision: number;
  readonly currentRevision: number;

  constructor(revision: number, currentRevision: number) {
    this.revision = revision;
    this.currentRevision = currentRevision;
  }
}

export function isCheckpointStale(thrown: unknown): thrown is StaleStage {
  return thrown instanceof StaleStage;
}
