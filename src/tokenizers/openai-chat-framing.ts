import type { AssistantBlock, Message, UserBlock } from '../model/content.js';
import type { ToolDefinition } from '../model/model.js';
import { countBlockDefault, type TokenEstimator } from '../tokens/token-estimator.js';
import { formatOpenAIFunctionDefinitions } from './openai-function-definitions.js';

/**
 * The tokens OpenAI Chat Completions adds around what a request says, as the OpenAI cookbook
 * ("How to count tokens with tiktoken") and openai-chat-tokens measured them against reported
 * `prompt_tokens`. Each message is `<|start|>{role}\n{content}<|end|>\n`: three tokens plus its
 * role; every reply is primed with `<|start|>assistant<|message|>`: three more.
 */
export const openAIChatFramingTokens = {
  /** Around every message, besides its role and content. */
  perMessage: 3,
  /** Priming the reply, once a request. */
  perRequest: 3,
  /** Around the `namespace functions` block when tools are sent. */
  perToolBlock: 9,
  /** Taken off when a system message exists and tools are sent (they share one system turn). */
  systemWithTools: -4,
  /**
   * Per tool call in an assistant message, besides its name and arguments: the cookbook-era
   * `function_call` figure. Not measured for `tool_calls`; no recorded count here checks it.
   */
  perToolCall: 3,
} as const;

/**
 * One reins message as the Chat Completions messages the OpenAI adapter sends for it
 * (`toOpenAIMessages`): each tool result is a `tool` message, its attachments one `user` message,
 * the remaining text and media one `user` message; an assistant turn is one message with its joined
 * text and its tool calls. Blocks Chat Completions does not take back (thinking, provider blocks)
 * are sized as the default sizes them, so a transcript from another provider is not undercounted.
 */
export function chatMessageTokens(estimator: TokenEstimator, message: Message): number {
  return message.role === 'user'
    ? userMessageTokens(estimator, message.content)
    : assistantMessageTokens(estimator, message.content);
}

function framed(estimator: TokenEstimator, role: string, contentTokens: number): number {
  return openAIChatFramingTokens.perMessage + estimator.countText(role) + contentTokens;
}

function userMessageTokens(estimator: TokenEstimator, blocks: readonly UserBlock[]): number {
  let tokens = 0;
  let text = '';
  let media = 0;
  let hasUserPart = false;
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      // A `tool` message; its `tool_call_id` is not known to cost anything (not measured).
      tokens += framed(estimator, 'tool', estimator.countText(block.content));
      const attachments = block.attachments ?? [];
      if (attachments.length > 0) {
        hasUserPart = true;
        text += `Attachments of tool result ${block.toolUseId}:`;
        for (const attachment of attachments) media += countBlockDefault(estimator, attachment);
      }
    } else if (block.type === 'text') {
      hasUserPart = true;
      text += block.text;
    } else {
      hasUserPart = true;
      media += countBlockDefault(estimator, block);
    }
  }
  if (hasUserPart) tokens += framed(estimator, 'user', estimator.countText(text) + media);
  return tokens;
}

function assistantMessageTokens(estimator: TokenEstimator, blocks: readonly AssistantBlock[]): number {
  let text = '';
  let content = 0;
  let sent = false;
  for (const block of blocks) {
    if (block.type === 'text') {
      text += block.text;
      sent = true;
    } else if (block.type === 'tool_use') {
      const args = block.inputText ?? JSON.stringify(block.input ?? {});
      content +=
        estimator.countText(block.name) + estimator.countText(args) + openAIChatFramingTokens.perToolCall;
      sent = true;
    } else content += countBlockDefault(estimator, block);
  }
  if (!sent) return content;
  return framed(estimator, 'assistant', estimator.countText(text) + content);
}

/** The function tools as the prompt carries them, with the block's own overhead. */
export function chatToolsTokens(estimator: TokenEstimator, tools: readonly ToolDefinition[]): number {
  if (tools.length === 0) return 0;
  return estimator.countText(formatOpenAIFunctionDefinitions(tools)) + openAIChatFramingTokens.perToolBlock;
}

/**
 * What a request costs beyond its parts: the reply priming, the system message's frame and, when
 * tools are sent, the newline the system message gains and the tokens the shared turn saves.
 * `tool_choice: 'none'` (+1) and a forced tool (+4 and its name) are not counted: the estimator is
 * not shown the choice, so such a request is undercounted by at most a few tokens.
 */
export function chatFramingTokens(
  estimator: TokenEstimator,
  request: { system: string; tools: readonly ToolDefinition[] },
): number {
  let tokens = openAIChatFramingTokens.perRequest;
  if (request.system === '') return tokens;
  tokens += openAIChatFramingTokens.perMessage + estimator.countText('system');
  if (request.tools.length > 0)
    tokens +=
      estimator.countText(`${request.system}\n`) -
      estimator.countText(request.system) +
      openAIChatFramingTokens.systemWithTools;
  return tokens;
}
