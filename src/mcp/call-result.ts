import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { MediaBlock } from '../model/content.js';
import { withAttachments } from '../tools/attachments.js';
import { ToolError } from '../tools/tool-error.js';

type ContentBlock = CallToolResult['content'][number];

/**
 * A `tools/call` result as a reins tool's return value. `structuredContent` is the value when the
 * server sent it (the tool's output schema checks it at the boundary); otherwise the text of the
 * content blocks. Images travel as attachments; what reins cannot show (audio, binary resources)
 * is named in the text, never dropped silently. An `isError` result is thrown as a {@link ToolError}
 * whose message is the server's text: a recoverable failure the model can act on.
 *
 * @example
 * outputOfCallResult({ content: [{ type: 'text', text: 'Created ticket 7.' }] }, 'create_ticket', false);
 * // 'Created ticket 7.'
 */
export function outputOfCallResult(result: CallToolResult, tool: string, hasOutputSchema: boolean): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  const texts: string[] = [];
  const attachments: MediaBlock[] = [];
  for (const block of content) {
    const shown = shownBlock(block);
    if (typeof shown === 'string') texts.push(shown);
    else attachments.push(shown);
  }
  if (result.isError === true) {
    const message = texts.join('\n\n').trim();
    throw new ToolError(message === '' ? `${tool} failed and the server gave no reason.` : message, {
      code: 'mcp_tool_error',
      details: { tool, isError: true },
    });
  }
  const structured = result.structuredContent;
  const value = structured !== undefined || hasOutputSchema ? structured : texts.join('\n\n');
  return attachments.length === 0 ? value : withAttachments(value, attachments);
}

function shownBlock(block: ContentBlock): string | MediaBlock {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return { type: 'image', source: { type: 'base64', mediaType: block.mimeType, data: block.data } };
    case 'audio':
      return `[audio (${block.mimeType}) not shown]`;
    case 'resource_link':
      return `[resource ${block.name}: ${block.uri}${block.description ? ` — ${block.description}` : ''}]`;
    case 'resource': {
      const resource = block.resource;
      return 'text' in resource && typeof resource.text === 'string'
        ? resource.text
        : `[binary resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''} not shown]`;
    }
    default:
      return `[${String((block as { type?: unknown }).type)} content not shown]`;
  }
}
