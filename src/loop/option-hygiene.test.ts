import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isConfigurationError } from '../errors/reins-error.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { RunOptions } from './options.js';
import { runAgent } from './run-agent.js';

// The audit's reproductions: each was a raw TypeError, a NaN or a silently accepted value.
const scoped = defineTool({
  name: 'admin_tool',
  description: 'x',
  effect: 'read',
  scopes: ['a'],
  input: z.object({}),
  execute: () => 'secret',
});

function optionOf(bad: Record<string, unknown>): string | undefined {
  try {
    void runAgent({ model: scriptedModel([{ text: 'x' }]), input: 'q', ...bad } as unknown as RunOptions);
  } catch (thrown) {
    return isConfigurationError(thrown) ? thrown.option : `not a ConfigurationError: ${String(thrown)}`;
  }
  return undefined;
}

describe('option hygiene: one labeled ConfigurationError per field', () => {
  it.each([
    [{ tools: 'lookup' }, 'tools'],
    [{ system: 42 }, 'system'],
    [{ input: [null] }, 'input.0'],
    [{ input: [{ role: 'robot', content: [] }] }, 'input.0.role'],
    [{ input: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }, 'input.0.content.0.text'],
    [{ actor: { id: 'u', scopes: 'admin' } }, 'actor.scopes'],
    [
      { prices: { '*': { inputUsdPerMillionTokens: -1, outputUsdPerMillionTokens: 1 } } },
      'prices.*.inputUsdPerMillionTokens',
    ],
    [
      { prices: { '*': { inputUsdPerMillionTokens: Number.NaN, outputUsdPerMillionTokens: 1 } } },
      'prices.*.inputUsdPerMillionTokens',
    ],
    [{ giveUpTool: { name: '' } }, 'giveUpTool.name'],
    [{ approvals: [{ approvalId: 7, decision: 'yes' }] }, 'approvals.0'],
    [{ clock: {} }, 'clock'],
    [{ signal: 5 }, 'signal'],
    [{ allowedTools: 5 }, 'allowedTools'],
    [{ accountSpend: null }, 'accountSpend'],
  ])('%j → %s', (bad, option) => {
    expect(optionOf(bad)).toBe(option);
  });

  it("a string of scopes is not a set of letters: a tool scoped 'a' is not granted by scopes: 'admin'", () => {
    expect(optionOf({ tools: [scoped], actor: { id: 'u', scopes: 'admin' } })).toBe('actor.scopes');
  });
});
