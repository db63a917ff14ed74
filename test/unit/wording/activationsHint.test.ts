/**
 * The micro batch's hint (shared/wording/hints.ts activationsHint): the activations kept for the backward and the
 * logits, and — when the GPU peaks where almost none of them is live (the optimizer step) — that the micro batch does
 * not move the peak until the forward and backward need more than that moment.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HINT_MAX_LENGTH, activationsHint } from '../../../shared/wording/hints';

const GIB = 2 ** 30;

const CASES: readonly { name: string; act: number; logits: number; atPeak?: { bytes: number; moment?: string }; label: RegExp; tip: RegExp; notTip?: RegExp }[] = [
  { name: 'activations and logits', act: 11.4 * GIB, logits: 0.67 * GIB, label: /^act\. ≈11\.4 GiB \+ logits 686 MiB$/, tip: /per GPU: 11\.4 GiB; the logits .* add up to 686 MiB\.$/ },
  { name: 'no logits on this stage (a first pipeline stage)', act: 3 * GIB, logits: 0, label: /^act\. ≈3\.00 GiB\/GPU$/, tip: /per GPU: 3\.00 GiB\.$/ },
  {
    name: 'the GPU peaks at the optimizer step with nothing live', act: 11.4 * GIB, logits: 0.67 * GIB, atPeak: { bytes: 0, moment: 'optimizer step' },
    label: /^act\. ≈11\.4 GiB/, tip: /peaks at the optimizer step, when none of them is live: a larger micro batch raises the peak only once/,
  },
  {
    name: 'the GPU peaks in the backward with them live: nothing more to say', act: 11.4 * GIB, logits: 0.67 * GIB, atPeak: { bytes: 11 * GIB, moment: 'layers backward' },
    label: /^act\. ≈11\.4 GiB/, tip: /add up to 686 MiB\.$/, notTip: /peaks at/,
  },
  {
    name: 'a few per cent live at the peak (the embedding\'s) counts as none worth a note', act: 10 * GIB, logits: 0, atPeak: { bytes: 0.2 * GIB, moment: 'end of backward' },
    label: /^act\. ≈10\.0 GiB/, tip: /peaks at the end of backward, when 205 MiB of them are live/,
  },
];

describe('activations hint', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const h = activationsHint(c.act, c.logits, 'GiB', c.atPeak);
      assert.match(h.label, c.label);
      assert.ok(h.label.length <= HINT_MAX_LENGTH, h.label);
      assert.match(h.tooltip, c.tip);
      if (c.notTip) assert.doesNotMatch(h.tooltip, c.notTip);
    });
  }
});
