/**
 * The `provider` tag of a provider block the AI SDK adapter makes: the provider key with an
 * `ai-sdk:` prefix (`ai-sdk:anthropic`). Its `raw` is an AI SDK prompt part, not the provider's wire
 * block, so no native adapter may claim it (the native Anthropic adapter sends `provider: 'anthropic'`
 * blocks verbatim); only an AI SDK model of the same provider key takes it back.
 */
export function providerBlockTag(providerKey: string): string {
  return `ai-sdk:${providerKey}`;
}

/**
 * The `provider` tag of thinking and redacted thinking the AI SDK adapter makes. Anthropic's are
 * `anthropic`: the AI SDK passes the genuine signature and redacted data through, and that is all
 * the native Anthropic adapter sends of them. Every other provider's carry AI SDK metadata that
 * a native adapter would misread (the native Responses adapter sends an `openai` block's
 * `providerData` as an input item), so they are tagged like provider blocks.
 */
export function thinkingBlockTag(providerKey: string): string {
  return providerKey === 'anthropic' ? 'anthropic' : providerBlockTag(providerKey);
}
