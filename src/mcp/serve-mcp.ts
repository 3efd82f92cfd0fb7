import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { type Clock, systemClock } from '../time/clock.js';
import { splitAttachments } from '../tools/attachments.js';
import type { Actor, AnyTool, ToolContext } from '../tools/define-tool.js';
import { isToolError } from '../tools/tool-error.js';
import { loadMcpSdk } from './load-sdk.js';
import { annotationsOfEffect } from './mcp-effect.js';

/** Options for {@link createMcpServer} and the `serveMcp*` functions. */
export interface ServeMcpOptions {
  /** The server's name, as hosts show it. */
  name: string;
  version: string;
  /** Told to the host at initialization: how to use these tools. */
  instructions?: string;
  /** Whom the calls act for: tools' scopes are checked against it, and `execute` receives it. @default none */
  actor?: Actor;
  /** Passed to `execute` as `runId`. @default 'mcp' */
  runId?: string;
  /** Times each tool's `timeoutMs`. @default the system clock */
  clock?: Clock;
}

/**
 * An MCP server (the SDK's low-level `Server`, not yet connected) offering reins tools: each with
 * its `inputJsonSchema`, annotations from its `effect` (`read` is read-only, `destructive` is
 * destructive), its input, scopes, preconditions and output checks enforced as in a run, and every
 * failure an `isError` result holding only the model-facing message, never a stack or detail.
 * Tools that hand calls to a person (`autonomy` 'draft' or 'never') cannot be served: an MCP host
 * has no such hand-off. A `confirm` tool relies on the host asking its user.
 *
 * @example
 * const server = await createMcpServer([getOrder], { name: 'orders', version: '1.0.0' });
 */
export async function createMcpServer(tools: readonly AnyTool[], options: ServeMcpOptions): Promise<Server> {
  const byName = servedTools(tools);
  const sdk = await loadMcpSdk('createMcpServer (reins/mcp)');
  const { ListToolsRequestSchema, CallToolRequestSchema } = sdk.types;
  const server = new sdk.server.Server(
    { name: options.name, version: options.version },
    {
      capabilities: { tools: {} },
      ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    },
  );
  const listed: McpToolInfo[] = [...byName.values()].map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputJsonSchema as McpToolInfo['inputSchema'],
    annotations: annotationsOfEffect(tool.effect),
  }));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool)
      throw new sdk.types.McpError(sdk.types.ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callServed(
      tool,
      request.params.arguments ?? {},
      {
        signal: extra.signal,
        actor: options.actor,
        runId: options.runId ?? 'mcp',
        step: 0,
        callId: String(extra.requestId),
      },
      options.clock ?? systemClock,
    );
  });
  return server;
}

function servedTools(tools: readonly AnyTool[]): Map<string, AnyTool> {
  const byName = new Map<string, AnyTool>();
  for (const tool of tools) {
    if (tool.autonomy === 'draft' || tool.autonomy === 'never')
      throw new ConfigurationError(
        `serveMcp tool ${tool.name}.autonomy`,
        `'${tool.autonomy}' hands calls to a person, which an MCP host cannot do; do not serve this tool`,
      );
    if (byName.has(tool.name))
      throw new ConfigurationError('serveMcp tools', `two tools are named "${tool.name}"`);
    byName.set(tool.name, tool);
  }
  return byName;
}

const failed = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** One call, checked as the run's dispatcher would: input, scopes, preconditions, execution, output. */
async function callServed(
  tool: AnyTool,
  input: unknown,
  context: ToolContext,
  clock: Clock,
): Promise<CallToolResult> {
  try {
    const validation = await tool.validate(input);
    if (!validation.ok)
      return failed(
        `The input to ${tool.name} is invalid: ${validation.issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}. Fix these fields and call again.`,
      );
    const missing = tool.scopes.filter((scope) => !(context.actor?.scopes ?? []).includes(scope));
    if (missing.length > 0)
      return failed(`${tool.name} is not allowed for this user (missing ${missing.join(', ')}).`);
    if (tool.hasPreconditions !== false) {
      const problems = await tool.preconditions(validation.value, context);
      if (problems.length > 0)
        return failed(problems.map((problem) => `${problem.field}: ${problem.message}`).join('\n'));
    }
    const returned = await withTimeout(tool, validation.value, context, clock);
    if (returned === timedOut)
      return failed(`${tool.name} did not finish within ${tool.timeoutMs} ms. Try a narrower request.`);
    const { value, attachments } = splitAttachments(returned);
    const problems = await tool.checkOutput(value);
    if (problems.length > 0)
      return failed(`${tool.name} returned data that failed its checks, so it is not shown.`);
    return resultOf(value, attachments);
  } catch (thrown) {
    // A ToolError's message is written for the model; anything else is internal and stays here.
    if (isToolError(thrown)) return failed(thrown.message);
    return failed(`${tool.name} failed with an internal error. Retrying the same call is unlikely to help.`);
  }
}

const timedOut = Symbol('timed out');

/** Runs the tool under its own `timeoutMs` (the host's cancellation arrives on the request's signal). */
async function withTimeout(
  tool: AnyTool,
  input: unknown,
  context: ToolContext,
  clock: Clock,
): Promise<unknown | typeof timedOut> {
  if (tool.timeoutMs === undefined) return tool.execute(input, context);
  const controller = new AbortController();
  const forward = () => controller.abort(context.signal.reason);
  // A request already cancelled has no 'abort' event left to fire: the tool sees it at once.
  if (context.signal.aborted) forward();
  else context.signal.addEventListener('abort', forward, { once: true });
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const expired = new Promise<typeof timedOut>((resolve) => {
    timer = clock.setTimeout(() => {
      controller.abort(new Error('timeout'));
      resolve(timedOut);
    }, tool.timeoutMs as number);
  });
  try {
    return await Promise.race([tool.execute(input, { ...context, signal: controller.signal }), expired]);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
    context.signal.removeEventListener('abort', forward);
  }
}

function resultOf(value: unknown, attachments: readonly unknown[] | undefined): CallToolResult {
  const text = typeof value === 'string' ? value : JSON.stringify(value === undefined ? null : value);
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  for (const media of attachments ?? []) {
    const block = media as { type?: string; source?: { type?: string; mediaType?: string; data?: string } };
    if (block.type === 'image' && block.source?.type === 'base64')
      content.push({ type: 'image', mimeType: block.source.mediaType ?? '', data: block.source.data ?? '' });
  }
  const structured =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? { structuredContent: value as Record<string, unknown> }
      : {};
  return { content, ...structured };
}
