import { builtinModules } from 'node:module';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const entry = (path: string) => new URL(`../src/${path}`, import.meta.url).pathname;

async function bundle(path: string) {
  return build({
    entryPoints: [entry(path)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

describe('the core runs in a browser', () => {
  it('reins (core) bundles for the browser with no Node built-in and no dependency', async () => {
    const result = await bundle('index.ts');
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.includes('node_modules'))).toEqual([]);
    const text = result.outputFiles[0]!.text;
    for (const name of builtinModules) expect(text).not.toMatch(new RegExp(`from ["'](node:)?${name}["']`));
  });

  it.each([
    'testing/index.ts',
    'scenarios/index.ts',
    'stream/index.ts',
    'resilience/index.ts',
    'pipeline/index.ts',
    'idempotency/index.ts',
    'tokenizers/index.ts',
  ])('%s bundles for the browser', async (path) => {
    const result = await bundle(path);
    expect(result.errors).toEqual([]);
  });

  it('reins/context bundles for the browser with zod its only dependency (the recall tool\u2019s schema)', async () => {
    const result = await bundle('context/index.ts');
    const packages = new Set(
      Object.keys(result.metafile.inputs)
        .filter((input) => input.includes('node_modules/'))
        .map((input) => input.split('node_modules/')[1]?.split('/')[0]),
    );
    expect([...packages]).toEqual(['zod']);
  });

  it('reins/eval bundles for the browser with zod its only dependency, and no Node built-in', async () => {
    const result = await bundle('eval/index.ts');
    const packages = new Set(
      Object.keys(result.metafile.inputs)
        .filter((input) => input.includes('node_modules/'))
        .map((input) => input.split('node_modules/')[1]?.split('/')[0]),
    );
    expect([...packages].filter((name) => name !== 'zod')).toEqual([]);
    const text = result.outputFiles[0]!.text;
    for (const name of builtinModules) expect(text).not.toMatch(new RegExp(`from ["'](node:)?${name}["']`));
  });

  it.each(['sim/index.ts', 'routing/index.ts'])(
    '%s bundles for the browser with no dependency at all',
    async (path) => {
      const result = await bundle(path);
      expect(Object.keys(result.metafile.inputs).filter((input) => input.includes('node_modules'))).toEqual(
        [],
      );
    },
  );

  it('reins/otel bundles for the browser with @opentelemetry/api its only dependency, and no Node built-in', async () => {
    const result = await bundle('otel/index.ts');
    const packages = new Set(
      Object.keys(result.metafile.inputs)
        .filter((input) => input.includes('node_modules/'))
        .map((input) => input.split('node_modules/')[1]?.split('/').slice(0, 2).join('/')),
    );
    expect([...packages]).toEqual(['@opentelemetry/api']);
    const text = result.outputFiles[0]!.text;
    for (const name of builtinModules) expect(text).not.toMatch(new RegExp(`from ["'](node:)?${name}["']`));
  });

  it('reins/plot bundles for the browser (d3-scale and d3-shape only)', async () => {
    const result = await bundle('plot/index.ts');
    const packages = new Set(
      Object.keys(result.metafile.inputs)
        .filter((input) => input.includes('node_modules/'))
        .map((input) => input.split('node_modules/')[1]?.split('/')[0]),
    );
    expect([...packages].every((name) => name?.startsWith('d3-') || name === 'internmap')).toBe(true);
  });

  it('a Node built-in sneaking into the core fails the bundle', async () => {
    await expect(bundle('node/index.ts')).rejects.toThrow(/node:fs/);
  });
});
