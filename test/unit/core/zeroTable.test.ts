/**
 * ZeRO paper (Rajbhandari et al. 2020) Table 1: per-device model-state memory in GB (1e9) for mixed-precision Adam
 * (K = 12), every cell, from the term functions. Printed values are rounded or truncated to the digits shown, so a
 * cell matches when it is within one unit of its last printed digit.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { zeroModelStateBytes } from '../../../shared/memory/modelStates';

// Rows: DP degree; columns: P_os, P_os+g, P_os+g+p for Ψ = 7.5B, 128B, 1T (docs/formulas.md#model-states).
const TABLE: [number, string[]][] = [
  [1, ['120', '120', '120', '2048', '2048', '2048', '16000', '16000', '16000']],
  [4, ['52.5', '41.3', '30', '896', '704', '512', '7000', '5500', '4000']],
  [16, ['35.6', '21.6', '7.5', '608', '368', '128', '4750', '2875', '1000']],
  [64, ['31.4', '16.6', '1.88', '536', '284', '32', '4187', '2218', '250']],
  [256, ['30.4', '15.4', '0.47', '518', '263', '8', '4046', '2054', '62.5']],
  [1024, ['30.1', '15.1', '0.12', '513', '257', '2', '4011', '2013', '15.6']],
];
const PSI = [7.5e9, 128e9, 1e12];

describe('ZeRO Table 1 (every cell)', () => {
  for (const [nd, cells] of TABLE) {
    cells.forEach((printed, i) => {
      const psi = PSI[Math.floor(i / 3)];
      const stage = ((i % 3) + 1) as 1 | 2 | 3;
      test(`Ψ=${psi / 1e9}B N_d=${nd} stage ${stage}: ${printed} GB`, () => {
        const gb = zeroModelStateBytes(psi, nd, stage) / 1e9;
        const decimals = printed.includes('.') ? printed.split('.')[1].length : 0;
        assert.ok(Math.abs(gb - Number(printed)) <= 10 ** -decimals, `${gb}`);
      });
    });
  }
  test('baseline DP is 16Ψ (Figure 1: 120 GB for 7.5B)', () => {
    assert.equal(zeroModelStateBytes(7.5e9, 64, 0), 120e9);
  });
});
