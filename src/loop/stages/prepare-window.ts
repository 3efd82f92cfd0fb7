import type { ContextChanges } from '../../context/context-policy.js';
import type { ContextWindow } from '../../context/context-window.js';
import { costUsdOf } from '../../controls/price.js';
import { errorInfo } from '../../errors/error-info.js';
import { addUsage, billedTokensOf, mergeSettings, type Usage } from '../../model/model.js';
import { guard } from '../boundary.js';
import type { LoopState, PreparedCall } from '../loop-state.js';
import { isLoopStop, LoopStop } from '../loop-stop.js';
import { validUsage } from './read-response.js';

/**
 * The context policy's turn at the prepare stage: it sees the window, returns edits, each edit is
 * applied and written as a `context-edit` event, and the call sends the window it leaves (a
 * `context-window` event says what stayed cacheable). A throw, or an edit that cannot apply, ends
 * the run `hard_error` (source `context_policy`).
 */
export async function prepareWindow(
  state: LoopState,
  step: number,
  final: boolean,
  prepared: PreparedCall,
): Promise<PreparedCall> {
  const { setup, trace } = state;
  const window = state.window as ContextWindow;
  const policy = setup.context;
  const counter = setup.counter;
  const fixedTokens = counter.system(prepared.system) + counter.tools(prepared.tools);
  if (policy) {
    const input = {
      runId: setup.runId,
      step,
      final,
      transcript: state.messages,
      window,
      windowTokens: window.measure(),
      fixedTokens,
      countMessage: (message: Parameters<typeof counter.message>[0]) => counter.message(message),
      countFresh: (message: Parameters<typeof counter.message>[0]) => counter.fresh(message),
      system: prepared.system,
      tools: prepared.tools,
      signal: state.run.signal,
    };
    const answer = await guard('context_policy', () => policy.prepare(input), state.run.signal);
    if (!answer.ok) throw LoopStop.from(answer, 'before-call');
    if (answer.value !== undefined && answer.value !== null) {
      try {
        await applyChanges(state, step, answer.value);
      } catch (thrown) {
        // Its answer is the policy's too: a throwing getter or a Proxy is a context_policy error.
        if (isLoopStop(thrown)) throw thrown;
        throw new LoopStop(
          { kind: 'hard_error', source: 'context_policy', error: errorInfo(thrown) },
          'before-call',
        );
      }
    }
  }
  const shown = window.render();
  prepared.messages = shown.messages;
  prepared.contextTokens = fixedTokens + shown.tokens;
  const breakpoint = policy?.cacheBreakpoint ? breakpointOf(prepared) : undefined;
  if (breakpoint !== undefined) {
    const cache = prepared.settings?.cache;
    prepared.settings = mergeSettings(prepared.settings, {
      cache: { ...(cache || {}), messages: [breakpoint] },
    });
  }
  if (trace.on) {
    const written = trace.emit({
      type: 'context-window',
      step,
      messages: shown.messages.length,
      transcriptMessages: state.messages.length,
      contextTokens: prepared.contextTokens,
      transcriptTokens: fixedTokens + window.transcriptTokens(),
      // System and tools lead every request; they stay cacheable while they do not change.
      stablePrefixTokens: shown.stablePrefixTokens + (shown.firstRender ? 0 : fixedTokens),
      invalidatedTokens: shown.invalidatedTokens,
      ranges: window.ranges.length,
      pins: [...window.pins.keys()],
      ...(breakpoint !== undefined ? { cacheBreakpoint: breakpoint } : {}),
    });
    if (written) await written;
  }
  return prepared;
}

/**
 * Where the cache breakpoint goes: the newest assistant turn. What follows it (the newest results,
 * the end pins) changes every call, and a provider joins consecutive user messages into one turn
 * (Anthropic), so a breakpoint on the results would land on the pins and write what is never read.
 * The next call reads the prefix through this turn and writes its own increment. None when the run
 * turned caching off, chose its own messages, or no turn has been answered yet.
 */
function breakpointOf(prepared: PreparedCall): number | undefined {
  const cache = prepared.settings?.cache;
  if (cache === false || (cache && cache.messages !== undefined)) return undefined;
  const messages = prepared.messages;
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]?.role === 'assistant') return index;
  return undefined;
}

async function applyChanges(state: LoopState, step: number, changes: ContextChanges): Promise<void> {
  const { setup, trace } = state;
  const window = state.window as ContextWindow;
  const policy = (setup.context as NonNullable<typeof setup.context>).name;
  const fail = (message: string): never => {
    throw new LoopStop(
      { kind: 'hard_error', source: 'context_policy', error: { name: 'ContextPolicyError', message } },
      'before-call',
    );
  };
  if (typeof changes !== 'object') fail('prepare() must return an object or undefined');
  const { edits, misses, spent } = changes;
  if (edits !== undefined && !Array.isArray(edits)) fail('edits must be an array');
  if (misses !== undefined && !Array.isArray(misses)) fail('misses must be an array');
  if (spent !== undefined) {
    const usage = validUsage(spent?.usage);
    if (usage === undefined || typeof spent?.model !== 'string')
      fail('spent must be { model, usage } with token counts ≥ 0');
    charge(state, spent.model, usage as NonNullable<typeof usage>);
    if (trace.on) {
      const written = trace.emit({ type: 'context-spend', step, model: spent.model, usage: usage as Usage });
      if (written) await written;
    }
  }
  for (const edit of edits ?? []) {
    const tokensBefore = window.measure();
    try {
      window.apply(edit);
    } catch (thrown) {
      fail(errorInfo(thrown).message);
    }
    if (!trace.on) continue;
    const written = trace.emit({
      type: 'context-edit',
      step,
      policy,
      edit,
      tokensBefore,
      tokensAfter: window.measure(),
    });
    if (written) await written;
  }
  if (!trace.on) return;
  for (const miss of misses ?? []) {
    const written = trace.emit({ type: 'context-miss', step, miss });
    if (written) await written;
  }
}

/** The policy's own model calls (a summarizer) are part of the run's bill. */
function charge(state: LoopState, model: string, usage: Usage): void {
  state.usage = addUsage(state.usage, usage);
  state.billedTokens += billedTokensOf(usage);
  const price = state.prices?.resolve(model, model);
  if (price) state.costUsd += costUsdOf(usage, price.price);
}
