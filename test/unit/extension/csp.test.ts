/** The dashboards' Content-Security-Policy (extension/dashboard/csp.ts), checked against the webview guide's rules. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentSecurityPolicy, makeNonce } from '../../../extension/dashboard/csp';

test('a fresh 128-bit nonce per load', () => {
  const a = makeNonce();
  const b = makeNonce();
  assert.notEqual(a, b);
  assert.equal(Buffer.from(a, 'base64').length, 16);
});

test('the policy denies by default and allows only nonce scripts', () => {
  const csp = contentSecurityPolicy('https://x.vscode-cdn.net', 'N0NCE');
  assert.match(csp, /^default-src 'none'/);
  assert.match(csp, /script-src 'nonce-N0NCE'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.doesNotMatch(csp, /script-src[^;]*https:/);
});
