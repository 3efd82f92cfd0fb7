/**
 * `reins/routing`: cheap first, smart later (post-06). `cascadeModel` asks a cheap tier first and
 * escalates on a trigger (structural, confidence, judge); `calibrateTrigger` fits a trigger's
 * threshold on labeled samples; `checkTrigger` reports a stale or drifted calibration.
 */

export * from './calibrate-trigger.js';
export * from './cascade-model.js';
export * from './cascade-record.js';
export * from './check-trigger.js';
export * from './confidence-trigger.js';
export * from './describe-routing.js';
export * from './escalation-stats.js';
export * from './escalation-trigger.js';
export * from './judge-trigger.js';
export * from './structural-trigger.js';
export * from './trigger-threshold.js';
