/**
 * Newline-delimited framing with a size limit: bytes in, complete lines out.
 *
 * Invariants: lines are delivered in order, without their "\n" (a trailing
 * "\r" is dropped too); a line longer than `maxLineBytes` is never buffered
 * whole — it is reported once through `onOversize` and skipped up to its
 * newline, and the following lines are delivered normally; bytes are decoded
 * as UTF-8 per complete line, so a multi-byte character split across chunks
 * is intact.
 */

/** Default limit of one line: 16 MiB, the Go side's limit too (a dry-run reply carries whole objects). */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

export class LineDecoder {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private readonly maxLineBytes: number;
  private readonly onLine: (line: string) => void;
  private readonly onOversize: (bytes: number) => void;

  constructor(options: { onLine: (line: string) => void; onOversize: (bytes: number) => void; maxLineBytes?: number }) {
    this.onLine = options.onLine;
    this.onOversize = options.onOversize;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (!this.skipping) {
        if (this.size + piece.length > this.maxLineBytes) {
          this.onOversize(this.size + piece.length);
          this.parts = [];
          this.size = 0;
          this.skipping = true;
        } else if (piece.length > 0) {
          this.parts.push(piece);
          this.size += piece.length;
        }
      }
      if (nl < 0) break;
      if (!this.skipping) this.emit();
      this.skipping = false;
      start = nl + 1;
    }
  }

  private emit(): void {
    let line = Buffer.concat(this.parts, this.size).toString('utf8');
    this.parts = [];
    this.size = 0;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.length > 0) this.onLine(line);
  }
}
