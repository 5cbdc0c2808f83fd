// MQTT 3.1.1 packets written byte by byte, for tests and benches that speak to the broker on
// a raw socket (a device that closes at any phase, or floods faster than a client library).

/** A length-prefixed UTF-8 string (or raw bytes) as MQTT encodes them. */
export function utf8(s: string | Buffer): Buffer {
  const b = Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8')
  const len = Buffer.alloc(2)
  len.writeUInt16BE(b.length)
  return Buffer.concat([len, b])
}

/** The variable-length "remaining length" of a fixed header. */
export function remainingLength(n: number): Buffer {
  const out: number[] = []
  do {
    let byte = n % 128
    n = Math.floor(n / 128)
    if (n > 0) byte |= 0x80
    out.push(byte)
  } while (n > 0)
  return Buffer.from(out)
}

/** A whole packet: the first byte of its fixed header, then its length and body. */
export function packet(first: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([first]), remainingLength(body.length), body])
}
