import { ConfigurationError } from '../errors/reins-error.js';
import { type AnyStage, checkStageName, childPath, type Stage, type StageResult } from './stage.js';

/**
 * Stages run one after another, each fed the previous one's output: the seeds' linear chain
 * (extract → validate → format). The first failure ends it, naming the stage; nothing after runs.
 * Stage names must be unique within the chain (they are its stages' paths).
 *
 * @example
 * import { chain, step } from 'reins/pipeline';
 * const nightly = chain('nightly', step('count', (s: string) => s.length), step('double', (n: number) => n * 2));
 */
export function chain<A, B>(name: string, s1: Stage<A, B>): Stage<A, B>;
export function chain<A, B, C>(name: string, s1: Stage<A, B>, s2: Stage<B, C>): Stage<A, C>;
export function chain<A, B, C, D>(
  name: string,
  s1: Stage<A, B>,
  s2: Stage<B, C>,
  s3: Stage<C, D>,
): Stage<A, D>;
export function chain<A, B, C, D, E>(
  name: string,
  s1: Stage<A, B>,
  s2: Stage<B, C>,
  s3: Stage<C, D>,
  s4: Stage<D, E>,
): Stage<A, E>;
export function chain<A, B, C, D, E, F>(
  name: string,
  s1: Stage<A, B>,
  s2: Stage<B, C>,
  s3: Stage<C, D>,
  s4: Stage<D, E>,
  s5: Stage<E, F>,
): Stage<A, F>;
export function chain<A, B, C, D, E, F, G>(
  name: string,
  s1: Stage<A, B>,
  s2: Stage<B, C>,
  s3: Stage<C, D>,
  s4: Stage<D, E>,
  s5: Stage<E, F>,
  s6: Stage<F, G>,
): Stage<A, G>;
/** Any number of stages, typed loosely: for chains built from a list. */
export function chain(name: string, ...stages: AnyStage[]): AnyStage;
export function chain(name: string, ...stages: AnyStage[]): AnyStage {
  checkStageName(name, 'chain');
  if (stages.length === 0) throw new ConfigurationError(`chain ${name}`, 'needs at least one stage');
  const names = new Set<string>();
  for (const stage of stages) {
    if (typeof stage?.run !== 'function')
      throw new ConfigurationError(
        `chain ${name}`,
        'every stage must come from step, modelStage, chain, route or fanOut',
      );
    if (names.has(stage.name))
      throw new ConfigurationError(`chain ${name}`, `two stages are named "${stage.name}"`);
    names.add(stage.name);
  }
  const paths = new Map<string, string[]>();
  return {
    name,
    kind: 'chain',
    run(input, path, run, signal) {
      let childPaths = paths.get(path);
      if (childPaths === undefined) {
        childPaths = stages.map((stage) => childPath(path, stage.name));
        paths.set(path, childPaths);
      }
      const ready = childPaths;
      return run.composite('chain', path, async () => {
        let value: unknown = input;
        for (let i = 0; i < stages.length; i++) {
          const result: StageResult<unknown> = await (stages[i] as AnyStage).run(
            value,
            ready[i] as string,
            run,
            signal,
          );
          if (!result.ok) return result;
          value = result.output;
        }
        return { ok: true, output: value };
      });
    },
  };
}
