import { ConfigurationError } from '../errors/reins-error.js';
import { type ModelSettings, mergeSettings } from './model.js';

const settingKeys = new Set([
  'thinking',
  'cache',
  'parallelToolCalls',
  'stopSequences',
  'temperature',
  'topP',
  'providerOptions',
]);
const efforts = new Set(['minimal', 'low', 'medium', 'high']);
const isObject = (value: unknown): value is { [key: string]: unknown } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks the shape and ranges of model settings, throwing a {@link ConfigurationError} that names
 * the field (`where.thinking.budgetTokens`). What a provider accepts beyond that, each adapter
 * checks itself. Runs on the run's `modelSettings`, a step's `settings` and every adapter's merged
 * settings, so a bad value never reaches the wire.
 */
export function checkModelSettings(where: string, settings: unknown): void {
  const fail = (field: string, message: string): never => {
    throw new ConfigurationError(field === '' ? where : `${where}.${field}`, message);
  };
  if (!isObject(settings)) fail('', 'must be an object');
  const fields = settings as { [key: string]: unknown };
  for (const key of Object.keys(fields))
    if (!settingKeys.has(key)) fail(key, `is not a model setting (known: ${[...settingKeys].join(', ')})`);
  checkThinking(fields['thinking'], fail);
  checkCache(fields['cache'], fail);
  const { parallelToolCalls, stopSequences, temperature, topP, providerOptions } = fields;
  if (parallelToolCalls !== undefined && typeof parallelToolCalls !== 'boolean')
    fail('parallelToolCalls', 'must be a boolean');
  if (
    stopSequences !== undefined &&
    (!Array.isArray(stopSequences) || stopSequences.some((s) => typeof s !== 'string'))
  )
    fail('stopSequences', 'must be an array of strings');
  for (const [key, value, max] of [
    ['temperature', temperature, 2],
    ['topP', topP, 1],
  ] as const)
    if (value !== undefined && (typeof value !== 'number' || !(value >= 0 && value <= max)))
      fail(key, `must be a number from 0 to ${max}`);
  if (providerOptions !== undefined) {
    if (!isObject(providerOptions))
      fail('providerOptions', 'must be an object of { [provider]: { ...fields } }');
    for (const [name, value] of Object.entries(providerOptions as object))
      if (!isObject(value)) fail(`providerOptions.${name}`, 'must be an object of request fields');
  }
}

type Fail = (field: string, message: string) => never;

function checkThinking(thinking: unknown, fail: Fail): void {
  if (thinking === undefined || thinking === false) return;
  if (!isObject(thinking)) fail('thinking', 'must be false or { budgetTokens?, effort? }');
  const { budgetTokens, effort } = thinking as { budgetTokens?: unknown; effort?: unknown };
  if (budgetTokens !== undefined && (!Number.isSafeInteger(budgetTokens) || (budgetTokens as number) < 1))
    fail('thinking.budgetTokens', `must be a whole number of tokens ≥ 1, got ${String(budgetTokens)}`);
  if (effort !== undefined && !efforts.has(effort as string))
    fail('thinking.effort', `must be one of ${[...efforts].join(', ')}, got ${String(effort)}`);
}

function checkCache(cache: unknown, fail: Fail): void {
  if (cache === undefined || cache === false) return;
  if (!isObject(cache)) fail('cache', 'must be false or { system?, tools?, messages?, ttl?, key? }');
  const { system, tools, messages, ttl, key } = cache as { [field: string]: unknown };
  for (const [name, value] of [
    ['system', system],
    ['tools', tools],
  ] as const)
    if (value !== undefined && typeof value !== 'boolean') fail(`cache.${name}`, 'must be a boolean');
  const indices =
    Array.isArray(messages) && messages.every((index) => Number.isSafeInteger(index) && index >= 0);
  if (messages !== undefined && messages !== 'none' && messages !== 'last' && !indices)
    fail('cache.messages', "must be 'none', 'last' or an array of message indices");
  if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') fail('cache.ttl', "must be '5m' or '1h'");
  if (key !== undefined && (typeof key !== 'string' || key === ''))
    fail('cache.key', 'must be a non-empty string');
}

/**
 * An adapter's settings for one call: its own beneath the request's, field by field, checked. A
 * bad value (set on the adapter, the run or the step) is a `ConfigurationError` before any request.
 */
export function callSettings(
  adapter: ModelSettings | undefined,
  request: ModelSettings | undefined,
): ModelSettings {
  const settings = mergeSettings(adapter, request);
  checkModelSettings('settings', settings);
  return settings;
}
