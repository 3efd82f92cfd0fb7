import { describe, expect, it } from 'vitest';
import { splitAttachments } from '../tools/attachments.js';
import { isToolError } from '../tools/tool-error.js';
import { outputOfCallResult } from './call-result.js';

describe('outputOfCallResult', () => {
  it('joins text blocks and names what it cannot show', () => {
    const output = outputOfCallResult(
      {
        content: [
          { type: 'text', text: 'first' },
          { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
          { type: 'resource_link', name: 'report', uri: 'file:///r.pdf' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'embedded' } },
        ],
      },
      'tool',
      false,
    );
    expect(output).toBe(
      'first\n\n[audio (audio/wav) not shown]\n\n[resource report: file:///r.pdf]\n\nembedded',
    );
  });

  it('prefers structuredContent, and images travel as attachments', () => {
    const output = outputOfCallResult(
      {
        content: [
          { type: 'text', text: '{"a":1}' },
          { type: 'image', mimeType: 'image/png', data: 'iVBO' },
        ],
        structuredContent: { a: 1 },
      },
      'tool',
      true,
    );
    expect(splitAttachments(output)).toEqual({
      value: { a: 1 },
      attachments: [{ type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBO' } }],
    });
  });

  it('an isError result throws a ToolError with the server’s text for the model', () => {
    let thrown: unknown;
    try {
      outputOfCallResult(
        { isError: true, content: [{ type: 'text', text: 'title is empty' }] },
        'create_ticket',
        false,
      );
    } catch (error) {
      thrown = error;
    }
    expect(isToolError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'mcp_tool_error', message: 'title is empty' });
    expect(() => outputOfCallResult({ isError: true, content: [] }, 'create_ticket', false)).toThrow(
      'create_ticket failed and the server gave no reason.',
    );
  });
});
