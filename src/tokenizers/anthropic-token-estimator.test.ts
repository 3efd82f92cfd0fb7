import { readFileSync } from 'node:fs';
import { countTokens } from '@anthropic-ai/tokenizer';
import { describe, expect, it } from 'vitest';
import { legacyClaudeTokenEstimator } from '../../test/support/legacy-claude-estimator.js';
import { anthropicToolRunnerRequests, errorRange, measure } from '../../test/support/token-accuracy.js';
import { isReinsError } from '../errors/reins-error.js';
import { approxTokenEstimator } from '../tokens/token-estimator.js';
import { anthropicTokenEstimator } from './anthropic-token-estimator.js';

const requests = anthropicToolRunnerRequests();
const sonnet4 = requests.filter((request) => request.model === 'claude-sonnet-4-20250514');
const sonnet45 = requests.filter((request) => request.model === 'claude-sonnet-4-5');
const withoutTools = sonnet45.filter((request) => request.request.tools.length === 0);

describe('the recorded Anthropic requests', () => {
  it('are ten: six Claude Sonnet 4 calls with one tool, four Claude Sonnet 4.5 calls (two without tools)', () => {
    expect(requests).toHaveLength(10);
    expect(sonnet4).toHaveLength(6);
    expect(sonnet45).toHaveLength(4);
    expect(withoutTools).toHaveLength(2);
    expect(requests.flatMap((request) => request.unmodelled)).toEqual([]);
  });
});

describe('anthropicTokenEstimator (the defaults)', () => {
  const measured = measure(anthropicTokenEstimator(), requests);

  it('undercounts none of the ten: +1.7% to +43.4%', () => {
    const range = errorRange(measured);
    expect(range.min).toBeGreaterThanOrEqual(0);
    expect(range.min).toBeCloseTo(0.017, 3);
    expect(range.max).toBeCloseTo(0.4337, 3);
  });

  it('with the 346-token tool prompt, is within +0.2% to +4.2% on Claude Sonnet 4 and 28% under on Sonnet 4.5', () => {
    const tuned = anthropicTokenEstimator({ toolUseSystemPromptTokens: 346 });
    const onSonnet4 = errorRange(measure(tuned, sonnet4));
    expect(onSonnet4.min).toBeCloseTo(0.002, 3);
    expect(onSonnet4.max).toBeCloseTo(0.042, 3);
    expect(errorRange(measure(tuned, sonnet45)).min).toBeCloseTo(-0.277, 3);
  });

  it('sizes text as the chars/4 default does, which over-counts the two Sonnet 4.5 requests without tools by ~17%', () => {
    expect(anthropicTokenEstimator().countText('hello world')).toBe(
      approxTokenEstimator.countText('hello world'),
    );
    const charsOver4 = errorRange(measure(approxTokenEstimator, withoutTools));
    expect(charsOver4.min).toBeCloseTo(0.172, 3);
    expect(charsOver4.max).toBeCloseTo(0.177, 3);
    // One of them resends a tool call and its result, which the estimator adds 2 × 36 tokens for.
    const range = errorRange(measure(anthropicTokenEstimator(), withoutTools));
    expect(range.min).toBeCloseTo(0.177, 3);
    expect(range.max).toBeCloseTo(0.211, 3);
  });

  it('refuses a negative or fractional allowance', () => {
    for (const options of [{ toolUseSystemPromptTokens: -1 }, { toolBlockTokens: 1.5 }]) {
      let thrown: unknown;
      try {
        anthropicTokenEstimator(options);
      } catch (error) {
        thrown = error;
      }
      expect(isReinsError(thrown)).toBe(true);
    }
  });
});

describe('what the other estimators would do on Claude', () => {
  it('the chars/4 default undercounts every request with tools by 12–86%: it misses the tool-use system prompt', () => {
    const withTools = requests.filter((request) => request.request.tools.length > 0);
    const range = errorRange(measure(approxTokenEstimator, withTools));
    expect(range.min).toBeCloseTo(-0.863, 3);
    expect(range.max).toBeCloseTo(-0.115, 3);
  });

  it('the Claude 2 tokenizer reproduces its own test vectors', () => {
    const { vectors } = JSON.parse(
      readFileSync(
        new URL('../../test/fixtures/tokenizers/anthropic-tokenizer/vectors.json', import.meta.url),
        'utf8',
      ),
    ) as { vectors: { text: string; count: number }[] };
    for (const { text, count } of vectors) {
      expect(legacyClaudeTokenEstimator.countText(text), text).toBe(count);
      expect(countTokens(text), text).toBe(count);
    }
  });

  it('but undercounts Claude Sonnet 4.5 prose by 4–7%, the wrong side for a budget', () => {
    const range = errorRange(measure(legacyClaudeTokenEstimator, withoutTools));
    expect(range.min).toBeCloseTo(-0.066, 3);
    expect(range.max).toBeCloseTo(-0.039, 3);
  });
});
