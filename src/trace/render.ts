import { canonicalJson } from '../controls/canonical-json.js';
import { describeOutcome } from '../loop/outcome.js';
import { describePipelineOutcome } from '../pipeline/pipeline-outcome.js';
import { cascadeRecordOf } from '../routing/cascade-record.js';
import { describeRouting } from '../routing/describe-routing.js';
import type { TraceEvent } from './events.js';

/** Colours for {@link renderTrace}; identity functions by default. */
export interface RenderStyle {
  dim(text: string): string;
  bold(text: string): string;
  good(text: string): string;
  bad(text: string): string;
  warn(text: string): string;
}

const plain: RenderStyle = { dim: (t) => t, bold: (t) => t, good: (t) => t, bad: (t) => t, warn: (t) => t };

export interface RenderOptions {
  style?: RenderStyle;
  /** Characters of each observation shown. @default 110 */
  observationWidth?: number;
}

const number = (value: number) => value.toLocaleString('en-US');

function meter(used: number, budget: number | null, width = 20): string {
  if (budget === null) return '';
  const filled = Math.min(width, Math.round((used / budget) * width));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]${used > budget ? ' over' : ''}`;
}

function clip(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

/**
 * Renders a trace the way the lesson's stepper shows a run: each step as think → act → observe,
 * with the context meter and the bill so far, then the outcome.
 */
export function renderTrace(events: readonly TraceEvent[], options: RenderOptions = {}): string {
  const style = options.style ?? plain;
  const width = options.observationWidth ?? 110;
  const out: string[] = [];
  const start = events.find((event) => event.type === 'run-start');
  const maxContext = start?.type === 'run-start' ? start.limits.maxContextTokens : null;
  const maxSteps = start?.type === 'run-start' ? start.limits.maxSteps : undefined;
  if (start?.type === 'run-start') {
    const question = start.messages.find((message) => message.role === 'user');
    const text = question?.content.find((block) => block.type === 'text');
    if (text?.type === 'text') out.push(`${style.bold('question')} ${text.text}`);
    if (start.resumedFrom) out.push(style.dim(`resumed after step ${start.resumedFrom.step}`));
  }
  const results = new Map<string, Extract<TraceEvent, { type: 'tool-result' }>>();
  for (const event of events) if (event.type === 'tool-result') results.set(event.callId, event);

  for (const event of events) {
    switch (event.type) {
      case 'step-start': {
        const limit = maxSteps === undefined ? '' : ` / ${maxSteps}`;
        out.push('');
        out.push(
          `${style.bold(`step ${event.step}${limit}`)}${event.toolsEnabled ? '' : style.warn(' (tools disabled: final answer)')}  ` +
            `context ${number(event.contextTokens)}${maxContext === null ? '' : ` / ${number(maxContext)}`} tokens ${style.dim(meter(event.contextTokens, maxContext))}  ` +
            `billed so far ${number(event.billedTokens)}`,
        );
        break;
      }
      case 'model-response': {
        if (event.stage !== undefined) {
          const call = event.response.content.find((block) => block.type === 'tool_use');
          const said =
            call?.type === 'tool_use' ? (call.inputText ?? canonicalJson(call.input)) : event.thought;
          out.push(
            `  ${style.dim('model  ')} ${clip(said, width)} ${style.dim(`(${number(event.prefillTokens)} + ${number(event.response.usage?.outputTokens ?? 0)} tokens)`)}`,
          );
          break;
        }
        const calls = event.response.content.filter((block) => block.type === 'tool_use');
        if (event.thought !== '')
          out.push(`  ${style.dim(calls.length > 0 ? 'think  ' : 'answer ')} ${event.thought}`);
        for (const call of calls) {
          if (call.type !== 'tool_use') continue;
          out.push(`  ${style.dim('act    ')} ${call.name}(${call.inputText ?? canonicalJson(call.input)})`);
          const result = results.get(call.id);
          if (result) {
            const label = result.isError ? style.bad(`observe ${result.status}`) : style.dim('observe');
            out.push(
              `  ${label} ${clip(result.content, width)} ${style.dim(`+${number(result.resultTokens)} tokens`)}`,
            );
          } else {
            out.push(`  ${style.warn('not executed')}`);
          }
        }
        out.push(
          `  ${style.dim(`billed ${number(event.billedTokens)} tokens after this call (prefill ${number(event.prefillTokens)} + output ${number(event.response.usage?.outputTokens ?? 0)})`)}`,
        );
        const routing = cascadeRecordOf(event.response);
        if (routing) {
          const line = `  ${routing.degraded ? style.warn('routed ') : style.dim('routed ')} ${describeRouting(routing)}`;
          out.push(line);
        }
        break;
      }
      case 'pipeline-start':
        out.push(
          `${style.bold('pipeline')} ${event.pipeline}${event.segment > 0 ? style.dim(` (resumed: ${event.completedStages} stage(s) restored)`) : ''}`,
        );
        break;
      case 'stage-start':
        if (event.kind === 'model' || event.kind === 'function')
          out.push(`${style.bold('stage')} ${event.stage}`);
        break;
      case 'stage-end':
        if (event.status === 'restored')
          out.push(`${style.dim(`stage ${event.stage}: restored, not run again`)}`);
        else if (
          event.status === 'failed' &&
          event.failure &&
          (event.kind === 'model' || event.kind === 'function')
        )
          out.push(`  ${style.bad(event.failure.kind)} ${describePipelineOutcome(event.failure)}`);
        else if (event.kind === 'model' || event.kind === 'function')
          out.push(`  ${style.dim('output ')} ${clip(canonicalJson(event.output ?? null), width)}`);
        break;
      case 'route':
        out.push(
          `  ${style.dim('route  ')} ${event.stage}: "${event.label}" → ${event.branch}${event.fallback ? style.warn(' (fallback: no such branch)') : ''}`,
        );
        break;
      case 'pipeline-end':
        out.push('');
        out.push(
          `${style.bold('outcome')} ${(event.outcome.kind === 'completed' ? style.good : style.bad)(describePipelineOutcome(event.outcome))}`,
        );
        out.push(
          `  ${style.dim(`${event.modelCalls} model call(s), ${number(event.billedTokens)} tokens billed${event.costUsd > 0 ? `, $${event.costUsd.toFixed(4)}` : ''}`)}`,
        );
        break;
      case 'model-error':
        out.push(`  ${style.bad('model error')} ${event.error.name}: ${event.error.message}`);
        break;
      case 'authorization':
        if (!event.allowed)
          out.push(
            `  ${style.bad('denied ')} ${event.tool} for ${event.actorId ?? 'no actor'}: ${event.reason ?? ''}`,
          );
        break;
      case 'repeat-check':
        if (event.repeated)
          out.push(
            `  ${style.bad('repeat ')} ${event.key} proposed ${event.count}× (limit ${event.limit}): not executed`,
          );
        break;
      case 'budget-check':
        if (!event.ok) {
          for (const reading of event.readings.filter((r) => !r.ok)) {
            out.push(
              `  ${style.bad('budget ')} ${reading.budget} ${number(reading.actual)} > ${number(reading.limit)} (${event.phase})`,
            );
          }
        }
        break;
      case 'context-edit': {
        const edit = event.edit;
        const sizes = `window ${number(event.tokensBefore)} → ${number(event.tokensAfter)} tokens`;
        if (edit.verb === 'summarize' || edit.verb === 'evict')
          out.push(
            `  ${style.warn(`context ${edit.verb}`)} steps ${edit.steps[0]}–${edit.steps[1]}: ${sizes}`,
          );
        else if (edit.verb === 'admit' || edit.verb === 'clear')
          out.push(
            `  ${style.warn(`context ${edit.verb === 'admit' ? 'admit capped' : 'clear'}`)} the result of step ${edit.step}: ${sizes}`,
          );
        else if (edit.verb === 'pin' && edit.text !== '')
          out.push(`  ${style.dim(`context pin ${edit.key} (${edit.at})`)}`);
        break;
      }
      case 'context-miss':
        out.push(`  ${style.bad('context miss')} ${event.miss.kind}: ${event.miss.detail}`);
        break;
      case 'progress-check':
        if (event.drifting) out.push(`  ${style.bad('drift  ')} ${event.drifting.detail}`);
        break;
      case 'run-end': {
        const kind = event.outcome.kind;
        const colour =
          kind === 'answered'
            ? style.good
            : kind === 'step_limit' || kind === 'gave_up'
              ? style.warn
              : style.bad;
        out.push('');
        out.push(`${style.bold('outcome')} ${colour(describeOutcome(event.outcome))}`);
        if (event.outcome.kind === 'step_limit' && event.outcome.finalText)
          out.push(`  ${style.dim('best answer')} ${event.outcome.finalText}`);
        out.push(
          `  ${style.dim(`${event.steps} model call(s), ${number(event.billedTokens)} tokens billed, context ${number(event.contextTokens)}${maxContext === null ? '' : ` / ${number(maxContext)}`}${event.costUsd > 0 ? `, $${event.costUsd.toFixed(4)}` : ''}`)}`,
        );
        break;
      }
      default:
        break;
    }
  }
  return out.join('\n');
}
