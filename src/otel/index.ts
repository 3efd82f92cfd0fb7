/**
 * OpenTelemetry for reins: GenAI spans and metrics from a run's trace events, through
 * `@opentelemetry/api` (an optional peer dependency, loaded only by this subpath).
 */
export { type ControlEvent, type ControlEventLevel, controlEvent } from './control-events.js';
export * from './otel-resilience-metrics.js';
export {
  inferProvider,
  type OtelTraceSink,
  type OtelTraceSinkOptions,
  otelTraceSink,
} from './otel-trace-sink.js';
export * from './outcome-status.js';
export * from './semconv.js';
