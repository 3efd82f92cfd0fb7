/**
 * The lesson's "convert 200 markdown files to a new frontmatter format", as a fan-out: one bounded
 * model call per file, its answer validated by a schema, at most 3 files in flight, each under a
 * timeout. A file whose answer fails the schema, or that hangs, is labeled and left for review;
 * the rest are migrated (fanIn asks for at least 4 of 6). Offline, with a scripted model:
 *
 *   npx tsx examples/per-file-migration.ts
 */
import { chain, describePipelineOutcome, fanIn, fanOut, modelStage, runPipeline, step } from 'reins/pipeline';
import { scriptedModel } from 'reins/testing';
import { z } from 'zod';

const files: Record<string, string> = {
  'intro.md': 'Title: Introduction\nDate: 2024-01-05\nTags: guide',
  'install.md': 'Title: Install\nDate: 2024-01-06\nTags: guide, setup',
  'faq.md': 'Title: FAQ\nDate: 2024-02-01',
  'changelog.md': 'Title: Changelog\nDate: sometime in March',
  'api.md': 'Title: API\nDate: 2024-03-03\nTags: reference',
  'huge.md': 'Title: Everything\n(40 MB of tables)',
};

const frontmatter = z.object({
  title: z.string().min(1),
  date: z.iso.date(),
  tags: z.array(z.string()),
});

export async function main() {
  // The model reads the old header and answers the new frontmatter; it hangs on the huge file and
  // cannot make a date of "sometime in March".
  const model = scriptedModel(
    Object.keys(files).map(() => (request) => {
      const block = request.messages[0]?.content[0];
      const text = block?.type === 'text' ? block.text : '';
      if (text.includes('huge.md')) return new Promise<never>(() => {});
      const title = /Title: (.+)/.exec(text)?.[1] ?? '';
      const date = /Date: (.+)/.exec(text)?.[1] ?? '';
      const tags = /Tags: (.+)/.exec(text)?.[1]?.split(', ') ?? [];
      return { toolCalls: [{ name: 'convert', input: { title, date, tags } }] };
    }),
    { name: 'claude-haiku-4-5' },
  );
  const migrate = chain(
    'migrate',
    fanOut({
      name: 'files',
      items: (names: string[]) => names,
      concurrency: 3,
      branchTimeoutMs: 250,
      branch: modelStage({
        name: 'convert',
        model,
        output: frontmatter,
        prompt: (name: string) => `File ${name}. Convert its header to the new frontmatter:\n${files[name]}`,
        maxOutputTokens: 150,
      }),
    }),
    fanIn<string, z.infer<typeof frontmatter>>({ name: 'gather', minSucceeded: 4 }),
    step('diff', ({ outputs, items, failed }) => ({
      migrated: items.map((name, i) => `${name}: ${JSON.stringify(outputs[i])}`),
      review: failed.map(({ item, failure }) => `${item}: ${failure.kind}`),
    })),
  );
  const result = await runPipeline(migrate, Object.keys(files));
  return { result, model };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { result } = await main();
  console.log(describePipelineOutcome(result.outcome));
  if (result.outcome.kind === 'completed') {
    for (const line of result.outcome.output.migrated) console.log(`  migrated ${line}`);
    for (const line of result.outcome.output.review) console.log(`  review   ${line}`);
  }
  console.log(`${result.modelCalls} model calls, ${result.billedTokens} tokens billed`);
}
