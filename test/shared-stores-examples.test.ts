import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestPostgres, postgresUrl } from './support/postgres.js';
import { connectTestRedis, redisUrl } from './support/redis.js';

// The shared-checkpoints README section and the two stores' TSDoc examples, as a reader would use
// them: type-checked under strict NodeNext in a project of their own that depends on the built
// package, then run against the loopback servers (with this run's own schema and key prefix).
const root = new URL('..', import.meta.url).pathname;
const project = mkdtempSync(join(tmpdir(), 'reins-stores-example-'));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const schema = `reins_example_${process.pid}`;
const keyPrefix = `reins-test:example:${process.pid}`;
let pool: pg.Pool | undefined;
let redis: Redis | undefined;

beforeAll(async () => {
  pool = await connectTestPostgres();
  redis = await connectTestRedis();
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules', 'reins'), 'dir');
  for (const name of ['zod', 'pg', 'pg-boss', 'ioredis', 'bullmq', '@types'])
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
      include: ['example.ts'],
    }),
  );
});
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool?.end();
  if (redis) {
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  rmSync(project, { recursive: true, force: true });
});

/** The `index`th ```ts block of the README section whose title starts with `title`. */
function readmeSection(title: string, index = 0): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith(title));
  const block = section ? [...section.matchAll(/```ts\n([\s\S]*?)```/g)][index] : undefined;
  if (!block?.[1])
    throw new Error(`README.md has no "## ${title}" section with ${index + 1} \`\`\`ts blocks`);
  return block[1];
}

function tsdocExample(file: string, className: string, kind: 'class' | 'async function' = 'class'): string {
  const source = readFileSync(join(root, file), 'utf8');
  const doc = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*?)\\*/\\s*export ${kind} ${className}\\b`).exec(
    source,
  )?.[1];
  const example = doc?.split('@example')[1];
  if (!example) throw new Error(`${className} has no @example`);
  const code = example.replace(/^\s*\* ?/gm, '').trim();
  const block = /```ts\n([\s\S]*?)```/.exec(code);
  if (!block?.[1]) throw new Error(`${className}'s @example has no \`\`\`ts block`);
  return block[1];
}

/** Type-checks `code` as written, then runs it on this run's schema and key prefix. */
function typeCheckAndRun(code: string, what: string): string {
  writeFileSync(join(project, 'example.ts'), code);
  try {
    execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${what} does not type-check:\n${stdout ?? ''}${stderr ?? ''}`);
  }
  const compiled = join(project, 'out', 'example.js');
  const text = readFileSync(compiled, 'utf8')
    .replaceAll("schema: 'agents'", `schema: '${schema}'`)
    .replaceAll("keyPrefix: 'support:checkpoints'", `keyPrefix: '${keyPrefix}'`)
    .replaceAll('postgres://postgres@127.0.0.1:5432/test', postgresUrl)
    .replaceAll('redis://127.0.0.1:6379', redisUrl);
  writeFileSync(compiled, text);
  return execFileSync(process.execPath, [compiled], { cwd: project, encoding: 'utf8', timeout: 60_000 });
}

describe('shared checkpoint examples', () => {
  it('the README section type-checks and runs: crash, resume on another worker, a second resume refused', ({
    skip,
  }) => {
    if (!pool) return skip();
    const output = typeCheckAndRun(
      readmeSection('Shared checkpoints'),
      'the shared-checkpoints README example',
    );
    expect(output.trim()).toBe('hard_error answered stale_state');
  });

  it("PostgresCheckpointStore's @example type-checks and runs", ({ skip }) => {
    if (!pool) return skip();
    const code = tsdocExample('src/postgres/postgres-checkpoint-store.ts', 'PostgresCheckpointStore');
    const output = typeCheckAndRun(code, "PostgresCheckpointStore's @example");
    expect(output.trim()).toBe('answered 2');
  });

  it('the job queue README section type-checks and runs, on BullMQ and on pg-boss', {
    timeout: 120_000,
  }, ({ skip }) => {
    if (!pool || !redis) return skip();
    const traceOf = (output: string) => output.trim().split('\n');
    for (const [index, engine] of [
      [0, 'BullMQ'],
      [1, 'pg-boss'],
    ] as const) {
      const lines = traceOf(
        typeCheckAndRun(readmeSection('Agents behind a job queue', index), `the ${engine} README example`),
      );
      expect(lines[0], engine).toBe('0 run-start');
      expect(lines.at(-1), engine).toMatch(/ run-end$/);
      expect(
        lines.map((line) => Number(line.split(' ')[0])),
        engine,
      ).toEqual(lines.map((_, i) => i));
    }
  });

  it('the pg-boss classes’ and worker’s @examples type-check and run', { timeout: 120_000 }, ({ skip }) => {
    if (!pool) return skip();
    expect(
      typeCheckAndRun(
        tsdocExample('src/pgboss/postgres-run-registry.ts', 'PostgresRunRegistry'),
        'PostgresRunRegistry',
      ).trim(),
    ).toBe('queued');
    expect(
      typeCheckAndRun(
        tsdocExample('src/pgboss/postgres-run-event-log.ts', 'PostgresRunEventLog'),
        'PostgresRunEventLog',
      ).trim(),
    ).toBe('step-start');
    expect(
      typeCheckAndRun(
        tsdocExample('src/pgboss/pgboss-run-queue.ts', 'PgBossRunQueue'),
        'PgBossRunQueue',
      ).trim(),
    ).toBe('true queued');
    typeCheckAndRun(
      tsdocExample('src/pgboss/pgboss-run-worker.ts', 'createPgBossWorker', 'async function'),
      'createPgBossWorker',
    );
  });

  it("RedisCheckpointStore's @example type-checks and runs", ({ skip }) => {
    if (!redis) return skip();
    const code = tsdocExample('src/redis/redis-checkpoint-store.ts', 'RedisCheckpointStore');
    const output = typeCheckAndRun(code, "RedisCheckpointStore's @example");
    expect(output.trim()).toBe('answered 2');
  });
});
