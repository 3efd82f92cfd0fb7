import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The recorded provider streams under test/fixtures/provider-streams (see its README for sources
 * and licenses), read into events and into the bytes a server would send.
 */
export const streamsRoot = new URL('../fixtures/provider-streams/', import.meta.url).pathname;

/** One recorded stream: its events as parsed JSON and the SSE bytes to replay. */
export interface RecordedStream {
  /** The file (and the message's position when a file holds several) it came from. */
  name: string;
  events: { type?: string; [key: string]: unknown }[];
  /** The stream as the provider sent it, byte for byte where the file is SSE. */
  sse: string;
  /** Lines of the recording that are not JSON (kept in `sse`, left out of `events`). */
  malformed?: string[];
}

/** Parses what parses; lines that do not are reported, not thrown. */
function parsedLines(lines: string[]): Pick<RecordedStream, 'events' | 'malformed'> {
  const events: RecordedStream['events'] = [];
  const malformed: string[] = [];
  for (const line of lines) {
    try {
      events.push(JSON.parse(line));
    } catch {
      malformed.push(line);
    }
  }
  return malformed.length > 0 ? { events, malformed } : { events };
}

function files(folder: string, suffix: string): string[] {
  return readdirSync(join(streamsRoot, folder))
    .filter((file) => file.endsWith(suffix))
    .sort()
    .map((file) => join(folder, file));
}

const read = (file: string) => readFileSync(join(streamsRoot, file), 'utf8');

/** `data:` payloads of an SSE text, in order, with their `event:` names (the `[DONE]` marker dropped). */
export function parseSse(text: string): { event?: string; data: string }[] {
  const out: { event?: string; data: string }[] = [];
  for (const frame of text.replace(/\r\n/g, '\n').split(/\n\n+/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) continue;
    const joined = data.join('\n');
    if (joined.trim() === '[DONE]') continue;
    out.push(event === undefined ? { data: joined } : { event, data: joined });
  }
  return out;
}

/** A file of one JSON event per line, as `{ events, lines }`. */
function jsonLines(file: string): string[] {
  return read(file)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** Anthropic lines split into messages: a message ends at `message_stop`, or at the file's end. */
function splitAtMessageStop(lines: string[]): string[][] {
  const messages: string[][] = [];
  let current: string[] = [];
  for (const line of lines) {
    current.push(line);
    if ((JSON.parse(line) as { type?: string }).type === 'message_stop') {
      messages.push(current);
      current = [];
    }
  }
  if (current.length > 0) messages.push(current);
  return messages;
}

const anthropicSse = (lines: string[]) =>
  lines.map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`).join('');

/** Every recorded Anthropic Messages stream (vercel chunks, split per message; the SDK's SSE files). */
export function anthropicStreams(): RecordedStream[] {
  const out: RecordedStream[] = [];
  for (const file of files('vercel/anthropic', '.chunks.txt')) {
    const messages = splitAtMessageStop(jsonLines(file));
    messages.forEach((lines, at) => {
      out.push({
        name: messages.length === 1 ? file : `${file}#${at + 1}`,
        events: lines.map((line) => JSON.parse(line)),
        sse: anthropicSse(lines),
      });
    });
  }
  for (const file of [
    ...files('anthropic-sdk/tests/lib/fixtures', '.txt'),
    ...files('anthropic-sdk/tests/fixtures/fable-fallback', '.sse'),
  ]) {
    const sse = read(file);
    out.push({ name: file, events: parseSse(sse).map((frame) => JSON.parse(frame.data)), sse });
  }
  return out;
}

/** The string literals of a Jest snapshot file, by snapshot name. */
function jestSnapshots(file: string): { name: string; value: string }[] {
  const text = read(file);
  const out: { name: string; value: string }[] = [];
  const pattern = /exports\[`((?:[^`\\]|\\.)*)`\] = `((?:[^`\\]|\\.)*)`;/gs;
  for (const match of text.matchAll(pattern)) {
    const body = (match[2] as string).replace(/\\(.)/gs, '$1');
    // Jest prints a string snapshot between double quotes.
    const value = body.trim().replace(/^"/, '').replace(/"$/, '');
    out.push({ name: (match[1] as string).replace(/\\(.)/gs, '$1'), value });
  }
  return out;
}

const dataSse = (lines: string[]) => `${lines.map((line) => `data: ${line}\n\n`).join('')}data: [DONE]\n\n`;

/** Every recorded OpenAI Chat Completions stream (vercel openai and openai-compatible, openai-node snapshots). */
export function openAIChatStreams(): RecordedStream[] {
  const out: RecordedStream[] = [];
  for (const file of [
    ...files('vercel/openai-chat', '.chunks.txt'),
    ...files('vercel/openai-compatible-chat', '.chunks.txt'),
  ]) {
    const lines = jsonLines(file);
    out.push({ name: file, events: lines.map((line) => JSON.parse(line)), sse: dataSse(lines) });
  }
  for (const file of files('vercel/openai-compatible-chat', '.sse')) {
    const sse = read(file);
    out.push({ name: file, events: parseSse(sse).map((frame) => JSON.parse(frame.data)), sse });
  }
  for (const file of ['openai-node/ChatCompletionStream.test.ts.snap', 'openai-node/parser.test.ts.snap']) {
    for (const snapshot of jestSnapshots(file)) {
      const frames = parseSse(snapshot.value);
      if (frames.length === 0) continue;
      const events = frames.map((frame) => JSON.parse(frame.data));
      if (!events.every((event) => event.object === 'chat.completion.chunk')) continue;
      out.push({ name: `${file} › ${snapshot.name}`, events, sse: snapshot.value });
    }
  }
  return out;
}

const responsesSse = (lines: string[]) =>
  lines
    .map((line) => `event: ${/"type":"([^"]+)"/.exec(line)?.[1] ?? 'message'}\ndata: ${line}\n\n`)
    .join('');

/** Every recorded OpenAI Responses stream (vercel responses chunks, openai-node snapshots). */
export function openAIResponsesStreams(): RecordedStream[] {
  const out: RecordedStream[] = [];
  for (const file of files('vercel/openai-responses', '.chunks.txt')) {
    const lines = jsonLines(file);
    out.push({ name: file, ...parsedLines(lines), sse: responsesSse(lines) });
  }
  for (const snapshot of jestSnapshots('openai-node/ResponseStream.test.ts.snap')) {
    const frames = parseSse(snapshot.value);
    if (frames.length === 0) continue;
    out.push({
      name: `openai-node/ResponseStream.test.ts.snap › ${snapshot.name}`,
      events: frames.map((frame) => JSON.parse(frame.data)),
      sse: snapshot.value,
    });
  }
  return out;
}

/** Events as an async iterable, the way an SDK stream hands them over. */
export async function* eventsOf<T>(events: readonly T[]): AsyncGenerator<T> {
  for (const event of events) yield structuredClone(event);
}
