/** A tiny element builder: `h('p', { class: 'x' }, 'text', child)`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

export const formatNumber = (value: number) => value.toLocaleString('en-US');

/** Renders rows of text cells as an accessible table. */
export function table(head: string[], rows: string[][], caption?: string): HTMLTableElement {
  return h(
    'table',
    {},
    caption ? h('caption', {}, caption) : undefined,
    h('thead', {}, h('tr', {}, ...head.map((cell) => h('th', { scope: 'col' }, cell)))),
    h('tbody', {}, ...rows.map((row) => h('tr', {}, ...row.map((cell) => h('td', {}, cell))))),
  );
}
