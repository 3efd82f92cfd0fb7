import { describe, expect, it } from 'vitest';
import { isAddressAt, TaintLedger } from './taint-ledger.js';

/** A ledger with untrusted content in the context and `text` as the user's words. */
const ledgerWith = (text: string) => {
  const ledger = new TaintLedger();
  ledger.noteTrustedText(text);
  ledger.noteResult(true, []);
  return ledger;
};

describe('the taint ledger: issue 15 implementation bugs', () => {
  it('booleans, null, empty and whitespace-only strings have no provenance of their own', () => {
    const ledger = ledgerWith('Share the board notes with kate.');
    expect(ledger.untrustedArguments({ public: true, from: '  ', note: '', owner: null }, 'all')).toEqual([
      'public',
      'from',
      'note',
      'owner',
    ]);
    expect(ledger.untrustedArguments({ to: 'kate' }, 'all')).toEqual([]);
    // An empty value a trusted field returned vouches for nothing either.
    ledger.noteResult(false, ['', '   ']);
    expect(ledger.isTrusted('')).toBe(false);
    expect(ledger.isTrusted('   ')).toBe(false);
  });

  it('object keys below the input are data, checked like values', () => {
    const ledger = ledgerWith('Give alice@corp.example read access.');
    expect(ledger.untrustedArguments({ grants: { 'mallory@evil.example': 'read' } }, 'all')).toEqual([
      'grants.mallory@evil.example',
    ]);
    expect(ledger.untrustedArguments({ grants: { 'mallory@evil.example': 'read' } }, ['grants'])).toEqual([
      'grants',
    ]);
    expect(ledger.untrustedArguments({ grants: { 'alice@corp.example': 'read' } }, 'all')).toEqual([]);
    // A schema's own field names are not data: the caller says which keys are fields.
    const fields = (objectPath: readonly string[], key: string) =>
      objectPath.length === 0 || (objectPath.join('.') === 'address' && key === 'city');
    expect(ledger.untrustedArguments({ address: { city: 'read' } }, 'all', fields)).toEqual([]);
  });

  it('no case folding: a Kelvin sign or another case of a trusted word is a different value', () => {
    const ledger = ledgerWith('Invite kate to the board.');
    expect(ledger.isTrusted('kate')).toBe(true);
    expect(ledger.isTrusted('\u212Aate')).toBe(false);
    expect(ledger.isTrusted('Kate')).toBe(false);
    const field = new TaintLedger();
    field.noteResult(true, ['Kate']);
    expect(field.isTrusted('Kate')).toBe(true);
    expect(field.isTrusted('kate')).toBe(false);
    expect(field.isTrusted('\u212Aate')).toBe(false);
  });

  it('word boundaries are Unicode-aware, and text is read in NFKC', () => {
    const ledger = ledgerWith(
      'Pay the bill from münchen-stadtwerke.de and tell \uFF42\uFF4F\uFF42@corp.example.',
    );
    expect(ledger.isTrusted('münchen-stadtwerke.de')).toBe(true);
    expect(ledger.isTrusted('nchen-stadtwerke.de')).toBe(false);
    expect(ledger.isTrusted('stadtwerke.de')).toBe(false);
    // Fullwidth letters the user typed are the ASCII address the model writes.
    expect(ledger.isTrusted('bob@corp.example')).toBe(true);
    // A decomposed ü is trusted only in the form NFKC gives it.
    expect(ledger.isTrusted('mu\u0308nchen-stadtwerke.de')).toBe(false);
  });

  it('whole typed tokens: part of an address or a URL is not the address', () => {
    const ledger = ledgerWith(
      'Forward it to jane.long@google.com, then read https://news.example/q3-results (the Q3 report).',
    );
    expect(ledger.isTrusted('jane.long@google.com')).toBe(true);
    expect(ledger.isTrusted('long@google.com')).toBe(false);
    expect(ledger.isTrusted('google.com')).toBe(false);
    expect(ledger.isTrusted('jane.long')).toBe(false);
    expect(ledger.isTrusted('https://news.example/q3-results')).toBe(true);
    expect(ledger.isTrusted('https://news.example')).toBe(false);
    expect(ledger.isTrusted('news.example/q3-results')).toBe(false);
    expect(ledger.isTrusted('Q3 report')).toBe(true);
    expect(ledger.isTrusted('report')).toBe(true);
    // Punctuation the value carries must be in the user's text too.
    expect(ledger.isTrusted('jane.long@google.com)')).toBe(false);
  });

  it('an e-mail domain matches in any ASCII case; its local part only exactly', () => {
    const ledger = ledgerWith('Mail Alice@Corp.Example today.');
    expect(ledger.isTrusted('Alice@corp.example')).toBe(true);
    expect(ledger.isTrusted('alice@Corp.Example')).toBe(false);
  });

  it('numbers: list markers and date parts are not amounts; a whole number token is', () => {
    const ledger = ledgerWith(
      '1. Never pay more than 5000.\n2) The invoice of March 5, 2024 is due 2024-04-01.\n3. Refund $20 to O-77 and $1,250.50 to O-78.',
    );
    for (const marker of [1, 2, 3, '1', '2']) expect(ledger.isTrusted(marker)).toBe(false);
    for (const datePart of [5, 2024, 4, '2024', '5']) expect(ledger.isTrusted(datePart)).toBe(false);
    expect(ledger.isTrusted(77)).toBe(false);
    expect(ledger.isTrusted(20)).toBe(true);
    expect(ledger.isTrusted('20')).toBe(true);
    expect(ledger.isTrusted('$20')).toBe(true);
    expect(ledger.isTrusted(1250.5)).toBe(true);
    expect(ledger.isTrusted(5000)).toBe(true);
    expect(ledger.isTrusted(-20)).toBe(false);
    expect(ledger.isTrusted('O-77')).toBe(true);
    expect(ledger.isTrusted('March 5, 2024')).toBe(true);
    expect(ledger.isTrusted('2024-04-01')).toBe(true);
  });

  it('a restored ledger keeps its trusted values and taint', () => {
    const ledger = ledgerWith('Mail kate.');
    ledger.noteResult(true, ['O-77', 90817]);
    const restored = new TaintLedger(ledger.state());
    expect(restored.tainted).toBe(true);
    expect(restored.isTrusted('O-77')).toBe(true);
    expect(restored.isTrusted(90817)).toBe(true);
    expect(restored.isTrusted('o-77')).toBe(false);
  });
});

describe('isAddressAt', () => {
  it('accepts one whole address at an allowed domain, nothing that only ends like one', () => {
    const domains = ['corp.example'];
    expect(isAddressAt('team@corp.example', domains)).toBe(true);
    expect(isAddressAt('team@CORP.example', domains)).toBe(true);
    expect(isAddressAt(['team@corp.example', 'bob@corp.example'], domains)).toBe(true);
    for (const steered of [
      'mallory@evil.example, team@corp.example',
      'mallory@evil.example,team@corp.example',
      'mallory@evil.example team@corp.example',
      '"mallory@evil.example" <team@corp.example>',
      'team@evil.example@corp.example',
      'team@sub.corp.example',
      'team@corp.example.evil.example',
      '@corp.example',
      'team@corp.\u212Axample',
      ['team@corp.example', 'mallory@evil.example'],
      [],
      42,
      undefined,
    ])
      expect(isAddressAt(steered, domains), String(steered)).toBe(false);
  });
});
