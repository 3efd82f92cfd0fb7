/** A JSON value as it crosses the model boundary. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Plain text, from the model or the user. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/**
 * A tool call the model asked for.
 *
 * `input` is the parsed argument object. When a provider delivered argument text that is not valid
 * JSON (OpenAI's `arguments` is a string), the adapter leaves `input` undefined and keeps the text in
 * `inputText`: the loop answers the model with a labeled error and executes nothing.
 */
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  inputText?: string;
}

/** What the model is shown for one tool call. */
export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  content: string;
  isError: boolean;
}

/** Content the assistant may produce. */
export type AssistantBlock = TextBlock | ToolUseBlock;
/** Content the user side (including tool results) may send. */
export type UserBlock = TextBlock | ToolResultBlock;

export interface UserMessage {
  role: 'user';
  content: UserBlock[];
}
export interface AssistantMessage {
  role: 'assistant';
  content: AssistantBlock[];
}
/** One turn of the conversation the loop re-sends on every call. */
export type Message = UserMessage | AssistantMessage;

/** The text of a list of blocks, joined with newlines. */
export function textOf(blocks: readonly (AssistantBlock | UserBlock)[]): string {
  let text = '';
  for (const block of blocks) {
    if (block.type !== 'text') continue;
    text = text === '' ? block.text : `${text}\n${block.text}`;
  }
  return text;
}

/** The tool calls in an assistant turn, in order. */
export function toolCallsOf(blocks: readonly AssistantBlock[]): ToolUseBlock[] {
  return blocks.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}
