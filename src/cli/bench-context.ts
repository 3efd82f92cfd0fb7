import {
  agreementTable,
  barsTable,
  billTable,
  contextBars,
  recallTable,
  runContextBenchmark,
} from '../context/benchmark/index.js';
import { memoryTranscriptIndex } from '../context/memory-transcript-index.js';

/**
 * `reins bench context`: the bill by run length per context policy, the seeds' arithmetic
 * reproduced, and what compaction loses (the needle harness), all through the real loop with
 * scripted models. The peers' strategies and the per-step overhead need the bench workspace and
 * child processes: `npm run bench:context` runs those too.
 */
export async function benchContext(json: boolean): Promise<number> {
  const figures = await runContextBenchmark({
    index: () => memoryTranscriptIndex(),
    onProgress: (line) => {
      if (!json) process.stderr.write(`  ${line}\n`);
    },
  });
  const bars = contextBars(figures);
  if (json) {
    console.log(
      JSON.stringify(
        {
          runs: figures.runs.map(({ policy, steps, billedTokens, costUsd }) => ({
            policy,
            steps,
            billedTokens,
            costUsd,
          })),
          recall: figures.recall.map(({ policy, recall, deadEndRetries }) => ({
            policy,
            recall,
            deadEndRetries,
          })),
          growthExponent: figures.growthExponent,
          details: {
            runs: figures.runs,
            recall: figures.recall,
            crossPost: figures.crossPost,
            agreements: figures.agreements,
          },
          bars,
          meta: {
            parameters: figures.parameters,
            part: 'reins only (the peers and the overhead: npm run bench:context)',
          },
        },
        null,
        2,
      ),
    );
  } else {
    for (const text of [
      agreementTable(figures),
      billTable(figures),
      recallTable(figures.recall),
      barsTable(bars),
    ])
      console.log(`\n${text}`);
    console.log(
      '\nThe peers (LangChain trimMessages and middleware, Vercel pruneMessages) and the per-step overhead run in their own processes: npm run bench:context.',
    );
  }
  return agreementsHold(figures) ? 0 : 1;
}

function agreementsHold(figures: Awaited<ReturnType<typeof runContextBenchmark>>): boolean {
  return figures.agreements.every((row) => row.agrees);
}
