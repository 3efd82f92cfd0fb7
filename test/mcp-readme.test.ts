import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

// The README's reins/mcp example, in a project of its own that depends on the built package:
// type-checked as written (strict, NodeNext), then run offline with the server command pointed at
// the installed @modelcontextprotocol/server-filesystem and a temporary directory. Built first.
const root = new URL('..', import.meta.url).pathname;
const project = mkdtempSync(join(tmpdir(), 'reins-mcp-readme-'));
const notes = mkdtempSync(join(tmpdir(), 'reins-mcp-notes-'));

function example(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('MCP servers as tools'));
  const block = section ? /```ts\n([\s\S]*?)```/.exec(section) : null;
  if (!block?.[1]) throw new Error('README.md has no "## MCP servers as tools" section with a ```ts block');
  return block[1];
}

beforeAll(() => {
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules', 'reins'), 'dir');
  for (const name of ['zod', 'ajv', '@modelcontextprotocol'])
    symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  writeFileSync(join(project, 'package.json'), '{ "type": "module", "private": true }\n');
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'DOM'],
        types: [],
        skipLibCheck: true,
        outDir: 'out',
      },
      files: ['example.ts'],
    }),
  );
});

afterAll(() => {
  rmSync(project, { recursive: true, force: true });
  rmSync(notes, { recursive: true, force: true });
});

it('the reins/mcp section type-checks as written and runs against the real filesystem server', () => {
  const code = example();
  writeFileSync(join(project, 'example.ts'), code);
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], {
    encoding: 'utf8',
  });
  const server = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
  const offline = readFileSync(join(project, 'out', 'example.js'), 'utf8')
    .replace(
      "'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/notes']",
      `${JSON.stringify(process.execPath)}, args: [${JSON.stringify(server)}, ${JSON.stringify(notes)}], stderr: 'ignore'`,
    )
    .replaceAll('/srv/notes', notes);
  expect(offline).not.toContain('npx');
  writeFileSync(join(project, 'out', 'example.js'), offline);
  const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], { encoding: 'utf8' });
  expect(output).toMatch(/^awaiting_approval\nMCP endpoint: http:\/\/127\.0\.0\.1:\d+\/mcp\n$/);
});
