import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { get_encoding } from 'tiktoken';
import { describe, expect, it } from 'vitest';
import { isReinsError } from '../errors/reins-error.js';
import { runAgent } from '../loop/index.js';
import { scriptedModel } from '../testing/index.js';
import { approxTokenEstimator, type TokenEstimator } from '../tokens/token-estimator.js';
import { type OpenAIEncoding, openaiTokenEstimator } from './openai-token-estimator.js';

const fixture = (path: string) =>
  readFileSync(new URL(`../../test/fixtures/tokenizers/${path}`, import.meta.url), 'utf8');

interface Vector {
  encoding: OpenAIEncoding;
  text: string;
  count: number;
}

/** gpt-tokenizer's test plans: `EncodingName`, `Sample`, `Encoded` blocks. */
function testPlans(): Vector[] {
  return fixture('gpt-tokenizer/TestPlans.txt')
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const match = /^EncodingName: (\S+)\nSample: ([\s\S]*)\nEncoded: (\[.*\])\s*$/.exec(block);
      if (!match) throw new Error(`unreadable test plan: ${block.slice(0, 80)}`);
      const encoded = JSON.parse(match[3] as string) as number[];
      return { encoding: match[1] as OpenAIEncoding, text: match[2] as string, count: encoded.length };
    });
}

/** tiktoken's own test vectors (tests/test_encoding.py, tests/test_offsets.py). */
function tiktokenVectors(): Vector[] {
  const file = JSON.parse(fixture('tiktoken/vectors.json')) as {
    vectors: { encoding: OpenAIEncoding; text: string; tokens?: number[]; count?: number }[];
  };
  return file.vectors.map(({ encoding, text, tokens, count }) => ({
    encoding,
    text,
    count: tokens?.length ?? (count as number),
  }));
}

const mismatches = (estimators: Record<OpenAIEncoding, TokenEstimator>, vectors: readonly Vector[]) =>
  vectors.filter((vector) => estimators[vector.encoding].countText(vector.text) !== vector.count);

const ours = {
  o200k_base: openaiTokenEstimator({ encoding: 'o200k_base' }),
  cl100k_base: openaiTokenEstimator({ encoding: 'cl100k_base' }),
};

describe('openaiTokenEstimator reproduces the tokenizers’ own test vectors', () => {
  const plans = testPlans();
  const upstream = tiktokenVectors();

  it('reads the fixtures it claims to (57 o200k_base and 64 cl100k_base test plans, 11 tiktoken vectors)', () => {
    expect(plans.filter((plan) => plan.encoding === 'o200k_base')).toHaveLength(57);
    expect(plans.filter((plan) => plan.encoding === 'cl100k_base')).toHaveLength(64);
    expect(upstream).toHaveLength(11);
  });

  it('matches every gpt-tokenizer test plan exactly', () => {
    expect(mismatches(ours, plans)).toEqual([]);
  });

  it("matches tiktoken's own vectors, all but the one on U+0085 (NEL), which JavaScript's \\s does not take for space", () => {
    expect(mismatches(ours, upstream)).toEqual([{ encoding: 'cl100k_base', text: ' \u00850', count: 4 }]);
    expect(ours.cl100k_base.countText(' \u00850')).toBe(3);
  });

  it('is a check that can fail: chars/4 misses most vectors, and each encoding misses the other’s', () => {
    const charsOver4 = { o200k_base: approxTokenEstimator, cl100k_base: approxTokenEstimator };
    expect(mismatches(charsOver4, plans).length).toBeGreaterThan(plans.length / 2);
    const swapped = { o200k_base: ours.cl100k_base, cl100k_base: ours.o200k_base };
    expect(mismatches(swapped, plans).length).toBeGreaterThan(20);
  });
});

describe('openaiTokenEstimator text counting', () => {
  // tiktoken's Rust core (the npm `tiktoken` package, WebAssembly) is the reference. Scanning every
  // code point (bench/tokenizers.ts --scan) finds two where the JavaScript ports disagree with it:
  // U+0085 and U+FEFF, because JavaScript's \s leaves out the first and takes in the second.
  const reference = { o200k_base: get_encoding('o200k_base'), cl100k_base: get_encoding('cl100k_base') };
  const referenceCount = (encoding: OpenAIEncoding, text: string) =>
    reference[encoding].encode(text, [], []).length;
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc
      .array(fc.constantFrom('a', ' ', '\n', '0', 'é', '日本', '😀', "'s", '{"k": 1}', '\t'), {
        maxLength: 60,
      })
      .map((pieces) => pieces.join('')),
  );
  const encodingArbitrary = fc.constantFrom<OpenAIEncoding>('o200k_base', 'cl100k_base');

  it("agrees with tiktoken's Rust core on arbitrary text without U+0085 or U+FEFF", () => {
    fc.assert(
      fc.property(encodingArbitrary, text, (encoding, sample) => {
        const clean = sample.replace(/[\u0085\ufeff]/g, '');
        expect(ours[encoding].countText(clean)).toBe(referenceCount(encoding, clean));
      }),
      { seed: 17, numRuns: 600 },
    );
  });

  it('is off by at most two tokens per U+0085 or U+FEFF where the text has them', () => {
    const withOddSpace = fc
      .tuple(text, fc.array(fc.constantFrom('\u0085', '\ufeff'), { minLength: 1, maxLength: 5 }), text)
      .map(([before, odd, after]) => before + odd.join(' ') + after);
    fc.assert(
      fc.property(encodingArbitrary, withOddSpace, (encoding, sample) => {
        const occurrences = sample.match(/[\u0085\ufeff]/g)?.length ?? 0;
        const difference = ours[encoding].countText(sample) - referenceCount(encoding, sample);
        expect(Math.abs(difference)).toBeLessThanOrEqual(2 * occurrences);
      }),
      { seed: 18, numRuns: 300 },
    );
  });

  it('counts text that spells a special token as plain text, as the API does, instead of throwing', () => {
    expect(ours.o200k_base.countText('<|endoftext|>')).toBe(7);
    expect(ours.cl100k_base.countText('a <|im_start|> b')).toBeGreaterThan(3);
  });

  it('counts the empty string as nothing', () => {
    expect(ours.o200k_base.countText('')).toBe(0);
  });

  it('names its encoding, so a trace says which estimator sized it', () => {
    expect(openaiTokenEstimator().name).toBe('openai-chat/o200k_base');
    expect(ours.cl100k_base.name).toBe('openai-chat/cl100k_base');
  });

  it('refuses an encoding it does not have', () => {
    let thrown: unknown;
    try {
      openaiTokenEstimator({ encoding: 'p50k_base' as OpenAIEncoding });
    } catch (error) {
      thrown = error;
    }
    expect(isReinsError(thrown)).toBe(true);
    expect((thrown as Error).message).toContain('encoding: must be one of o200k_base, cl100k_base');
  });
});

describe('openaiTokenEstimator in a run', () => {
  // Japanese costs about a token a character, not a quarter: the default lets this call through.
  const input = '東京の天気を教えてください。'.repeat(40);

  it('stops a call the four-characters rule would have let through', async () => {
    const estimator = openaiTokenEstimator({ encoding: 'o200k_base' });
    const model = scriptedModel([{ text: 'Sunny.' }], { estimator });
    const result = await runAgent({ model, input, maxContextTokens: 300, estimator });
    expect(result.outcome).toEqual({
      kind: 'over_budget',
      budget: 'context_tokens',
      limit: 300,
      actual: 440,
      phase: 'before-call',
    });
    expect(model.calls).toHaveLength(0);

    const defaultRun = await runAgent({
      model: scriptedModel([{ text: 'Sunny.' }]),
      input,
      maxContextTokens: 300,
    });
    expect(defaultRun.outcome.kind).toBe('answered');
    expect(defaultRun.contextTokens).toBe(240);
  });
});
