import type { ContextEditEvent } from '../../src/index.js';
import { formatNumber, h } from './dom.js';
import type { WindowAtStep, WindowPartKind } from './window-at-step.js';

const kindNames: Record<WindowPartKind, string> = {
  pinned: 'pinned',
  live: 'live',
  admitted: 'admitted capped',
  cleared: 'cleared',
  summarized: 'summarized',
  evicted: 'evicted',
};

// Verbatim messages can be long (a tool's whole result); what an edit put in the window is short by design.
const liveChars = 600;

/**
 * The "context" view of one step: the loop's figures for the call, the edits made before it, and
 * every part of the window in the order the model saw it, each marked pinned, live, admitted
 * capped, cleared, summarized or evicted.
 */
export function contextViewBody(
  at: WindowAtStep | undefined,
  policy: { on: boolean; budgetTokens: number; tools: readonly string[] },
): Node[] {
  if (!policy.on)
    return [
      h(
        'p',
        {},
        'The context policy is off: every call re-sends the whole transcript. Turn on “context policy” above to see what a policy keeps in the window at each step.',
      ),
    ];
  if (!at) return [h('p', {}, 'No call was prepared at this step.')];
  const figures = at.figures;
  const saved = figures.transcriptTokens - figures.contextTokens;
  const figure = (name: string, value: string, id: string) => [
    h('dt', {}, name),
    h('dd', { 'data-testid': id }, value),
  ];
  return [
    h(
      'dl',
      { class: 'figures' },
      ...figure(
        'window sent',
        `${formatNumber(figures.contextTokens)} tokens (${figures.messages} of ${figures.transcriptMessages} messages)`,
        'window-tokens',
      ),
      ...figure(
        'whole transcript',
        `${formatNumber(figures.transcriptTokens)} tokens${saved > 0 ? ` (${formatNumber(saved)} kept out)` : ''}`,
        'transcript-tokens',
      ),
      ...figure('policy budget', `${formatNumber(policy.budgetTokens)} tokens`, 'policy-budget'),
      ...figure(
        'policy tools',
        policy.tools.length === 0 ? 'none' : `${policy.tools.join(', ')} (offered to the model)`,
        'policy-tools',
      ),
      ...figure(
        'stable prefix',
        `${formatNumber(figures.stablePrefixTokens)} tokens cacheable from the last call`,
        'stable-prefix',
      ),
      ...figure(
        'invalidated',
        `${formatNumber(figures.invalidatedTokens)} tokens of the last call changed`,
        'invalidated',
      ),
    ),
    h('h4', {}, 'Edits before this call'),
    at.edits.length === 0
      ? h('p', { class: 'hint' }, 'None: the window is the last one plus what the last step added.')
      : h('ul', { 'data-testid': 'context-edits' }, ...at.edits.map((event) => h('li', {}, editLine(event)))),
    h('h4', {}, 'What the window holds, in order'),
    h(
      'ol',
      { class: 'window-parts', 'data-testid': 'window-parts' },
      ...at.parts.map((part) => {
        const text =
          part.kind === 'live' && part.text.length > liveChars
            ? `${part.text.slice(0, liveChars)}… (${formatNumber(part.text.length - liveChars)} more characters)`
            : part.text;
        const size =
          part.transcriptTokens !== undefined
            ? `${formatNumber(part.tokens)} tokens, for ${formatNumber(part.transcriptTokens)} in the transcript`
            : `${formatNumber(part.tokens)} tokens`;
        return h(
          'li',
          { class: `part ${part.kind}` },
          h(
            'div',
            { class: 'part-head' },
            h('span', { class: `tag ${part.kind}` }, kindNames[part.kind]),
            h('strong', {}, part.label),
            h('span', { class: 'hint' }, size),
          ),
          text === '' ? h('p', { class: 'hint' }, 'nothing shown') : h('pre', {}, text),
        );
      }),
    ),
  ];
}

function editLine(event: ContextEditEvent): string {
  const edit = event.edit;
  const tokens = `messages ${formatNumber(event.tokensBefore)} → ${formatNumber(event.tokensAfter)} tokens`;
  switch (edit.verb) {
    case 'admit':
      return `admit: step ${edit.step}'s result, capped (${tokens})`;
    case 'clear':
      return `clear: step ${edit.step}'s result, to a placeholder (${tokens})`;
    case 'summarize':
    case 'evict':
      return `${edit.verb}: ${edit.steps[0] === edit.steps[1] ? `step ${edit.steps[0]}` : `steps ${edit.steps[0]}–${edit.steps[1]}`} (${tokens})`;
    case 'drop-thinking':
      return `drop-thinking: message ${edit.message} (${tokens})`;
    case 'pin':
      return `${edit.text === '' ? 'unpin' : 'pin'}: ${edit.key} at the ${edit.at} (${tokens})`;
  }
}
