/** One Server-Sent Event as the stream carried it. */
export interface ServerSentEvent {
  /** `message` when the block named no event type. */
  event: string;
  data: string;
  /** The block's `id:`, when it had one. */
  id: string | undefined;
}

/**
 * Reads a `text/event-stream` body, block by block (the WHATWG parsing rules: `data:` lines joined
 * by newlines, comments skipped, a block without data dispatches nothing). `fetch` can send an
 * `Authorization` header where `EventSource` cannot, so the viewer reads its streams this way.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let match = /\r\n|\r|\n/.exec(buffer);
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      while (match && !(match[0] === '\r' && match.index === buffer.length - 1)) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
          id = undefined;
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          let value = colon === -1 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'data') data.push(value);
          else if (field === 'event') event = value;
          else if (field === 'id' && !value.includes('\0')) id = value;
        }
        match = /\r\n|\r|\n/.exec(buffer);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
