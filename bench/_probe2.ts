import { parseConfig, initFormats } from '../server/formats/index';
import { readFileSync, readdirSync } from 'node:fs';
void (async () => {
  await initFormats();
  for (const f of readdirSync('test/server/fixtures')) {
    const c = parseConfig('file:///x/' + f, readFileSync('test/server/fixtures/' + f, 'utf8'));
    console.log(f, c.format, Object.entries(c.facts).filter(([, v]) => v.source.kind === 'explicit' || v.source.kind === 'derived').map(([k, v]) => `${k}=${JSON.stringify(v.value)}${v.keyRange ? '' : '(nokey)'}`).join(' '), c.references.map((r) => r.kind + ':' + r.target));
  }
})();
