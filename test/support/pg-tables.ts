/** A fresh table name for a run store under test (PostgreSQL identifiers: letters, digits, `_`). */
export function uniqueTable(name: string): string {
  return `${name}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`.slice(0, 50);
}
