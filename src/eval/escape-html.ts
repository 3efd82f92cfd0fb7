const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text made safe for HTML content and quoted attribute values. Everything an eval report holds came
 * from a model or a tool (answers, reasons, case ids, traces), so every piece of it goes through here.
 *
 * @example
 * escapeHtml('</details><script>'); // '&lt;/details&gt;&lt;script&gt;'
 */
export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (character) => entities[character] as string);
}
