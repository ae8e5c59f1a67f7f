/**
 * Protocol-buffer wire format written straight into one growing buffer: what the row encoder needs to
 * serialize a writer row without building a protobufjs message, one `Op` per field and a `Long` per 64-bit
 * value. Varints, fixed 32/64-bit numbers and length-delimited UTF-8 text and bytes only — the scalar
 * shapes a BigQuery write descriptor gives a column.
 */

const TWO_32 = 4_294_967_296;

/** A reusable output buffer; {@link WireWriter.take} copies the bytes written since the last take. */
export class WireWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private pos = 0;

  /** The bytes written since the last call, as their own buffer; the writer starts over. */
  take(): Uint8Array {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    this.pos = 0;
    return out;
  }

  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** An unsigned varint below 2^32. */
  uint32(value: number): void {
    this.room(5);
    let v = value >>> 0;
    while (v > 127) {
      this.buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** A 64-bit varint from its low and high 32-bit halves (two's complement for negative values). */
  varint64(lo: number, hi: number): void {
    this.room(10);
    let l = lo >>> 0;
    let h = hi >>> 0;
    while (h !== 0) {
      this.buf[this.pos++] = (l & 127) | 128;
      l = ((l >>> 7) | (h << 25)) >>> 0;
      h >>>= 7;
    }
    while (l > 127) {
      this.buf[this.pos++] = (l & 127) | 128;
      l >>>= 7;
    }
    this.buf[this.pos++] = l;
  }

  /** A signed integer held exactly by a double (or truncated towards zero, as protobufjs does). */
  int64FromNumber(value: number): void {
    if (value >= 0 && value < TWO_32) {
      this.uint32(value);
      return;
    }
    const negative = value < 0;
    const magnitude = Math.trunc(Math.abs(value));
    let lo = magnitude >>> 0;
    let hi = Math.floor(magnitude / TWO_32) >>> 0;
    if (negative) {
      // Two's complement of the 64-bit magnitude.
      hi = ~hi >>> 0;
      lo = ~lo >>> 0;
      if (++lo > 0xffff_ffff) {
        lo = 0;
        if (++hi > 0xffff_ffff) hi = 0;
      }
    }
    this.varint64(lo, hi);
  }

  /** A signed 64-bit integer given as a bigint (taken modulo 2^64, as the wire does). */
  int64FromBigInt(value: bigint): void {
    const u = BigInt.asUintN(64, value);
    this.varint64(Number(u & 0xffff_ffffn), Number(u >> 32n));
  }

  /** An IEEE 754 double, little-endian. */
  double(value: number): void {
    this.room(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** An IEEE 754 single, little-endian. */
  float(value: number): void {
    this.room(4);
    this.buf.writeFloatLE(value, this.pos);
    this.pos += 4;
  }

  /** Length-prefixed UTF-8 text. */
  string(value: string): void {
    // Short text: its UTF-8 length is at most three bytes per UTF-16 unit, so write first, then the prefix.
    const bound = value.length * 3;
    if (bound < 128) {
      this.room(1 + bound);
      const written = this.buf.write(value, this.pos + 1, 'utf8');
      this.buf[this.pos] = written;
      this.pos += 1 + written;
      return;
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.uint32(length);
    this.room(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  /**
   * Length-prefixed bytes given as base64 text, decoded straight into the buffer (no intermediate Buffer per
   * value). Text whose decoded length differs from the estimate (whitespace, stray characters) is decoded
   * the way `Buffer.from(text, 'base64')` decodes it.
   */
  base64(text: string): void {
    const start = this.pos;
    const length = Buffer.byteLength(text, 'base64');
    this.uint32(length);
    this.room(length);
    const written = this.buf.write(text, this.pos, 'base64');
    if (written === length) {
      this.pos += written;
      return;
    }
    this.pos = start;
    this.bytes(Buffer.from(text, 'base64'));
  }

  /** Length-prefixed bytes. */
  bytes(value: Uint8Array): void {
    this.uint32(value.length);
    this.room(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }
}
