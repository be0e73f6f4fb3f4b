/**
 * @module test/diag/certificates
 * The certificates in service on the diagnostic page: each by where it
 * comes from, what it does and for whom, its subject, issuer, names and end,
 * every value escaped, and those that end within 14 days marked.
 */
import assert from 'node:assert/strict';
import { renderDiagPage, type DiagCertificate } from '../../src/diag';
import { sampleSnapshot } from '../support/diag-sample';

const DAY_MS = 86_400_000;

function certificate(source: string, endsInDays: number): DiagCertificate {
  return {
    source,
    role: 'serves',
    usedBy: ['Host shop', 'TLSContext <api>'],
    subject: 'CN=shop.test',
    issuer: 'CN=Test CA',
    names: ['shop.test', 'www.shop.test'],
    validFrom: new Date(Date.now() - DAY_MS).toISOString(),
    validTo: new Date(Date.now() + endsInDays * DAY_MS).toISOString(),
  };
}

/** The rows of the page's certificates section, by source. */
function rows(page: string): Map<string, string> {
  const section = page.slice(page.indexOf('<h2 id="certificates">'));
  const found = new Map<string, string>();
  for (const row of section.match(/<tr><td>.*?<\/tr>/g) ?? []) found.set(/<code>(.*?)<\/code>/.exec(row)![1], row);
  return found;
}

describe('diag/certificates: the certificates in service on the page', () => {
  it('shows each by source, role, users, subject, issuer, names and end, every value escaped', () => {
    const page = renderDiagPage({ ...sampleSnapshot(), certificates: [certificate('Secret shop/<cert>', 90)] });
    const row = rows(page).get('Secret shop/&lt;cert&gt;');
    assert.ok(row, page.slice(page.indexOf('<h2 id="certificates">')));
    assert.match(
      row,
      /<td>serves<\/td><td>Host shop, TLSContext &lt;api&gt;<\/td><td>CN=shop\.test<\/td><td>CN=Test CA<\/td><td>shop\.test, www\.shop\.test<\/td><td>\d{4}-/,
    );
    assert.doesNotMatch(row, /class=/);
  });

  it('marks one that ends within 14 days, and one that has ended', () => {
    const page = renderDiagPage({
      ...sampleSnapshot(),
      certificates: [certificate('soon', 13), certificate('ended', -1), certificate('later', 15)],
    });
    const found = rows(page);
    assert.match(found.get('soon')!, /<td class="warn">/);
    assert.match(found.get('ended')!, /<td class="bad">/);
    assert.doesNotMatch(found.get('later')!, /class=/);
  });

  it('has no certificates section while none is in service', () => {
    assert.doesNotMatch(renderDiagPage(sampleSnapshot()), /id="certificates"/);
  });
});
