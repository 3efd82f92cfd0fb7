import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

// A library user's install of the built package with zod and Ajv but no MCP SDK: reins/mcp loads,
// and the first use names the package to install. Built first (`npm test` builds before vitest).
const root = new URL('..', import.meta.url).pathname;
let project: string;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'reins-mcp-user-'));
  const installed = join(project, 'node_modules', 'reins');
  mkdirSync(installed, { recursive: true });
  cpSync(join(root, 'package.json'), join(installed, 'package.json'));
  cpSync(join(root, 'dist'), join(installed, 'dist'), { recursive: true });
  for (const name of ['zod', 'ajv'])
    symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  writeFileSync(join(project, 'package.json'), '{ "type": "module", "private": true }\n');
});

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

it('reins/mcp loads without @modelcontextprotocol/sdk; mcpTools and serveMcp name it on first use', () => {
  const script = join(project, 'script.mjs');
  writeFileSync(
    script,
    [
      "import { createMcpServer, mcpTools } from 'reins/mcp';",
      'const errors = [];',
      "for (const attempt of [() => mcpTools({ command: 'true' }), () => createMcpServer([], { name: 'x', version: '1' })]) {",
      '  try { await attempt(); errors.push(null); } catch (error) { errors.push({ reason: error.reason, message: error.message }); }',
      '}',
      'console.log(JSON.stringify(errors));',
    ].join('\n'),
  );
  const result = spawnSync(process.execPath, [script], { cwd: project, encoding: 'utf8', timeout: 60_000 });
  expect(result.stderr).toBe('');
  const missing = {
    reason: 'missing_peer_dependency',
    message: expect.stringContaining('npm install @modelcontextprotocol/sdk@^1.32.0'),
  };
  expect(JSON.parse(result.stdout)).toEqual([missing, missing]);
});
