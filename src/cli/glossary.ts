const storm = 'permanent HTTP 400s retried at every layer, tool × agent × job, until one batch job cost $200';

/**
 * The CLI's names for the documents reins was built from, each with the one line a reader who never
 * saw them needs. Help and output use these instead of the bare names.
 */
export const glossary = {
  lesson: 'the lesson (the agents course these controls come from)',
  seeds:
    'the seed posts (the articles, numbered post-02 to post-22 plus a few cross-posts, whose cost and reliability figures the models reproduce)',
  night: `the $200 night (a postmortem: ${storm})`,
  postmortem: `the $200 postmortem (post-14: ${storm})`,
} as const;

/**
 * What a model's `source` document is, in one line: "post-22 is one of the seed posts (…)",
 * "lesson-agents is the lesson (…)".
 */
export function sourceNote(source: string): string {
  const name = source.split(' ')[0] ?? source;
  if (name.startsWith('lesson')) return `${name} is ${glossary.lesson}`;
  const note = `${name} is one of ${glossary.seeds}`;
  return source.includes('$200') ? `${note}; ${glossary.postmortem}` : note;
}
