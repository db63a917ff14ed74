// Rasterises the extension icon (128×128 PNG: three bars and a dashed GPU-memory line) with no image tools.
// Run: node media/gen-icon.mjs  (writes media/icon.png).
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const N = 128;
const px = new Uint8Array(N * N * 4);
const set = (x, y, [r, g, b, a]) => { const i = (y * N + x) * 4; px[i] = r; px[i + 1] = g; px[i + 2] = b; px[i + 3] = a; };
const rect = (x0, y0, x1, y1, c) => { for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) set(x, y, c); };
// Rounded background.
for (let y = 0; y < N; y++) for (let x = 0; x < N; x++) {
  const r = 18; const cx = Math.min(Math.max(x, r), N - 1 - r); const cy = Math.min(Math.max(y, r), N - 1 - r);
  if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) set(x, y, [0x1b, 0x23, 0x30, 255]);
}
rect(20, 75, 42, 108, [0x37, 0x94, 0xff, 255]);
rect(53, 50, 75, 108, [0xd1, 0x86, 0x16, 255]);
rect(86, 25, 108, 108, [0x89, 0xd1, 0x85, 255]);
// Dashed line from (14, 64) to (114, 39), 4 px thick.
for (let t = 0; t <= 1; t += 0.001) {
  if (Math.floor(t * 12) % 2) continue;
  const x = Math.round(14 + 100 * t); const y = Math.round(64 - 25 * t);
  rect(x - 1, y - 2, x + 2, y + 2, [0xf1, 0x4c, 0x4c, 255]);
}
const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
const crc = (buf) => { let c = 0xffffffff; for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
const chunk = (type, data) => {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type), data]);
  const c = Buffer.alloc(4); c.writeUInt32BE(crc(td));
  return Buffer.concat([len, td, c]);
};
const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(N, 0); ihdr.writeUInt32BE(N, 4); ihdr[8] = 8; ihdr[9] = 6;
const raw = Buffer.alloc(N * (N * 4 + 1));
for (let y = 0; y < N; y++) { raw[y * (N * 4 + 1)] = 0; Buffer.from(px.buffer, y * N * 4, N * 4).copy(raw, y * (N * 4 + 1) + 1); }
const png = Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
writeFileSync(new URL('./icon.png', import.meta.url), png);
console.log(`icon.png: ${png.length} bytes`);
