/**
 * A package's release from a project's dependency files (formats/common/packagePins.ts) and PEP 440 specifier ranges
 * (shared/versionSpec.ts). Expected values from the specifications: PEP 440 "Version specifiers" (compatible release
 * `~=`, prefix matching `==X.*`, exclusive `<`/`>`, `!=`), PEP 508 (extras, environment markers), PEP 503 (name
 * normalization), Poetry's caret and tilde constraints (python-poetry.org "Dependency specification"), conda's
 * `name=version` match spec, and the lock files' [[package]] tables. The files quoted are LitGPT's pyproject.toml at
 * 00af8b0d (`"bitsandbytes==0.42.0"` in the `all` extra) and at 0.5.13 (darwin `>=0.42,<0.43`, linux `>=0.45.2,<0.50`).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findPins, markerAllowsLinux } from '../../../formats/common/packagePins';
import { allowedBelow, compareRelease, releaseOf, specifierRange } from '../../../shared/versionSpec';
import { bitsandbytesSavesInputUnder } from '../../../shared/memory/loraSaves';

describe('PEP 440 specifier sets against a boundary release', () => {
  // [specifier set, boundary, every allowed release below it (true), none (false), or both / unreadable (undefined)]
  const cases: readonly [string, string, boolean | undefined][] = [
    ['==0.42.0', '0.43.2', true],
    ['===0.42.0', '0.43.2', true],
    ['==0.43.1', '0.43.2', true],
    ['==0.43.2', '0.43.2', false],
    ['==0.43', '0.43.2', true], // 0.43 is 0.43.0
    ['==0.43.*', '0.43.2', undefined], // 0.43.0 … 0.43.9999
    ['==0.42.*', '0.43.2', true],
    ['~=0.42.0', '0.43.2', true], // >= 0.42.0, == 0.42.*
    ['~=0.43.0', '0.43.2', undefined],
    ['~=0.42', '0.43.2', undefined], // >= 0.42, == 0.* : 0.99 allowed
    ['>=0.42,<0.43', '0.43.2', true],
    ['<0.43.2', '0.43.2', true],
    ['<=0.43.2', '0.43.2', undefined],
    ['<=0.43.1', '0.43.2', true],
    ['>=0.45.2,<0.50', '0.43.2', false],
    ['>0.43.1', '0.43.2', undefined], // 0.43.1.post1 is allowed: the release numbers cannot say
    ['>=0.43.2', '0.43.2', false],
    ['>0.43.2', '0.43.2', false],
    ['>=0.41.1', '0.43.2', undefined],
    ['>=0.41.1,!=0.42.0', '0.43.2', undefined],
    ['', '0.43.2', undefined], // unpinned
    ['==0.42.0+cu121', '0.43.2', true], // a local version label is dropped
    ['=>0.42', '0.43.2', undefined], // not an operator
    ['~=1', '0.43.2', undefined], // ~= needs two numbers
  ];
  for (const [spec, boundary, below] of cases) {
    test(`"${spec}" against ${boundary}: ${String(below)}`, () => assert.equal(allowedBelow(spec, boundary), below));
  }

  test('releases compare number by number, missing numbers as zeros', () => {
    assert.deepEqual(releaseOf('0.41.3.post2'), [0, 41, 3]);
    assert.equal(compareRelease([1, 0], [1, 0, 0]), 0);
    assert.equal(compareRelease([0, 43, 10], [0, 43, 2]), 1);
    assert.equal(specifierRange('>=1,<2,==1.5.*')?.hi?.v.join('.'), '1.6');
  });

  test('bitsandbytes: a 4-bit base keeps its inputs only below 0.43.2; the 8-bit one always', () => {
    assert.equal(bitsandbytesSavesInputUnder(4, '==0.42.0'), true);
    assert.equal(bitsandbytesSavesInputUnder(4, '>=0.45.2,<0.50'), false);
    assert.equal(bitsandbytesSavesInputUnder(4, '>=0.42'), undefined);
    assert.equal(bitsandbytesSavesInputUnder(8, '>=0.45.2'), true);
  });
});

describe('a package\'s requirements in dependency files', () => {
  const specs = (file: string, text: string, pkg = 'bitsandbytes') => findPins(file, text, pkg).map((p) => p.spec);

  test('requirements.txt: extras, markers, comments, options and other packages', () => {
    const text = [
      '-r base.txt',
      '--extra-index-url https://example.org/simple',
      'torch==2.4.0',
      'bitsandbytes-foo==1.0  # another package',
      '# bitsandbytes==0.40.0',
      'BitsAndBytes[extra] >= 0.42 , < 0.43   # quantization',
      "bitsandbytes==0.41.0; sys_platform == 'darwin'",
    ].join('\n');
    assert.deepEqual(specs('requirements.txt', text), ['>=0.42,<0.43']);
    const pin = findPins('requirements.txt', text, 'bitsandbytes')[0];
    assert.equal(pin.line, 5);
    assert.equal(pin.text, 'BitsAndBytes[extra] >= 0.42 , < 0.43');
  });

  test('PEP 503: names compare without case, and "-", "_" and "." alike', () => {
    assert.deepEqual(specs('requirements.txt', 'Flash_Attn==2.6.3', 'flash-attn'), ['==2.6.3']);
  });

  test("pyproject.toml: LitGPT's pins at 00af8b0d and at 0.5.13 (the Linux one only)", () => {
    const old = ['[project.optional-dependencies]', 'all = [', '    "bitsandbytes==0.42.0",      # quantization', '    "sentencepiece>=0.2.0",', ']'].join('\n');
    assert.deepEqual(specs('pyproject.toml', old), ['==0.42.0']);
    const now = [
      'extra = [',
      '  "bitsandbytes>=0.42,<0.43; sys_platform==\'darwin\'",',
      '  "bitsandbytes>=0.45.2,<0.50; sys_platform==\'linux\' or sys_platform==\'win32\'",',
      ']',
    ].join('\n');
    assert.deepEqual(specs('pyproject.toml', now), ['>=0.45.2,<0.50']);
  });

  test("Poetry's constraints: exact, caret, tilde and a table", () => {
    assert.deepEqual(specs('pyproject.toml', 'bitsandbytes = "0.42.0"'), ['==0.42.0']);
    assert.deepEqual(specs('pyproject.toml', 'bitsandbytes = "^0.42.1"'), ['>=0.42.1,<0.43']);
    assert.deepEqual(specs('pyproject.toml', 'bitsandbytes = "~0.43.0"'), ['>=0.43.0,<0.44']);
    assert.deepEqual(specs('pyproject.toml', 'bitsandbytes = { version = ">=0.45", optional = true }'), ['>=0.45']);
    assert.deepEqual(specs('pyproject.toml', 'bitsandbytes = { version = "0.41.0", markers = "sys_platform == \'darwin\'" }'), []);
  });

  test('setup.py and setup.cfg', () => {
    assert.deepEqual(specs('setup.py', 'install_requires=["torch>=2.1", \'bitsandbytes==0.43.1\']'), ['==0.43.1']);
    assert.deepEqual(specs('setup.cfg', '[options]\ninstall_requires =\n    bitsandbytes>=0.45\n'), ['>=0.45']);
  });

  test("conda environment files: conda's match and the pip list", () => {
    const env = ['dependencies:', '  - python=3.10', '  - bitsandbytes=0.42.0=py310h', '  - pip:', '    - bitsandbytes==0.43.3'].join('\n');
    assert.deepEqual(specs('environment.yml', env), ['==0.42.0', '==0.43.3']);
  });

  test('lock files: the resolved version of the named package', () => {
    const uv = ['[[package]]', 'name = "bitsandbytes-foo"', 'version = "9.9.9"', '', '[[package]]', 'name = "bitsandbytes"', 'version = "0.43.1"', 'source = { registry = "https://pypi.org/simple" }'].join('\n');
    const pins = findPins('uv.lock', uv, 'bitsandbytes');
    assert.deepEqual(pins.map((p) => [p.spec, p.locked, p.line]), [['==0.43.1', true, 6]]);
    assert.deepEqual(specs('poetry.lock', '[[package]]\nname = "bitsandbytes"\nversion = "0.45.5"\n'), ['==0.45.5']);
  });

  test('environment markers: only those that can hold on Linux', () => {
    assert.equal(markerAllowsLinux("; python_version >= '3.9'"), true);
    assert.equal(markerAllowsLinux("; sys_platform == 'darwin'"), false);
    assert.equal(markerAllowsLinux("; sys_platform != 'linux'"), false);
    assert.equal(markerAllowsLinux("; platform_system == 'Linux'"), true);
    assert.equal(markerAllowsLinux("; sys_platform != 'win32'"), true);
  });

  test('malformed text yields nothing, never an exception', () => {
    for (const f of ['requirements.txt', 'pyproject.toml', 'uv.lock', 'environment.yml', 'setup.cfg']) {
      assert.deepEqual(specs(f, '\u0000"bitsandbytes\n[[package]\nname = "bitsandbytes"\n- bitsandbytes ==\n'.repeat(3)).filter((s) => /\d/.test(s)), []);
    }
  });
});
