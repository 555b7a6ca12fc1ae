#!/usr/bin/env node
// Draws the extension icon, media/icon.png (256×256 PNG; the Marketplace needs a PNG of at least 128×128), from
// the same design as media/icon.svg: two arrows chasing each other round a loop (observe → compare → act) around a
// key, white on a blue rounded square. No dependencies: shapes are signed-distance functions sampled 4×4 per
// pixel, and the PNG is written with node:zlib. Run again after changing the design: node scripts/make-icon.mjs
import { deflateSync } from 'node:zlib';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SIZE = 256;
const S = SIZE / 24; // the SVG's 24-unit grid
const BG = [50, 108, 229]; // #326CE5
const FG = [255, 255, 255];

const segDist = (px, py, ax, ay, bx, by) => {
  const dx = bx - ax, dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
};
/** Distance to an arc of the circle (cx, cy, r) between angles a0 → a1 (radians, increasing). */
const arcDist = (px, py, cx, cy, r, a0, a1) => {
  let a = Math.atan2(py - cy, px - cx);
  while (a < a0) a += 2 * Math.PI;
  if (a <= a1) return Math.abs(Math.hypot(px - cx, py - cy) - r);
  const e0 = [cx + r * Math.cos(a0), cy + r * Math.sin(a0)];
  const e1 = [cx + r * Math.cos(a1), cy + r * Math.sin(a1)];
  return Math.min(Math.hypot(px - e0[0], py - e0[1]), Math.hypot(px - e1[0], py - e1[1]));
};
const roundedSquare = (px, py, half, radius) => {
  const qx = Math.abs(px - 12) - (half - radius), qy = Math.abs(py - 12) - (half - radius);
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - radius;
};

const W = 1.05; // half stroke width, in grid units
const deg = (d) => (d * Math.PI) / 180;
/** Coverage of the foreground at a point of the 24-unit grid (the paths of media/icon.svg). */
function ink(x, y) {
  const d = Math.min(
    // the loop: two arcs of radius 8 (y grows downwards, so angles run clockwise)
    arcDist(x, y, 12, 12, 8, deg(0), deg(135.5)),
    arcDist(x, y, 12, 12, 8, deg(180), deg(315.5)),
    // arrowheads at their ends
    segDist(x, y, 17.7, 2.8, 17.7, 6.6), segDist(x, y, 17.7, 6.6, 13.9, 6.6),
    segDist(x, y, 6.3, 21.2, 6.3, 17.4), segDist(x, y, 6.3, 17.4, 10.1, 17.4),
    // the key: a ring, a shaft and a bit
    Math.abs(Math.hypot(x - 10.5, y - 12) - 2),
    segDist(x, y, 12.5, 12, 16.5, 12), segDist(x, y, 15, 12, 15, 13.8),
  );
  return d <= W ? 1 : 0;
}

const raw = Buffer.alloc((SIZE * 4 + 1) * SIZE);
const N = 4;
for (let py = 0; py < SIZE; py++) {
  raw[py * (SIZE * 4 + 1)] = 0; // filter: none
  for (let px = 0; px < SIZE; px++) {
    let bg = 0, fg = 0;
    for (let sy = 0; sy < N; sy++) {
      for (let sx = 0; sx < N; sx++) {
        const x = (px + (sx + 0.5) / N) / S, y = (py + (sy + 0.5) / N) / S;
        if (roundedSquare(x, y, 11.6, 3.2) > 0) continue;
        bg++;
        fg += ink(x, y);
      }
    }
    const o = py * (SIZE * 4 + 1) + 1 + px * 4;
    const t = bg ? fg / bg : 0;
    for (let c = 0; c < 3; c++) raw[o + c] = Math.round(BG[c] * (1 - t) + FG[c] * t);
    raw[o + 3] = Math.round((255 * bg) / (N * N));
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
};
const ihdr = Buffer.alloc(13);
ihdr.writeUInt32BE(SIZE, 0);
ihdr.writeUInt32BE(SIZE, 4);
ihdr[8] = 8; // bit depth
ihdr[9] = 6; // RGBA
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
const out = join(import.meta.dirname, '..', 'media', 'icon.png');
writeFileSync(out, png);
console.log(`wrote ${out} (${SIZE}×${SIZE}, ${png.length} bytes)`);
