/** The dashboards' Content-Security-Policy and its per-load nonce (pure: no vscode, so unit tests import it). */
import { randomBytes } from 'node:crypto';

/** A fresh nonce for one page load (128 random bits, base64). */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The Content-Security-Policy of a dashboard page. */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}
