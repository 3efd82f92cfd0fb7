import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobBudget } from '../budget/job-budget.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import type { TraceEvent } from '../trace/events.js';
import { renderTrace } from '../trace/render.js';
import { memoryTraceSink } from '../trace/sink.js';
import { chain } from './chain.js';
import { checkPipelineTrace } from './check-pipeline-trace.js';
import { fanIn, fanOut } from './fan-out.js';
import { step } from './function-stage.js';
import { modelStage } from './model-stage.js';
import { route } from './route.js';
import { runPipeline } from './run-pipeline.js';
import { MemoryStageStore } from './stage-store.js';

const category = z.object({ category: z.enum(['billing', 'bug', 'howto']) });
const classifyTurn = (value: unknown) => ({ toolCalls: [{ name: 'classify', input: value }] });

describe('chain', () => {
  it('feeds each stage the last one’s output, one bounded validated call per model stage', async () => {
    const model = scriptedModel([classifyTurn({ category: 'billing' })]);
    const sink = memoryTraceSink();
    const pipeline = chain(
      'ticket',
      step('clean', (text: string) => text.trim()),
      modelStage({
        name: 'classify',
        model,
        output: category,
        prompt: (text: string) => text,
        maxOutputTokens: 32,
      }),
      step('playbook', ({ category }: { category: string }) => `playbook:${category}`),
    );
    const result = await runPipeline(pipeline, '  refund please ', { trace: sink, runId: 'p1' });
    expect(result.outcome).toEqual({ kind: 'completed', output: 'playbook:billing' });
    expect(result.modelCalls).toBe(1);
    // The call was forced to the one tool and bounded.
    expect(model.calls[0]).toMatchObject({ toolChoice: { name: 'classify' }, maxOutputTokens: 32 });
    expect(model.calls[0]?.tools.map((tool) => tool.name)).toEqual(['classify']);
    model.assertDone();
    const types = sink.events.map((event) => event.type);
    expect(types[0]).toBe('pipeline-start');
    expect(types.at(-1)).toBe('pipeline-end');
    expect(sink.events.map((event) => event.seq)).toEqual(sink.events.map((_, index) => index));
    expect(checkPipelineTrace(sink.events, 'p1')).toMatchObject({ matches: true, problems: [] });
  });

  it('an answer that fails the schema ends the pipeline invalid_output; nothing after it runs', async () => {
    let after = 0;
    const pipeline = chain(
      'ticket',
      modelStage({
        name: 'classify',
        model: scriptedModel([classifyTurn({ category: 'refunds' })]),
        output: category,
        prompt: (text: string) => text,
        maxOutputTokens: 32,
      }),
      step('after', () => ++after),
    );
    const result = await runPipeline(pipeline, 'x');
    expect(result.outcome).toMatchObject({ kind: 'invalid_output', stage: 'ticket/classify' });
    expect(result.outcome.kind === 'invalid_output' && result.outcome.issues[0]?.path).toBe('category');
    expect(after).toBe(0);
  });

  it('json mode parses a fenced answer; max_tokens is truncated, a throw is stage_error, named', async () => {
    const json = modelStage({
      name: 'extract',
      model: scriptedModel([
        { text: '```json\n{"category":"bug"}\n```' },
        { text: '{"categ', stopReason: 'max_tokens' },
      ]),
      output: category,
      mode: 'json',
      prompt: (text: string) => text,
      maxOutputTokens: 16,
    });
    expect((await runPipeline(json, 'a')).outcome).toEqual({
      kind: 'completed',
      output: { category: 'bug' },
    });
    expect((await runPipeline(json, 'b')).outcome).toMatchObject({ kind: 'truncated', stage: 'extract' });
    const failing = chain(
      'c',
      step('ok', () => 1),
      step('boom', () => {
        throw new Error('disk full');
      }),
    );
    expect((await runPipeline(failing, null)).outcome).toMatchObject({
      kind: 'stage_error',
      stage: 'c/boom',
      error: { message: 'disk full' },
    });
  });
});

describe('route', () => {
  const triage = (label: string) =>
    route({
      name: 'triage',
      classify: modelStage({
        name: 'classify',
        model: scriptedModel([classifyTurn({ label })]),
        output: z.object({ label: z.string() }),
        prompt: (ticket: string) => ticket,
        maxOutputTokens: 16,
      }),
      label: ({ label }) => label,
      branches: {
        billing: step('billing', (ticket: string) => `billing:${ticket}`),
        other: step('other', (ticket: string) => `other:${ticket}`),
      },
      fallback: 'other',
    });

  it('takes the named branch, and an unknown label to the fallback, labeled in the trace', async () => {
    expect((await runPipeline(triage('billing'), 't')).outcome).toEqual({
      kind: 'completed',
      output: 'billing:t',
    });
    const sink = memoryTraceSink();
    const result = await runPipeline(triage('spam'), 't', { trace: sink });
    expect(result.outcome).toEqual({ kind: 'completed', output: 'other:t' });
    expect(sink.events.find((event) => event.type === 'route')).toMatchObject({
      label: 'spam',
      branch: 'other',
      fallback: true,
    });
    expect(renderTrace(sink.events)).toContain('"spam" → other (fallback: no such branch)');
  });

  it('refuses a fallback that is not a branch', () => {
    expect(() =>
      route({
        name: 'r',
        classify: step('c', () => 'a'),
        branches: { a: step('a', () => 1) },
        fallback: 'b',
      }),
    ).toThrow('fallback');
  });
});

describe('fanOut / fanIn', () => {
  it('runs at most `concurrency` branches at once and keeps the list’s order', async () => {
    let inFlight = 0;
    let most = 0;
    const pipeline = chain(
      'files',
      fanOut({
        name: 'each',
        items: (files: string[]) => files,
        concurrency: 2,
        branch: step('size', async (file: string) => {
          inFlight++;
          most = Math.max(most, inFlight);
          await Promise.resolve();
          inFlight--;
          return file.length;
        }),
      }),
      fanIn<string, number>({ name: 'gather' }),
    );
    const result = await runPipeline(pipeline, ['a', 'bb', 'ccc', 'dddd', 'eeeee']);
    expect(result.outcome).toEqual({
      kind: 'completed',
      output: { outputs: [1, 2, 3, 4, 5], items: ['a', 'bb', 'ccc', 'dddd', 'eeeee'], failed: [] },
    });
    expect(most).toBe(2);
  });

  it('labels a branch past its timeout (fake clock) and a failed one; fanIn gates on minSucceeded', async () => {
    const clock = fakeClock();
    const each = fanOut({
      name: 'each',
      items: (files: string[]) => files,
      branchTimeoutMs: 1_000,
      branch: step('migrate', (file: string) => {
        if (file === 'slow') return new Promise<string>(() => {});
        if (file === 'bad') throw new Error('unparseable frontmatter');
        return `${file}: migrated`;
      }),
    });
    const lenient = chain('m', each, fanIn<string, string>({ name: 'gather', minSucceeded: 1 }));
    const run = runPipeline(lenient, ['a', 'slow', 'bad'], { clock });
    const result = await clock.runUntilSettled(run);
    expect(result.outcome).toEqual({
      kind: 'completed',
      output: {
        outputs: ['a: migrated'],
        items: ['a'],
        failed: [
          {
            index: 1,
            item: 'slow',
            failure: { kind: 'timed_out', stage: 'm/each/migrate[1]', timeoutMs: 1_000 },
          },
          {
            index: 2,
            item: 'bad',
            failure: expect.objectContaining({ kind: 'stage_error', stage: 'm/each/migrate[2]' }),
          },
        ],
      },
    });
    expect(clock.pendingTimers).toBe(0);
    const strict = chain('m', each, fanIn<string, string>({ name: 'gather' }));
    const failed = await clock.runUntilSettled(runPipeline(strict, ['a', 'slow', 'bad'], { clock }));
    expect(failed.outcome).toMatchObject({
      kind: 'insufficient_branches',
      stage: 'm/gather',
      succeeded: 1,
      required: 3,
    });
  });
});

describe('the job budget in a pipeline', () => {
  it('is checked before each model call; exhaustion ends the pipeline naming the stage that spent', async () => {
    const budget = new JobBudget({ maxTokens: 300 });
    const summarize = modelStage({
      name: 'summarize',
      model: scriptedModel(
        Array.from({ length: 10 }, () => ({ text: '"ok"', usage: { inputTokens: 20, outputTokens: 80 } })),
      ),
      output: z.string(),
      mode: 'json',
      prompt: (doc: string) => doc,
      maxOutputTokens: 80,
    });
    const pipeline = chain(
      'digest',
      fanOut({ name: 'docs', items: (docs: string[]) => docs, branch: summarize, concurrency: 1 }),
      fanIn<string, string>({ name: 'gather' }),
    );
    const result = await runPipeline(pipeline, ['a', 'b', 'c', 'd', 'e'], { jobBudget: budget });
    expect(result.outcome).toMatchObject({
      kind: 'over_budget',
      budget: 'job_tokens',
      limit: 300,
      spender: 'pipeline:digest/stage:digest/docs/summarize[3]',
    });
    expect(budget.spent().tokens).toBeLessThanOrEqual(300);
    expect(result.modelCalls).toBe(3);
  });
});

describe('checkpoint and resume per stage', () => {
  it('a completed stage never runs again; a second resume of the same run is stale_state', async () => {
    const store = new MemoryStageStore();
    const ran: string[] = [];
    let flaky = true;
    const model = scriptedModel([classifyTurn({ category: 'bug' })]);
    const pipeline = chain(
      'nightly',
      step('query', () => {
        ran.push('query');
        return ['t1', 't2'];
      }),
      modelStage({
        name: 'classify',
        model,
        output: category,
        prompt: (t: string[]) => t.join(','),
        maxOutputTokens: 16,
      }),
      step('send', ({ category }: { category: string }) => {
        ran.push('send');
        if (flaky) throw new Error('smtp down');
        return `sent ${category}`;
      }),
    );
    const sink = memoryTraceSink();
    const first = await runPipeline(pipeline, null, { runId: 'n1', checkpoint: store, trace: sink });
    expect(first.outcome).toMatchObject({ kind: 'stage_error', stage: 'nightly/send' });
    flaky = false;
    const second = await runPipeline(pipeline, null, { runId: 'n1', checkpoint: store, trace: sink });
    expect(second.outcome).toEqual({ kind: 'completed', output: 'sent bug' });
    expect(second.restoredStages).toBe(2);
    expect(ran).toEqual(['query', 'send', 'send']);
    model.assertDone();
    // The two segments keep one seq and replay as one run.
    const check = checkPipelineTrace(sink.events, 'n1');
    expect(check).toMatchObject({ matches: true, segments: 2, outcome: { kind: 'completed' } });
    expect(
      sink.events.filter((event) => event.type === 'stage-end' && event.status === 'restored'),
    ).toHaveLength(2);
    // Two resumes racing: one claims (every stage restored, none run), the other runs nothing.
    const racing = await Promise.all([
      runPipeline(pipeline, null, { runId: 'n1', checkpoint: store }),
      runPipeline(pipeline, null, { runId: 'n1', checkpoint: store }),
    ]);
    expect(racing.map((result) => result.outcome.kind).sort()).toEqual(['completed', 'stale_state']);
    expect(racing.find((result) => result.outcome.kind === 'completed')?.restoredStages).toBe(3);
    expect(ran).toEqual(['query', 'send', 'send']);
  });
});

describe('cancellation and the trace contract', () => {
  it('an abort ends the pipeline cancelled at the stage that was running', async () => {
    const controller = new AbortController();
    const pipeline = chain(
      'c',
      step('wait', () => {
        controller.abort('operator stop');
        return new Promise(() => {});
      }),
      step('never', () => 'x'),
    );
    expect((await runPipeline(pipeline, null, { signal: controller.signal })).outcome).toEqual({
      kind: 'cancelled',
      stage: 'c/wait',
      reason: 'operator stop',
    });
  });

  it('a signal aborted before the start runs nothing', async () => {
    let ran = 0;
    const result = await runPipeline(
      chain(
        'c',
        step('a', () => ++ran),
      ),
      null,
      { signal: AbortSignal.abort('shutdown') },
    );
    expect(result.outcome).toEqual({ kind: 'cancelled', stage: 'c/a', reason: 'shutdown' });
    expect(ran).toBe(0);
  });

  it('a trace whose recorded outcome the stages do not support, or with a gap, is not reproduced', async () => {
    const sink = memoryTraceSink();
    await runPipeline(
      chain(
        'c',
        step('a', () => 1),
        step('b', () => 2),
      ),
      null,
      { trace: sink, runId: 'r' },
    );
    const tampered = sink.events.map(
      (event): TraceEvent =>
        event.type === 'pipeline-end' ? { ...event, outcome: { kind: 'completed', output: 3 } } : event,
    );
    expect(checkPipelineTrace(tampered, 'r')).toMatchObject({ matches: false });
    const gap = sink.events.filter((event) => event.seq !== 2);
    expect(checkPipelineTrace(gap, 'r').problems.join()).toContain('gap');
  });
});
