import { ConfigurationError } from '../errors/reins-error.js';
import { type AnyStage, checkStageName, childPath, type Stage } from './stage.js';

/** Options for {@link route}. */
export interface RouteSpec<Input, Label, Output, BranchInput = Input> {
  name: string;
  /** The one classification: a model stage with a schema (or a function) over the route's input. */
  classify: Stage<Input, Label>;
  /** The branch name the classification picks. @default the classification itself, as a string */
  label?: (classified: Label) => string;
  /**
   * What a branch is given: the route's input (the default), or, say, the input together with the
   * classification, when a branch needs both (`(ticket, triage) => ({ ticket, triage })`).
   */
  branchInput?: (input: Input, classified: Label) => BranchInput;
  /** Named branches, each run with the route's input (or `branchInput`'s value). */
  branches: Readonly<Record<string, Stage<BranchInput, Output>>>;
  /** The branch an unknown label goes to (labeled `fallback: true` in the trace). Must be one of `branches`. */
  fallback: string;
}

/**
 * One classification, then one of a fixed set of branches: the seeds' router plus fixed handlers.
 * The model decides once, among named outcomes; each branch is code you can test alone. A label
 * that names no branch goes to `fallback`, and the `route` trace event says so. A resumed pipeline
 * restores the classification, so it takes the same branch.
 *
 * @example
 * import { route, step } from 'reins/pipeline';
 * const triage = route({
 *   name: 'triage',
 *   classify: step('classify', (ticket: string) => (ticket.includes('refund') ? 'billing' : 'other')),
 *   branches: { billing: step('billing', () => 'refund playbook'), other: step('other', () => 'general playbook') },
 *   fallback: 'other',
 * });
 */
export function route<Input, Label, Output, BranchInput = Input>(
  spec: RouteSpec<Input, Label, Output, BranchInput>,
): Stage<Input, Output> {
  const name = checkStageName(spec.name, 'route');
  if (typeof spec.classify?.run !== 'function')
    throw new ConfigurationError(`route ${name}.classify`, 'must be a stage (modelStage or step)');
  const branches = new Map<string, AnyStage>(Object.entries(spec.branches ?? {}));
  if (branches.size === 0)
    throw new ConfigurationError(`route ${name}.branches`, 'needs at least one branch');
  if (!branches.has(spec.fallback))
    throw new ConfigurationError(
      `route ${name}.fallback`,
      `"${String(spec.fallback)}" is not one of the branches`,
    );
  const labelOf = spec.label ?? ((classified: Label) => String(classified));
  return {
    name,
    kind: 'route',
    run(input, path, run, signal) {
      return run.composite('route', path, async () => {
        const classified = await spec.classify.run(input, childPath(path, spec.classify.name), run, signal);
        if (!classified.ok) return classified;
        let label: string;
        let branchValue: unknown = input;
        try {
          label = labelOf(classified.output);
          if (spec.branchInput) branchValue = spec.branchInput(input, classified.output);
        } catch (thrown) {
          return {
            ok: false,
            failure: {
              kind: 'stage_error',
              stage: childPath(path, 'label'),
              error: { name: 'LabelError', message: String(thrown) },
            },
          };
        }
        const known = Object.hasOwn(spec.branches, label);
        const branch = known ? label : spec.fallback;
        if (run.tracing) await run.emit({ type: 'route', stage: path, label, branch, fallback: !known });
        return (branches.get(branch) as AnyStage).run(branchValue, childPath(path, branch), run, signal);
      });
    },
  };
}
