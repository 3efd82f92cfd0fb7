import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A library user's install: the built package and its one runtime dependency (zod), none of the
// optional peers. Built first (`npm test` builds before vitest).
const root = new URL('..', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, unknown>;
  bin: Record<string, string>;
};
let project: string;
let withCli: string;
const cliPeers = ['commander', 'cli-table3', 'cli-progress', 'picocolors', 'd3-scale', 'd3-shape'];

function run(code: string) {
  const file = join(project, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  return spawnSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 60_000 });
}

function reinsCommand(dir: string, ...args: string[]) {
  return spawnSync(process.execPath, [join(dir, 'node_modules', 'reins', manifest.bin.reins!), ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** A project that installed reins and `packages` (links into this repository's node_modules). */
function libraryProject(packages: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'reins-library-user-'));
  const installed = join(dir, 'node_modules', 'reins');
  mkdirSync(installed, { recursive: true });
  cpSync(join(root, 'package.json'), join(installed, 'package.json'));
  cpSync(join(root, 'dist'), join(installed, 'dist'), { recursive: true });
  for (const name of ['zod', ...packages])
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  return dir;
}

beforeAll(() => {
  project = libraryProject([]);
  withCli = libraryProject(cliPeers);
});

afterAll(() => {
  for (const dir of [project, withCli]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a library install needs no CLI, chart or Ajv package', () => {
  it('zod is the only runtime dependency; the CLI, chart and Ajv packages are optional peers', () => {
    expect(Object.keys(manifest.dependencies)).toEqual(['zod']);
    for (const name of [
      'commander',
      'cli-table3',
      'cli-progress',
      'picocolors',
      'd3-scale',
      'd3-shape',
      'ajv',
    ]) {
      expect(manifest.peerDependencies[name], name).toBeDefined();
      expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true);
    }
  });

  it('every entry point but reins/plot, reins/tokenizers, reins/otel, reins/bullmq, reins/pgboss and reins/server loads with zod alone', () => {
    const specifiers = Object.keys(manifest.exports)
      .filter(
        (key) =>
          ![
            './package.json',
            './plot',
            './tokenizers',
            './otel',
            './bullmq',
            './pgboss',
            './server',
          ].includes(key),
      )
      .map((key) => key.replace(/^\./, 'reins'));
    expect(specifiers.length).toBeGreaterThan(10);
    const result = run(
      `for (const s of ${JSON.stringify(specifiers)}) await import(s);\nconsole.log('loaded');\n`,
    );
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('loaded');
  });

  it('jsonSchemaInput names the package to install on its first validation', () => {
    const result = run(
      [
        "import { jsonSchemaInput } from 'reins/tools';",
        "const input = jsonSchemaInput({ type: 'object' });",
        'try {',
        "  await input['~standard'].validate({});",
        "  console.log('validated');",
        '} catch (error) {',
        '  console.log(JSON.stringify({ reason: error.reason, message: error.message }));',
        '}',
      ].join('\n'),
    );
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      reason: 'missing_peer_dependency',
      message: expect.stringContaining('npm install ajv@^8'),
    });
  });

  it('reins/plot names the missing d3 package', () => {
    const result = run("await import('reins/plot');");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package 'd3-(scale|shape)'/);
  });

  it('reins/tokenizers names the missing gpt-tokenizer package, an optional peer', () => {
    expect(manifest.peerDependenciesMeta['gpt-tokenizer']?.optional).toBe(true);
    const result = run("await import('reins/tokenizers');");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package 'gpt-tokenizer'/);
  });

  it('reins/otel names the missing @opentelemetry/api, an optional peer', () => {
    expect(manifest.peerDependenciesMeta['@opentelemetry/api']?.optional).toBe(true);
    const result = run("await import('reins/otel');");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package '@opentelemetry\/api'/);
  });

  it('reins/server names the missing hono, an optional peer', () => {
    expect(manifest.peerDependenciesMeta['hono']?.optional).toBe(true);
    expect(manifest.peerDependenciesMeta['@hono/node-server']?.optional).toBe(true);
    const result = run("await import('reins/server');");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package '(hono|@hono\/node-server)'/);
  });

  it('reins/bullmq names the missing bullmq, an optional peer', () => {
    expect(manifest.peerDependenciesMeta['bullmq']?.optional).toBe(true);
    const result = run("await import('reins/bullmq');");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package '(bullmq|ioredis)'/);
  });

  it('reins/pgboss names the missing pg or pg-boss, optional peers', () => {
    expect(manifest.peerDependenciesMeta['pg-boss']?.optional).toBe(true);
    expect(manifest.peerDependenciesMeta['pg']?.optional).toBe(true);
    const result = run("await import('reins/pgboss');");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package '(pg|pg-boss)'/);
  });

  it('the reins command lists what to install and exits 2', () => {
    const result = reinsCommand(project, 'demo');
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'npm install commander@^14 cli-table3@^0.6 cli-progress@^3 picocolors@^1 d3-scale@^4 d3-shape@^3',
    );
  });
});

describe("with the CLI's peers installed (and no ioredis, pg or better-sqlite3)", () => {
  it('the reins command plays the demo', () => {
    const result = reinsCommand(withCli, 'demo', 'happy', '--json');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ scenario: 'happy', outcome: { kind: 'answered' } });
  });

  it('the benchmarks that need a store name it instead of failing to load', () => {
    const fleet = reinsCommand(withCli, 'bench', 'fleet', '--json');
    expect(fleet.status).toBe(2);
    expect(fleet.stderr).toContain('reins bench fleet needs ioredis');
    expect(fleet.stderr).toContain('npm install ioredis@^5');
    const idempotency = reinsCommand(withCli, 'bench', 'idempotency', '--json');
    expect(idempotency.status).toBe(2);
    expect(idempotency.stderr).toContain('npm install ioredis@^5 pg@^8');
  });
});

describe('the repository itself has every optional peer', () => {
  it('the bin entry runs the CLI', () => {
    const output = execFileSync(process.execPath, [join(root, manifest.bin.reins!), '--help'], {
      encoding: 'utf8',
    });
    expect(output).toContain('Usage: reins');
  });
});
