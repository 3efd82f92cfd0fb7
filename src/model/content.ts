/** A JSON value as it crosses the model boundary. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Plain text, from the model or the user. `citations` are the provider's citation objects for this
 * span (Anthropic splits cited text into several blocks), kept as sent so they round-trip.
 */
export interface TextBlock {
  type: 'text';
  text: string;
  citations?: JsonValue[];
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
  /** Provider fields that must go back with the call (Anthropic's `caller`), kept as sent. */
  providerData?: { [key: string]: JsonValue };
}

/**
 * The model's visible reasoning. `signature` (Anthropic) or `providerData` (an OpenAI Responses
 * reasoning item: id, encrypted content) must go back unchanged with the next request of the same
 * provider; `provider` names who produced it, and an adapter for another provider leaves it out.
 */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature?: string;
  provider?: string;
  providerData?: JsonValue;
}

/** Reasoning the provider encrypted; only its opaque `data` goes back. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
  provider?: string;
}

/**
 * A block reins does not interpret (server tool use and results, MCP calls, compaction, anything
 * new), kept exactly as the provider sent it and sent back to that provider unchanged. `kind` is
 * the provider's block type, for display.
 */
export interface ProviderBlock {
  type: 'provider';
  provider: string;
  kind: string;
  raw: { [key: string]: JsonValue };
}

/** Where image or document bytes come from. */
export type MediaSource =
  | { type: 'base64'; mediaType: string; data: string }
  | { type: 'url'; url: string; mediaType?: string };

/** An image in a user message, a tool result or (rarely) the model's output. */
export interface ImageBlock {
  type: 'image';
  source: MediaSource;
}

/** A document (a PDF, or plain text) in a user message or a tool result. */
export interface DocumentBlock {
  type: 'document';
  source: MediaSource;
  title?: string;
}

/** An image or a document. */
export type MediaBlock = ImageBlock | DocumentBlock;

/**
 * What the model is shown for one tool call. `content` is the text; `attachments` carry images and
 * documents a tool returned (a screenshot, a PDF page), sent where the provider accepts them.
 */
export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  content: string;
  isError: boolean;
  attachments?: MediaBlock[];
}

/** Content the assistant may produce. */
export type AssistantBlock =
  | TextBlock
  | ToolUseBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ProviderBlock
  | ImageBlock;
/** Content the user side (including tool results) may send. */
export type UserBlock = TextBlock | ToolResultBlock | ImageBlock | DocumentBlock;

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

/** Block types an assistant message may hold. */
export const assistantBlockTypes: ReadonlySet<string> = new Set([
  'text',
  'tool_use',
  'thinking',
  'redacted_thinking',
  'provider',
  'image',
]);
/** Block types a user message may hold. */
export const userBlockTypes: ReadonlySet<string> = new Set(['text', 'tool_result', 'image', 'document']);

/**
 * The text of a list of blocks, joined with nothing: a provider that splits one answer into several
 * text blocks (citations) splits it mid-sentence, so the pieces read as one.
 */
export function textOf(blocks: readonly (AssistantBlock | UserBlock)[]): string {
  let text = '';
  for (const block of blocks) if (block.type === 'text') text += block.text;
  return text;
}

/**
 * Provider block kinds that hold no outside data: the model's own server-tool calls (their results
 * come as blocks of their own), the code-execution container handle, a fallback notice, the AI
 * SDK's per-turn metadata part. Every other kind, known or new, counts as data.
 */
const nonDataKinds: ReadonlySet<string> = new Set([
  'container',
  'fallback',
  'server_tool_use',
  'mcp_tool_use',
  'custom',
  'tool-call',
]);

/**
 * Whether an assistant turn carries data from outside (a server-side tool's result: web search,
 * web fetch, code execution, MCP, file search, anything a provider ran, and any block kind reins
 * does not know): such content is untrusted exactly like a client tool's result.
 */
export function carriesExternalData(blocks: readonly AssistantBlock[]): boolean {
  // A loop, not `some`: read for every answer, and most hold no provider block.
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as AssistantBlock;
    if (block.type === 'provider' && !nonDataKinds.has(block.kind)) return true;
  }
  return false;
}

/** The tool calls in an assistant turn, in order. */
export function toolCallsOf(blocks: readonly AssistantBlock[]): ToolUseBlock[] {
  // Not `filter`: its result is grown from empty (17 slots reserved); most turns hold one call.
  let calls: ToolUseBlock[] | undefined;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as AssistantBlock;
    if (block.type !== 'tool_use') continue;
    if (calls === undefined) calls = [block];
    else calls.push(block);
  }
  return calls ?? [];
}
