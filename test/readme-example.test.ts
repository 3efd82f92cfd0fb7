import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The README's "One complete example", as a reader would use it: pasted into a project of its own
// that depends on the built package, type-checked under `strict` with NodeNext resolution by the
// repository's TypeScript, then run with node (offline: the model is scripted). Built first (`npm
// test` builds before vitest).
const root = new URL('..', import.meta.url).pathname;

function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('One complete example'));
  if (!section) throw new Error('README.md has no "## One complete example" section');
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error('the "One complete example" section has no ```ts block');
  return block[1];
}

/** The ```ts block of the README section whose title starts with `title`. */
function readmeSection(title: string): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith(title));
  const block = section ? /```ts\n([\s\S]*?)```/.exec(section) : null;
  if (!block?.[1]) throw new Error(`README.md has no "## ${title}" section with a \`\`\`ts block`);
  return block[1];
}

/** `defineTool`'s TSDoc example, with the import it leaves out. */
function defineToolExample(): string {
  const source = readFileSync(join(root, 'src', 'tools', 'define-tool.ts'), 'utf8');
  const doc = /\/\*\*((?:(?!\*\/)[\s\S])*?)\*\/\s*export function defineTool\b/.exec(source)?.[1];
  const example = doc?.split('@example')[1];
  if (!example) throw new Error('defineTool has no @example');
  const code = example.replace(/^\s*\* ?/gm, '').trim();
  return `import { defineTool } from 'reins';\n${code}\nconsole.log(getOrder.name);\n`;
}

const project = mkdtempSync(join(tmpdir(), 'reins-readme-example-'));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
beforeAll(() => {
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules', 'reins'), 'dir');
  symlinkSync(join(root, 'node_modules', 'zod'), join(project, 'node_modules', 'zod'), 'dir');
  symlinkSync(
    join(root, 'node_modules', '@opentelemetry'),
    join(project, 'node_modules', '@opentelemetry'),
    'dir',
  );
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
afterAll(() => rmSync(project, { recursive: true, force: true }));

function typeCheck(file: string, what: string): void {
  try {
    execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${what} (${file}) does not type-check:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

function writeProject(code: string): void {
  writeFileSync(join(project, 'example.ts'), code);
}

describe("the README's complete example", () => {
  it('type-checks under strict NodeNext against the built package and runs offline', () => {
    writeProject(readmeExample());
    typeCheck('README.md', 'the "One complete example"');

    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output).toContain('Checkout is degraded: 4% errors.');
    expect(output).toMatch(/^2 calls, \d+ tokens billed$/m);
  });

  it('the context-window section type-checks and runs the same way', () => {
    writeProject(readmeSection('The context window as a cache'));
    typeCheck('README.md', 'the context-window example');
    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output.trim()).toBe('answered');
  });

  it('the evals section type-checks and runs the same way', () => {
    writeProject(readmeSection('Evals that tell the truth'));
    typeCheck('README.md', 'the evals example');
    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output).toMatch(/^pass rate [\d.]+ \[[\d.]+, [\d.]+\], pass@3 [\d.]+, pass\^3 [\d.]+$/m);
    expect(output).toMatch(/wrong_answer/);
  });

  it('the routing section type-checks and runs the same way', () => {
    writeProject(readmeSection('Cheap first, smart later'));
    typeCheck('README.md', 'the routing example');
    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output.trim()).toBe('answered by strong\nconfidence 0.41 below the uncalibrated threshold 0.8');
  });

  it('the token-counting section type-checks and runs the same way', () => {
    writeProject(readmeSection('Token counting'));
    typeCheck('README.md', 'the token-counting example');
    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output.trim()).toBe('answered 4'); // Is · checkout · healthy · ? in o200k_base
  });

  it('the telemetry section type-checks and runs the same way', () => {
    writeProject(readmeSection('Telemetry'));
    typeCheck('README.md', 'the telemetry example');
    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output.trim().split('\n')).toEqual(['looped reins.outcome', 'silent-failure ratio 1']);
  });

  it("defineTool's TSDoc example type-checks and runs the same way", () => {
    writeProject(defineToolExample());
    typeCheck('src/tools/define-tool.ts', "defineTool's @example");
    const output = execFileSync(process.execPath, [join(project, 'out', 'example.js')], { encoding: 'utf8' });
    expect(output.trim()).toBe('get_order');
  });
});
