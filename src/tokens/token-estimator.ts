import type { AssistantBlock, MediaBlock, Message, UserBlock } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';

/**
 * Sizes prompt parts in tokens before a call, so the loop can refuse a call it cannot afford.
 * After a call the provider's reported usage replaces the estimate.
 */
export interface TokenEstimator {
  readonly name: string;
  /** Tokens a piece of text costs. */
  countText(text: string): number;
  /** Tokens one content block costs. Defaults to {@link countBlockDefault}. */
  countBlock?(block: AssistantBlock | UserBlock): number;
  /** Tokens the tool definitions cost. Defaults to the text of their JSON. */
  countTools?(tools: readonly ToolDefinition[]): number;
  /**
   * Tokens one message costs with the provider's framing around it (OpenAI Chat Completions: three
   * tokens a message plus its role). Defaults to the sum of its blocks, with no framing.
   */
  countMessage?(message: Message): number;
  /**
   * Tokens a request costs beyond its system prompt, tools and messages: the provider's fixed framing
   * (OpenAI's reply priming and system-message wrapper, Anthropic's tool-use system prompt). Given
   * the system prompt and tools, not the messages, so it is sized once per (system, tools) pair.
   * Defaults to none.
   */
  countFraming?(request: { system: string; tools: readonly ToolDefinition[] }): number;
}

/** The default sizing of a block: its text, a tool call's name and JSON input, a result's content. */
export function countBlockDefault(estimator: TokenEstimator, block: AssistantBlock | UserBlock): number {
  switch (block.type) {
    case 'text':
      return estimator.countText(block.text);
    case 'tool_use':
      return estimator.countText(block.name + (block.inputText ?? JSON.stringify(block.input) ?? ''));
    case 'tool_result':
      return (
        estimator.countText(block.content) +
        (block.attachments ?? []).reduce((sum, media) => sum + mediaTokens(media), 0)
      );
    case 'thinking':
      return estimator.countText(block.thinking);
    case 'redacted_thinking':
      return estimator.countText(block.data);
    case 'provider':
      return estimator.countText(JSON.stringify(block.raw));
    case 'image':
    case 'document':
      return mediaTokens(block);
  }
}

/**
 * What an image or a document costs before the provider says. Images: a fixed allowance
 * (Anthropic sizes them at about width×height/750, at most ~1,600 tokens at full size; the pixels
 * are not known from the block). Documents given inline are sized by their bytes, so a large one
 * cannot slip past the context budget: plain text at four characters a token, a PDF at one token
 * per 25 bytes (~2,000 tokens for a typical 50 KB page, text and page image together), never less
 * than the allowance. A URL source gets the allowance. The provider's count replaces the estimate.
 */
export const mediaTokenAllowance = { image: 1_600, document: 3_000 } as const;

function mediaTokens(block: MediaBlock): number {
  if (block.type === 'image') return mediaTokenAllowance.image;
  const source = block.source;
  if (source.type !== 'base64' || typeof source.data !== 'string') return mediaTokenAllowance.document;
  const bytes = Math.floor((source.data.length * 3) / 4);
  const sized = source.mediaType === 'text/plain' ? Math.ceil(bytes / 4) : Math.ceil(bytes / 25);
  return Math.max(mediaTokenAllowance.document, sized);
}

/**
 * About four characters a token: the usual rule of thumb for English and JSON with the Claude and
 * GPT tokenizers. Good enough to stop a call before it is sent; the provider's count is the truth.
 */
export const approxTokenEstimator: TokenEstimator = {
  name: 'chars/4',
  countText: (text) => Math.ceil(text.length / 4),
};

/**
 * Counts prefills incrementally: each message is sized once and remembered by identity, so sizing
 * the next call costs the new messages, not the whole transcript (a 10,000-step run stays linear).
 */
export class PrefillCounter {
  readonly estimator: TokenEstimator;
  readonly #byMessage = new WeakMap<Message, number>();
  #toolsKey: readonly ToolDefinition[] | undefined;
  #toolsTokens = 0;
  #systemKey: string | undefined;
  #systemTokens = 0;
  #framingSystem: string | undefined;
  #framingTools: readonly ToolDefinition[] | undefined;
  #framingTokens = 0;
  #lastMessages: readonly Message[] | undefined;
  #lastLength = 0;
  #lastTail: Message | undefined;
  #lastSum = 0;

  constructor(estimator: TokenEstimator) {
    this.estimator = estimator;
  }

  block(block: AssistantBlock | UserBlock): number {
    return this.estimator.countBlock
      ? this.estimator.countBlock(block)
      : countBlockDefault(this.estimator, block);
  }

  message(message: Message): number {
    const cached = this.#byMessage.get(message);
    if (cached !== undefined) return cached;
    const tokens = this.fresh(message);
    this.#byMessage.set(message, tokens);
    return tokens;
  }

  /**
   * Tokens of a message made only to be sized (a block wrapped to ask what it would cost): counted
   * the same way, not remembered. Remembering a throwaway object costs a weak-map entry that
   * nothing reads again and that every garbage collection has to visit.
   */
  fresh(message: Message): number {
    if (this.estimator.countMessage) return this.estimator.countMessage(message);
    let tokens = 0;
    for (const block of message.content) tokens += this.block(block);
    return tokens;
  }

  system(system: string): number {
    if (system !== this.#systemKey) {
      this.#systemKey = system;
      this.#systemTokens = system === '' ? 0 : this.estimator.countText(system);
    }
    return this.#systemTokens;
  }

  tools(tools: readonly ToolDefinition[]): number {
    if (tools !== this.#toolsKey) {
      this.#toolsKey = tools;
      this.#toolsTokens =
        tools.length === 0
          ? 0
          : this.estimator.countTools
            ? this.estimator.countTools(tools)
            : this.estimator.countText(JSON.stringify(tools));
    }
    return this.#toolsTokens;
  }

  /**
   * Tokens of a message list. When called again with the same array grown at the end (as the loop
   * grows its transcript), only the new messages are counted.
   */
  messages(messages: readonly Message[]): number {
    let start = 0;
    let sum = 0;
    const length = this.#lastLength;
    if (
      messages === this.#lastMessages &&
      messages.length >= length &&
      (length === 0 || messages[length - 1] === this.#lastTail)
    ) {
      start = length;
      sum = this.#lastSum;
    }
    for (let i = start; i < messages.length; i++) sum += this.message(messages[i] as Message);
    this.#lastMessages = messages;
    this.#lastLength = messages.length;
    this.#lastTail = messages[messages.length - 1];
    this.#lastSum = sum;
    return sum;
  }

  /** The provider's fixed framing of a request with this system prompt and these tools. */
  framing(system: string, tools: readonly ToolDefinition[]): number {
    const countFraming = this.estimator.countFraming;
    if (!countFraming) return 0;
    if (system !== this.#framingSystem || tools !== this.#framingTools) {
      this.#framingSystem = system;
      this.#framingTools = tools;
      this.#framingTokens = countFraming.call(this.estimator, { system, tools });
    }
    return this.#framingTokens;
  }

  /** The whole prefill of a request: system, tools, every message and the provider's framing. */
  request(request: {
    system: string;
    tools: readonly ToolDefinition[];
    messages: readonly Message[];
  }): number {
    return (
      this.system(request.system) +
      this.tools(request.tools) +
      this.messages(request.messages) +
      this.framing(request.system, request.tools)
    );
  }
}
