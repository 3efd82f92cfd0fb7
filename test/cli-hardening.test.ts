import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = new URL('../dist/cli/reins.js', import.meta.url).pathname;
const plain: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete plain['FORCE_COLOR'];
const coloured: NodeJS.ProcessEnv = { ...process.env, FORCE_COLOR: '1' };
delete coloured['NO_COLOR'];
const reins = (args: string[], env: NodeJS.ProcessEnv = plain) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });
const dir = () => mkdtempSync(join(tmpdir(), 'reins-cli-hard-'));

/** What untrusted tool output may hold: clear screen, a window title (OSC), a C1 CSI, a bidi override, CR, DEL. */
const hostile = 'A\x1b[2J\x1b]0;pwned\x07B\u009b31mC\u202eD\rE\x7fF';
/** Raw characters a terminal acts on; our own SGR colours are checked separately. */
const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const withoutOwnColours = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** A real trace (demo wanders) whose tool results and thoughts were replaced by hostile text. */
function hostileTrace(): string {
  const folder = dir();
  const file = join(folder, 'wanders.jsonl');
  expect(reins(['demo', 'wanders', '--trace-out', file]).status).toBe(0);
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const event = JSON.parse(line);
      if (event.type === 'tool-result') event.content = `${hostile} ${event.content}`;
      if (event.type === 'model-response' && event.thought) event.thought = `${hostile} ${event.thought}`;
      return JSON.stringify(event);
    });
  const out = join(folder, 'hostile.jsonl');
  writeFileSync(out, `${lines.join('\n')}\n`);
  return out;
}

describe('reins CLI: untrusted data is printed sanitized', () => {
  it('trace show and trace replay print no raw escape, control or bidi character from the trace', () => {
    const file = hostileTrace();
    const replayJson = reins(['trace', 'replay', file, '--json']);
    expect(replayJson.stdout).not.toMatch(raw);
    expect(JSON.parse(replayJson.stdout)).toMatchObject({ outcome: { kind: 'step_limit' } });
    for (const args of [
      ['trace', 'show', file],
      ['trace', 'replay', file],
    ]) {
      const run = reins(args);
      expect(run.stdout, args.join(' ')).not.toMatch(raw);
      expect(run.stdout, args.join(' ')).toContain('\\u001b[2J');
      expect(run.stdout, args.join(' ')).toContain('\\u009b31m');
      expect(run.stdout, args.join(' ')).toContain('\\u202e');
    }
    // With colours on, our own SGR codes are the only escapes left.
    const colouredShow = reins(['trace', 'show', file], coloured);
    expect(colouredShow.status).toBe(0);
    expect(colouredShow.stdout).toMatch(/\x1b\[\d+m/);
    expect(withoutOwnColours(colouredShow.stdout)).not.toMatch(raw);
    expect(colouredShow.stdout).toContain('outcome');
  });

  it('dlq list (human and --json) and dlq show print hostile error text made visible; the JSON is lossless', async () => {
    const { SqliteDeadLetterStore } = await import('../src/sqlite/index.js');
    const db = join(dir(), 'dlq.db');
    const store = new SqliteDeadLetterStore({ database: db });
    store.add({
      id: 'r-1',
      source: 'enrich',
      payload: { note: hostile },
      error: { name: 'Error', message: `HTTP 400 ${hostile}` },
      classification: 'terminal',
      attempts: 1,
      firstFailedAtMs: 1,
      lastFailedAtMs: 1,
    });
    store.close();
    const list = reins(['dlq', 'list', '--db', db]);
    expect(list.status).toBe(0);
    expect(list.stdout).not.toMatch(raw);
    expect(list.stdout).toContain(
      'HTTP 400 A\\u001b[2J\\u001b]0;pwned\\u0007B\\u009b31mC\\u202eD\\u000dE\\u007fF',
    );
    const json = reins(['dlq', 'list', '--db', db, '--json']);
    expect(json.stdout).not.toMatch(raw);
    expect(JSON.parse(json.stdout)[0].error.message).toBe(`HTTP 400 ${hostile}`);
    const show = reins(['dlq', 'show', 'r-1', '--db', db]);
    expect(show.stdout).not.toMatch(raw);
    expect(JSON.parse(show.stdout).payload.note).toBe(hostile);
  });
});

describe('reins CLI: unusable input exits 2 with a clear message', () => {
  it('trace show refuses an empty file and a trace version it does not read, but skips unknown event types', () => {
    const folder = dir();
    const empty = join(folder, 'empty.jsonl');
    writeFileSync(empty, '');
    const none = reins(['trace', 'show', empty]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/no trace events \(the file is empty\)/);

    const source = join(folder, 'happy.jsonl');
    expect(reins(['demo', 'happy', '--trace-out', source]).status).toBe(0);
    const lines = readFileSync(source, 'utf8').trim().split('\n');
    const v2 = join(folder, 'v2.jsonl');
    writeFileSync(v2, `${lines.map((line) => line.replace('"v":1', '"v":2')).join('\n')}\n`);
    const future = reins(['trace', 'show', v2]);
    expect(future.status).toBe(2);
    expect(future.stderr).toMatch(/unsupported trace version 2 .*this reins reads version 1/);
    expect(future.stdout).toBe('');

    const unknownType = join(folder, 'newer-event.jsonl');
    const extra = JSON.stringify({ v: 1, runId: 'x', seq: 99, at: 0, type: 'added-later', detail: 'ok' });
    writeFileSync(unknownType, `${[lines[0], extra, ...lines.slice(1)].join('\n')}\n`);
    const skipped = reins(['trace', 'show', unknownType]);
    expect(skipped.status).toBe(0);
    expect(skipped.stdout).toContain('outcome answered');
  });

  it('dlq list --db on a missing file exits 2 and does not create it; a wrong --key exits 2', async () => {
    const folder = dir();
    const typo = join(folder, 'typo.sqlite');
    const run = reins(['dlq', 'list', '--db', typo]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/no SQLite dead-letter file at .*typo\.sqlite/);
    expect(existsSync(typo)).toBe(false);
    for (const action of ['show', 'retry']) {
      expect(reins(['dlq', action, 'r-1', '--db', typo]).status).toBe(2);
      expect(existsSync(typo)).toBe(false);
    }
    const { SqliteDeadLetterStore } = await import('../src/sqlite/index.js');
    const db = join(folder, 'dlq.db');
    new SqliteDeadLetterStore({ database: db }).close();
    const wrongKey = reins(['dlq', 'list', '--db', db, '--key', 'nope']);
    expect(wrongKey.status).toBe(2);
    expect(wrongKey.stderr).toMatch(/has no dead-letter table "nope" \(check --key\)/);
    expect(reins(['dlq', 'list', '--db', db]).stdout).toContain('0 dead letter(s)');
  });
});

describe('reins CLI: flags', () => {
  it('--version prints the package version', () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const run = reins([flag]);
      expect(run.status).toBe(0);
      expect(run.stdout.trim()).toBe(version);
    }
  });

  it('demo stream --json prints one JSON object per stream', () => {
    const run = reins(['demo', 'stream', '--json']);
    expect(run.status).toBe(0);
    const streams = JSON.parse(run.stdout);
    expect(streams).toMatchObject([
      {
        stream: 'complete',
        toolRuns: 1,
        outcome: { kind: 'answered' },
        executedInput: { applicant: 'Ana Lima' },
      },
      { stream: 'cut-off', toolRuns: 0, outcome: { kind: 'truncated' }, executedInput: null },
    ]);
    expect(streams[0].fragments).toBeGreaterThan(0);
  });
});

describe('reins CLI: the source documents are explained where they are named', () => {
  const glosses: [RegExp, string][] = [
    [/\blesson\b/i, 'the agents course these controls come from'],
    [/post-\d\d|\bseed\b|\bposts?\b/i, 'the seed posts (the articles'],
    [/\$200/, 'HTTP 400s retried at every layer'],
  ];
  it.each([
    [['--help']],
    [['demo', '--help']],
    [['bench', '--help']],
    [['bench', 'fleet', '--help']],
    [['model', '--help']],
    [['model', 'retry', '--help']],
    [['model', 'amplification', '--help']],
    [['model', 'loop-cost', '--help']],
    [['model', 'quadratic']],
    [['model', 'loop-cost']],
  ])('%j', (args) => {
    const run = reins(args);
    expect(run.status).toBe(0);
    for (const [term, gloss] of glosses)
      if (term.test(run.stdout)) expect(run.stdout.replace(/\s+/g, ' '), String(term)).toContain(gloss);
  });

  it('demo, bench fleet and model help name the documents with their one-line explanation', () => {
    expect(reins(['demo', '--help']).stdout.replace(/\s+/g, ' ')).toContain(
      'the lesson (the agents course these controls come from)',
    );
    expect(reins(['bench', 'fleet', '--help']).stdout.replace(/\s+/g, ' ')).toContain(
      'The $200 night (a postmortem: permanent HTTP 400s retried',
    );
    expect(reins(['model', 'retry', '--help']).stdout.replace(/\s+/g, ' ')).toContain(
      'post-22 is one of the seed posts (the articles',
    );
  });
});
