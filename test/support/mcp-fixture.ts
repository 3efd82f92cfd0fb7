import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { McpServerSource } from '../../src/mcp/index.js';
import type { Message, ToolResultBlock } from '../../src/model/content.js';

/** The SDK-built fixture server (`test/fixtures/mcp-server.mjs`). */
export const fixtureServer = new URL('../fixtures/mcp-server.mjs', import.meta.url).pathname;

/** How to reach a running fixture, and how to end it from outside. */
export interface RunningFixture {
  source: McpServerSource;
  /** Kills an HTTP fixture's process and waits for it to exit (a stdio one is the client's: kill it by its pid). */
  stop(): Promise<void>;
}

/** Starts the fixture for a transport: stdio is started by the client itself; HTTP here, on loopback. */
export async function startFixture(
  transport: 'stdio' | 'http',
  env: Record<string, string> = {},
): Promise<RunningFixture> {
  if (transport === 'stdio')
    return {
      source: { command: process.execPath, args: [fixtureServer], env, stderr: 'ignore' },
      stop: () => Promise.resolve(),
    };
  const child: ChildProcess = spawn(process.execPath, [fixtureServer, '--http'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
    lines.on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
  });
  return {
    source: { url: `http://127.0.0.1:${port}/mcp` },
    stop: () => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      return exited;
    },
  };
}

/** The tool results the model was shown, in order. */
export function toolResults(messages: readonly Message[]): ToolResultBlock[] {
  return messages.flatMap((message) =>
    typeof message.content === 'string'
      ? []
      : message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result'),
  );
}
