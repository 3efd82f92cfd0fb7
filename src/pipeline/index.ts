/**
 * `reins/pipeline`: workflows with the loop's controls. Three shapes cover most tasks that get a
 * loop by default (post-15 and its pipelines cross-post): `chain`, `route` and `fanOut`/`fanIn`,
 * composed from `modelStage` (one bounded, validated model call) and `step` (plain code).
 */
export { chain } from './chain.js';
export { checkPipelineTrace, type PipelineTraceCheck } from './check-pipeline-trace.js';
export {
  type BranchResult,
  type FanInSpec,
  type FanOutSpec,
  fanIn,
  fanOut,
  type Gathered,
} from './fan-out.js';
export { step } from './function-stage.js';
export { type ModelStageSpec, modelStage } from './model-stage.js';
export {
  describePipelineOutcome,
  type OutputIssue,
  type PipelineOutcome,
  pipelineOutcomeKinds,
  type StageFailure,
} from './pipeline-outcome.js';
export { type RouteSpec, route } from './route.js';
export { type PipelineOptions, type PipelineResult, runPipeline } from './run-pipeline.js';
export type { Stage, StageContext, StageKind, StageResult } from './stage.js';
export { MemoryStageStore, type StageCommit, type StageRecord, type StageStore } from './stage-store.js';
