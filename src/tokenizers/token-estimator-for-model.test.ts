import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { approxTokenEstimator } from '../tokens/token-estimator.js';
import { openAIEncodingForModel, tokenEstimatorForModel } from './token-estimator-for-model.js';

describe('tokenEstimatorForModel', () => {
  it("maps model ids as tiktoken's own tests do (gpt-oss's o200k_harmony counts text as o200k_base)", () => {
    const { models } = JSON.parse(
      readFileSync(new URL('../../test/fixtures/tokenizers/tiktoken/vectors.json', import.meta.url), 'utf8'),
    ) as { models: { model: string; encoding: string }[] };
    expect(models).toHaveLength(4);
    for (const { model, encoding } of models)
      expect(openAIEncodingForModel(model), model).toBe(
        encoding === 'o200k_harmony' ? 'o200k_base' : encoding,
      );
  });

  it.each([
    ['gpt-4o-mini', 'openai-chat/o200k_base'],
    ['gpt-4.1-nano', 'openai-chat/o200k_base'],
    ['gpt-5-mini', 'openai-chat/o200k_base'],
    ['o3-mini', 'openai-chat/o200k_base'],
    ['o1', 'openai-chat/o200k_base'],
    ['openai/gpt-4o', 'openai-chat/o200k_base'],
    ['ft:gpt-4o-mini:acme::abc', 'openai-chat/o200k_base'],
    ['gpt-4-turbo', 'openai-chat/cl100k_base'],
    ['gpt-35-turbo', 'openai-chat/cl100k_base'],
    ['claude-sonnet-4-5', 'anthropic-approx(toolPrompt=520,toolBlock=36)'],
    ['anthropic.claude-3-5-sonnet-20241022-v2:0', 'anthropic-approx(toolPrompt=520,toolBlock=36)'],
    ['llama-3.1-70b', 'chars/4'],
  ])('%s → %s', (model, name) => {
    expect(tokenEstimatorForModel(model).name).toBe(name);
  });

  it('hands back one estimator per encoding and the default itself for an unknown model', () => {
    expect(tokenEstimatorForModel('gpt-4o')).toBe(tokenEstimatorForModel('gpt-5'));
    expect(tokenEstimatorForModel('mistral-large')).toBe(approxTokenEstimator);
  });
});
